// Safe YAML for files a candidate commit or a user controls (gate profiles, model profiles): the
// one way the project parses YAML. Beyond yaml-cpp's parse it refuses documents whose expansion
// is unbounded (a "billion laughs" of nested aliases, a self-referencing alias), nesting past a
// depth, duplicate keys (yaml-cpp keeps both silently) and non-scalar keys; every error names the
// origin (the file) and the line. After load(), any walk of the tree visits at most max_nodes
// nodes, however many aliases it follows.
//
//   const YAML::Node root = pfx::yaml::load(text, "profiles/gates/x.yaml");
//   const YAML::Node gates = pfx::yaml::require(root, "gates", "profiles/gates/x.yaml", "");
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace pfx::yaml {

struct Limits {
  size_t max_bytes = size_t{4} << 20;  // document text; profiles are a few KB
  size_t max_nodes = 100'000;          // nodes a full walk visits, aliases expanded
  size_t max_depth = 64;               // nesting of maps and lists
};

// Parses and checks a document. Throws pfx::Error "<origin>: line L, column C: ..." for invalid
// YAML, and "<origin>: ..." naming the limit, or the key and both lines of a duplicate.
YAML::Node load(std::string_view text, const std::string& origin, const Limits& limits = {});

// Reads the file and load()s it; throws pfx::Error naming the file when it cannot be read or is
// larger than limits.max_bytes.
YAML::Node load_file(const std::string& path, const Limits& limits = {});

// ": line N" for a node with a position, else "" (to follow the origin in a message).
std::string where(const YAML::Node& node);

// The child `key` of the mapping `map` (at dotted `path`, "" for the top level); throws
// pfx::Error "<origin>: line L: required key 'path.key' is missing" (L: the mapping's line) when
// it is absent or null, or when `map` is not a mapping.
YAML::Node require(const YAML::Node& map, const std::string& key, const std::string& origin, const std::string& path);

}  // namespace pfx::yaml
