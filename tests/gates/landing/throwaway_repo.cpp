// See throwaway_repo.h.
#include "throwaway_repo.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "util/fixtures.h"

namespace fs = std::filesystem;
using namespace pfx;
using namespace pfx::gates;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ThrowawayRepo::ThrowawayRepo(const std::string& name) {
  dir_ = fs::temp_directory_path() / ("landing-e2e-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  for (const auto& e : fs::directory_iterator(PFX_FAKE_ENGINE_DIR)) fs::copy(e.path(), dir_ / e.path().filename());
  write(".gitignore", ".landing/\n");
  if (!git({"init", "-q"}).ok()) throw std::runtime_error("git init failed in " + dir_.string());
  commit("fake engine: base");
}

ThrowawayRepo::~ThrowawayRepo() {
  std::error_code ec;
  git({"worktree", "prune"});
  fs::remove_all(dir_, ec);
}

void ThrowawayRepo::write(const std::string& rel, const std::string& text) const {
  fs::create_directories((dir_ / rel).parent_path());
  std::ofstream(dir_ / rel) << text;
}

std::string ThrowawayRepo::read(const std::string& rel) const { return slurp(dir_ / rel); }

void ThrowawayRepo::behave(const nlohmann::json& patch) const {
  auto b = nlohmann::json::parse(read("behaviour.json"));
  b.merge_patch(patch);
  write("behaviour.json", b.dump());
}

void ThrowawayRepo::edit_profile(const std::string& from, const std::string& to) const {
  std::string t = read("landing.yaml");
  const auto pos = t.find(from);
  if (pos == std::string::npos) throw std::runtime_error("landing.yaml has no '" + from + "'");
  t.replace(pos, from.size(), to);
  write("landing.yaml", t);
}

ProcessResult ThrowawayRepo::git(const std::vector<std::string>& args) const {
  ProcessSpec s;
  s.argv = {"git", "-C", dir_.string(), "-c", "user.name=landing-e2e", "-c", "user.email=e2e@example.invalid"};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.timeout_s = 60;
  return run_process(s);
}

std::string ThrowawayRepo::commit(const std::string& message) const {
  git({"add", "-A"});
  if (!git({"commit", "-q", "--allow-empty", "-m", message}).ok()) throw std::runtime_error("git commit failed");
  auto r = git({"rev-parse", "--short=12", "HEAD"});
  std::string sha = r.out;
  while (!sha.empty() && sha.back() == '\n') sha.pop_back();
  return sha;
}

ProcessResult ThrowawayRepo::landing(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) const {
  ProcessSpec s;
  s.argv = {PFX_LANDING_EXE};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  // The throwaway repository's builds hold no landing: this build's judges (landing/harness.h),
  // named explicitly as a user would.
  if (!args.empty() && (args[0] == "run" || args[0] == "gate")) s.argv.insert(s.argv.end(), {"--harness", PFX_LANDING_EXE});
  s.cwd = dir_;
  s.env = env;
  s.env["PFX_FIXTURES"] = pfx::fixtures_dir().string();
  s.timeout_s = 300;
  return run_process(s);
}

ProcessResult ThrowawayRepo::run(const std::string& baseline, const std::string& candidate,
                                 const std::map<std::string, std::string>& env) const {
  return landing({"run", "--baseline", baseline, "--candidate", candidate, "--gates", "landing.yaml"}, env);
}

fs::path ThrowawayRepo::report_dir(const ProcessResult& r) {
  const auto p = r.out.find("report: ");
  if (p == std::string::npos) throw std::runtime_error("landing printed no report line:\n" + r.out + "\n" + r.err);
  return r.out.substr(p + 8, r.out.find('\n', p) - p - 8);
}

LandingRecord ThrowawayRepo::record(const ProcessResult& r) { return read_landing_record(report_dir(r) / "landing.json"); }
