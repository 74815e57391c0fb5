// Gate context helpers: models, cases, uniform check construction (see gate_context.h).
#include "run/gate_context.h"

#include <fstream>
#include <random>

#include "host/environment.h"
#include "util/error.h"
#include "util/unique_name.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

ModelStore::ModelStore(const GateProfile& profile, const Build& candidate, fs::path fixtures_dir, fs::path cache_dir,
                       const Progress& progress)
    : profile_(profile), candidate_(candidate), fixtures_(std::move(fixtures_dir)), cache_(std::move(cache_dir)),
      progress_(progress) {}

ModelRef ModelStore::resolve(const std::string& name, double timeout_s) {
  if (auto it = done_.find(name); it != done_.end()) return it->second;
  ModelRef m;
  const std::string where = profile_.origin() + ": models." + name;
  json spec;
  if (name.rfind("fixture:", 0) == 0) {
    spec = {{"fixture", name.substr(8)}};
  } else {
    const auto& root = profile_.data();
    if (!root.contains("models") || !root["models"].contains(name))
      fail(profile_.origin(), ": model '", name, "' is used by a gate but not defined under 'models'");
    spec = root["models"][name];
    if (!spec.is_object()) fail(where, ": expected a mapping with fixture, synth or path");
  }
  if (spec.contains("fixture")) {
    m.path = fixtures_ / spec["fixture"].get<std::string>();
    m.ok = fs::exists(m.path);
    if (!m.ok) m.error = "fixture model " + m.path.string() + " is missing (set PFX_FIXTURES to the fixtures dir)";
  } else if (spec.contains("path")) {
    m.path = spec["path"].get<std::string>();
    m.ok = fs::exists(m.path);
    if (!m.ok) m.error = "model file " + m.path.string() + " is missing";
  } else if (spec.contains("synth")) {
    if (auto miss = missing_capability(candidate_, "subcommands", "synth")) {
      m.unavailable = true;
      m.error = *miss;
    } else {
      const fs::path model_profile = candidate_.src / spec["synth"].get<std::string>();
      const long seed = spec.value("seed", 1L);
      m.path = cache_ / "models" / (candidate_.id + "-" + name + "-s" + std::to_string(seed) + ".gguf");
      if (fs::exists(m.path)) {
        m.ok = true;
      } else {
        fs::create_directories(m.path.parent_path());
        progress_.say("model " + name + ": prefill synth --profile " + spec["synth"].get<std::string>());
        // A name of this run's own beside the model: two runs synthesizing it at once never write
        // into one file; the rename is atomic and both produce the same bytes (same commit, seed).
        const fs::path tmp = m.path.parent_path() / ("." + m.path.filename().string() + ".tmp." + unique_suffix());
        EngineRunner eng(candidate_.prefill, {});
        const auto c = eng.synth(model_profile, tmp, seed, timeout_s);
        if (c.ok() && fs::exists(tmp)) {
          fs::rename(tmp, m.path);
          m.ok = true;
        } else {
          std::error_code ignored;
          fs::remove(tmp, ignored);
          m.error = "synthesizing model '" + name + "' failed: " + (c.ok() ? "no output file" : c.reason) +
                    " (" + c.command + ")";
          m.unavailable = c.outcome == RunOutcome::Unavailable;
        }
      }
    }
  } else {
    fail(where, ": expected one of fixture, synth or path");
  }
  done_[name] = m;
  return m;
}

namespace {
// A case's name: its own, else its oracle case, else "<model>#<index>".
std::string case_name(const json& c, size_t index) {
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_object()) return "#" + std::to_string(index);
  if (c.contains("name") && c["name"].is_string()) return c["name"];
  if (c.contains("oracle") && c["oracle"].is_string()) return c["oracle"];
  return c.value("model", std::string()) + "#" + std::to_string(index);
}
// random_tokens {count, seed, below}: `count` ids in [3, below) from a seeded mt19937 (ids 0-2
// are the special tokens), so a production-length prompt (512, 2048 tokens) is one line of the
// profile. mt19937's output is fixed by the standard (a distribution's is not): the same prompt
// on every host and library.
std::vector<int> random_tokens(const json& spec) {
  std::mt19937 rng(static_cast<uint32_t>(spec.value("seed", 1L)));
  const uint32_t span = static_cast<uint32_t>(std::max(4L, spec.value("below", 4L)) - 3);
  std::vector<int> out(static_cast<size_t>(spec.value("count", 1L)));
  for (auto& t : out) t = 3 + static_cast<int>(rng() % span);
  return out;
}

}  // namespace

