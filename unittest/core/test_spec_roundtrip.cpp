// Golden specs written by nvalchemi must read and write back byte for byte, and specs built in
// C++ must equal their golden counterparts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <type_traits>
#include <variant>
#include <sstream>
#include <string>
#include <vector>

#include "distspec/spec/python_json.h"
#include "distspec/spec/spec_json.h"

namespace {

using namespace distspec;
namespace fs = std::filesystem;

const fs::path kSpecs = DISTSPEC_SHARED_SPECS_DIR;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The files nvalchemi's released wheel (0.2.0; 0.3.0 writes the same bytes) saved.
const char* const kRelease = "nvalchemi-0.2.0";

// Golden files by path below kSpecs without ".json": the older writer's at the top, the
// released wheel's below kRelease.
std::vector<std::string> golden_names(const std::string& folder = "") {
  std::vector<std::string> names;
  const fs::path dir = kSpecs / folder;
  if (fs::is_directory(dir)) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".json")
        names.push_back((fs::path(folder) / entry.path().stem()).generic_string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> all_golden_names() {
  std::vector<std::string> names = golden_names();
  for (const std::string& n : golden_names(kRelease)) names.push_back(n);
  return names;
}

std::string golden(const std::string& name) { return read_bytes(kSpecs / (name + ".json")); }

TEST(GoldenSpecs, AllNineArePresent) {
  EXPECT_EQ(golden_names().size(), 9u) << "golden folder: " << kSpecs;
}

TEST(GoldenSpecs, TheReleasedWheelsTwentyArePresent) {
  EXPECT_EQ(golden_names(kRelease).size(), 20u) << "golden folder: " << kSpecs / kRelease;
}

class GoldenRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenRoundTrip, ReadThenWriteGivesTheSameBytes) {
  const std::string bytes = golden(GetParam());
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(write_mlip_spec(read_mlip_spec(bytes, GetParam())), bytes);
}

TEST_P(GoldenRoundTrip, ReadingFromTheFileMatchesReadingBytes) {
  const std::string path = (kSpecs / (GetParam() + ".json")).string();
  EXPECT_EQ(read_mlip_spec_file(path), read_mlip_spec(golden(GetParam())));
}

TEST_P(GoldenRoundTrip, KeyOrderDoesNotMatterOnRead) {
  // Reverse every object's keys: the reader must not depend on order, the writer restores it.
  const std::string bytes = golden(GetParam());
  std::function<nlohmann::ordered_json(const nlohmann::ordered_json&)> reverse =
      [&](const nlohmann::ordered_json& v) {
        if (v.is_array()) {
          nlohmann::ordered_json out = nlohmann::ordered_json::array();
          for (const auto& x : v) out.push_back(reverse(x));
          return out;
        }
        if (!v.is_object()) return v;
        std::vector<std::pair<std::string, nlohmann::ordered_json>> items;
        for (const auto& [k, x] : v.items()) items.emplace_back(k, reverse(x));
        nlohmann::ordered_json out = nlohmann::ordered_json::object();
        for (auto it = items.rbegin(); it != items.rend(); ++it) out[it->first] = it->second;
        return out;
      };
  const std::string reversed = reverse(nlohmann::ordered_json::parse(bytes)).dump();
  ASSERT_NE(reversed, bytes);
  EXPECT_EQ(write_mlip_spec(read_mlip_spec(reversed)), bytes);
}

INSTANTIATE_TEST_SUITE_P(Specs, GoldenRoundTrip, ::testing::ValuesIn(all_golden_names()));

// --- Specs built in C++ ----------------------------------------------------------------------

std::vector<std::pair<std::string, OutputKind>> standard_output_kinds() {
  return {{"atomic_energies", OutputKind::per_node},
          {"energy", OutputKind::per_graph},
          {"forces", OutputKind::per_node},
          {"stress", OutputKind::per_graph}};
}

MLIPSpec halo_spec() {
  MLIPSpec spec;
  spec.core.policy = StoragePolicy("halo");
  spec.output_kinds = standard_output_kinds();
  return spec;
}

// The same spec as the older writer spelled it: no "compile" member, transforms by type alone.
MLIPSpec as_older_writer(MLIPSpec spec) {
  spec.compile_written = false;
  for (OpAdapter& op : spec.core.custom_ops)
    for (auto& entry : op.output_transforms) entry.second.fields_written = false;
  return spec;
}

// Python's re-save is lossy: a helper replacement it cannot import comes back null. The
// released wheel's golden_* files went through that re-save; `helpers` are the ones it lost.
MLIPSpec without_replacements(MLIPSpec spec, const std::vector<std::size_t>& helpers) {
  for (std::size_t i : helpers) {
    std::visit(
        [](auto& helper) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(helper)>, ModuleForwardHelper>)
            helper.replacement.reset();
        },
        spec.core.third_party_helpers.at(i));
  }
  return spec;
}

