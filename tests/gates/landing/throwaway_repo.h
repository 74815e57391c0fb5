// A throwaway git repository for landing's end-to-end tests: created under the temp folder with
// the fake engine (fake/), committed, changed and committed again by the test, removed at the end.
#pragma once
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/landing_record.h"
#include "util/process.h"

class ThrowawayRepo {
 public:
  explicit ThrowawayRepo(const std::string& name);
  ~ThrowawayRepo();
  ThrowawayRepo(const ThrowawayRepo&) = delete;  // owns (and deletes) its folder
  ThrowawayRepo& operator=(const ThrowawayRepo&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  void write(const std::string& rel, const std::string& text) const;
  std::string read(const std::string& rel) const;
  // Merges `patch` into behaviour.json (the fake engine's planted misbehaviour).
  void behave(const nlohmann::json& patch) const;
  // Edits the gate profile (landing.yaml) through a callback on its text.
  void edit_profile(const std::string& from, const std::string& to) const;
  std::string commit(const std::string& message) const;  // returns the short SHA
  pfx::ProcessResult git(const std::vector<std::string>& args) const;

  // Runs `landing ARGS...` in the repository (PFX_FIXTURES set; `run` and `gate` get
  // `--harness <this landing>`, the throwaway builds having none); `env` adds variables.
  pfx::ProcessResult landing(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) const;
  // landing run --baseline B --candidate C --gates landing.yaml
  pfx::ProcessResult run(const std::string& baseline, const std::string& candidate,
                                const std::map<std::string, std::string>& env = {}) const;
  // The report folder a `landing run` printed, and its record.
  static std::filesystem::path report_dir(const pfx::ProcessResult& r);
  static pfx::gates::LandingRecord record(const pfx::ProcessResult& r);

 private:
  std::filesystem::path dir_;
};

std::string slurp(const std::filesystem::path& p);

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
// A landing run's exit, stdout and the last 30 lines of stderr, for an assertion's message.
inline std::string why(const pfx::ProcessResult& p) {
  return "exit " + p.describe() + "\nstdout:\n" + p.out + "\nstderr tail:\n" + p.tail(30);
}