std::vector<std::string> case_names(const GateProfile& profile, const std::string& gate) {
  std::vector<std::string> out;
  const auto& g = profile.gate(gate);
  if (!g.contains("cases") || !g["cases"].is_array()) return out;
  for (size_t i = 0; i < g["cases"].size(); ++i) out.push_back(case_name(g["cases"][i], i));
  return out;
}

std::vector<GateCase> parse_cases(const GateProfile& profile, const std::string& gate, const fs::path& fixtures_dir,
                                  const fs::path& project_fixtures_dir) {
  std::vector<GateCase> out;
  const auto& g = profile.gate(gate);
  if (!g.contains("cases")) return out;
  if (!g["cases"].is_array()) fail(profile.origin(), ": gates.", gate, ".cases: expected a list");
  for (size_t i = 0; i < g["cases"].size(); ++i) {
    json c = g["cases"][i];
    const std::string where = profile.origin() + ": gates." + gate + ".cases[" + std::to_string(i) + "]";
    if (c.is_string()) c = json{{"oracle", c}};
    if (!c.is_object()) fail(where, ": expected a mapping or an oracle case name");
    GateCase gc;
    if (c.contains("oracle")) {
      gc.oracle = c["oracle"].get<std::string>();
      gc.oracle_root = fixtures_dir;
      if (!project_fixtures_dir.empty() && !fs::exists(fixtures_dir / "oracle" / (gc.oracle + ".json")) &&
          fs::exists(project_fixtures_dir / "oracle" / (gc.oracle + ".json")))
        gc.oracle_root = project_fixtures_dir;
      const fs::path oj = gc.oracle_root / "oracle" / (gc.oracle + ".json");
      std::ifstream in(oj);
      if (!in)
        fail(where, ": oracle case '", gc.oracle, "': cannot open ", oj.string(), " (fixtures dir via PFX_FIXTURES",
             project_fixtures_dir.empty() ? "" : ", or the project's " + project_fixtures_dir.string(), ")");
      json o;
      try {
        o = json::parse(in);
        // "fixture:<path>" resolves under the shared fixtures dir; an absolute path (a project
        // fixture) stands for itself.
        gc.model = gc.oracle_root == fixtures_dir
                       ? "fixture:models/" + o.at("model").get<std::string>()
                       : "fixture:" + fs::absolute(gc.oracle_root / "models" / o.at("model").get<std::string>()).string();
        gc.input.tokens = o.at("prompt_tokens").get<std::vector<int>>();
        if (o.contains("greedy_tokens")) gc.oracle_greedy = o["greedy_tokens"].get<std::vector<int>>();
      } catch (const json::exception& e) {
        fail(oj.string(), ": expected model, prompt_tokens (and greedy_tokens): ", e.what());
      }
      gc.input.no_bos = true;  // the oracle's prompt_tokens already start with BOS
      gc.name = case_name(c, i);
    } else {
      if (!c.contains("model") || !c["model"].is_string()) fail(where, ": missing 'model'");
      gc.model = c["model"];
      if (c.contains("tokens")) gc.input.tokens = c["tokens"].get<std::vector<int>>();
      else if (c.contains("random_tokens")) gc.input.tokens = random_tokens(c["random_tokens"]);
      else if (c.contains("text") && c["text"].is_string()) gc.input.text = c["text"];
      else fail(where, ": needs 'text', 'tokens', 'random_tokens' or 'oracle'");
      gc.input.no_bos = c.value("no_bos", false);
      gc.name = case_name(c, i);
    }
    out.push_back(gc);
  }
  return out;
}