// A spec built in C++ equals its golden file in both spellings: the older writer's, and the
// released wheel's re-save of it (golden_<name>), which adds "compile": null and every
// transform field.
void expect_matches_golden(const MLIPSpec& built, const std::string& name,
                           const std::vector<std::size_t>& unimportable_replacements = {}) {
  EXPECT_EQ(built, read_mlip_spec(golden(name)));
  EXPECT_EQ(write_mlip_spec(as_older_writer(built)), golden(name));
  const std::string release = std::string(kRelease) + "/golden_" + name;
  const MLIPSpec resaved = without_replacements(built, unimportable_replacements);
  EXPECT_EQ(resaved, read_mlip_spec(golden(release)));
  EXPECT_EQ(write_mlip_spec(resaved), golden(release));
}

TEST(BuiltSpecs, MpnnHaloPreset) { expect_matches_golden(halo_spec(), "mpnn_halo_preset"); }

TEST(BuiltSpecs, LjHalo) {
  MLIPSpec spec = halo_spec();
  spec.core.custom_ops = {OpAdapter("nvalchemi::lj_energy_forces_batch"),
                          OpAdapter("nvalchemi::lj_energy_forces_virial_batch")};
  expect_matches_golden(spec, "lj_halo");
}

TEST(BuiltSpecs, EwaldHalo) {
  const auto slice = ArgTransform::slice_owned;
  const auto sum = OutputTransform::all_reduce_sum;
  const std::map<int, OutputTransformEntry> three_sums{{0, sum}, {1, sum}, {2, sum}};
  MLIPSpec spec = halo_spec();
  spec.core.custom_ops = {
      OpAdapter("alchemiops::_ewald_compute_partial_structure_factors", {{0, slice}, {1, slice}},
                three_sums),
      OpAdapter("alchemiops::_batch_ewald_compute_partial_structure_factors",
                {{0, slice}, {1, slice}, {5, slice}}, three_sums),
      OpAdapter("alchemiops::_slab_compute_partial_moments", {{0, slice}, {1, slice}}, three_sums),
      OpAdapter("alchemiops::_batch_slab_compute_partial_moments",
                {{0, slice}, {1, slice}, {2, slice}}, three_sums),
  };
  spec.node_energy_key = "atomic_energies";
  spec.owned_only_outputs = {"forces"};
  spec.all_reduce_outputs = {"stress"};
  expect_matches_golden(spec, "ewald_halo");
}

TEST(BuiltSpecs, UmaRefreshHalo) {
  auto wrap = [](std::string module, std::string cls, std::string method, std::string replacement) {
    return MethodHelper{std::move(module), std::move(cls), std::move(method),
                        "nvalchemi.models.uma:" + replacement, "wrap"};
  };
  auto python = [](std::string module) {
    return PythonHelper{std::move(module), "reduce_node_to_system",
                        "nvalchemi.models.uma:_distributed_reduce_node_to_system"};
  };
  const std::string uma = "fairchem.core.models.uma.";
  MLIPSpec spec = halo_spec();
  spec.core.policy = StoragePolicy("refresh_halo");  // default scatter_mode "local"
  spec.core.third_party_helpers = {
      wrap(uma + "escn_md", "eSCNMDBackbone", "_get_composition_info",
           "_distributed_composition_info"),
      wrap(uma + "escn_md_block", "eSCNMD_Block", "forward", "_distributed_escn_block_forward"),
      wrap(uma + "escn_md_block", "Edgewise", "forward", "_distributed_edgewise_fold"),
      wrap(uma + "nn.embedding", "EdgeDegreeEmbedding", "forward", "_distributed_edge_degree_fold"),
      python(uma + "outputs"),
      python(uma + "escn_md"),
      wrap(uma + "common.rotation", "ElementReferences", "undo_refs", "_distributed_undo_refs"),
  };
  spec.core.shard_fields = {};
  spec.all_reduce_outputs = {"stress"};
  expect_matches_golden(spec, "uma_refresh_halo", {0});
}

