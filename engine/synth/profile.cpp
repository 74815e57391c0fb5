// Synthetic-model profiles: YAML → SynthProfile, with overrides and errors that name the file,
// the dotted field, its line and what was expected (see synth.h).
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "synth/synth.h"
#include "util/error.h"
#include "util/escape.h"
#include "util/fixtures.h"
#include "yaml/safe_yaml.h"

namespace pfx::synth {
namespace {

namespace fs = std::filesystem;

// Reads fields of one YAML document; every error names the file and the dotted field.
class FieldReader {
 public:
  explicit FieldReader(fs::path file) : file_(std::move(file)) {}

  // `parent`: the mapping the field belongs in, whose line is named when the field is missing.
  [[noreturn]] void bad(const YAML::Node& n, const std::string& field, const std::string& expected,
                        const YAML::Node* parent = nullptr) const {
    std::string found = "nothing";
    if (n.IsDefined() && n.IsScalar()) found = quote_untrusted(n.Scalar());
    if (n.IsDefined() && n.IsMap()) found = "a map";
    if (n.IsDefined() && n.IsSequence()) found = "a list";
    const std::string at = n.IsDefined() || !parent ? where(n) : where(*parent);
    fail(file_.string(), ": field '", field, "'", at, ": expected ", expected, ", found ", found);
  }

  // A map whose keys must all be in `allowed` (typos are errors, not silently ignored).
  void check_map(const YAML::Node& n, const std::string& field, const std::set<std::string>& allowed) const {
    if (!n.IsMap()) bad(n, field, "a map");
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      if (!allowed.count(key)) {
        std::ostringstream os;
        for (const std::string& a : allowed) os << (os.tellp() ? ", " : "") << a;
        fail(file_.string(), ": unknown field ", quote_untrusted(join(field, key)), where(kv.first), "; expected one of: ",
             os.str());
      }
    }
  }

  int64_t integer(const YAML::Node& map, const std::string& parent, const std::string& key, int64_t lo, int64_t hi,
                  const int64_t* dflt = nullptr) const {
    const YAML::Node n = map[key];
    const std::string field = join(parent, key);
    if (!n.IsDefined() || n.IsNull()) {
      if (dflt) return *dflt;
      bad(n, field, "an integer (required)", &map);
    }
    int64_t v = 0;
    try {
      v = n.as<int64_t>();
    } catch (const YAML::Exception&) {
      bad(n, field, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    if (v < lo || v > hi) bad(n, field, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  }

  double number(const YAML::Node& map, const std::string& parent, const std::string& key, double dflt,
                bool positive) const {
    const YAML::Node n = map[key];
    const std::string field = join(parent, key);
    if (!n.IsDefined() || n.IsNull()) return dflt;
    double v = 0;
    try {
      v = n.as<double>();
    } catch (const YAML::Exception&) {
      bad(n, field, positive ? "a positive number" : "a number >= 0");
    }
    if (!std::isfinite(v) || (positive ? v <= 0 : v < 0)) bad(n, field, positive ? "a positive number" : "a number >= 0");
    return v;
  }

  std::string string(const YAML::Node& map, const std::string& parent, const std::string& key, const char* dflt) const {
    const YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) {
      if (dflt) return dflt;
      bad(n, join(parent, key), "a string (required)", &map);
    }
    if (!n.IsScalar()) bad(n, join(parent, key), "a string");
    return n.Scalar();
  }

  bool boolean(const YAML::Node& map, const std::string& parent, const std::string& key, bool dflt) const {
    const YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) return dflt;
    try {
      return n.as<bool>();
    } catch (const YAML::Exception&) {
      bad(n, join(parent, key), "true or false");
    }
  }

  quant::Type type(const YAML::Node& map, const std::string& parent, const std::string& key, const char* dflt) const {
    const YAML::Node n = map[key];
    const std::string name = string(map, parent, key, dflt);
    try {
      return quant::parse_type(name);
    } catch (const Error&) {
      bad(n, join(parent, key), "a ggml type name (f32, f16, bf16, q8_0, q4_K, q6_K, ...)");
    }
  }

  static std::string join(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
  }

 private:
  static std::string where(const YAML::Node& n) {
    if (!n.IsDefined() || n.Mark().line < 0) return "";
    return " (line " + std::to_string(n.Mark().line + 1) + ")";
  }

  fs::path file_;
};

// "shape.n_layer=4": sets root[shape][n_layer] to the YAML value "4", creating maps on the way.
void apply_override(YAML::Node& root, const std::string& assignment, const fs::path& file) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    fail(file.string(), ": override '", assignment, "': expected dotted.key=value");
  const std::string key = assignment.substr(0, eq), value = assignment.substr(eq + 1);
  std::vector<std::string> path;
  for (size_t b = 0; b <= key.size();) {
    const size_t e = std::min(key.find('.', b), key.size());
    if (e == b) fail(file.string(), ": override '", assignment, "': empty component in key '", key, "'");
    path.push_back(key.substr(b, e - b));
    b = e + 1;
  }
  const YAML::Node parsed = yaml::load(value, file.string() + ": override " + quote_untrusted(assignment));
  YAML::Node cur;
  cur.reset(root);
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (!cur.IsMap() && !cur.IsNull())
      fail(file.string(), ": override '", assignment, "': '", path[i], "' is inside a non-map field");
    YAML::Node next = cur[path[i]];
    if (!next.IsDefined() || next.IsNull()) {
      cur[path[i]] = YAML::Node(YAML::NodeType::Map);
      next = cur[path[i]];
    }
    cur.reset(next);
  }
  if (!cur.IsMap() && !cur.IsNull())
    fail(file.string(), ": override '", assignment, "': the parent of '", path.back(), "' is not a map");
  cur[path.back()] = parsed;
}

