// ptxas gate (see ptxas_gate.h).
#include "ptxas/ptxas_gate.h"

#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "ptxas/occupancy.h"
#include "ptxas/ptxas_report.h"
#include "util/error.h"

namespace pfx::gates {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::map<std::string, const KernelResources*> by_key(const KernelResourceFile& f) {
  std::map<std::string, int> count;
  for (const auto& k : f.kernels) ++count[k.name];
  std::map<std::string, const KernelResources*> m;
  for (const auto& k : f.kernels) m[count[k.name] > 1 ? k.name + " [" + k.mangled + "]" : k.name] = &k;
  return m;
}

// ptxas's performance notes on the candidate's kernel that its baseline kernel has not (all of
// them for an added kernel); nullopt when that cannot be told (either file predates the notes).
std::optional<std::vector<std::string>> new_performance_notes(const KernelResources& cand, const KernelResources* base,
                                                              bool baseline_file) {
  if (!cand.performance_notes) return std::nullopt;
  if (!base) {
    if (baseline_file) return *cand.performance_notes;
    return std::nullopt;
  }
  if (!base->performance_notes) return std::nullopt;
  std::vector<std::string> fresh;
  for (const auto& n : *cand.performance_notes)
    if (std::find(base->performance_notes->begin(), base->performance_notes->end(), n) == base->performance_notes->end())
      fresh.push_back(n);
  return fresh;
}

std::string note_codes(const std::vector<std::string>& notes) {
  std::string s;
  for (const auto& n : notes) s += (s.empty() ? "" : ", ") + n.substr(0, n.find(':'));
  return s;
}

}  // namespace

fs::path kernel_resources_path(const Build& b) {
  std::string name = "kernel-resources.json";
  if (b.version.is_object() && b.version.contains("capabilities") &&
      b.version["capabilities"].contains("kernel_resources") && b.version["capabilities"]["kernel_resources"].is_string())
    name = b.version["capabilities"]["kernel_resources"];
  return b.prefill.parent_path() / name;
}

