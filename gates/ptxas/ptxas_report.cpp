// The ptxas gate's typed figures (see ptxas_report.h).
#include "ptxas/ptxas_report.h"

#include "util/error.h"

namespace pfx::gates {

using nlohmann::json;

KernelFigures kernel_figures(const KernelResources& k, const Occupancy& o) {
  return {k, o.known ? std::optional<int>(o.blocks_per_sm) : std::nullopt, o.limiter};
}

json to_json(const KernelFigures& f) {
  const auto& k = f.resources;
  return {{"registers", k.registers}, {"spill_store_bytes", k.spill_store_bytes}, {"spill_load_bytes", k.spill_load_bytes},
          {"stack_bytes", k.stack_bytes}, {"static_smem_bytes", k.static_smem_bytes},
          {"dynamic_smem_bytes", k.dynamic_smem_bytes}, {"threads_per_block", k.threads_per_block},
          {"blocks_per_sm", f.blocks_per_sm ? json(*f.blocks_per_sm) : json(nullptr)}, {"limiter", f.limiter},
          {"source", k.source}};
}

KernelFigures kernel_figures_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) fail(where, ": expected an object (a kernel's resources)");
  KernelFigures f;
  try {
    auto& k = f.resources;
    k.registers = j.value("registers", 0);
    k.spill_store_bytes = j.value("spill_store_bytes", 0L);
    k.spill_load_bytes = j.value("spill_load_bytes", 0L);
    k.stack_bytes = j.value("stack_bytes", 0L);
    k.static_smem_bytes = j.value("static_smem_bytes", 0L);
    k.dynamic_smem_bytes = j.value("dynamic_smem_bytes", 0L);
    k.threads_per_block = j.value("threads_per_block", 0);
    k.source = j.value("source", std::string());
    if (j.contains("blocks_per_sm") && !j["blocks_per_sm"].is_null()) f.blocks_per_sm = j["blocks_per_sm"].get<int>();
    f.limiter = j.value("limiter", std::string());
  } catch (const json::exception& e) {
    fail(where, ": ", e.what());
  }
  return f;
}

namespace {

std::optional<double> blocks(const KernelFigures& f) {
  return f.blocks_per_sm ? std::optional<double>(*f.blocks_per_sm) : std::nullopt;
}

// A baseline → candidate cell where the kernel has a baseline, the candidate's number otherwise.
Cell resource_cell(const std::optional<KernelFigures>& b, const KernelFigures& c, std::optional<double> (*of)(const KernelFigures&)) {
  if (b) return compared_cell(of(*b), of(c));
  const auto v = of(c);
  return v ? number_cell(*v) : text_cell("?");
}

std::string regs_and_blocks(const KernelFigures& f) {
  return std::to_string(f.resources.registers) + " / " + (f.blocks_per_sm ? std::to_string(*f.blocks_per_sm) : std::string("?"));
}

}  // namespace

void add_ptxas_output(GateResult& r, const std::vector<KernelComparison>& kernels, const std::vector<std::string>& removed) {
  int shown = 0;
  for (const auto& k : kernels) {
    if (!k.baseline) continue;
    const auto& b = *k.baseline;
    if (b.resources.registers == k.candidate.resources.registers && b.blocks_per_sm == k.candidate.blocks_per_sm) continue;
    if (shown++ >= 8) break;
    const int delta = k.candidate.resources.registers - b.resources.registers;
    Row row;
    row.metric = k.key;
    row.label = "regs / blocks per SM " + k.key;
    row.unit = "regs";
    row.format = kInteger;
    row.baseline = Cell{static_cast<double>(b.resources.registers), false, std::nullopt, regs_and_blocks(b)};
    row.candidate = Cell{static_cast<double>(k.candidate.resources.registers), false, std::nullopt, regs_and_blocks(k.candidate)};
    row.delta = delta;
    row.note = (delta >= 0 ? "+" : "") + std::to_string(delta) + " regs";
    row.check = k.key;
    r.rows.push_back(row);
  }
  Table t;
  t.id = "ptxas";
  t.title = "ptxas: kernel resources (sm_90)";
  t.columns = {{"kernel", "", {}},     {"regs", "", kInteger},      {"spill", "B", kInteger},  {"stack", "B", kInteger},
               {"smem", "B", kInteger}, {"threads", "", kInteger}, {"blocks/SM", "", kInteger}, {"limited by", "", {}},
               {"budget", "", {}}};
  for (const auto& k : kernels) {
    TableRow row;
    Cell name = text_cell(k.key);
    if (k.added) name.note = "new";
    std::string budget_text = k.budgeted ? "" : "no budget";
    for (const auto& c : r.checks)
      if (c.name == k.key && k.budgeted) budget_text = c.reason.substr(0, 80);
    Cell budget = text_cell(budget_text);
    for (const auto& c : r.checks)
      if (c.name == k.key) budget.hint = c.reason;
    row.cells = {name,
                 resource_cell(k.baseline, k.candidate, [](const KernelFigures& f) { return std::optional<double>(f.resources.registers); }),
                 resource_cell(k.baseline, k.candidate, [](const KernelFigures& f) { return std::optional<double>(f.resources.spill_bytes()); }),
                 resource_cell(k.baseline, k.candidate, [](const KernelFigures& f) { return std::optional<double>(f.resources.stack_bytes); }),
                 resource_cell(k.baseline, k.candidate, [](const KernelFigures& f) { return std::optional<double>(f.resources.smem_bytes()); }),
                 resource_cell(k.baseline, k.candidate,
                               [](const KernelFigures& f) { return std::optional<double>(f.resources.threads_per_block); }),
                 resource_cell(k.baseline, k.candidate, blocks),
                 text_cell(k.candidate.limiter),
                 budget};
    row.check = k.key;
    t.rows.push_back(row);
  }
  if (!removed.empty()) t.note = "Removed since baseline: " + json(removed).dump();
  r.tables.push_back(t);
}

void read_legacy_ptxas_output(GateResult& r) {
  if (!r.details.contains("kernels") || !r.details["kernels"].is_array()) return;
  std::vector<KernelComparison> kernels;
  const auto& rows = r.details["kernels"];
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string where = "details.kernels[" + std::to_string(i) + "]";
    const auto& row = rows[i];
    KernelComparison k;
    k.key = row.value("kernel", std::string());
    if (row.contains("baseline") && !row["baseline"].is_null()) k.baseline = kernel_figures_from_json(row["baseline"], where + ".baseline");
    k.candidate = kernel_figures_from_json(row.value("candidate", json::object()), where + ".candidate");
    k.added = row.value("added", false);
    k.budgeted = row.contains("budgets") && row["budgets"].is_array() && !row["budgets"].empty();
    kernels.push_back(k);
  }
  add_ptxas_output(r, kernels, r.details.value("removed_kernels", std::vector<std::string>{}));
}

}  // namespace pfx::gates
