// Small text helpers for the summary and diff tables: thousands separators, percentages, and a
// column-aligned table.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pfx::trace {

std::string with_commas(std::uint64_t value);                 // 2549248 -> "2,549,248"
std::string with_commas_signed(std::int64_t value);           // -502400 -> "-502,400", 7 -> "+7"
std::string fixed(double value, int decimals);                // 1.5 -> "1.50"
std::string percent(double fraction, int decimals = 1);       // 0.1234 -> "12.3%"
std::string signed_percent(std::optional<double> percent_value);  // 12.345 -> "+12.3%", empty -> "new"

// Left-aligns the first column, right-aligns the others; long first-column cells are cut to
// `max_first` characters with "..." so tables stay readable with long demangled kernel names.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::size_t max_first = 72);
  void add(std::vector<std::string> row);
  std::string str() const;

 private:
  std::vector<std::vector<std::string>> rows_;
  std::size_t max_first_;
};

}  // namespace pfx::trace
