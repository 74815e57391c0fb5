// Greedy stream comparison (see greedy_judge.h).
#include "greedy/greedy_judge.h"

#include <string>
#include <vector>

#include "metrics/compare.h"

namespace pfx::gates {

using nlohmann::json;

namespace {
std::string ids_text(const std::vector<int>& ids, size_t from, size_t count) {
  std::string s;
  for (size_t i = from; i < ids.size() && i < from + count; ++i) s += (i > from ? " " : "") + std::to_string(ids[i]);
  if (ids.size() > from + count) s += " …";
  return s.empty() ? "(end)" : s;
}
}  // namespace

bool judge_greedy_case(Check& c, json& row) {
  std::vector<int> ib, ic;
  std::string tb, tc;
  try {
    ib = row.at("baseline_ids").get<std::vector<int>>();
    ic = row.at("candidate_ids").get<std::vector<int>>();
    tb = row.value("baseline_text", std::string());
    tc = row.value("candidate_text", std::string());
  } catch (const json::exception&) {
    return false;
  }
  c.waivable = true;
  if (ib.empty() && ic.empty()) {
    c.status = Status::Fail;
    c.waivable = false;
    c.reason = "both builds generated no token: nothing was compared";
  } else if (ib == ic && tb == tc) {
    c.status = Status::Pass;
    c.reason = "byte-identical: " + std::to_string(ic.size()) + " tokens";
  } else {
    const int64_t first = pfx::first_divergence(ib, ic);
    const size_t k = first < 0 ? ib.size() : static_cast<size_t>(first);  // identical ids: the text differs
    c.status = Status::Fail;
    if (k == ib.size() && k == ic.size()) {
      c.reason = "same token ids but different text (detokenization changed)";
    } else {
      c.reason = "first divergence at generated token " + std::to_string(k) + ": baseline [" + ids_text(ib, k, 8) + "] vs candidate [" +
                 ids_text(ic, k, 8) + "]";
    }
    if (!tb.empty() || !tc.empty()) c.reason += "; baseline text \"" + tb.substr(0, 120) + "\" vs candidate \"" + tc.substr(0, 120) + "\"";
    row["first_divergence"] = k;
  }
  return true;
}

}  // namespace pfx::gates
