// A catalogue of malformed specs: each must be rejected with a distspec::Error whose id,
// JSON pointer, message and hint are exactly as pinned here.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "distspec/error.h"
#include "distspec/spec/spec_json.h"

namespace {

// The error `read` throws, or nothing where it accepts its input.
template <class Read>
std::optional<distspec::Error> error_of(Read read) {
  try {
    read();
  } catch (const distspec::Error& e) {
    return e;
  }
  return std::nullopt;
}

// Builders for small specs around the part under test.
std::string with_core(const std::string& core, const std::string& top = "") {
  return R"({"version": 2, "core": )" + core + top + "}";
}
std::string with_top(const std::string& top) {
  return with_core(R"({"policy": {"kind": "halo"}})", ", " + top);
}
std::string with_policy(const std::string& policy) {
  return with_core(R"({"policy": )" + policy + "}");
}
std::string with_ops(const std::string& ops) {
  return with_core(R"({"policy": {"kind": "halo"}, "custom_ops": )" + ops + "}");
}
std::string with_op(const std::string& fields) {
  return with_ops(R"([{"op": "ns::k")" + fields + "}]");
}
std::string with_helpers(const std::string& helpers) {
  return with_core(R"({"policy": {"kind": "halo"}, "third_party_helpers": )" + helpers + "}");
}
std::string with_shard_fields(const std::string& fields) {
  return with_core(R"({"policy": {"kind": "halo"}, "shard_fields": )" + fields + "}");
}

struct Case {
  const char* name;
  std::string input;
  const char* id;
  std::string pointer;
  std::string message;
  std::string hint;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const char* const kPolicyKinds = "expected one of local, shard, graph_parallel, halo, refresh_halo";
const char* const kArgs = "expected one of gather_inputs, gather_inputs_full, slice_owned";
const char* const kOutputs = "expected one of scatter_outputs, all_reduce_sum, slice_outputs_owned";
const char* const kHelperKinds = "expected one of jit, python, method, module_forward";
const char* const kOutputKinds = "expected one of per_node, per_graph, global, unknown";
const char* const kShardFields = "expected one of positions, charges, atomic_numbers";
const char* const kPositions = R"(write positions as "0", "1", "2", ...)";
const char* const kUtf8 = "the file must be UTF-8 encoded";
const char* const kDuplicate = "each key may appear once in an object";
const char* const kNonFinite =
    "the value must be a finite number; Python's json writes NaN/Infinity for non-finite floats, so the program "
    "that wrote this file produced them: fix or regenerate it";
const std::string kArg0 = "/core/custom_ops/0/arg_transforms/";
const char* const kForceStrategies =
    "expected one of model_internal, framework_from_node_energy, framework_from_global_energy";

std::string nested(char open, std::size_t n) { return std::string(n, open); }
std::string zeros(std::size_t n) {
  std::string p;
  for (std::size_t i = 0; i < n; ++i) p += "/0";
  return p;
}

std::vector<Case> catalogue() {
  using namespace distspec::error_id;
  const std::string truncated = R"({"version": 2, "core": {"policy": {"kind": "halo"})";
  const std::string bad_utf8 =
      R"({"version": 2, "core": {"policy": {"kind": "ha)" + std::string("\xff") + R"("}}})";
  return {
      // Bytes that are not acceptable JSON.
      {"empty_file", "", parse, "", "empty input", "expected a JSON object"},
      {"whitespace_only", "  \n", parse, "",
       "invalid JSON at byte 3 (line 2, column 1): syntax error while parsing value - unexpected "
       "end of "
       "input; expected '[', '{', or a literal",
       ""},
      {"truncated", truncated, parse, "/core",
       "invalid JSON at byte 50 (line 1, column 51): syntax error while parsing object - "
       "unexpected end "
       "of input; expected '}'",
       ""},
      {"double_comma", R"({"version": 2,, "core": {}})", parse, "",
       "invalid JSON at byte 14 (line 1, column 15): syntax error while parsing object key - "
       "unexpected ','; "
       "expected string literal",
       ""},
      {"trailing_garbage", with_top(R"("x": 1)") + " x", parse, "",
       "invalid JSON at byte 61 (line 1, column 62): syntax error while parsing value - invalid "
       "literal; "
       "expected end of input",
       ""},
      {"comment", "// spec\n{}", parse, "",
       "invalid JSON at byte 0 (line 1, column 1): syntax error while parsing value - invalid "
       "literal",
       ""},
      {"invalid_utf8_in_string", bad_utf8, parse, "/core/policy",
       "invalid UTF-8 at byte 46 (line 1, column 47): byte 0xff", kUtf8},
      {"overlong_utf8", R"({"version": 2, "x": ")" + std::string("\xc0\xaf") + R"("})", parse, "",
       "invalid UTF-8 at byte 21 (line 1, column 22): byte 0xc0", kUtf8},
      {"invalid_utf8_outside_string", "{\n  \xe9}", parse, "",
       "invalid UTF-8 at byte 4 (line 2, column 3): byte 0xe9", kUtf8},
      {"raw_control_character", "{\"version\": \"2\n\"}", parse, "",
       "invalid JSON at byte 14 (line 1, column 15): syntax error while parsing value - invalid "
       "string: "
       "control character U+000A (LF) must be escaped to \\u000A or \\n",
       ""},
      {"lone_surrogate", R"({"version": "\ud800"})", parse, "",
       "invalid JSON at byte 19 (line 1, column 20): syntax error while parsing value - invalid "
       "string: "
       "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF",
       ""},
      {"number_overflow", R"({"version": 1e999})", parse, "/version",
       "number 1e999 at byte 16 (line 1, column 17) is out of range", "the value must be a finite number a double can hold"},
      {"python_nan", R"({"version": 2, "core": {"policy": {"kind": "halo"}}, "x": [1, NaN]})", parse, "/x/1",
       "non-finite number NaN at byte 62 (line 1, column 63) is not JSON", kNonFinite},
      {"python_infinity", R"({"version": Infinity})", parse, "/version",
       "non-finite number Infinity at byte 12 (line 1, column 13) is not JSON", kNonFinite},
      {"python_negative_infinity", R"({"version": -Infinity})", parse, "/version",
       "non-finite number -Infinity at byte 13 (line 1, column 14) is not JSON", kNonFinite},
      {"deep_nesting_in_spec", R"({"version": 2, "core": )" + nested('[', 100000), parse,
       "/core" + zeros(63), "JSON nested deeper than 64 levels", ""},
      {"deep_nesting_top_level", nested('[', 100000), parse, zeros(64),
       "JSON nested deeper than 64 levels", ""},
      {"duplicate_top_level_key", R"({"version": 2, "version": 2})", duplicate_key, "/version",
       "duplicate key 'version'", kDuplicate},
      {"duplicate_position",
       with_op(
           R"(, "arg_transforms": {"0": {"type": "slice_owned"}, "0": {"type": "gather_inputs"}})"),
       duplicate_key, kArg0 + "0", "duplicate key '0'", kDuplicate},
      {"duplicate_key_with_slash",
       with_top(R"("output_kinds": {"a/b": "global", "a/b": "global"})"), duplicate_key,
       "/output_kinds/a~1b", "duplicate key 'a/b'", kDuplicate},

      // The top level and the version.
      {"top_level_array", "[1]", type, "", "expected object, found array of 1 element", ""},
      {"top_level_string", R"("spec")", type, "", R"(expected object, found string "spec")", ""},
      {"missing_version", R"({"core": {}})", missing_key, "", "missing required key 'version'", ""},
      {"version_string", R"({"version": "2"})", version, "/version",
       R"(expected integer 2, found string "2")", ""},
      {"version_3", R"({"version": 3})", version, "/version", "expected integer 2, found integer 3",
       ""},
      {"version_float_not_two", R"({"version": 2.5})", version, "/version",
       "expected integer 2, found number 2.5", ""},
      {"version_bool", R"({"version": true})", version, "/version",
       "expected integer 2, found boolean true", ""},
      {"version_huge_integer", R"({"version": 123456789012345678901234567890})", version,
       "/version", "expected integer 2, found number 1.2345678901234568e+29", ""},
      {"missing_core", R"({"version": 2})", missing_key, "", "missing required key 'core'", ""},
      {"core_array", with_core("[]"), type, "/core", "expected object, found empty array", ""},

      // The policy.
      {"missing_policy", with_core("{}"), missing_key, "/core", "missing required key 'policy'",
       ""},
      {"policy_string", with_policy(R"("halo")"), type, "/core/policy",
       R"(expected object, found string "halo")", ""},
      {"policy_without_kind", with_policy("{}"), missing_key, "/core/policy",
       "missing required key 'kind'", ""},
      {"policy_kind_integer", with_policy(R"({"kind": 42})"), type, "/core/policy/kind",
       "expected string, found integer 42", ""},
      {"unknown_policy", with_policy(R"({"kind": "halo2"})"), value, "/core/policy/kind",
       "unknown policy 'halo2'", kPolicyKinds},
      {"policy_kind_case", with_policy(R"({"kind": "Halo"})"), value, "/core/policy/kind",
       "unknown policy 'Halo'", kPolicyKinds},
      {"scatter_mode_null", with_policy(R"({"kind": "halo", "scatter_mode": null})"), type,
       "/core/policy/scatter_mode", "expected string, found null", ""},
      {"gather_mode_integer", with_policy(R"({"kind": "refresh_halo", "gather_mode": 1})"), type,
       "/core/policy/gather_mode", "expected string, found integer 1", ""},

      // Op adapters.
      {"custom_ops_object", with_ops("{}"), type, "/core/custom_ops",
       "expected array, found object", ""},
      {"op_entry_string", with_ops(R"(["ns::k"])"), type, "/core/custom_ops/0",
       R"(expected object, found string "ns::k")", ""},
      {"op_missing", with_ops(R"([{"arg_transforms": {}}])"), missing_key, "/core/custom_ops/0",
       "missing required key 'op'", ""},
      {"op_not_string", with_ops(R"([{"op": ["ns", "k"]}])"), type, "/core/custom_ops/0/op",
       "expected string, found array of 2 elements", ""},
      {"op_without_namespace", with_ops(R"([{"op": "lj_energy"}])"), value, "/core/custom_ops/0/op",
       "op name 'lj_energy' is not of the form 'namespace::name'", ""},
      {"op_empty_namespace", with_ops(R"([{"op": "::lj"}])"), value, "/core/custom_ops/0/op",
       "op name '::lj' is not of the form 'namespace::name'", ""},
      {"op_empty_name", with_ops(R"([{"op": "ns::"}])"), value, "/core/custom_ops/0/op",
       "op name 'ns::' is not of the form 'namespace::name'", ""},
      {"op_single_colon", with_ops(R"([{"op": "ns:k"}])"), value, "/core/custom_ops/0/op",
       "op name 'ns:k' is not of the form 'namespace::name'", ""},
      {"arg_transforms_array", with_op(R"(, "arg_transforms": [])"), type,
       "/core/custom_ops/0/arg_transforms", "expected object, found empty array", ""},
      {"position_negative", with_op(R"(, "arg_transforms": {"-1": {"type": "slice_owned"}})"),
       value, kArg0 + "-1", "position '-1' is negative", kPositions},
      {"position_leading_zero", with_op(R"(, "arg_transforms": {"01": {"type": "slice_owned"}})"),
       value, kArg0 + "01", "position '01' has a leading zero", kPositions},
      {"position_fraction", with_op(R"(, "arg_transforms": {"1.5": {"type": "slice_owned"}})"),
       value, kArg0 + "1.5", "position '1.5' is not a decimal integer", kPositions},
      {"position_word", with_op(R"(, "arg_transforms": {"x": {"type": "slice_owned"}})"), value,
       kArg0 + "x", "position 'x' is not a decimal integer", kPositions},
      {"position_empty", with_op(R"(, "arg_transforms": {"": {"type": "slice_owned"}})"), value,
       kArg0, "position '' is not a decimal integer", kPositions},
      {"position_plus", with_op(R"(, "output_transforms": {"+1": {"type": "all_reduce_sum"}})"),
       value, "/core/custom_ops/0/output_transforms/+1", "position '+1' is not a decimal integer",
       kPositions},
      {"position_beyond_int",
       with_op(R"(, "arg_transforms": {"2147483648": {"type": "slice_owned"}})"), value,
       kArg0 + "2147483648", "position '2147483648' is out of range (at most 2147483647)", ""},
      {"transform_string", with_op(R"(, "arg_transforms": {"0": "slice_owned"})"), type,
       kArg0 + "0", R"(expected object, found string "slice_owned")", ""},
      {"transform_without_type", with_op(R"(, "arg_transforms": {"0": {}})"), missing_key,
       kArg0 + "0", "missing required key 'type'", ""},
      {"transform_type_null", with_op(R"(, "arg_transforms": {"0": {"type": null}})"), type,
       kArg0 + "0/type", "expected string, found null", ""},
      {"unknown_arg_transform",
       with_ops(
           R"([{"op": "ns::a"}, {"op": "ns::b", "arg_transforms": {"0": {"type": "gather"}}}])"),
       value, "/core/custom_ops/1/arg_transforms/0/type", "unknown arg transform 'gather'", kArgs},
      {"unknown_output_transform",
       with_op(R"(, "output_transforms": {"2": {"type": "all_reduce"}})"), value,
       "/core/custom_ops/0/output_transforms/2/type", "unknown output transform 'all_reduce'",
       kOutputs},
      {"arg_transform_as_output",
       with_op(R"(, "output_transforms": {"0": {"type": "slice_owned"}})"), value,
       "/core/custom_ops/0/output_transforms/0/type", "unknown output transform 'slice_owned'",
       kOutputs},

      // Helper records.
      {"helpers_not_array", with_helpers("null"), type, "/core/third_party_helpers",
       "expected array, found null", ""},
      {"helper_without_kind", with_helpers(R"([{"module_path": "m"}])"), missing_key,
       "/core/third_party_helpers/0", "missing required key 'kind'", ""},
      {"unknown_helper_kind", with_helpers(R"([{"kind": "function"}])"), value,
       "/core/third_party_helpers/0/kind", "unknown helper kind 'function'", kHelperKinds},
      {"method_without_class",
       with_helpers(R"([{"kind": "method", "module_path": "m", "method_name": "f"}])"), missing_key,
       "/core/third_party_helpers/0", "missing required key 'class_name'", ""},
      {"replacement_integer",
       with_helpers(
           R"([{"kind": "python", "module_path": "m", "attr_name": "f", "replacement": 5}])"),
       type, "/core/third_party_helpers/0/replacement", "expected string or null, found integer 5",
       ""},
      {"jit_mode_null",
       with_helpers(R"([{"kind": "jit", "module_path": "m", "attr_name": "f", "mode": null}])"),
       type, "/core/third_party_helpers/0/mode", "expected string, found null", ""},
      {"module_forward_without_target",
       with_helpers(R"([{"kind": "module_forward", "label": "x"}])"), missing_key,
       "/core/third_party_helpers/0", "missing required key 'target'", ""},

      // Shard fields.
      {"shard_fields_string", with_shard_fields(R"("positions")"), type, "/core/shard_fields",
       R"(expected array, found string "positions")", ""},
      {"shard_field_integer", with_shard_fields("[1]"), type, "/core/shard_fields/0",
       "expected string, found integer 1", ""},
      {"unknown_shard_field", with_shard_fields(R"(["positions", "velocities"])"), value,
       "/core/shard_fields/1", "unknown shard field 'velocities'", kShardFields},

      // What nvalchemi's released reader refuses (error parity, doc/pair_distspec.rst).
      {"compile_string", with_top(R"("compile": "yes")"), type, "/compile",
       R"(expected object or null, found string "yes")", ""},
      {"compile_false", with_top(R"("compile": false)"), type, "/compile",
       "expected object or null, found boolean false", ""},
      {"compile_without_force_strategy", with_top(R"("compile": {"static_shapes": true})"),
       missing_key, "/compile", "missing required key 'force_strategy'", ""},
      {"compile_bad_force_strategy", with_top(R"("compile": {"force_strategy": "autograd"})"),
       value, "/compile/force_strategy", "unknown force strategy 'autograd'", kForceStrategies},
      {"compile_static_shapes_string",
       with_top(R"("compile": {"force_strategy": "model_internal", "static_shapes": "no"})"), type,
       "/compile/static_shapes", R"(expected boolean, found string "no")", ""},
      {"arg_transform_extra_field",
       with_op(R"(, "arg_transforms": {"0": {"type": "slice_owned", "replicated_consumer": true}})"),
       value, kArg0 + "0/replicated_consumer", "transform 'slice_owned' has no field 'replicated_consumer'",
       R"(a 'slice_owned' transform is written as {"type": "slice_owned"} alone)"},
      {"output_transform_extra_field",
       with_op(R"(, "output_transforms": {"1": {"type": "all_reduce_sum", "op": "max"}})"), value,
       "/core/custom_ops/0/output_transforms/1/op", "transform 'all_reduce_sum' has no field 'op'",
       "its fields are: replicated_consumer"},
      {"replicated_consumer_not_boolean",
       with_op(R"(, "output_transforms": {"0": {"type": "all_reduce_sum", "replicated_consumer": 1}})"),
       type, "/core/custom_ops/0/output_transforms/0/replicated_consumer",
       "expected boolean, found integer 1", ""},
      {"op_name_two_separators", with_ops(R"([{"op": "ns::sub::k"}])"), value,
       "/core/custom_ops/0/op", "op name 'ns::sub::k' is not of the form 'namespace::name'", ""},
      {"utf8_byte_order_mark", "\xEF\xBB\xBF" + with_top(R"("x": 1)"), parse, "",
       "the file starts with a UTF-8 byte-order mark, which JSON does not allow (RFC 8259, section "
       "8.1) and nvalchemi's loader refuses",
       "save the file as UTF-8 without a byte-order mark"},

      // Top-level flags, keys and output classification.
      {"system_reductions_string", with_top(R"("system_reductions": "yes")"), type,
       "/system_reductions", R"(expected boolean, found string "yes")", ""},
      {"gp_replicate_geometry_integer", with_top(R"("gp_replicate_geometry": 0)"), type,
       "/gp_replicate_geometry", "expected boolean, found integer 0", ""},
      {"node_energy_key_integer", with_top(R"("node_energy_key": 1)"), type, "/node_energy_key",
       "expected string or null, found integer 1", ""},
      {"node_virial_key_bool", with_top(R"("node_virial_key": false)"), type, "/node_virial_key",
       "expected string or null, found boolean false", ""},
      {"owned_only_string", with_top(R"("owned_only_outputs": "forces")"), type,
       "/owned_only_outputs", R"(expected array, found string "forces")", ""},
      {"all_reduce_null_entry", with_top(R"("all_reduce_outputs": ["stress", null])"), type,
       "/all_reduce_outputs/1", "expected string, found null", ""},
      {"output_kinds_string", with_top(R"("output_kinds": "per_node")"), type, "/output_kinds",
       R"(expected array of [name, kind] pairs or object, found string "per_node")", ""},
      {"output_kind_single", with_top(R"("output_kinds": [["energy"]])"), type, "/output_kinds/0",
       "expected [name, kind] pair, found array of 1 element", ""},
      {"output_kind_triple", with_top(R"("output_kinds": [["energy", "per_graph", "x"]])"), type,
       "/output_kinds/0", "expected [name, kind] pair, found array of 3 elements", ""},
      {"output_kind_name_integer", with_top(R"("output_kinds": [[1, "per_graph"]])"), type,
       "/output_kinds/0/0", "expected string, found integer 1", ""},
      {"unknown_output_kind",
       with_top(R"("output_kinds": [["energy", "per_graph"], ["forces", "per_atom"]])"), value,
       "/output_kinds/1/1", "unknown output kind 'per_atom'", kOutputKinds},
      {"unknown_output_kind_object", with_top(R"("output_kinds": {"forces": "per_atom"})"), value,
       "/output_kinds/forces", "unknown output kind 'per_atom'", kOutputKinds},
      {"output_kind_object_value_list", with_top(R"("output_kinds": {"forces": ["per_node"]})"),
       type, "/output_kinds/forces", "expected string, found array of 1 element", ""},
      {"output_listed_twice",
       with_top(R"("output_kinds": [["energy", "per_graph"], ["energy", "global"]])"), value,
       "/output_kinds/1/0", "output 'energy' listed twice", ""},
      {"long_name_is_cut", with_policy(R"({"kind": ")" + std::string(80, 'h') + R"("})"), value,
       "/core/policy/kind", "unknown policy '" + std::string(64, 'h') + "...'", kPolicyKinds},
      {"control_bytes_are_escaped", with_policy(R"({"kind": "a\u0001b\\"})"), value,
       "/core/policy/kind", R"(unknown policy 'a\x01b\x5c')", kPolicyKinds},
  };
}

class SpecErrors : public ::testing::TestWithParam<Case> {};

TEST_P(SpecErrors, RejectedWithExactPointerAndMessage) {
  const Case& c = GetParam();
  const std::optional<distspec::Error> e =
      error_of([&] { (void)distspec::read_mlip_spec(c.input, "spec.json"); });
  ASSERT_TRUE(e) << "accepted: " << c.input.substr(0, 200);
  EXPECT_EQ(e->id(), c.id);
  EXPECT_EQ(e->pointer(), c.pointer);
  EXPECT_EQ(e->message(), c.message);
  EXPECT_EQ(e->hint(), c.hint);
  EXPECT_EQ(e->file(), "spec.json");
  std::string what = "spec.json: ";
  if (!c.pointer.empty()) what += c.pointer + ": ";
  what += c.message;
  if (!c.hint.empty()) what += "; " + c.hint;
  EXPECT_EQ(std::string(e->what()), what);
}

INSTANTIATE_TEST_SUITE_P(Catalogue, SpecErrors, ::testing::ValuesIn(catalogue()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.name);
                         });

TEST(SpecErrorsCatalogue, HasAtLeast45DistinctCases) { EXPECT_GE(catalogue().size(), 45u); }

// The same rules hold for a spec embedded in a larger document, with pointers under its prefix.
TEST(SpecErrorsEmbedded, PointersCarryTheBasePointer) {
  const auto model = nlohmann::ordered_json::parse(
      R"({"name": "m", "spec": {"version": 2, "core": {"policy": {"kind": "halo2"}}}})");
  const std::optional<distspec::Error> e =
      error_of([&] { (void)distspec::mlip_spec_from_json(model["spec"], "model.json", "/spec"); });
  ASSERT_TRUE(e) << "accepted";
  EXPECT_EQ(e->pointer(), "/spec/core/policy/kind");
  EXPECT_EQ(
      std::string(e->what()),
      "model.json: /spec/core/policy/kind: unknown policy 'halo2'; expected one of local, shard, "
      "graph_parallel, halo, refresh_halo");
}

TEST(SpecErrorsEmbedded, UnorderedJsonIsReadTheSameWay) {
  const auto model =
      nlohmann::json::parse(R"({"spec": {"version": 2, "core": {"policy": {"kind": "halo"},
      "custom_ops": [{"op": "nope"}]}}})");
  const std::optional<distspec::Error> e =
      error_of([&] { (void)distspec::mlip_spec_from_json(model["spec"], "model.json", "/spec"); });
  ASSERT_TRUE(e) << "accepted";
  EXPECT_EQ(e->id(), distspec::error_id::value);
  EXPECT_EQ(e->pointer(), "/spec/core/custom_ops/0/op");
  EXPECT_EQ(e->message(), "op name 'nope' is not of the form 'namespace::name'");
}

TEST(SpecErrorsFile, MissingFileNamesTheFile) {
  const std::optional<distspec::Error> e =
      error_of([&] { (void)distspec::read_mlip_spec_file("/nonexistent/dir/spec.json"); });
  ASSERT_TRUE(e) << "accepted";
  EXPECT_EQ(e->id(), distspec::error_id::io);
  EXPECT_EQ(e->file(), "/nonexistent/dir/spec.json");
  EXPECT_EQ(std::string(e->what()),
            "/nonexistent/dir/spec.json: cannot open: No such file or directory");
}

TEST(SpecErrorsFile, DirectoryIsUnreadable) {
  const std::optional<distspec::Error> e =
      error_of([&] { (void)distspec::read_mlip_spec_file("/"); });
  ASSERT_TRUE(e) << "accepted";
  EXPECT_EQ(e->id(), distspec::error_id::io);
  EXPECT_EQ(std::string(e->what()), "/: cannot read: Is a directory");
}

}  // namespace
