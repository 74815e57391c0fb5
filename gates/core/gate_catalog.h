// The gates `landing` knows: name, report order, whether it needs a GPU, where its rows go in the
// report's results table, and the figures it draws in landing.html (declared here so the page can
// say why one is missing when the gate did not run or had nothing to draw).
#pragma once
#include <string>
#include <vector>

namespace pfx::gates {

struct DeclaredFigure {
  std::string id;       // the gate's table id, or the prefix of its ids ("kernels" for "kernels-0", …)
  std::string title;    // shown when missing
  std::string missing;  // "no kernel timing": the start of the line saying why it is missing
  bool chart = true;    // a figure (SVG) rather than a table
};

struct GateInfo {
  std::string name;
  bool needs_gpu = false;
  int results_rank = 100;  // the results table lists rows of lower ranks first
  bool evidence_in_result_line = false;  // landing.md's "Result:" line quotes its evidence after the headline
  std::vector<DeclaredFigure> figures;
};

// In report order.
const std::vector<GateInfo>& gate_catalog();
// nullptr for a name that is not a gate ("build" is a pseudo-gate).
const GateInfo* gate_info(const std::string& name);

// The gates `landing run` knows, in report order.
const std::vector<std::string>& known_gates();
// Gates that need a GPU to give an answer.
bool gate_needs_gpu(const std::string& gate);

}  // namespace pfx::gates
