// Number formatting and aligned text tables (see text_format.h).
#include "util/text_format.h"

#include <algorithm>
#include <cstdio>

namespace pfx {

namespace {

std::string group_digits(const std::string& digits) {
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::uint64_t magnitude(long long v) { return v < 0 ? static_cast<std::uint64_t>(-(v + 1)) + 1 : static_cast<std::uint64_t>(v); }

}  // namespace

std::string grouped(long long v) { return (v < 0 ? "-" : "") + group_digits(std::to_string(magnitude(v))); }
std::string with_commas(std::uint64_t v) { return group_digits(std::to_string(v)); }
std::string with_commas_signed(std::int64_t v) {
  if (v == 0) return "0";
  return (v < 0 ? "-" : "+") + with_commas(magnitude(v));
}

std::string fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string sci(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2e", v);
  return b;
}

std::string percent(double fraction, int decimals) { return fixed(fraction * 100.0, decimals) + "%"; }

std::string signed_percent(std::optional<double> percent_value) {
  if (!percent_value) return "new";
  std::string text = fixed(*percent_value, 1);
  if (text == "-0.0") text = "0.0";
  if (*percent_value >= 0 && text != "0.0") text = "+" + text;
  return text + "%";
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

namespace {

// Display width of UTF-8 text: one column per code point (continuation bytes 10xxxxxx add none).
std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80 ? 1 : 0;
  return width;
}

// The first `columns` code points of `text`.
std::string first_columns(const std::string& text, std::size_t columns) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == columns) return text.substr(0, i);
  }
  return text;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header, std::size_t max_first) : max_first_(max_first) {
  rows_.push_back(std::move(header));
}

void TextTable::add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

std::string TextTable::str() const {
  std::size_t columns = 0;
  for (const auto& row : rows_) columns = std::max(columns, row.size());
  std::vector<std::vector<std::string>> cells = rows_;
  for (auto& row : cells) {
    row.resize(columns);
    if (!row.empty() && display_width(row[0]) > max_first_ && max_first_ > 3) {
      row[0] = first_columns(row[0], max_first_ - 3) + "...";
    }
  }
  std::vector<std::size_t> width(columns, 0);
  for (const auto& row : cells)
    for (std::size_t c = 0; c < columns; ++c) width[c] = std::max(width[c], display_width(row[c]));
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t c = 0; c < columns; ++c) {
      const std::string& cell = row[c];
      std::string pad(width[c] - display_width(cell), ' ');
      if (c > 0) line += "  ";
      line += c == 0 ? cell + pad : pad + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace pfx
