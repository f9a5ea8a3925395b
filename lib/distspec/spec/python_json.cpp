#include "distspec/spec/python_json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "distspec/error.h"
#include "distspec/utf8.h"

namespace distspec {
namespace {

using Json = nlohmann::ordered_json;

void append_u16(std::string& out, unsigned unit) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\u%04x", unit);
  out += buf;
}

void newline(std::string& out, int indent, int level) {
  out += '\n';
  out.append(static_cast<std::size_t>(indent) * level, ' ');
}

// An array's or object's entries between its brackets, one a line at level + 1, as Python's
// json.dumps(indent=...) writes them; an empty one is the bare brackets. `write` writes one entry.
template <class Entries, class Write>
void dump_entries(const Entries& entries, const char* brackets, int indent, int level, std::string& out,
                  Write write) {
  out += brackets[0];
  bool first = true;
  for (const auto& entry : entries) {
    if (!first) out += ',';
    first = false;
    newline(out, indent, level + 1);
    write(entry);
  }
  if (!first) newline(out, indent, level);
  out += brackets[1];
}

// Recursive over the value's nesting, which parse_json_strict bounds (kMaxJsonDepth).
void dump(const Json& v, int indent, int level, std::string& out) {
  switch (v.type()) {
    case Json::value_t::null: out += "null"; return;
    case Json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; return;
    case Json::value_t::number_integer:
      out += std::to_string(v.get<Json::number_integer_t>());
      return;
    case Json::value_t::number_unsigned:
      out += std::to_string(v.get<Json::number_unsigned_t>());
      return;
    case Json::value_t::number_float: out += python_float_repr(v.get<double>()); return;
    case Json::value_t::string: out += python_json_string(v.get_ref<const std::string&>()); return;
    case Json::value_t::array:
      dump_entries(v, "[]", indent, level, out, [&](const Json& item) { dump(item, indent, level + 1, out); });
      return;
    case Json::value_t::object:
      dump_entries(v.items(), "{}", indent, level, out, [&](const auto& entry) {
        out += python_json_string(entry.key());
        out += ": ";
        dump(entry.value(), indent, level + 1, out);
      });
      return;
    case Json::value_t::binary:
    case Json::value_t::discarded: break;
  }
  throw Error(error_id::value, "", "value has no JSON text form");
}

}  // namespace

std::string python_json_string(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '"':
        out += "\\\"";
        ++i;
        continue;
      case '\\':
        out += "\\\\";
        ++i;
        continue;
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      case '\b':
        out += "\\b";
        ++i;
        continue;
      case '\f':
        out += "\\f";
        ++i;
        continue;
      default: break;
    }
    if (c >= 0x20 && c <= 0x7E) {  // Python's ensure_ascii keeps exactly ' '..'~' as they are
      out += c;
      ++i;
      continue;
    }
    const long cp = decode_utf8(s, i);
    if (cp < 0) throw Error(error_id::value, "", "string is not valid UTF-8");
    if (cp > 0xFFFF) {
      const long v = cp - 0x10000;
      append_u16(out, static_cast<unsigned>(0xD800 + (v >> 10)));
      append_u16(out, static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
    } else {
      append_u16(out, static_cast<unsigned>(cp));
    }
  }
  out += '"';
  return out;
}

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-Infinity" : "Infinity";
  // Shortest round-trip digits from to_chars' scientific form "d.ddde±XX".
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string_view text(buf, static_cast<std::size_t>(res.ptr - buf));
  const auto e = text.find('e');
  std::string sign, digits;
  for (char c : text.substr(0, e)) {
    if (c == '-')
      sign = "-";
    else if (c != '.')
      digits += c;
  }
  const int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  const int decpt = exponent + 1;  // digits d1d2... mean 0.d1d2... * 10^decpt
  const int n = static_cast<int>(digits.size());
  std::string out = sign;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0." + std::string(static_cast<std::size_t>(-decpt), '0') + digits;
    } else if (decpt >= n) {
      out += digits + std::string(static_cast<std::size_t>(decpt - n), '0') + ".0";
    } else {
      out += digits.substr(0, decpt) + "." + digits.substr(decpt);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (n > 1) out += "." + digits.substr(1);
  const int x = decpt - 1;
  char exp[16];
  std::snprintf(exp, sizeof exp, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
  return out + exp;
}

std::string dump_python_json(const nlohmann::ordered_json& value, int indent) {
  std::string out;
  dump(value, indent < 0 ? 0 : indent, 0, out);
  return out;
}

}  // namespace distspec