TEST(BuiltSpecs, MaceHaloFromAMixedAdapterList) {
  MLIPSpec spec = halo_spec();
  spec.core = with_adapters(
      spec.core,
      {
          HelperRecord(
              MethodHelper{"e3nn.o3", "SphericalHarmonics", "forward", std::nullopt, "marshal"}),
          HelperRecord(MethodHelper{
              "mace.modules.blocks", "RealAgnosticResidualInteractionBlock", "forward",
              "nvalchemi.distributed.helpers:neighbor_refresh_adapters.<locals>._refresh", "wrap"}),
      });
  spec.all_reduce_outputs = {"stress"};
  expect_matches_golden(spec, "mace_halo", {1});
}

TEST(BuiltSpecs, DftD3Halo) {
  MLIPSpec spec = halo_spec();
  spec.core.shard_fields = {};
  spec.node_energy_key = "atomic_energies";
  spec.node_virial_key = "atomic_virial";
  expect_matches_golden(spec, "dftd3_halo");
}

// --- Reading rules -----------------------------------------------------------------------------

TEST(ReadRules, DefaultsOfAMinimalSpec) {
  const MLIPSpec spec = read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "halo"}}})");
  EXPECT_EQ(spec.core.policy.kind, "halo");
  EXPECT_EQ(spec.core.policy.scatter_mode, "halo_correction");
  EXPECT_EQ(spec.core.policy.gather_mode, "halo_read");
  EXPECT_TRUE(spec.core.custom_ops.empty());
  EXPECT_TRUE(spec.core.third_party_helpers.empty());
  EXPECT_EQ(spec.core.shard_fields, default_shard_fields());
  EXPECT_TRUE(spec.system_reductions);
  EXPECT_FALSE(spec.node_energy_key);
  EXPECT_FALSE(spec.node_virial_key);
  EXPECT_FALSE(spec.gp_replicate_geometry);
  EXPECT_TRUE(spec.owned_only_outputs.empty());
  EXPECT_TRUE(spec.all_reduce_outputs.empty());
  EXPECT_TRUE(spec.output_kinds.empty());
  EXPECT_EQ(spec, MLIPSpec{[] {
              MLIPSpec s;
              s.core.policy = StoragePolicy("halo");
              return s;
            }()});
}

TEST(ReadRules, RefreshHaloDefaultsToALocalScatter) {
  const MLIPSpec spec =
      read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "refresh_halo"}}})");
  EXPECT_EQ(spec.core.policy.scatter_mode, "local");
  EXPECT_EQ(spec.core.policy.gather_mode, "halo_read");
  EXPECT_FALSE(spec.core.policy.halo_scatter());
  EXPECT_TRUE(spec.core.policy.halo_gather());
}

TEST(ReadRules, OutputKindsAsAnObjectEqualTheListForm) {
  const std::string list = golden("mpnn_halo_preset");
  const std::string object = R"({"version": 2, "core": {"policy": {"kind": "halo"}},
      "output_kinds": {"stress": "per_graph", "forces": "per_node", "energy": "per_graph",
                       "atomic_energies": "per_node"}})";
  EXPECT_EQ(read_mlip_spec(object), read_mlip_spec(list));
  EXPECT_EQ(write_mlip_spec(read_mlip_spec(object)), list);
}

TEST(ReadRules, OutputSetsAreSortedAndDeduplicated) {
  const MLIPSpec spec = read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "halo"}},
      "owned_only_outputs": ["stress", "forces", "stress"], "all_reduce_outputs": ["b", "a"],
      "output_kinds": [["z", "global"], ["a", "unknown"]]})");
  EXPECT_EQ(spec.owned_only_outputs, (std::vector<std::string>{"forces", "stress"}));
  EXPECT_EQ(spec.all_reduce_outputs, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(spec.output_kinds.size(), 2u);
  EXPECT_EQ(spec.output_kinds[0].first, "a");
  EXPECT_EQ(spec.output_kind("z"), OutputKind::global);
  EXPECT_EQ(spec.output_kind("a"), OutputKind::unknown);
  EXPECT_FALSE(spec.output_kind("energy"));
  EXPECT_TRUE(spec.is_owned_only("forces"));
  EXPECT_FALSE(spec.is_owned_only("a"));
  EXPECT_TRUE(spec.is_all_reduce("b"));
}

