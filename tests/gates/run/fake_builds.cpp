// Fake baseline and candidate builds for gate tests (see fake_builds.h).
#include "gates/run/fake_builds.h"

#include <fstream>

namespace pfx::test {

namespace fs = std::filesystem;
using namespace pfx::gates;

nlohmann::json merged(nlohmann::json behaviour, const nlohmann::json& more) {
  behaviour.update(more);
  return behaviour;
}

FakeBuilds::FakeBuilds(fs::path root) : root_(std::move(root)) {
  for (const char* label : {"baseline", "candidate"}) {
    fs::create_directories(root_ / label);
    fs::copy_file(PFX_FAKE_PREFILL, root_ / label / "prefill", fs::copy_options::overwrite_existing);
    fs::permissions(root_ / label / "prefill", fs::perms::owner_all, fs::perm_options::replace);
    behave(label, nlohmann::json::object());
  }
  std::ofstream(root_ / "model.gguf") << "not a real model: the fake engine only checks it exists\n";
}

void FakeBuilds::behave(const std::string& label, const nlohmann::json& behaviour) const {
  std::ofstream(root_ / label / "behaviour.json") << behaviour.dump();
}

GateResult FakeBuilds::run(const std::string& gate, const std::string& yaml, const std::function<GateResult(const GateContext&)>& run_gate,
                           const fs::path& fixtures) const {
  for (const char* label : {"baseline", "candidate"}) fs::remove(root_ / label / "calls.log");
  fs::remove_all(root_ / "work");
  const auto profile = GateProfile::parse(
      "schema: gate-profile/1\nmodels:\n  m: {path: " + (root_ / "model.gguf").string() + "}\n" + yaml, "test-profile.yaml");
  // Ids as a landing gives them (12 hex digits): the reasons name the builds by them.
  const Build base = prebuilt_build("baseline", root_ / "baseline", "prefill", root_, "ba5eba5eba5e");
  const Build cand = prebuilt_build("candidate", root_ / "candidate", "prefill", root_, "ca4d1da7e000");
  const fs::path fixtures_dir = fixtures.empty() ? root_ : fixtures;
  const Progress progress(true);
  ModelStore models(profile, cand, fixtures_dir, root_ / "cache", progress);
  const GateContext ctx{gate, profile, base, cand, root_, root_ / "cache", fixtures_dir, root_ / "work",
                        progress, models, "landing gate " + gate + " (test)", Deadline(120)};
  return run_gate(ctx);
}

std::vector<nlohmann::json> FakeBuilds::calls(const std::string& label) const {
  std::vector<nlohmann::json> out;
  std::ifstream in(root_ / label / "calls.log");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace pfx::test
