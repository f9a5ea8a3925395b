// Reading an MLIPSpec v2 object. Each function takes the JSON pointer of the value it reads so
// that every rejection names the offending value, what was expected and what was found.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "distspec/error.h"
#include "distspec/spec/python_json.h"
#include "distspec/spec/spec_json.h"
#include "distspec/strict_json.h"

namespace distspec {
namespace {

[[noreturn]] void fail(const char* id, std::string pointer, std::string message,
                       std::string hint = {}) {
  throw Error(id, std::move(pointer), std::move(message), std::move(hint));
}

// "found ..." text: the JSON type, and the value where it is short.
template <class Json>
std::string describe(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return v.template get<bool>() ? "boolean true" : "boolean false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer " + v.dump();
    case Json::value_t::number_float:
      return "number " + python_float_repr(v.template get<double>());
    case Json::value_t::string: {
      std::string s = v.template get<std::string>();
      constexpr std::size_t kMax = 64;
      if (s.size() <= kMax) return "string " + python_json_string(s);
      std::size_t cut = kMax;  // back off to a UTF-8 character boundary
      while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
      return "string " + python_json_string(s.substr(0, cut)) + "...";
    }
    case Json::value_t::array:
      return v.empty() ? "empty array"
                       : "array of " + std::to_string(v.size()) +
                             (v.size() == 1 ? " element" : " elements");
    case Json::value_t::object: return "object";
    default: return "binary data";
  }
}

template <class Json>
[[noreturn]] void fail_type(const std::string& pointer, const std::string& expected,
                            const Json& found) {
  fail(error_id::type, pointer, "expected " + expected + ", found " + describe(found));
}

template <class Json>
const Json& object_at(const Json& v, const std::string& pointer) {
  if (!v.is_object()) fail_type(pointer, "object", v);
  return v;
}

template <class Json>
const Json& array_at(const Json& v, const std::string& pointer) {
  if (!v.is_array()) fail_type(pointer, "array", v);
  return v;
}

template <class Json>
std::string string_at(const Json& v, const std::string& pointer) {
  if (!v.is_string()) fail_type(pointer, "string", v);
  return v.template get<std::string>();
}

template <class Json>
const Json* member(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// A missing key is reported at the object that lacks it.
template <class Json>
const Json& required(const Json& obj, const std::string& pointer, const char* key) {
  if (const Json* v = member(obj, key)) return *v;
  fail(error_id::missing_key, pointer, std::string("missing required key '") + key + "'");
}

template <class Json>
std::string required_string(const Json& obj, const std::string& pointer, const char* key) {
  return string_at(required(obj, pointer, key), pointer + "/" + key);
}

// Absent -> nullopt; present -> must be a string.
template <class Json>
std::optional<std::string> optional_string(const Json& obj, const std::string& pointer,
                                           const char* key) {
  const Json* v = member(obj, key);
  if (!v) return std::nullopt;
  return string_at(*v, pointer + "/" + key);
}

// Absent or null -> nullopt; otherwise a string.
template <class Json>
std::optional<std::string> string_or_null(const Json& obj, const std::string& pointer,
                                          const char* key) {
  const Json* v = member(obj, key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_string()) fail_type(pointer + "/" + key, "string or null", *v);
  return v->template get<std::string>();
}

template <class Json>
bool bool_or(const Json& obj, const std::string& pointer, const char* key, bool fallback) {
  const Json* v = member(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail_type(pointer + "/" + key, "boolean", *v);
  return v->template get<bool>();
}

// A set of names: read in any order, kept sorted without repeats (nvalchemi holds a frozenset
// and writes it sorted).
template <class Json>
std::vector<std::string> name_set(const Json& obj, const std::string& pointer, const char* key) {
  std::vector<std::string> names;
  const Json* v = member(obj, key);
  if (!v) return names;
  const std::string at = pointer + "/" + key;
  for (std::size_t i = 0; i < array_at(*v, at).size(); ++i) {
    names.push_back(string_at((*v)[i], at + "/" + std::to_string(i)));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

// Transform positions are object keys: canonical decimal integers only, so that a position
// has one spelling and the writer's ascending order is well defined.
int parse_position(const std::string& text, const std::string& pointer) {
  const char* hint = "write positions as \"0\", \"1\", \"2\", ...";
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    const bool negative =
        text.size() > 1 && text[0] == '-' &&
        std::all_of(text.begin() + 1, text.end(), [](char c) { return c >= '0' && c <= '9'; });
    fail(error_id::value, pointer,
         "position " + quote(text) + (negative ? " is negative" : " is not a decimal integer"),
         hint);
  }
  if (text.size() > 1 && text[0] == '0') {
    fail(error_id::value, pointer, "position " + quote(text) + " has a leading zero", hint);
  }
  long long value = 0;
  for (char c : text) {
    value = value * 10 + (c - '0');
    if (value > INT_MAX) {
      fail(
          error_id::value, pointer,
          "position " + quote(text) + " is out of range (at most " + std::to_string(INT_MAX) + ")");
    }
  }
  return static_cast<int>(value);
}

// A transform's fields other than "type" must be fields of its type (nvalchemi builds the
// dataclass from them and refuses any other); `read_field` takes each known one.
template <class Json, class ReadField>
void read_transform_fields(const Json& entry, const std::string& pointer, std::string_view type,
                           const std::vector<std::string_view>& fields, ReadField read_field) {
  for (const auto& [key, value] : entry.items()) {
    if (key == "type") continue;
    if (std::find(fields.begin(), fields.end(), key) == fields.end()) {
      std::string known;
      for (std::string_view f : fields) known += (known.empty() ? "" : ", ") + std::string(f);
      fail(error_id::value, pointer + "/" + json_pointer_token(key),
           "transform " + quote(type) + " has no field " + quote(key),
           known.empty() ? "a '" + std::string(type) + "' transform is written as {\"type\": \"" +
                               std::string(type) + "\"} alone"
                         : "its fields are: " + known);
    }
    read_field(key, value, pointer + "/" + json_pointer_token(key));
  }
}

// Walks {"<position>": {"type": NAME, ...fields}}: NAME must be one `parse` knows (else the
// error lists `known()`, naming the transforms by `noun`); `make` turns (transform, type, entry,
// pointer) into the stored transform.
template <class Stored, class Json, class Parse, class Make>
std::map<int, Stored> read_transforms(const Json& op, const std::string& pointer, const char* key,
                                      const char* noun, Parse parse, std::string (*known)(),
                                      Make make) {
  std::map<int, Stored> transforms;
  const Json* v = member(op, key);
  if (!v) return transforms;
  const std::string at = pointer + "/" + key;
  for (const auto& [position, entry] : object_at(*v, at).items()) {
    const std::string entry_at = at + "/" + json_pointer_token(position);
    const int index = parse_position(position, entry_at);
    const std::string type = required_string(object_at(entry, entry_at), entry_at, "type");
    const auto transform = parse(type);
    if (!transform) {
      fail(error_id::value, entry_at + "/type",
           std::string("unknown ") + noun + " transform " + quote(type), "expected one of " + known());
    }
    transforms.emplace(index, make(*transform, type, entry, entry_at));
  }
  return transforms;
}

template <class Json>
std::map<int, ArgTransform> read_arg_transforms(const Json& op, const std::string& pointer) {
  return read_transforms<ArgTransform>(
      op, pointer, "arg_transforms", "arg", arg_transform_from_string, arg_transform_list,
      [](ArgTransform t, const std::string& type, const Json& entry, const std::string& at) {
        read_transform_fields(entry, at, type, transform_fields(t),
                              [](const std::string&, const Json&, const std::string&) {});
        return t;
      });
}

template <class Json>
std::map<int, OutputTransformEntry> read_output_transforms(const Json& op,
                                                           const std::string& pointer) {
  return read_transforms<OutputTransformEntry>(
      op, pointer, "output_transforms", "output", output_transform_from_string,
      output_transform_list,
      [](OutputTransform t, const std::string& type, const Json& entry, const std::string& at) {
        OutputTransformEntry stored(t);
        stored.fields_written = transform_fields(t).empty();
        read_transform_fields(entry, at, type, transform_fields(t),
                              [&](const std::string&, const Json& value, const std::string& field_at) {
                                // replicated_consumer, the one field a transform type has
                                if (!value.is_boolean()) fail_type(field_at, "boolean", value);
                                stored.replicated_consumer = value.template get<bool>();
                                stored.fields_written = true;
                              });
        return stored;
      });
}

template <class Json>
StoragePolicy read_policy(const Json& v, const std::string& pointer) {
  const Json& obj = object_at(v, pointer);
  const std::string kind = required_string(obj, pointer, "kind");
  const std::optional<PolicyKind> info = find_policy_kind(kind);
  if (!info) {
    fail(error_id::value, pointer + "/kind", "unknown policy " + quote(kind),
         "expected one of " + policy_kind_list());
  }
  // Non-halo kinds have no modes; like nvalchemi, ignore any that a record carries.
  if (!info->halo) return StoragePolicy(kind);
  return StoragePolicy(kind, optional_string(obj, pointer, "scatter_mode"),
                       optional_string(obj, pointer, "gather_mode"));
}

template <class Json>
OpAdapter read_op(const Json& v, const std::string& pointer) {
  const Json& obj = object_at(v, pointer);
  std::string name = required_string(obj, pointer, "op");
  if (auto problem = op_name_problem(name)) fail(error_id::value, pointer + "/op", *problem);
  return OpAdapter(std::move(name), read_arg_transforms(obj, pointer),
                   read_output_transforms(obj, pointer));
}

// Optional fields take nvalchemi's from_dict defaults (replacement null, jit mode "eager",
// method mode "wrap", label "module_forward").
template <class Json>
HelperRecord read_helper(const Json& v, const std::string& pointer) {
  const Json& obj = object_at(v, pointer);
  const std::string kind = required_string(obj, pointer, "kind");
  if (kind == "jit") {
    JitHelper h{required_string(obj, pointer, "module_path"),
                required_string(obj, pointer, "attr_name"),
                string_or_null(obj, pointer, "replacement")};
    if (auto mode = optional_string(obj, pointer, "mode")) h.mode = std::move(*mode);
    return h;
  }
  if (kind == "python") {
    return PythonHelper{required_string(obj, pointer, "module_path"),
                        required_string(obj, pointer, "attr_name"),
                        string_or_null(obj, pointer, "replacement")};
  }
  if (kind == "method") {
    MethodHelper h{
        required_string(obj, pointer, "module_path"), required_string(obj, pointer, "class_name"),
        required_string(obj, pointer, "method_name"), string_or_null(obj, pointer, "replacement")};
    if (auto mode = optional_string(obj, pointer, "mode")) h.mode = std::move(*mode);
    return h;
  }
  if (kind == "module_forward") {
    ModuleForwardHelper h{required_string(obj, pointer, "target")};
    if (auto label = optional_string(obj, pointer, "label")) h.label = std::move(*label);
    return h;
  }
  fail(error_id::value, pointer + "/kind", "unknown helper kind " + quote(kind),
       "expected one of " + helper_kind_list());
}

template <class Json>
std::vector<std::string> read_shard_fields(const Json& v, const std::string& pointer) {
  std::vector<std::string> fields;
  const auto& known = default_shard_fields();
  for (std::size_t i = 0; i < array_at(v, pointer).size(); ++i) {
    const std::string at = pointer + "/" + std::to_string(i);
    std::string name = string_at(v[i], at);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      fail(error_id::value, at, "unknown shard field " + quote(name),
           "expected one of " + shard_field_list());
    }
    // A repeat promotes nothing more; kept so the file is written back as it was (nvalchemi
    // keeps the list as a tuple).
    fields.push_back(std::move(name));
  }
  return fields;
}

template <class Json>
DistributionSpec read_core(const Json& v, const std::string& pointer) {
  const Json& obj = object_at(v, pointer);
  DistributionSpec core;
  core.policy = read_policy(required(obj, pointer, "policy"), pointer + "/policy");
  if (const Json* ops = member(obj, "custom_ops")) {
    const std::string at = pointer + "/custom_ops";
    for (std::size_t i = 0; i < array_at(*ops, at).size(); ++i) {
      core.custom_ops.push_back(read_op((*ops)[i], at + "/" + std::to_string(i)));
    }
  }
  if (const Json* helpers = member(obj, "third_party_helpers")) {
    const std::string at = pointer + "/third_party_helpers";
    for (std::size_t i = 0; i < array_at(*helpers, at).size(); ++i) {
      core.third_party_helpers.push_back(read_helper((*helpers)[i], at + "/" + std::to_string(i)));
    }
  }
  if (const Json* fields = member(obj, "shard_fields")) {
    core.shard_fields = read_shard_fields(*fields, pointer + "/shard_fields");
  }
  return core;
}

// output_kinds: the [[name, kind], ...] list nvalchemi writes, or a {name: kind} object.
template <class Json>
std::vector<std::pair<std::string, OutputKind>> read_output_kinds(const Json& v,
                                                                  const std::string& pointer) {
  std::vector<std::pair<std::string, OutputKind>> kinds;
  auto add = [&](std::string name, const std::string& name_at, const Json& kind,
                 const std::string& kind_at) {
    const std::string text = string_at(kind, kind_at);
    const std::optional<OutputKind> parsed = output_kind_from_string(text);
    if (!parsed) {
      fail(error_id::value, kind_at, "unknown output kind " + quote(text),
           "expected one of " + output_kind_list());
    }
    for (const auto& entry : kinds) {
      if (entry.first == name) {
        fail(error_id::value, name_at, "output " + quote(name) + " listed twice");
      }
    }
    kinds.emplace_back(std::move(name), *parsed);
  };
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string at = pointer + "/" + std::to_string(i);
      const Json& pair = v[i];
      if (!pair.is_array() || pair.size() != 2) fail_type(at, "[name, kind] pair", pair);
      add(string_at(pair[0], at + "/0"), at + "/0", pair[1], at + "/1");
    }
  } else if (v.is_object()) {
    for (const auto& [name, kind] : v.items()) {
      const std::string at = pointer + "/" + json_pointer_token(name);
      add(name, at, kind, at);
    }
  } else {
    fail_type(pointer, "array of [name, kind] pairs or object", v);
  }
  std::sort(kinds.begin(), kinds.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return kinds;
}

// "compile": null, or {"static_shapes", "force_strategy", "stress_via_strain"} with nvalchemi's
// defaults for the two booleans; force_strategy is required, as nvalchemi's reader requires it.
template <class Json>
std::optional<CompilePolicy> read_compile(const Json& v, const std::string& pointer) {
  if (v.is_null()) return std::nullopt;
  if (!v.is_object()) fail_type(pointer, "object or null", v);
  CompilePolicy policy;
  const std::string name = required_string(v, pointer, "force_strategy");
  const std::optional<ForceStrategy> strategy = force_strategy_from_string(name);
  if (!strategy) {
    fail(error_id::value, pointer + "/force_strategy", "unknown force strategy " + quote(name),
         "expected one of " + force_strategy_list());
  }
  policy.force_strategy = *strategy;
  policy.static_shapes = bool_or(v, pointer, "static_shapes", true);
  policy.stress_via_strain = bool_or(v, pointer, "stress_via_strain", false);
  return policy;
}

template <class Json>
MLIPSpec read_spec(const Json& root, const std::string& base) {
  const Json& obj = object_at(root, base);
  // The version decides how to read the rest, so it is checked first. Compared by value, as
  // nvalchemi does (2.0 == 2 in Python; a boolean is not a number here).
  const Json& version = required(obj, base, "version");
  if (!version.is_number() || version != 2) {
    fail(error_id::version, base + "/version", "expected integer 2, found " + describe(version));
  }
  MLIPSpec spec;
  spec.core = read_core(required(obj, base, "core"), base + "/core");
  spec.system_reductions = bool_or(obj, base, "system_reductions", true);
  spec.node_energy_key = string_or_null(obj, base, "node_energy_key");
  spec.node_virial_key = string_or_null(obj, base, "node_virial_key");
  spec.gp_replicate_geometry = bool_or(obj, base, "gp_replicate_geometry", false);
  spec.owned_only_outputs = name_set(obj, base, "owned_only_outputs");
  spec.all_reduce_outputs = name_set(obj, base, "all_reduce_outputs");
  if (const Json* kinds = member(obj, "output_kinds")) {
    spec.output_kinds = read_output_kinds(*kinds, base + "/output_kinds");
  }
  const Json* compile = member(obj, "compile");
  spec.compile_written = compile != nullptr;
  if (compile) spec.compile = read_compile(*compile, base + "/compile");
  return spec;
}

// The single exit point of the reader: every failure leaves as an Error naming the file.
template <class Json>
MLIPSpec read_guarded(const Json& value, const std::string& file, const std::string& base) {
  try {
    return read_spec(value, base);
  } catch (const Error& e) {
    throw e.with_file(file);
  } catch (const nlohmann::json::exception& e) {
    throw Error(error_id::value, base, std::string("unexpected JSON error: ") + e.what(), {}, file);
  }
}

}  // namespace

MLIPSpec mlip_spec_from_json(const nlohmann::json& value, const std::string& file,
                             const std::string& base_pointer) {
  return read_guarded(value, file, base_pointer);
}

MLIPSpec mlip_spec_from_json(const nlohmann::ordered_json& value, const std::string& file,
                             const std::string& base_pointer) {
  return read_guarded(value, file, base_pointer);
}

MLIPSpec read_mlip_spec(std::string_view bytes, const std::string& file) {
  // JSON parsers may skip a byte-order mark; Python's json.loads, and so nvalchemi, refuses it.
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") {
    throw Error(error_id::parse, "",
                "the file starts with a UTF-8 byte-order mark, which JSON does not allow (RFC 8259, "
                "section 8.1) and nvalchemi's loader refuses",
                "save the file as UTF-8 without a byte-order mark", file);
  }
  return read_guarded(parse_json_strict(bytes, file), file, "");
}

MLIPSpec read_mlip_spec_file(const std::string& path) {
  struct Close {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  const std::unique_ptr<std::FILE, Close> f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    throw Error(error_id::io, "", std::string("cannot open: ") + std::strerror(errno), {}, path);
  }
  std::string bytes;
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) bytes.append(buf, n);
  if (std::ferror(f.get())) {
    throw Error(error_id::io, "", std::string("cannot read: ") + std::strerror(errno), {}, path);
  }
  return read_mlip_spec(bytes, path);
}

}  // namespace distspec
