// The spec value types: Error, policies and their registry, op adapters, helper records and
// their native meaning, adapter lowering, the summary.
#include <gtest/gtest.h>

#include <string>

#include "distspec/error.h"
#include "distspec/spec/spec_json.h"
#include "distspec/spec/spec_summary.h"

namespace {

using namespace distspec;

TEST(ErrorType, WhatLeavesOutEmptyParts) {
  EXPECT_STREQ(Error("x", "", "m").what(), "m");
  EXPECT_STREQ(Error("x", "/p", "m").what(), "/p: m");
  EXPECT_STREQ(Error("x", "", "m", "h").what(), "m; h");
  EXPECT_STREQ(Error("x", "/p", "m", "h", "f.json").what(), "f.json: /p: m; h");
}

TEST(ErrorType, CopiesWithFileAndPointerPrefix) {
  const Error e("spec.value", "/core/policy/kind", "unknown policy 'halo2'",
                "expected one of local");
  const Error moved = e.with_file("model.json").with_pointer_prefix("/spec");
  EXPECT_EQ(moved.id(), "spec.value");
  EXPECT_EQ(moved.file(), "model.json");
  EXPECT_EQ(moved.pointer(), "/spec/core/policy/kind");
  EXPECT_EQ(moved.message(), e.message());
  EXPECT_EQ(moved.hint(), e.hint());
  EXPECT_STREQ(moved.what(),
               "model.json: /spec/core/policy/kind: unknown policy 'halo2'; expected one of local");
  EXPECT_STREQ(e.what(),
               "/core/policy/kind: unknown policy 'halo2'; expected one of local");  // unchanged
}

TEST(ErrorType, IsARuntimeError) {
  try {
    throw Error("x", "", "m");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "m");
  }
}

TEST(ErrorType, QuoteEscapesAndCuts) {
  EXPECT_EQ(quote("halo"), "'halo'");
  EXPECT_EQ(quote("a\nb\\\xc3\xa9"), "'a\\x0ab\\x5c\\xc3\\xa9'");
  EXPECT_EQ(quote(std::string(65, 'x')), "'" + std::string(64, 'x') + "...'");
}

TEST(Policy, BuiltInKindsAndDefaults) {
  EXPECT_EQ(policy_kind_list(), "local, shard, graph_parallel, halo, refresh_halo");
  const StoragePolicy halo("halo");
  EXPECT_TRUE(halo.is_halo_kind());
  EXPECT_TRUE(halo.halo_scatter());
  EXPECT_TRUE(halo.halo_gather());
  const StoragePolicy local;
  EXPECT_EQ(local.kind, "local");
  EXPECT_FALSE(local.is_halo_kind());
  EXPECT_FALSE(local.halo_scatter());
  EXPECT_FALSE(local.halo_gather());
  EXPECT_FALSE(local.scatter_mode);
}

TEST(Policy, OnlyTheExactModeStringsSwitchHaloBehaviourOn) {
  const StoragePolicy p("halo", std::string("Halo_Correction"), std::string("halo_read "));
  EXPECT_TRUE(p.is_halo_kind());
  EXPECT_FALSE(p.halo_scatter());
  EXPECT_FALSE(p.halo_gather());
}

TEST(Policy, ConstructionChecks) {
  EXPECT_THROW(StoragePolicy("halo2"), Error);
  EXPECT_THROW(StoragePolicy("shard", std::string("local")), Error);
}

TEST(Policy, RegisteredKindsAreReadAndWritten) {
  register_policy_kind({"test_ring_halo", true, "halo_correction", "local"});
  const MLIPSpec spec =
      read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "test_ring_halo"}}})");
  EXPECT_EQ(spec.core.policy.gather_mode, "local");
  EXPECT_TRUE(spec.core.policy.halo_scatter());
  EXPECT_NE(write_mlip_spec(spec).find("\"gather_mode\": \"local\""), std::string::npos);
  EXPECT_NE(policy_kind_list().find("test_ring_halo"), std::string::npos);
  unregister_policy_kind("test_ring_halo");  // the registry is process-wide
  EXPECT_EQ(policy_kind_list(), "local, shard, graph_parallel, halo, refresh_halo");
  EXPECT_THROW(StoragePolicy("test_ring_halo"), Error);
}

TEST(OpAdapterType, NamesAndTransformNames) {
  EXPECT_FALSE(op_name_problem("ns::name"));
  EXPECT_FALSE(op_name_problem("ns::name.default"));
  for (const char* bad : {"", "name", "::name", "ns::", "ns:name", "::"}) {
    EXPECT_TRUE(op_name_problem(bad)) << bad;
    EXPECT_THROW(OpAdapter{bad}, Error) << bad;
  }
  EXPECT_THROW(OpAdapter("a::b", {{-1, ArgTransform::slice_owned}}), Error);
  EXPECT_THROW(OpAdapter("a::b", {}, {{-3, OutputTransform::all_reduce_sum}}), Error);
  for (auto t :
       {ArgTransform::gather_inputs, ArgTransform::gather_inputs_full, ArgTransform::slice_owned}) {
    EXPECT_EQ(arg_transform_from_string(to_string(t)), t);
  }
  for (auto t : {OutputTransform::scatter_outputs, OutputTransform::all_reduce_sum,
                 OutputTransform::slice_outputs_owned}) {
    EXPECT_EQ(output_transform_from_string(to_string(t)), t);
  }
  EXPECT_FALSE(arg_transform_from_string("scatter_outputs"));
  EXPECT_TRUE(OpAdapter("a::b").pass_through());
  EXPECT_FALSE(OpAdapter("a::b", {{0, ArgTransform::gather_inputs}}).pass_through());
}

