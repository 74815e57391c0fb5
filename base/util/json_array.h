// A JSON array of records, each written by its own to_json(const T&) (found by argument-dependent
// lookup beside T), so a writer of a record that holds a list names the list once.
//
//   {"checks", json_array(r.checks)}   // [to_json(r.checks[0]), to_json(r.checks[1]), ...]
#pragma once
#include <nlohmann/json.hpp>

namespace pfx {

template <class Range>
nlohmann::json json_array(const Range& items) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& item : items) out.push_back(to_json(item));
  return out;
}

}  // namespace pfx
