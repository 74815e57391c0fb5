// Names of the fast path's decode launch choices (DecodeGraph, cuda_backend.h): what
// `--decode-graph` takes and `prefill --version --json` lists as capabilities.decode_graph.
#include "cuda/cuda_backend.h"

namespace pfx::cuda {

const char* decode_graph_name(DecodeGraph v) {
  switch (v) {
    case DecodeGraph::On: return "on";
    case DecodeGraph::Off: return "off";
  }
  return "unknown";
}

const std::vector<DecodeGraph>& decode_graph_values() {
  static_assert(kDefaultDecodeGraph == DecodeGraph::On, "the capability list names the default first");
  static const std::vector<DecodeGraph> all = {DecodeGraph::On, DecodeGraph::Off};
  return all;
}

std::optional<DecodeGraph> parse_decode_graph(std::string_view name) {
  for (DecodeGraph v : decode_graph_values())
    if (name == decode_graph_name(v)) return v;
  return std::nullopt;
}

}  // namespace pfx::cuda