TEST(OutputKindNames, RoundTrip) {
  for (auto k :
       {OutputKind::per_node, OutputKind::per_graph, OutputKind::global, OutputKind::unknown}) {
    EXPECT_EQ(output_kind_from_string(to_string(k)), k);
  }
  EXPECT_FALSE(output_kind_from_string("per_atom"));
}

struct MeaningCase {
  const char* name;
  HelperRecord helper;
  NativeAction action;
};

void PrintTo(const MeaningCase& c, std::ostream* os) { *os << c.name; }

class NativeMeaning : public ::testing::TestWithParam<MeaningCase> {};

TEST_P(NativeMeaning, IsRecognised) {
  const MeaningCase& c = GetParam();
  EXPECT_EQ(native_action(c.helper), c.action);
  if (c.action == NativeAction::unknown) {
    EXPECT_FALSE(native_meaning(c.helper));
  } else {
    EXPECT_EQ(native_meaning(c.helper), std::string(to_string(c.action)));
  }
}

// Every helper of the golden specs, plus the unknown and marshal cases.
INSTANTIATE_TEST_SUITE_P(
    Helpers, NativeMeaning,
    ::testing::Values(
        MeaningCase{
            "marshal",
            MethodHelper{"e3nn.o3", "SphericalHarmonics", "forward", std::nullopt, "marshal"},
            NativeAction::nothing},
        MeaningCase{"jit", JitHelper{"m", "envelopes", std::string("m:plain"), "eager"},
                    NativeAction::nothing},
        MeaningCase{"mace_refresh",
                    MethodHelper{
                        "mace.modules.blocks", "RealAgnosticResidualInteractionBlock", "forward",
                        "nvalchemi.distributed.helpers:neighbor_refresh_adapters.<locals>._refresh",
                        "wrap"},
                    NativeAction::refresh_neighbours},
        MeaningCase{
            "mace_product",
            MethodHelper{"mace.modules.blocks", "EquivariantProductBasisBlock", "forward",
                         "nvalchemi.models.mace:_mace_product_block_static_index_forward", "wrap"},
            NativeAction::refresh_neighbours},
        MeaningCase{
            "cueq_module_forward",
            ModuleForwardHelper{
                "cuequivariance_torch.primitives.tensor_product.TensorProductUniform1d.forward",
                "cueq_conv_halo"},
            NativeAction::refresh_neighbours},
        MeaningCase{"aimnet_mol_sum",
                    PythonHelper{"aimnet.nbops", "mol_sum",
                                 "nvalchemi.models.aimnet2:_distributed_mol_sum"},
                    NativeAction::owned_system_sum},
        MeaningCase{"aimnet_conv_sv",
                    MethodHelper{"aimnet.modules.aev", "ConvSV", "forward",
                                 "nvalchemi.models.aimnet2:_distributed_conv_sv_forward", "wrap"},
                    NativeAction::refresh_neighbours},
        MeaningCase{"aimnet_coulomb",
                    MethodHelper{"aimnet.modules.lr", "LRCoulomb", "forward",
                                 "nvalchemi.models.aimnet2:_distributed_coulomb_forward", "wrap"},
                    NativeAction::refresh_neighbours},
        MeaningCase{"uma_composition",
                    MethodHelper{"fairchem.core.models.uma.escn_md", "eSCNMDBackbone",
                                 "_get_composition_info",
                                 "nvalchemi.models.uma:_distributed_composition_info", "wrap"},
                    NativeAction::owned_system_sum},
        MeaningCase{
            "uma_block",
            MethodHelper{"fairchem.core.models.uma.escn_md_block", "eSCNMD_Block", "forward",
                         "nvalchemi.models.uma:_distributed_escn_block_forward", "wrap"},
            NativeAction::refresh_neighbours},
        MeaningCase{"uma_edgewise",
                    MethodHelper{"fairchem.core.models.uma.escn_md_block", "Edgewise", "forward",
                                 "nvalchemi.models.uma:_distributed_edgewise_fold", "wrap"},
                    NativeAction::fold_to_owners},
        MeaningCase{
            "uma_edge_degree",
            MethodHelper{"fairchem.core.models.uma.nn.embedding", "EdgeDegreeEmbedding", "forward",
                         "nvalchemi.models.uma:_distributed_edge_degree_fold", "wrap"},
            NativeAction::fold_to_owners},
        MeaningCase{"uma_reduce",
                    PythonHelper{"fairchem.core.models.uma.outputs", "reduce_node_to_system",
                                 "nvalchemi.models.uma:_distributed_reduce_node_to_system"},
                    NativeAction::owned_system_sum},
        MeaningCase{
            "uma_undo_refs",
            MethodHelper{"fairchem.core.models.uma.common.rotation", "ElementReferences",
                         "undo_refs", "nvalchemi.models.uma:_distributed_undo_refs", "wrap"},
            NativeAction::owned_system_sum},
        MeaningCase{"target_name_without_replacement",
                    PythonHelper{"aimnet.nbops", "mol_sum", std::nullopt},
                    NativeAction::owned_system_sum},
        MeaningCase{"unknown", PythonHelper{"pkg.mod", "mystery", std::string("pkg.dist:_mystery")},
                    NativeAction::unknown},
        MeaningCase{"unknown_without_replacement",
                    MethodHelper{"pkg.mod", "Block", "forward", std::nullopt, "wrap"},
                    NativeAction::unknown}),
    [](const ::testing::TestParamInfo<MeaningCase>& info) { return std::string(info.param.name); });

