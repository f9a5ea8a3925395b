// Python's json.dumps(value, indent=2), byte for byte, for nlohmann::ordered_json values.
// nvalchemi saves specs with exactly that call, so writing our specs through this gives files
// identical to the ones Python writes (no trailing newline).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace distspec {

// json.dumps(value, indent=indent) with Python's defaults: ensure_ascii (every non-ASCII code
// point as \uXXXX, surrogate pairs above U+FFFF, lowercase hex), separators "," and ": ",
// "[]" / "{}" for empty containers, floats as repr(), NaN / Infinity as Python spells them.
// Throws Error (spec.value) for a string that is not valid UTF-8 or a binary value.
std::string dump_python_json(const nlohmann::ordered_json& value, int indent = 2);

// repr(float): shortest digits that read back to the same double; fixed notation when the
// decimal exponent is in [-4, 16), else d.ddde+XX ("1.0", "1e-05", "1e+16").
std::string python_float_repr(double v);

// A JSON string literal as json.dumps writes it (quotes included).
std::string python_json_string(std::string_view utf8);

}  // namespace distspec