TEST(ReadRules, UnknownKeysAreIgnored) {
  const MLIPSpec spec = read_mlip_spec(R"({"version": 2, "comment": [1, {"x": null}],
      "core": {"policy": {"kind": "shard", "scatter_mode": "ignored", "extra": 1}, "later": true,
               "custom_ops": [{"op": "a::b", "note": "x", "arg_transforms": {"0": {"type": "gather_inputs"}}}],
               "third_party_helpers": [{"kind": "jit", "module_path": "m", "attr_name": "f", "since": 3}]}})");
  EXPECT_EQ(spec.core.policy, StoragePolicy("shard"));
  EXPECT_EQ(spec.core.custom_ops.at(0), OpAdapter("a::b", {{0, ArgTransform::gather_inputs}}));
  EXPECT_EQ(spec.core.third_party_helpers.at(0),
            HelperRecord(JitHelper{"m", "f", std::nullopt, "eager"}));
}

TEST(ReadRules, PositionsAreWrittenInAscendingIntegerOrder) {
  const MLIPSpec spec = read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "halo"},
      "custom_ops": [{"op": "a::b", "arg_transforms": {"10": {"type": "slice_owned"},
                      "2": {"type": "gather_inputs"}, "0": {"type": "gather_inputs_full"}}}]}})");
  const std::string out = write_mlip_spec(spec);
  const auto p0 = out.find("\"0\""), p2 = out.find("\"2\""), p10 = out.find("\"10\"");
  ASSERT_NE(p10, std::string::npos);
  EXPECT_LT(p0, p2);
  EXPECT_LT(p2, p10);
  EXPECT_EQ(spec.core.custom_ops[0].arg_transforms.at(10), ArgTransform::slice_owned);
}

TEST(ReadRules, ShardFieldsOmittedOnlyWhenExactlyTheDefault) {
  auto shard_fields_of = [](const std::string& fields) {
    return R"({"version": 2, "core": {"policy": {"kind": "local"}, "shard_fields": )" + fields +
           "}}";
  };
  // The default, spelled out, is written by leaving it out.
  const std::string spelled = write_mlip_spec(
      read_mlip_spec(shard_fields_of(R"(["positions", "charges", "atomic_numbers"])")));
  EXPECT_EQ(spelled.find("shard_fields"), std::string::npos);
  // Another order is not the default and is kept as given.
  const MLIPSpec reordered = read_mlip_spec(shard_fields_of(R"(["charges", "positions"])"));
  EXPECT_EQ(reordered.core.shard_fields, (std::vector<std::string>{"charges", "positions"}));
  EXPECT_NE(write_mlip_spec(reordered).find(
                "\"shard_fields\": [\n      \"charges\",\n      \"positions\"\n    ]"),
            std::string::npos);
  // [] means "promote nothing" and is kept.
  EXPECT_NE(write_mlip_spec(read_mlip_spec(shard_fields_of("[]"))).find("\"shard_fields\": []"),
            std::string::npos);
}

TEST(ReadRules, NonHaloPoliciesAreWrittenAsKindOnly) {
  for (const char* kind : {"local", "shard", "graph_parallel"}) {
    MLIPSpec spec;
    spec.core.policy = StoragePolicy(kind);
    const std::string out = write_mlip_spec(spec);
    EXPECT_NE(out.find(std::string("\"policy\": {\n      \"kind\": \"") + kind + "\"\n    }"),
              std::string::npos)
        << out;
    EXPECT_EQ(read_mlip_spec(out), spec);
  }
}

