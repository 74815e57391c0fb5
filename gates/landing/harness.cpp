// Harness choice, identity and hand-over (see harness.h).
#include "landing/harness.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "util/process.h"
#include "core/sha256.h"
#include "cli/version.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kHarnessRelpath = "gates/landing/landing";

// The identity another landing binary reports, or nullopt with `why`.
std::optional<HarnessId> ask_identity(const fs::path& exe, std::string& why) {
  ProcessSpec spec;
  spec.argv = {exe.string(), "--version", "--json"};
  spec.timeout_s = 60;
  const auto r = run_process(spec);
  if (!r.ok()) {
    why = "`" + exe.string() + " --version --json` " + r.describe();
    return std::nullopt;
  }
  try {
    const json j = json::parse(r.out.substr(0, r.out.find('\n')));
    bool can = false;
    const json caps = j.value("capabilities", json::object());
    if (caps.is_object())
      for (const auto& c : caps.value("judging", json::array())) can |= c == "harness";
    if (!can) {
      why = exe.string() + " predates harness pinning (no capabilities.judging 'harness' in `--version --json`)";
      return std::nullopt;
    }
    HarnessId h;
    h.exe = exe;
    h.version = j.value("version", "");
    h.commit = j.value("commit", "");
    h.dirty = j.value("dirty", false);
    h.sha256 = sha256_file(exe);
    return h;
  } catch (const std::exception& e) {
    why = "`" + exe.string() + " --version --json` printed no identity: " + e.what();
    return std::nullopt;
  }
}

}  // namespace

json to_json(const HarnessId& h) {
  return {{"exe", h.exe.string()}, {"version", h.version}, {"commit", h.commit}, {"dirty", h.dirty},
          {"sha256", h.sha256}, {"pinned", h.pinned}, {"how", h.how}};
}

HarnessId self_identity() {
  HarnessId h;
  h.exe = fs::read_symlink("/proc/self/exe");
  h.version = PFX_VERSION;
  h.commit = PFX_GIT_COMMIT;
  h.dirty = PFX_GIT_DIRTY;
  h.sha256 = sha256_file(h.exe);
  return h;
}

HarnessPlan plan_harness(const fs::path& explicit_harness, bool handed_over, const Build& baseline, const Build& candidate) {
  HarnessPlan plan;
  const HarnessId self = self_identity();
  fs::path exe;
  std::string how;
  if (!explicit_harness.empty()) {
    exe = fs::is_directory(explicit_harness) ? explicit_harness / kHarnessRelpath : explicit_harness;
    exe = fs::absolute(exe);
    if (!fs::exists(exe)) fail("--harness ", explicit_harness.string(), ": no landing binary at ", exe.string());
    how = "--harness " + exe.string();
  } else {
    exe = baseline.dir / kHarnessRelpath;
    how = "baseline build " + baseline.id + " (" + exe.string() + ")";
  }
  std::string why;
  std::optional<HarnessId> chosen;
  if (fs::exists(exe)) chosen = ask_identity(exe, why);
  else why = "the baseline build has no landing at " + exe.string() + " (pass --harness BUILD)";
  if (!chosen) {
    if (!explicit_harness.empty()) fail("--harness ", explicit_harness.string(), ": ", why);
    // Nothing to hand over to: this binary judges, and the report says it is not pinned.
    plan.id = self;
    plan.id.how = "not pinned: " + why + "; judged by " + self.exe.string() + " (commit " + self.commit + ")";
    return plan;
  }
  if (chosen->sha256 != self.sha256) {
    if (handed_over)
      fail("harness hand-over: ", exe.string(), " is not the binary that was started for it (sha256 ", self.sha256.substr(0, 12),
           " vs ", chosen->sha256.substr(0, 12), "); refusing a second hand-over");
    plan.exec = exe;
  }
  plan.id = *chosen;
  plan.id.exe = exe;
  // Pinned unless it is the candidate's own code: built from the candidate commit (and not also
  // the baseline's, as in an A/A landing), or the baseline default whose commit is not the baseline.
  const bool from_candidate = !candidate.worktree && !candidate.sha.empty() && plan.id.commit == candidate.sha &&
                              plan.id.commit != baseline.sha;
  if (from_candidate) {
    plan.id.how = "not pinned: " + how + " was built from the candidate commit " + candidate.id;
  } else if (explicit_harness.empty() && plan.id.commit != baseline.sha) {
    plan.id.how = "not pinned: " + how + " reports commit " + plan.id.commit + ", not the baseline's " + baseline.sha;
  } else {
    plan.id.pinned = true;
    plan.id.how = how + (plan.id.dirty ? " (built from uncommitted sources)" : "");
  }
  return plan;
}

std::vector<std::string> pin_revisions(const std::vector<std::string>& argv, const std::string& baseline_sha,
                                       const std::string& candidate_sha) {
  std::vector<std::string> out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    const std::string flag = a.substr(0, a.find('='));
    const std::string* sha = flag == "--baseline" ? &baseline_sha : flag == "--candidate" ? &candidate_sha : nullptr;
    if (sha == nullptr || sha->empty()) {
      out.push_back(a);
    } else if (flag != a) {
      out.push_back(flag + "=" + *sha);
    } else if (i + 1 < argv.size()) {
      out.insert(out.end(), {flag, *sha});
      ++i;
    } else {
      out.push_back(a);
    }
  }
  return out;
}

void hand_over(const fs::path& exe, const std::vector<std::string>& argv) {
  std::vector<std::string> args = {exe.string()};
  for (size_t i = 0; i < argv.size(); ++i) {
    // The hand-over names the harness itself; an explicit one given before is replaced.
    if (argv[i] == "--harness") {
      ++i;
      continue;
    }
    if (argv[i].rfind("--harness=", 0) == 0 || argv[i] == "--harness-exec") continue;
    args.push_back(argv[i]);
  }
  args.insert(args.end(), {"--harness", exe.string(), "--harness-exec"});
  std::cout.flush();
  std::cerr.flush();
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  ::execv(exe.c_str(), cargs.data());
  fail("harness hand-over: cannot exec ", exe.string(), ": ", std::strerror(errno));
}

}  // namespace pfx::gates
