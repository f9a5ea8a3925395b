// Enum <-> JSON name tables: the spec's closed vocabularies (transform types, output kinds,
// force strategies) each live in one constexpr array of {value, name} in nvalchemi's order.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace distspec::name_table {

template <class Table, class Enum>
std::string_view name_of(const Table& table, Enum value, std::string_view fallback = "?") {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return fallback;
}

template <class Table>
auto value_of(const Table& table, std::string_view name)
    -> std::optional<typename Table::value_type::first_type> {
  for (const auto& [e, n] : table) {
    if (n == name) return e;
  }
  return std::nullopt;
}

// "a, b, c": the names in table order, for "expected one of ..." hints.
template <class Table>
std::string list_of(const Table& table) {
  std::string list;
  for (const auto& entry : table) list += (list.empty() ? "" : ", ") + std::string(entry.second);
  return list;
}

}  // namespace distspec::name_table