TEST(ReadRules, HelperReplacementsAndPlaceholdersAreKeptVerbatim) {
  const std::string in =
      R"({"version": 2, "core": {"policy": {"kind": "halo"}, "third_party_helpers": [
      {"kind": "module_forward", "target": "<declared module_forward:cueq_conv_halo>", "label": "cueq_conv_halo"},
      {"kind": "python", "module_path": "m", "attr_name": "f", "replacement": null},
      {"kind": "python", "module_path": "m", "attr_name": "g", "replacement": "pkg.mod:f.<locals>._g"}]}})";
  const MLIPSpec spec = read_mlip_spec(in);
  EXPECT_EQ(std::get<ModuleForwardHelper>(spec.core.third_party_helpers[0]).target,
            "<declared module_forward:cueq_conv_halo>");
  EXPECT_FALSE(std::get<PythonHelper>(spec.core.third_party_helpers[1]).replacement);
  EXPECT_EQ(std::get<PythonHelper>(spec.core.third_party_helpers[2]).replacement,
            "pkg.mod:f.<locals>._g");
  const std::string out = write_mlip_spec(spec);
  EXPECT_NE(out.find("\"replacement\": null"), std::string::npos);
  EXPECT_EQ(read_mlip_spec(out), spec);
}

TEST(ReadRules, OptionalHelperFieldsTakeNvalchemiDefaults) {
  const MLIPSpec spec =
      read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "halo"}, "third_party_helpers": [
      {"kind": "jit", "module_path": "m", "attr_name": "f"},
      {"kind": "method", "module_path": "m", "class_name": "C", "method_name": "f"},
      {"kind": "module_forward", "target": "t"}]}})");
  EXPECT_EQ(spec.core.third_party_helpers[0],
            HelperRecord(JitHelper{"m", "f", std::nullopt, "eager"}));
  EXPECT_EQ(spec.core.third_party_helpers[1],
            HelperRecord(MethodHelper{"m", "C", "f", std::nullopt, "wrap"}));
  EXPECT_EQ(spec.core.third_party_helpers[2],
            HelperRecord(ModuleForwardHelper{"t", "module_forward"}));
}

TEST(ReadRules, NonAsciiNamesRoundTripAsPythonWritesThem) {
  const std::string in =
      "{\"version\": 2, \"core\": {\"policy\": {\"kind\": \"halo\"}}, "
      "\"node_energy_key\": \"\xc3\xa9nergie \xf0\x9f\x98\x80\"}";
  const MLIPSpec spec = read_mlip_spec(in);
  EXPECT_EQ(spec.node_energy_key, "\xc3\xa9nergie \xf0\x9f\x98\x80");
  const std::string out = write_mlip_spec(spec);
  EXPECT_NE(out.find(R"("node_energy_key": "\u00e9nergie \ud83d\ude00")"), std::string::npos);
  EXPECT_EQ(read_mlip_spec(out), spec);
}

TEST(ReadRules, SpecEmbeddedInAModelFile) {
  const std::string model = R"({"architecture": "x", "spec": )" + golden("ewald_halo") + "}";
  const auto doc = nlohmann::ordered_json::parse(model);
  EXPECT_EQ(mlip_spec_from_json(doc.at("spec"), "model.json", "/spec"),
            read_mlip_spec(golden("ewald_halo")));
}

// --- Writing rules -----------------------------------------------------------------------------

TEST(WriteRules, ListsAreWrittenSorted) {
  MLIPSpec spec = halo_spec();
  std::reverse(spec.output_kinds.begin(), spec.output_kinds.end());
  spec.all_reduce_outputs = {"stress", "energy", "stress"};
  const MLIPSpec back = read_mlip_spec(write_mlip_spec(spec));
  EXPECT_EQ(back.output_kinds, standard_output_kinds());
  EXPECT_EQ(back.all_reduce_outputs, (std::vector<std::string>{"energy", "stress"}));
}

TEST(WriteRules, RefusesWhatNoReaderWouldAccept) {
  auto refused = [](const MLIPSpec& spec, const std::string& pointer) {
    try {
      write_mlip_spec(spec);
      ADD_FAILURE() << "written";
    } catch (const Error& e) {
      EXPECT_EQ(e.pointer(), pointer);
    }
  };
  MLIPSpec bad_policy = halo_spec();
  bad_policy.core.policy.kind = "halo2";
  refused(bad_policy, "/core/policy/kind");
  MLIPSpec bad_op = halo_spec();
  bad_op.core.custom_ops.push_back(OpAdapter("a::b"));
  bad_op.core.custom_ops.back().op = "ab";
  refused(bad_op, "/core/custom_ops/0/op");
  MLIPSpec bad_field = halo_spec();
  bad_field.core.shard_fields = {"velocities"};
  refused(bad_field, "/core/shard_fields/0");
  MLIPSpec twice = halo_spec();
  twice.output_kinds.push_back({"energy", OutputKind::global});
  refused(twice, "/output_kinds/2/0");
}

}  // namespace