// "fixtures:vocab/x.gguf" → fixtures_dir()/vocab/x.gguf; relative paths are relative to the YAML.
fs::path resolve_path(const std::string& p, const fs::path& yaml) {
  const std::string prefix = "fixtures:";
  if (p.rfind(prefix, 0) == 0) return fixtures_dir() / p.substr(prefix.size());
  const fs::path path(p);
  return path.is_absolute() ? path : yaml.parent_path() / path;
}

SynthProfile read_profile(const YAML::Node& root, const fs::path& file) {
  const FieldReader r(file);
  SynthProfile p;
  p.source = file;
  r.check_map(root, "", {"name", "description", "shape", "types", "init", "vocab"});
  p.name = r.string(root, "", "name", nullptr);
  p.description = r.string(root, "", "description", "");

  const int64_t kMaxDim = int64_t{1} << 20;
  const YAML::Node shape = yaml::require(root, "shape", file.string(), "");
  r.check_map(shape, "shape",
              {"arch", "n_embd", "n_layer", "n_head", "n_head_kv", "n_ff", "n_ctx", "rope_freq_base", "rms_eps",
               "tie_output", "qkv_bias", "rope_scaling"});
  p.arch = r.string(shape, "shape", "arch", "llama");
  if (p.arch != "llama" && p.arch != "qwen2") r.bad(shape["arch"], "shape.arch", "'llama' or 'qwen2'");
  p.n_embd = r.integer(shape, "shape", "n_embd", 1, kMaxDim);
  p.n_layer = r.integer(shape, "shape", "n_layer", 1, 4096);
  p.n_head = r.integer(shape, "shape", "n_head", 1, 4096);
  p.n_head_kv = r.integer(shape, "shape", "n_head_kv", 1, 4096, &p.n_head);
  p.n_ff = r.integer(shape, "shape", "n_ff", 1, kMaxDim);
  const int64_t default_ctx = 2048;
  p.n_ctx = r.integer(shape, "shape", "n_ctx", 1, kMaxDim * 16, &default_ctx);
  p.rope_freq_base = r.number(shape, "shape", "rope_freq_base", 10000.0, true);
  p.rms_eps = r.number(shape, "shape", "rms_eps", 1e-5, true);
  p.tie_output = r.boolean(shape, "shape", "tie_output", false);
  p.qkv_bias = r.boolean(shape, "shape", "qkv_bias", false);
  const YAML::Node scaling = shape["rope_scaling"];
  if (scaling.IsDefined() && !scaling.IsNull()) {
    r.check_map(scaling, "shape.rope_scaling",
                {"type", "factor", "low_freq_factor", "high_freq_factor", "original_context"});
    if (r.string(scaling, "shape.rope_scaling", "type", nullptr) != "llama3")
      r.bad(scaling["type"], "shape.rope_scaling.type", "'llama3' (the only scaling the synthesizer writes)");
    RopeScalingSpec& rs = p.rope_scaling;
    rs.llama3 = true;
    rs.factor = r.number(scaling, "shape.rope_scaling", "factor", rs.factor, true);
    rs.low_freq_factor = r.number(scaling, "shape.rope_scaling", "low_freq_factor", rs.low_freq_factor, true);
    rs.high_freq_factor = r.number(scaling, "shape.rope_scaling", "high_freq_factor", rs.high_freq_factor, true);
    rs.original_context = r.integer(scaling, "shape.rope_scaling", "original_context", 1, kMaxDim * 16, &rs.original_context);
    if (!(rs.high_freq_factor > rs.low_freq_factor))
      r.bad(scaling["high_freq_factor"], "shape.rope_scaling.high_freq_factor", "a number above low_freq_factor");
  }

  const YAML::Node types = yaml::require(root, "types", file.string(), "");
  r.check_map(types, "types", {"default", "norms", "file_type", "rules"});
  p.default_type = r.type(types, "types", "default", nullptr);
  p.norm_type = r.type(types, "types", "norms", "f32");
  p.file_type = static_cast<uint32_t>(r.integer(types, "types", "file_type", 0, 1023));
  const YAML::Node rules = types["rules"];
  if (rules.IsDefined() && !rules.IsNull()) {
    if (!rules.IsSequence()) r.bad(rules, "types.rules", "a list of {tensor, type, layers} rules");
    for (size_t i = 0; i < rules.size(); ++i) {
      const std::string field = "types.rules[" + std::to_string(i) + "]";
      const YAML::Node rule = rules[i];
      r.check_map(rule, field, {"tensor", "type", "layers"});
      TypeRule t;
      t.tensor = r.string(rule, field, "tensor", nullptr);
      t.type = r.type(rule, field, "type", nullptr);
      const YAML::Node layers = rule["layers"];
      if (!layers.IsDefined() || layers.IsNull() || (layers.IsScalar() && layers.Scalar() == "all")) {
        t.layers = LayerSelect::All;
      } else if (layers.IsScalar() && layers.Scalar() == "use_more_bits") {
        t.layers = LayerSelect::UseMoreBits;
      } else if (layers.IsSequence()) {
        t.layers = LayerSelect::List;
        for (size_t k = 0; k < layers.size(); ++k) {
          try {
            t.layer_list.push_back(layers[k].as<int64_t>());
          } catch (const YAML::Exception&) {
            r.bad(layers[k], field + ".layers[" + std::to_string(k) + "]", "a layer index");
          }
        }
      } else {
        r.bad(layers, field + ".layers", "'all', 'use_more_bits' or a list of layer indices");
      }
      p.rules.push_back(std::move(t));
    }
  }

  p.init.gain = {{"attn_q", 1.5},   {"attn_k", 1.5}, {"attn_v", 1.0},    {"attn_output", 0.5},
                 {"ffn_gate", 1.0}, {"ffn_up", 1.0}, {"ffn_down", 0.5}, {"output", 3.0}};
  const YAML::Node init = root["init"];
  if (init.IsDefined() && !init.IsNull()) {
    r.check_map(init, "init", {"token_embd_std", "norm_std", "output_norm_std", "bias_std", "gain"});
    p.init.bias_std = r.number(init, "init", "bias_std", p.init.bias_std, false);
    p.init.token_embd_std = r.number(init, "init", "token_embd_std", p.init.token_embd_std, true);
    p.init.norm_std = r.number(init, "init", "norm_std", p.init.norm_std, false);
    p.init.output_norm_std = r.number(init, "init", "output_norm_std", p.init.output_norm_std, false);
    const YAML::Node gain = init["gain"];
    if (gain.IsDefined() && !gain.IsNull()) {
      std::set<std::string> roles;
      for (const auto& kv : p.init.gain) roles.insert(kv.first);
      r.check_map(gain, "init.gain", roles);
      for (const std::string& role : roles) p.init.gain[role] = r.number(gain, "init.gain", role, p.init.gain[role], true);
    }
  }

  const YAML::Node vocab = yaml::require(root, "vocab", file.string(), "");
  r.check_map(vocab, "vocab", {"size", "source", "path", "if_missing", "pad_to_size"});
  p.vocab.pad_to_size = r.boolean(vocab, "vocab", "pad_to_size", false);
  p.vocab.size = r.integer(vocab, "vocab", "size", 1, int64_t{1} << 24);
  const std::string source = r.string(vocab, "vocab", "source", "synthetic");
  if (source == "copy") {
    p.vocab.copy_from = resolve_path(r.string(vocab, "vocab", "path", nullptr), file);
    const std::string missing = r.string(vocab, "vocab", "if_missing", "error");
    if (missing != "error" && missing != "synthetic") r.bad(vocab["if_missing"], "vocab.if_missing", "'error' or 'synthetic'");
    p.vocab.synthetic_if_missing = missing == "synthetic";
  } else if (source != "synthetic") {
    r.bad(vocab["source"], "vocab.source", "'synthetic' or 'copy'");
  } else if (vocab["path"].IsDefined()) {
    r.bad(vocab["path"], "vocab.path", "no path when vocab.source is 'synthetic'");
  }
  return p;
}

}  // namespace

SynthProfile parse_profile(std::string_view yaml_text, const std::filesystem::path& source,
                           const std::vector<std::string>& overrides) {
  YAML::Node root = yaml::load(yaml_text, source.string());
  if (!root.IsMap()) fail(source.string(), ": expected a YAML map of profile fields at the top level");
  for (const std::string& o : overrides) apply_override(root, o, source);
  SynthProfile p = read_profile(root, source);
  p.overrides = overrides;
  validate_profile(p);
  return p;
}

SynthProfile load_profile(const std::filesystem::path& yaml, const std::vector<std::string>& overrides) {
  std::ifstream in(yaml, std::ios::binary);
  if (!in) fail(yaml.string(), ": cannot open the profile");
  std::error_code ec;
  if (const auto bytes = std::filesystem::file_size(yaml, ec); !ec && bytes > yaml::Limits{}.max_bytes)
    fail(yaml.string(), ": ", bytes, " bytes; a profile may have at most ", yaml::Limits{}.max_bytes);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_profile(text.str(), yaml, overrides);
}

}  // namespace pfx::synth
