// An enum's names as they are written (JSON fields, reports, terminal lines) in one table, read
// both ways: the name of a value and the value of a name, so the two directions cannot disagree.
//
//   constexpr EnumName<Colour> kColourNames[] = {{Colour::red, "red"}, {Colour::blue, "blue"}};
//   name_of(kColourNames, Colour::red, "?")   // "red"
//   value_named(kColourNames, "blue")         // Colour::blue; std::nullopt for a name not listed
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace pfx {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

// `fallback` for a value the table does not list (an enum cast from a bad integer).
template <class E, std::size_t N>
constexpr const char* name_of(const EnumName<E> (&table)[N], E value, const char* fallback) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return fallback;
}

template <class E, std::size_t N>
constexpr std::optional<E> value_named(const EnumName<E> (&table)[N], std::string_view name) {
  for (const auto& e : table)
    if (name == e.name) return e.value;
  return std::nullopt;
}

}  // namespace pfx