EngineRunner GateContext::engine(const Build& b) const {
  return EngineRunner(b.prefill, {{"PFX_FIXTURES", fixtures_dir.string()}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
}

GateResult GateContext::start() const {
  GateResult r;
  r.gate = gate;
  r.required = profile.required(gate);
  r.needs_gpu = gate_needs_gpu(gate);
  r.candidate_id = candidate.id;
  r.baseline_id = baseline.id;
  r.started = utc_now_iso8601();
  r.command = reproduce;
  r.host = capture_environment();
  return r;
}

bool GateContext::skipped_without(GateResult& r, const std::vector<const Build*>& builds, const std::vector<Capability>& needs) const {
  for (const Build* b : builds)
    for (const auto& need : needs)
      if (auto miss = missing_capability(*b, need.list, need.name)) {
        r = skip_gate(std::move(r), *miss, deadline.elapsed());
        return true;
      }
  return false;
}

std::optional<fs::path> GateContext::model_or_check(GateResult& r, const std::string& check, const std::string& name) const {
  const auto model = models.resolve(name, deadline.remaining());
  if (model.ok) return model.path;
  Check c = hard_failure(check, model.error);
  if (model.unavailable) c.status = Status::Skipped;
  r.checks.push_back(c);
  return std::nullopt;
}

Check failed_call_check(const std::string& name, const EngineCall& call, const std::string& what) {
  Check c;
  c.name = name;
  c.command = call.command;
  c.reason = what + ": " + call.reason;
  if (call.outcome == RunOutcome::Unavailable) c.status = Status::Skipped;
  else fail_hard(c, c.reason);
  c.metrics["outcome"] = to_string(call.outcome);
  c.metrics["wall_s"] = call.process.wall_s;
  c.metrics["duration_s"] = call.process.wall_s;
  return c;
}

VerifiedCall verify_call(const AskedRun& asked, const nlohmann::json& output, const Build& b) {
  const auto reported = reported_selection(output);
  return {verify_ran_as_asked(asked, reported, b.version, "the " + b.label + " " + b.id), ran_evidence(asked, reported)};
}

VerifiedCall verify_call(const AskedRun& asked, const EngineCall& call, const Build& b) { return verify_call(asked, call.output, b); }

std::optional<std::string> missing_capability(const Build& b, const std::string& list, const std::string& name) {
  if (!b.version.is_object())
    return b.label + " build " + b.id + " is too old to ask: " +
           (b.version_error.empty() ? std::string("no `prefill --version --json`") : b.version_error);
  if (!b.has_capability(list, name))
    return b.label + " build " + b.id + " lacks capability " + list + "/" + name + " (from `prefill --version --json`)";
  return std::nullopt;
}

std::optional<Check> gpu_probe(const GateContext& ctx) {
  static std::map<std::string, std::optional<Check>> cache;  // per prefill binary, for one landing process
  const std::string key = ctx.candidate.prefill.string();
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const auto& root = ctx.profile.data();
  if (!root.contains("gpu_probe_model") || !root["gpu_probe_model"].is_string()) return std::nullopt;
  const auto model = ctx.models.resolve(root["gpu_probe_model"].get<std::string>(), ctx.deadline.remaining());
  if (!model.ok) return std::nullopt;  // no probe possible: the gate finds out itself
  ctx.say("GPU probe: prefill bench on " + model.path.filename().string());
  const auto call = ctx.engine(ctx.candidate).bench(model.path, {16}, 0, 1, 0, "", std::min(300.0, ctx.deadline.remaining()));
  std::optional<Check> out;
  if (!call.ok()) out = failed_call_check("gpu-probe", call, "GPU probe");
  cache[key] = out;
  return out;
}

GateResult skip_gate(GateResult r, const std::string& reason, double elapsed_s) {
  Check c;
  c.name = r.gate;
  c.status = Status::Skipped;
  c.reason = reason;
  r.checks.push_back(c);
  r.reason = reason;
  settle_from_checks(r);
  r.duration_s = elapsed_s;
  return r;
}

void finish(GateResult& r, const GateProfile& profile, double elapsed_s) {
  for (auto& c : r.checks) {
    if (c.status != Status::Fail || !c.waivable) continue;
    if (const Waiver* w = profile.waiver_for(r.gate, c.name)) {
      c.status = Status::Waived;
      c.waiver = w->reason;
    }
  }
  settle_from_checks(r);
  r.duration_s = elapsed_s;
}

}  // namespace pfx::gates