// --- What the released wheel added, and error parity with its reader ---------------------------

namespace {

TEST(ReleaseFields, CompileIsReadWithNvalchemisDefaults) {
  const MLIPSpec spec = read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "halo"}},
      "compile": {"force_strategy": "framework_from_global_energy"}})");
  ASSERT_TRUE(spec.compile);
  EXPECT_EQ(spec.compile->force_strategy, ForceStrategy::framework_from_global_energy);
  EXPECT_TRUE(spec.compile->static_shapes);
  EXPECT_FALSE(spec.compile->stress_via_strain);
  EXPECT_TRUE(spec.compile->forces_via_autograd());
  EXPECT_TRUE(spec.compile_written);
}

TEST(ReleaseFields, NullAbsentAndPolicyAreTellApartOnWrite) {
  const std::string base = R"({"version": 2, "core": {"policy": {"kind": "halo"}})";
  const MLIPSpec absent = read_mlip_spec(base + "}");
  const MLIPSpec null = read_mlip_spec(base + R"(, "compile": null})");
  EXPECT_FALSE(absent.compile_written);
  EXPECT_TRUE(null.compile_written);
  EXPECT_EQ(absent, null);  // the same meaning: the model computes its own forces
  EXPECT_EQ(write_mlip_spec(absent).find("compile"), std::string::npos);
  EXPECT_NE(write_mlip_spec(null).find("\"compile\": null\n}"), std::string::npos);
}

TEST(ReleaseFields, ReplicatedConsumerIsMeaningTransformSpellingIsNot) {
  const auto read = [](const std::string& transform) {
    return read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "halo"}, "custom_ops": [{"op": "a::b",
        "output_transforms": {"0": )" + transform + "}}]}}");
  };
  const MLIPSpec terse = read(R"({"type": "all_reduce_sum"})");
  const MLIPSpec spelled = read(R"({"type": "all_reduce_sum", "replicated_consumer": false})");
  const MLIPSpec replicated = read(R"({"type": "all_reduce_sum", "replicated_consumer": true})");
  EXPECT_EQ(terse, spelled);
  EXPECT_NE(spelled, replicated);
  EXPECT_TRUE(replicated.core.custom_ops[0].output_transforms.at(0).replicated_consumer);
  EXPECT_EQ(write_mlip_spec(terse).find("replicated_consumer"), std::string::npos);
  EXPECT_NE(write_mlip_spec(replicated).find("\"replicated_consumer\": true"), std::string::npos);
}

// nvalchemi's reader accepts these; so does this one (doc/pair_distspec.rst, error parity).
TEST(ErrorParity, VersionIsComparedByValue) {
  EXPECT_EQ(read_mlip_spec(R"({"version": 2.0, "core": {"policy": {"kind": "halo"}}})"),
            read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "halo"}}})"));
}

TEST(ErrorParity, RepeatedShardFieldsAreKeptAsWritten) {
  const std::string bytes = write_mlip_spec(
      read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "halo"}, "shard_fields": ["positions", "positions"]}})"));
  const MLIPSpec spec = read_mlip_spec(bytes);
  EXPECT_EQ(spec.core.shard_fields, (std::vector<std::string>{"positions", "positions"}));
  EXPECT_EQ(write_mlip_spec(spec), bytes);
}

TEST(ErrorParity, AByteOrderMarkInsideAModelFileSpecIsNotTheSpecFiles) {
  // The mark is a property of a file's bytes: a spec object handed over in memory has none.
  const auto j = nlohmann::json::parse(R"({"version": 2, "core": {"policy": {"kind": "halo"}}})");
  EXPECT_EQ(mlip_spec_from_json(j, "model.json", "/spec").core.policy.kind, "halo");
}

}  // namespace