TEST(HelperRecordType, KindsAndTargets) {
  EXPECT_EQ(helper_kind(JitHelper{}), "jit");
  EXPECT_EQ(helper_kind(ModuleForwardHelper{}), "module_forward");
  EXPECT_EQ(helper_target(MethodHelper{"m.n", "C", "f", std::nullopt, "wrap"}), "m.n.C.f");
  EXPECT_EQ(helper_target(PythonHelper{"m", "f", std::nullopt}), "m.f");
  EXPECT_EQ(helper_target(ModuleForwardHelper{"t.forward", "x"}), "t.forward");
}

TEST(AdapterLowering, SplitsAndKeepsOrderAfterExistingEntries) {
  DistributionSpec core;
  core.custom_ops = {OpAdapter("a::first")};
  const DistributionSpec out =
      with_adapters(core, {
                              OpAdapter("a::second"),
                              HelperRecord(PythonHelper{"m", "one", std::nullopt}),
                              OpAdapter("a::third", {{1, ArgTransform::slice_owned}}),
                              HelperRecord(ModuleForwardHelper{"t", "two"}),
                          });
  ASSERT_EQ(out.custom_ops.size(), 3u);
  EXPECT_EQ(out.custom_ops[0].op, "a::first");
  EXPECT_EQ(out.custom_ops[1].op, "a::second");
  EXPECT_EQ(out.custom_ops[2].op, "a::third");
  ASSERT_EQ(out.third_party_helpers.size(), 2u);
  EXPECT_EQ(helper_target(out.third_party_helpers[0]), "m.one");
  EXPECT_EQ(helper_target(out.third_party_helpers[1]), "t");
  EXPECT_EQ(out.policy, core.policy);
}

TEST(Summary, NamesEveryPart) {
  const MLIPSpec spec = read_mlip_spec(R"({"version": 2,
      "core": {"policy": {"kind": "halo"},
               "custom_ops": [{"op": "a::k", "arg_transforms": {"1": {"type": "slice_owned"}},
                               "output_transforms": {"0": {"type": "all_reduce_sum"}}}, {"op": "a::p"}],
               "third_party_helpers": [{"kind": "python", "module_path": "m", "attr_name": "mystery"},
                                       {"kind": "jit", "module_path": "m", "attr_name": "f", "mode": "marshal"}],
               "shard_fields": ["positions"]},
      "node_energy_key": "atomic_energies", "owned_only_outputs": ["forces"], "all_reduce_outputs": ["stress"],
      "output_kinds": [["forces", "per_node"], ["stress", "per_graph"]]})");
  EXPECT_EQ(summarize_mlip_spec(spec),
            "policy         halo (scatter_mode halo_correction, gather_mode halo_read)\n"
            "custom_ops     2\n"
            "    a::k  args 1:slice_owned  outputs 0:all_reduce_sum\n"
            "    a::p  pass-through\n"
            "helpers        2\n"
            "    python m.mystery\n"
            "      -> not applicable natively\n"
            "    jit m.f [marshal]\n"
            "      -> nothing to do natively (marshal)\n"
            "outputs        2\n"
            "    forces  per_node  owned_only\n"
            "    stress  per_graph  all_reduce\n"
            "shard_fields   positions\n"
            "node keys      energy atomic_energies, virial -\n"
            "flags          system_reductions true, gp_replicate_geometry false\n"
            "compile        not written (the model computes its own forces)\n");
}

TEST(Summary, NamesTheCompilePolicyAndReplicatedConsumers) {
  const MLIPSpec spec = read_mlip_spec(R"({"version": 2, "core": {"policy": {"kind": "halo"},
      "custom_ops": [{"op": "a::k", "output_transforms": {"0": {"type": "all_reduce_sum", "replicated_consumer": true}}}]},
      "compile": {"static_shapes": false, "force_strategy": "framework_from_node_energy", "stress_via_strain": true}})");
  const std::string text = summarize_mlip_spec(spec);
  EXPECT_NE(text.find("a::k  outputs 0:all_reduce_sum(replicated_consumer)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("compile        force_strategy framework_from_node_energy, static_shapes false, "
                      "stress_via_strain true\n"),
            std::string::npos)
      << text;
}

}  // namespace
