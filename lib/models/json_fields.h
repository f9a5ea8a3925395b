// Typed reading of model-file JSON (the model file itself and each architecture's
// "parameters"): every accessor names the JSON pointer of the value it reads, so a bad value
// becomes a distspec::Error saying where, what was expected and what was found.
#pragma once

#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/model_error.h"

namespace distspec::models {

using Json = nlohmann::ordered_json;

[[noreturn]] void fail_value(const std::string& pointer, const std::string& message,
                             const std::string& hint = {});

// "a string", "an array", ... for messages of the form "expected X, found Y".
std::string json_type_phrase(const Json& value);
// "a, b, c"
std::string join_names(const std::vector<std::string>& names);

// The value must be an object whose keys all appear in `allowed`.
const Json& expect_object(const Json& value, const std::string& pointer,
                          std::initializer_list<const char*> allowed);
const Json& expect_array(const Json& value, const std::string& pointer);
std::string expect_string(const Json& value, const std::string& pointer);
bool expect_bool(const Json& value, const std::string& pointer);
int expect_int(const Json& value, const std::string& pointer);
double expect_finite(const Json& value, const std::string& pointer);
double expect_positive(const Json& value, const std::string& pointer);
double expect_non_negative(const Json& value, const std::string& pointer);

// Member `key` of an object, or nullptr; require_member throws model.missing_key.
const Json* find_member(const Json& object, const char* key);
const Json& require_member(const Json& object, const char* key, const std::string& pointer,
                           const std::string& hint = {});

// A string that must be one of `choices`.
std::string expect_choice(const Json& value, const std::string& pointer,
                          const std::vector<std::string>& choices);

// Opens / reads a whole file; an unreadable file is model.io at `pointer` (the key that named it).
std::ifstream open_file(const std::string& path, const std::string& pointer = {});
std::string read_file_bytes(const std::string& path, const std::string& pointer = {});

}  // namespace distspec::models