void compare_kernel_resources(GateResult& r, const KernelResourceFile* baseline, const KernelResourceFile& candidate,
                              const json& budgets, const std::string& origin) {
  if (!budgets.is_null() && !budgets.is_array()) fail(origin, ": gates.ptxas.budgets: expected a list");
  const auto cand = by_key(candidate);
  const auto base = baseline ? by_key(*baseline) : std::map<std::string, const KernelResources*>{};
  json rows = json::array();
  std::vector<KernelComparison> compared;
  std::vector<std::string> changed_lines;
  int max_regs = 0;
  long total_spill = 0;
  for (const auto& [key, k] : cand) {
    const Occupancy o = blocks_per_sm(k->registers, k->threads_per_block, k->smem_bytes());
    Check c;
    c.name = key;
    KernelComparison cmp{key, std::nullopt, kernel_figures(*k, o)};
    json row = {{"kernel", key}, {"candidate", to_json(cmp.candidate)}};
    const KernelResources* b = nullptr;
    Occupancy ob;
    if (auto it = base.find(key); it != base.end()) {
      b = it->second;
      ob = blocks_per_sm(b->registers, b->threads_per_block, b->smem_bytes());
      cmp.baseline = kernel_figures(*b, ob);
      row["baseline"] = to_json(*cmp.baseline);
    } else {
      row["baseline"] = nullptr;
      row["added"] = baseline != nullptr;
      cmp.added = baseline != nullptr;
    }
    max_regs = std::max(max_regs, k->registers);
    total_spill += k->spill_bytes();
    // One readable line: "85 → 87 regs, 0 spill, 2 blocks/SM kept"
    std::ostringstream line;
    if (b) line << b->registers << " → ";
    line << k->registers << " regs, " << k->spill_bytes() << " B spill";
    if (b && b->spill_bytes() != k->spill_bytes()) line << " (was " << b->spill_bytes() << ")";
    if (b && b->smem_bytes() != k->smem_bytes()) line << ", smem " << b->smem_bytes() << " → " << k->smem_bytes() << " B";
    if (o.known) {
      line << ", " << (b && ob.known && ob.blocks_per_sm != o.blocks_per_sm ? std::to_string(ob.blocks_per_sm) + " → " : "")
           << o.blocks_per_sm << " blocks/SM";
      if (b && ob.known) line << (ob.blocks_per_sm == o.blocks_per_sm ? " kept" : (o.blocks_per_sm < ob.blocks_per_sm ? " LOST" : " gained"));
    } else {
      line << ", blocks/SM unknown (threads per block not recorded)";
    }
    // ptxas's performance notes (wgmma serialized, C7512 / C7513): a note the baseline's kernel
    // did not have fails the check; one that cannot be compared leaves it inconclusive.
    const auto fresh = new_performance_notes(*k, b, baseline != nullptr);
    if (k->performance_notes && !k->performance_notes->empty()) {
      line << ", ptxas " << note_codes(*k->performance_notes);
      if (fresh) line << (fresh->empty() ? " (as baseline)" : " (NEW)");
      row["performance_notes"] = *k->performance_notes;
    }
    row["summary"] = line.str();
    const bool changed = !b || b->registers != k->registers || b->spill_bytes() != k->spill_bytes() ||
                         b->smem_bytes() != k->smem_bytes() || b->stack_bytes != k->stack_bytes ||
                         (fresh && !fresh->empty());
    if (changed && baseline) changed_lines.push_back(key + " " + line.str());

    std::vector<std::string> violations;
    json applied = json::array();
    if (budgets.is_array()) {
      for (size_t i = 0; i < budgets.size(); ++i) {
        const auto& bud = budgets[i];
        const std::string where = origin + ": gates.ptxas.budgets[" + std::to_string(i) + "]";
        if (!bud.is_object() || !bud.contains("kernels") || !bud["kernels"].is_string())
          fail(where, ": expected {kernels: <glob>, max_regs / max_spill_bytes / max_stack_bytes / max_smem_bytes / min_blocks_per_sm}");
        const std::string glob = bud["kernels"];
        if (::fnmatch(glob.c_str(), k->name.c_str(), 0) != 0) continue;
        applied.push_back(bud);
        auto limit = [&](const char* field) -> std::optional<long> {
          if (!bud.contains(field)) return std::nullopt;
          if (!bud[field].is_number_integer()) fail(where, ": ", field, " must be an integer");
          return bud[field].get<long>();
        };
        if (auto v = limit("max_regs"); v && k->registers > *v)
          violations.push_back(std::to_string(k->registers) + " regs > budget " + std::to_string(*v) + " (" + glob + ")");
        if (auto v = limit("max_spill_bytes"); v && k->spill_bytes() > *v)
          violations.push_back(std::to_string(k->spill_bytes()) + " B spill > budget " + std::to_string(*v) + " (" + glob + ")");
        if (auto v = limit("max_stack_bytes"); v && k->stack_bytes > *v)
          violations.push_back(std::to_string(k->stack_bytes) + " B stack > budget " + std::to_string(*v) + " (" + glob + ")");
        if (auto v = limit("max_smem_bytes"); v && k->smem_bytes() > *v)
          violations.push_back(std::to_string(k->smem_bytes()) + " B smem > budget " + std::to_string(*v) + " (" + glob + ")");
        if (auto v = limit("min_blocks_per_sm")) {
          if (!o.known) violations.push_back("min_blocks_per_sm " + std::to_string(*v) + " cannot be checked: " + o.limiter);
          else if (o.blocks_per_sm < *v)
            violations.push_back(std::to_string(o.blocks_per_sm) + " blocks/SM < budget " + std::to_string(*v) +
                                 " (limited by " + o.limiter + ", " + glob + ")");
        }
      }
    }
    if (fresh)
      for (const auto& n : *fresh) violations.push_back("ptxas " + n + " (new: the baseline's kernel has no such note)");
    row["budgets"] = applied;
    cmp.budgeted = !applied.empty();
    compared.push_back(cmp);
    if (!violations.empty()) {
      c.status = Status::Fail;
      for (size_t i = 0; i < violations.size(); ++i) c.reason += (i ? "; " : "") + violations[i];
    } else if (!fresh && k->performance_notes && !k->performance_notes->empty()) {
      c.status = Status::Inconclusive;
      c.reason = line.str() + ": the baseline's resource file records no ptxas notes, so whether " +
                 note_codes(*k->performance_notes) + " is new cannot be told";
    } else if (!k->performance_notes && b && b->performance_notes) {
      // The candidate's build wrote its file without the notes its baseline's build recorded (an
      // older or edited scripts/ptxas_resources.py): a serialization it hides is not a pass.
      c.status = Status::Inconclusive;
      c.reason = line.str() + ": the candidate's resource file records no ptxas notes where the baseline's does, "
                              "so a serialized wgmma (C7512 / C7513) cannot be ruled out";
    } else {
      c.reason = line.str() + (applied.empty() ? " (no budget)" : " (within budget)");
    }
    c.metrics = row;
    r.checks.push_back(c);
    rows.push_back(row);
  }
  std::vector<std::string> removed;
  for (const auto& [key, k] : base)
    if (!cand.count(key)) removed.push_back(key);
  r.details["arch"] = candidate.arch;
  r.details["kernels"] = rows;
  r.details["removed_kernels"] = removed;
  r.details["baseline_available"] = baseline != nullptr;
  std::ostringstream ev;
  ev << cand.size() << " kernels, max " << max_regs << " regs, " << total_spill << " B spill in total";
  if (!baseline) ev << "; baseline has no resource file";
  else if (changed_lines.empty()) ev << "; unchanged vs baseline";
  else {
    ev << "; changed: ";
    for (size_t i = 0; i < changed_lines.size() && i < 3; ++i) ev << (i ? "; " : "") << changed_lines[i];
    if (changed_lines.size() > 3) ev << "; +" << changed_lines.size() - 3 << " more";
  }
  if (!removed.empty()) ev << "; " << removed.size() << " removed";
  r.evidence = ev.str();
  add_ptxas_output(r, compared, removed);
}

