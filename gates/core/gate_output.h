// What a gate measured, typed (nvbench's summary/printer split): before → after `Row`s (the
// report's results table, the headline) and `Table`s (columns with units, rows, an optional chart).
// The gate that measures a number builds its row or table cell; the renderers (report/markdown,
// report/html, report/junit_out, and the JSON of gate_result.h) only lay them out, so a new metric
// is one edit in the gate. JSON form: docs/schemas/gate-result.md.
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace pfx::gates {

// How a number prints. grouped: rounded, thousands separators ("2,549,248"); integer: rounded,
// plain ("29696"); fixed: `decimals` places ("1568.7"); sci: "3.20e-05"; fraction: a 0..1 value as
// a percentage ("93.8%"); signed_percent: a percentage with its sign ("+13.3%").
struct NumberFormat {
  enum class Style { grouped, integer, fixed, sci, fraction, signed_percent };
  Style style = Style::fixed;
  int decimals = 1;
  bool operator==(const NumberFormat&) const = default;
};
inline constexpr NumberFormat kGrouped{NumberFormat::Style::grouped, 0};
inline constexpr NumberFormat kInteger{NumberFormat::Style::integer, 0};
inline constexpr NumberFormat kSci{NumberFormat::Style::sci, 2};
inline constexpr NumberFormat kFraction{NumberFormat::Style::fraction, 1};
inline constexpr NumberFormat kSignedPercent{NumberFormat::Style::signed_percent, 1};
constexpr NumberFormat fixed_format(int decimals) { return {NumberFormat::Style::fixed, decimals}; }

// One value in a row or a table: a number in its row's or column's unit, or a text where the value
// is not one number ("85 / 2", "166/0/3"). A `compared` cell is a baseline → candidate pair in one
// column (ptxas: "85 → 87"); it prints one number when both sides agree.
struct Cell {
  std::optional<double> value;   // empty with `compared`: unknown ("?")
  bool compared = false;
  std::optional<double> before;  // the baseline's number of a compared cell (empty: unknown)
  std::string text;              // printed instead of the number when not empty
  std::string note;              // a short remark after the value ("new")
  std::string hint;              // the long form of the value (HTML title)
  bool operator==(const Cell&) const = default;
};
inline Cell number_cell(double v) { return Cell{v}; }
inline Cell text_cell(std::string t) { return Cell{std::nullopt, false, std::nullopt, std::move(t)}; }
inline Cell compared_cell(std::optional<double> before, std::optional<double> after) {
  return Cell{after, true, before};
}

// One before → after figure: a line of the report's results table; the flagged one is the headline.
struct Row {
  std::string metric;     // the quantity, short: "pp512 tok/s", "k_gemm_q6k_bt"; the headline prints it
  std::string label;      // how the results table names it ("kernel k_gemm_q6k_bt (ns)"); empty: metric
  std::string unit;       // of baseline, candidate and delta: "ns", "tok/s", "regs"; "" for counts and text
  NumberFormat format;
  Cell baseline, candidate;
  std::optional<double> delta;      // candidate − baseline, in `unit`
  std::optional<double> delta_pct;  // 100 · delta / baseline
  std::optional<double> noise_pct;  // run-to-run spread (timing) or A/A noise floor (ab), in percent
  std::optional<std::array<double, 2>> ci_pct;  // confidence interval of delta_pct, where there is one
  std::string note;       // printed in the Δ column instead of Δ% ("added", "+2 regs")
  std::string check;      // name of the check that judges this figure, if one does
  std::optional<Status> verdict;  // that check's final status (waivers applied): sync_verdicts
  bool headline = false;
  bool operator==(const Row&) const = default;
  const std::string& shown_label() const { return label.empty() ? metric : label; }
};

struct Column {
  std::string name;  // header: "kernel", "baseline", "TFLOP/s"
  std::string unit;  // "ns", "TFLOP/s", "" (text or count)
  NumberFormat format;
  bool operator==(const Column&) const = default;
};

struct TableRow {
  std::vector<Cell> cells;        // one per column
  std::string check;              // name of the check that judges this row, if one does
  std::optional<Status> verdict;  // that check's final status (colours the row): sync_verdicts
  bool operator==(const TableRow&) const = default;
};

// How HTML draws a table as a figure; columns are named by their `name`.
//   bars:   one row = one label (`label`) with a baseline bar (`baseline`) over a candidate bar
//           (`candidate`), the Δ text (`delta`) after them; the first `max_rows` rows.
//   points: one row = one point in row order; y = `value`; `series` is "aa", "baseline" or
//           "candidate" (the colour); `label` names the point; `flag` (0/1) draws it hollow.
struct Chart {
  enum class Kind { none, bars, points };
  Kind kind = Kind::none;
  std::string label, baseline, candidate, delta, value, series, flag;
  std::string value_unit;  // axis / tooltip unit of `value` ("tok/s")
  std::size_t max_rows = 0;  // 0: all
  bool operator==(const Chart&) const = default;
};

struct Table {
  std::string id;     // unique within one gate; HTML ids and classes derive from it ("kernels-0", "ptxas")
  std::string title;  // heading or figure caption
  std::vector<Column> columns;
  std::vector<TableRow> rows;
  std::string note;   // a line under the table ("Removed since baseline: …")
  Chart chart;
  bool in_markdown = false;  // landing.md is the short read: it lays out only tables flagged here
  bool operator==(const Table&) const = default;
  // Index of the column named `name`, or -1.
  int column(const std::string& name) const;
};

// Text forms, the same in every renderer.
std::string format_number(double v, const NumberFormat& f);
std::string cell_text(const Cell& c, const NumberFormat& f);  // without the note
// The Δ column of a row: its note, else signed Δ%, else "".
std::string delta_text(const Row& r);
// A column's header: its name, then its unit ("baseline ns", "spill B").
std::string column_header(const Column& c);

nlohmann::json to_json(const NumberFormat& f);
nlohmann::json to_json(const Cell& c);
nlohmann::json to_json(const Row& r);
nlohmann::json to_json(const Table& t);
// Readers: errors name `where` and the field.
Row row_from_json(const nlohmann::json& j, const std::string& where);
Table table_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace pfx::gates
