// Safe YAML loading (see safe_yaml.h): parse, then one bounded walk that counts every node it
// visits (aliases expanded), tracks depth, and checks each mapping's keys.
#include "yaml/safe_yaml.h"

#include <fstream>
#include <map>
#include <sstream>

#include "util/error.h"
#include "util/escape.h"

namespace pfx::yaml {
namespace {

class Checker {
 public:
  Checker(const std::string& origin, const Limits& limits) : origin_(origin), limits_(limits) {}

  void visit(const YAML::Node& n, size_t depth) {
    if (++nodes_ > limits_.max_nodes) {
      fail(origin_, where(n), ": the document expands to more than ", limits_.max_nodes,
           " nodes (aliases counted each time they are used); refusing it");
    }
    if (depth > limits_.max_depth) {
      fail(origin_, where(n), ": nesting deeper than ", limits_.max_depth,
           " levels (or an alias that contains itself); refusing it");
    }
    if (n.IsSequence()) {
      for (const YAML::Node& e : n) visit(e, depth + 1);
    } else if (n.IsMap()) {
      std::map<std::string, int> seen;  // key -> line (1-based)
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) fail(origin_, where(kv.first), ": a mapping key must be a plain value, not a map or list");
        const std::string& key = kv.first.Scalar();
        const int line = kv.first.Mark().line + 1;
        if (const auto [it, fresh] = seen.emplace(key, line); !fresh) {
          fail(origin_, ": line ", line, ": duplicate key ", quote_untrusted(key), " (first on line ", it->second, ")");
        }
        ++nodes_;
        visit(kv.second, depth + 1);
      }
    }
  }

 private:
  const std::string& origin_;
  const Limits& limits_;
  size_t nodes_ = 0;
};

}  // namespace

std::string where(const YAML::Node& node) {
  if (!node.IsDefined() || node.Mark().line < 0) return "";
  return ": line " + std::to_string(node.Mark().line + 1);
}

YAML::Node load(std::string_view text, const std::string& origin, const Limits& limits) {
  if (text.size() > limits.max_bytes) {
    fail(origin, ": ", text.size(), " bytes of YAML, more than the ", limits.max_bytes, " allowed; refusing it");
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    // yaml-cpp says "bad file" when its own nesting guard trips; say what it means.
    const std::string msg = e.msg == "bad file" ? "nesting too deep for the YAML parser" : e.msg;
    fail(origin, ": line ", e.mark.line + 1, ", column ", e.mark.column + 1, ": invalid YAML: ", escape_control(msg));
  }
  Checker(origin, limits).visit(root, 0);
  return root;
}

YAML::Node load_file(const std::string& path, const Limits& limits) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open the file");
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > limits.max_bytes) fail(path, ": larger than the ", limits.max_bytes, " bytes allowed for YAML");
  }
  return load(text, path, limits);
}

YAML::Node require(const YAML::Node& map, const std::string& key, const std::string& origin, const std::string& path) {
  const std::string field = path.empty() ? key : path + "." + key;
  if (!map.IsMap()) fail(origin, where(map), ": expected a mapping holding '", field, "'");
  const YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) {
    const std::string at = where(map).empty() ? ": line 1" : where(map);
    fail(origin, at, ": required key '", field, "' is missing");
  }
  return n;
}

}  // namespace pfx::yaml