GateResult run_ptxas_gate(const GateContext& ctx) {
  GateResult r = ctx.start();
  const fs::path cand_path = kernel_resources_path(ctx.candidate);
  if (!fs::exists(cand_path)) {
    if (ctx.candidate.version.is_object() && !ctx.candidate.cuda_compiled()) {
      return skip_gate(r, "candidate build has no CUDA (cuda_compiled false in `prefill --version --json`): no kernels to check",
                       ctx.deadline.elapsed());
    }
    r.checks.push_back(
        hard_failure("kernel-resources", "candidate build has no " + cand_path.string() + " (the CUDA build must leave it next to prefill)"));
    finish(r, ctx.profile, ctx.deadline.elapsed());
    return r;
  }
  try {
    const auto cand = read_kernel_resources(cand_path);
    std::optional<KernelResourceFile> base;
    const fs::path base_path = kernel_resources_path(ctx.baseline);
    if (fs::exists(base_path)) base = read_kernel_resources(base_path);
    ctx.say(std::to_string(cand.kernels.size()) + " kernels in " + cand_path.string());
    compare_kernel_resources(r, base ? &*base : nullptr, cand, ctx.profile.gate("ptxas").value("budgets", json()),
                             ctx.profile.origin());
    r.details["candidate_file"] = cand_path.string();
    r.details["baseline_file"] = base ? base_path.string() : "";
  } catch (const Error& e) {
    r.checks.push_back(hard_failure("kernel-resources", e.what()));
  }
  finish(r, ctx.profile, ctx.deadline.elapsed());
  return r;
}

}  // namespace pfx::gates
