#include "models/json_fields.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "distspec/error.h"
#include "distspec/strict_json.h"

namespace distspec::models {
namespace {

[[noreturn]] void fail_type(const std::string& pointer, const std::string& expected, const Json& found) {
  throw Error(model_error_id::type, pointer, "expected " + expected + ", found " + json_type_phrase(found));
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

void fail_value(const std::string& pointer, const std::string& message, const std::string& hint) {
  throw Error(model_error_id::value, pointer, message, hint);
}

std::string json_type_phrase(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    default: return "a binary value";
  }
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

const Json& expect_object(const Json& value, const std::string& pointer, std::initializer_list<const char*> allowed) {
  if (!value.is_object()) fail_type(pointer, "an object", value);
  for (const auto& [key, member] : value.items()) {
    bool known = false;
    for (const char* a : allowed) known = known || key == a;
    if (known) continue;
    std::vector<std::string> names(allowed.begin(), allowed.end());
    throw Error(model_error_id::unknown_key, pointer + "/" + json_pointer_token(key), "unknown key " + quoted(key),
                "expected one of " + join_names(names));
  }
  return value;
}

const Json& expect_array(const Json& value, const std::string& pointer) {
  if (!value.is_array()) fail_type(pointer, "an array", value);
  return value;
}

std::string expect_string(const Json& value, const std::string& pointer) {
  if (!value.is_string()) fail_type(pointer, "a string", value);
  return value.get<std::string>();
}

bool expect_bool(const Json& value, const std::string& pointer) {
  if (!value.is_boolean()) fail_type(pointer, "true or false", value);
  return value.get<bool>();
}

int expect_int(const Json& value, const std::string& pointer) {
  if (!value.is_number_integer()) fail_type(pointer, "an integer", value);
  if (value.is_number_unsigned() ? value.get<std::uint64_t>() > INT_MAX
                                 : value.get<std::int64_t>() < INT_MIN || value.get<std::int64_t>() > INT_MAX)
    fail_value(pointer, "integer " + value.dump() + " is out of range");
  return value.get<int>();
}

double expect_finite(const Json& value, const std::string& pointer) {
  if (!value.is_number()) fail_type(pointer, "a number", value);
  const double v = value.get<double>();
  // The strict parser rejects overflow, but a Json built in code may hold inf or nan.
  if (!std::isfinite(v)) fail_value(pointer, "expected a finite number, found " + value.dump());
  return v;
}

double expect_positive(const Json& value, const std::string& pointer) {
  const double v = expect_finite(value, pointer);
  if (!(v > 0.0)) fail_value(pointer, "expected a positive number, found " + value.dump());
  return v;
}

double expect_non_negative(const Json& value, const std::string& pointer) {
  const double v = expect_finite(value, pointer);
  if (v < 0.0) fail_value(pointer, "expected a number >= 0, found " + value.dump());
  return v;
}

const Json* find_member(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const Json& require_member(const Json& object, const char* key, const std::string& pointer, const std::string& hint) {
  if (const Json* v = find_member(object, key)) return *v;
  throw Error(model_error_id::missing_key, pointer + "/" + key, std::string("missing required key '") + key + "'",
              hint);
}

std::string expect_choice(const Json& value, const std::string& pointer, const std::vector<std::string>& choices) {
  const std::string s = expect_string(value, pointer);
  for (const std::string& c : choices)
    if (s == c) return s;
  fail_value(pointer, "unknown value " + quoted(s), "expected one of " + join_names(choices));
}

std::ifstream open_file(const std::string& path, const std::string& pointer) {
  // ifstream opens a directory without complaint on Linux; only a regular file will do.
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(path, ec)) in.open(path, std::ios::binary);
  if (!in.is_open())
    throw Error(model_error_id::io, pointer, "cannot read file '" + path + "'",
                "check the path; relative paths in a model file are resolved from the model file's folder");
  return in;
}

std::string read_file_bytes(const std::string& path, const std::string& pointer) {
  std::ifstream in = open_file(path, pointer);
  std::string bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>{});
  if (in.bad()) throw Error(model_error_id::io, pointer, "error while reading file '" + path + "'");
  return bytes;
}

}  // namespace distspec::models
