// Binding rules between a spec and a model, without a host: each the exact error, file and
// pointer a user sees, and the nvalchemi-written specs of the models DISTSPEC has accepted.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "distspec/error.h"
#include "distspec/spec/spec_json.h"
#include "models/ewald/ewald.h"
#include "models/lj/lj.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"
#include "models/plan/spec_binding.h"

namespace distspec {
namespace {

std::string potentials(const std::string& name) { return std::string(DISTSPEC_POTENTIALS_DIR) + "/" + name; }

// The released nvalchemi wheel's own specs of its LJ and Ewald model classes, as it saved them.
std::string wheel_spec(const std::string& name) {
  return std::string(DISTSPEC_POTENTIALS_DIR) + "/../unittest/golden_specs/nvalchemi-0.2.0/" + name;
}

models::ModelInfo model_info(const std::string& model_file) {
  const models::ModelFile file = models::read_model_file(potentials(model_file));
  return models::make_model(file)->info();
}

// The error check_adapted_ops throws for the spec and the model (a test failure when it throws none).
Error adapted_ops_error(const MLIPSpec& spec, const models::ModelInfo& info, const models::BindingSources& sources) {
  try {
    models::check_adapted_ops(spec, info, sources);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "the spec was accepted for model " << sources.model_file;
  return Error("", "", "");
}

TEST(SpecBinding, NvalchemisOwnSpecsBindToTheModelsDistspecHas) {
  const models::ModelInfo ewald = model_info("nacl_ewald.json");
  EXPECT_NO_THROW(models::check_adapted_ops(read_mlip_spec_file(wheel_spec("model_ewald_halo.json")), ewald,
                                            {"nacl_ewald.json", "model_ewald_halo.json"}));
  const models::ModelInfo lj = model_info("lj_argon.json");
  EXPECT_NO_THROW(models::check_adapted_ops(read_mlip_spec_file(wheel_spec("model_lj.json")), lj,
                                            {"lj_argon.json", "model_lj.json"}));
}

TEST(SpecBinding, AnotherModelsSpecIsRefusedWithItsPointer) {
  const models::ModelInfo lj = model_info("lj_argon.json");
  const Error e = adapted_ops_error(read_mlip_spec_file(wheel_spec("model_ewald_halo.json")), lj,
                                    {"lj_argon.json", "specs/model_ewald_halo.json"});
  EXPECT_EQ(e.file(), "specs/model_ewald_halo.json");
  EXPECT_EQ(e.pointer(), "/core/custom_ops/0/op");
  EXPECT_EQ(e.message(), "the spec adapts op 'alchemiops::_ewald_compute_partial_structure_factors', which model "
                         "lj_argon.json (lj) never calls (it calls: nvalchemi::lj_energy_forces_batch, "
                         "nvalchemi::lj_energy_forces_virial_batch)");
  EXPECT_EQ(e.hint(), "use the spec written for this model");
}

TEST(SpecBinding, AnInlineSpecIsReportedInsideTheModelFile) {
  models::ModelInfo info;
  info.architecture = "lj";
  MLIPSpec spec;
  spec.core.custom_ops = {OpAdapter("acme::magic")};
  const Error e = adapted_ops_error(spec, info, {"model.json", "inline"});
  EXPECT_EQ(e.file(), "model.json");
  EXPECT_EQ(e.pointer(), "/spec/core/custom_ops/0/op");
  EXPECT_NE(e.message().find("(it calls: no op through the dispatcher)"), std::string::npos) << e.message();
}

// An accelerated graph (ModelInfo::opaque_ops: kernels it calls outside the dispatcher) and its
// spec agree in both directions. nvalchemi's own spec of a MACE exported with cuEquivariance
// lists seven kernels; a force graph calls five, the other two are loaded kernels of the family.
models::ModelInfo cueq_mace_graph() {
  models::ModelInfo info;
  info.architecture = "torch";
  info.ops = {Op<NoState>{"nvalchemi::halo_scatter_correct_static"}};
  info.opaque_ops = {"cuequivariance::fused_tensor_product", "cuequivariance::fused_tensor_product_bwd",
                     "cuequivariance::uniform_1d", "cuequivariance::indexed_linear_B",
                     "cuequivariance::segmented_transpose"};
  info.family_ops = info.opaque_ops;
  info.family_ops.push_back("cuequivariance::fused_tensor_product_bwd_bwd");
  info.family_ops.push_back("cuequivariance::indexed_linear_C");
  return info;
}

TEST(SpecBinding, NvalchemisCueqMaceSpecBindsUnmodifiedToAGraphOfItsKernels) {
  EXPECT_NO_THROW(models::check_adapted_ops(read_mlip_spec_file(wheel_spec("model_mace_cueq_base.json")),
                                            cueq_mace_graph(), {"mace.json", "model_mace_cueq_base.json"}));
}

TEST(SpecBinding, AListedKernelThatNoLoadedLibraryProvidesIsRefused) {
  models::ModelInfo info = cueq_mace_graph();
  info.family_ops.pop_back();  // indexed_linear_C: neither called nor loaded
  const Error e = adapted_ops_error(read_mlip_spec_file(wheel_spec("model_mace_cueq_base.json")), info,
                                    {"mace.json", "model_mace_cueq_base.json"});
  EXPECT_EQ(e.pointer(), "/core/custom_ops/5/op");
  EXPECT_NE(e.message().find("'cuequivariance::indexed_linear_C'"), std::string::npos) << e.message();
}

TEST(SpecBinding, AGraphKernelTheSpecDoesNotListIsRefused) {
  // The plain MACE spec, for a graph built with cuEquivariance's kernels.
  const Error e = adapted_ops_error(read_mlip_spec_file(wheel_spec("model_mace.json")), cueq_mace_graph(),
                                    {"mace.json", "model_mace.json"});
  EXPECT_EQ(e.file(), "model_mace.json");
  EXPECT_EQ(e.pointer(), "/core/custom_ops");
  EXPECT_EQ(e.message(), "model mace.json calls op 'cuequivariance::fused_tensor_product' (an accelerator's "
                         "kernel), which the spec does not list");
  EXPECT_NE(e.hint().find("{\"op\": \"cuequivariance::fused_tensor_product\", \"arg_transforms\": {}, "
                          "\"output_transforms\": {}}"),
            std::string::npos)
      << e.hint();
}

// --- bind_model: every rule, with host facts handed in -------------------------------------------

models::HostFacts metal_host(int n_ranks = 4) {
  models::HostFacts host;
  host.units = "metal";
  host.n_ranks = n_ranks;
  host.has_charges = true;
  host.atom_style = "charge";
  host.boundary = "pp pp pp";
  return host;
}

struct Bound {
  models::ModelFile file;
  std::unique_ptr<models::Model> model;
};

Bound load(const std::string& name) {
  Bound b{models::read_model_file(potentials(name)), nullptr};
  b.model = models::make_model(b.file);
  return b;
}

Error binding_error_of(const models::ModelFile& file, const models::ModelInfo& info, const models::HostFacts& host) {
  try {
    models::bind_model(file, info, host);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "bound without an error";
  return Error("", "", "");
}

Error binding_error(const Bound& b, const models::HostFacts& host) { return binding_error_of(b.file, b.model->info(), host); }

TEST(BindModel, ShippedModelsBindOnAMetalRun) {
  for (const char* name : {"lj_argon.json", "cu_eam_u3.json", "cu_mpnn_L2.json", "nacl_ewald.json"}) {
    const Bound b = load(name);
    const models::RunPlan binding = models::bind_model(b.file, b.model->info(), metal_host());
    EXPECT_EQ(binding.halo, HaloStrategy::per_layer) << name;
    EXPECT_TRUE(binding.warnings.empty()) << name;
  }
}

TEST(BindModel, ExpandedRunsOnlyWhereThereAreLayersToExpand) {
  models::HostFacts host = metal_host();
  host.halo = HaloStrategy::expanded;
  EXPECT_EQ(models::bind_model(load("cu_mpnn_L2.json").file, load("cu_mpnn_L2.json").model->info(), host).halo,
            HaloStrategy::expanded);
  const Bound eam = load("cu_eam_u3.json");
  EXPECT_EQ(models::bind_model(eam.file, eam.model->info(), host).halo, HaloStrategy::per_layer);
}

TEST(BindModel, UnitsOfTheRun) {
  models::HostFacts host = metal_host();
  host.units = "real";
  const Error e = binding_error(load("lj_argon.json"), host);
  EXPECT_EQ(e.pointer(), "/units");
  EXPECT_EQ(e.message(), "the model is in 'metal' units, this run uses 'units real'");
  EXPECT_NE(e.file().find("lj_argon.json"), std::string::npos);
}

TEST(BindModel, ChargesPeriodicityAndBondedCoulomb) {
  const Bound ewald = load("nacl_ewald.json");
  models::HostFacts host = metal_host();
  host.has_charges = false;
  host.atom_style = "atomic";
  EXPECT_NE(std::string(binding_error(ewald, host).what())
                .find("but atom style 'atomic' has no charge; use an atom style with charges (charge, full)"),
            std::string::npos);
  host = metal_host();
  host.periodic = {true, true, false};
  host.boundary = "pp pp ff";
  EXPECT_NE(binding_error(ewald, host).message().find("needs a box periodic in x, y and z, this run has boundary pp pp ff"),
            std::string::npos);
  host = metal_host();
  host.bonds_scale_coulomb = true;
  host.special_coul = "0 0 0.5";
  EXPECT_NE(binding_error(ewald, host).message().find("bonds with special_bonds coul 0 0 0.5"), std::string::npos);
  // Pair models that read no charges do not care.
  host.has_charges = false;
  EXPECT_NO_THROW(models::bind_model(load("lj_argon.json").file, load("lj_argon.json").model->info(), host));
}

TEST(BindModel, SpecRulesPointIntoTheSpec) {
  Bound ewald = load("nacl_ewald.json");
  ewald.file.spec.core.shard_fields = {"positions", "atomic_numbers"};
  const Error charges = binding_error(ewald, metal_host());
  EXPECT_EQ(charges.pointer(), "/core/shard_fields");
  EXPECT_EQ(charges.file(), ewald.file.spec_source);

  // Positions and species are read by every model (a spec without them used to crash the run).
  for (const auto& [fields, missing] : {std::pair<std::vector<std::string>, std::string>{{"atomic_numbers"}, "positions"},
                                        {{"positions"}, "atomic_numbers"}}) {
    Bound mpnn = load("cu_mpnn_L2.json");
    mpnn.file.spec.core.shard_fields = fields;
    const Error e = binding_error(mpnn, metal_host());
    EXPECT_EQ(e.pointer(), "/core/shard_fields");
    EXPECT_NE(e.message().find("do not promote '" + missing + "' onto halo rows"), std::string::npos) << e.message();
  }

  // A model that leaves force parts on halo rows cannot have them declared owned-only; LJ, whose
  // kernels put everything on owned rows under the lists such a run gets, can.
  Bound mpnn_owned = load("cu_mpnn_L2.json");
  mpnn_owned.file.spec.owned_only_outputs = {"forces"};
  EXPECT_EQ(binding_error(mpnn_owned, metal_host()).pointer(), "/owned_only_outputs");
  Bound lj = load("lj_argon.json");
  lj.file.spec.owned_only_outputs = {"forces"};
  EXPECT_NO_THROW(models::bind_model(lj.file, lj.model->info(), metal_host()));

  Bound mpnn = load("cu_mpnn_L2.json");
  mpnn.file.spec.core.policy = StoragePolicy("refresh_halo", std::string("local"), std::string("local"));
  const Error stale = binding_error(mpnn, metal_host());
  EXPECT_EQ(stale.pointer(), "/core/policy");
  EXPECT_NE(stale.message().find("gather_mode 'local' never refreshes halo rows"), std::string::npos);
  EXPECT_EQ(stale.hint(), "use a spec with gather_mode 'halo_read', or 'halo expanded'");
}

// A model that corrects halo rows after its scatters (an exported graph calling
// halo_scatter_correct_static) under a spec whose scatter is local.
TEST(BindModel, ScatterCorrectionsNeedASpecThatMakesThem) {
  Bound mpnn = load("cu_mpnn_L2.json");
  models::ModelInfo info = mpnn.model->info();
  info.halo_scatter_corrections = true;
  EXPECT_NO_THROW(models::bind_model(mpnn.file, info, metal_host()));
  mpnn.file.spec.core.policy = StoragePolicy("refresh_halo");
  const Error e = binding_error_of(mpnn.file, info, metal_host());
  EXPECT_EQ(e.pointer(), "/core/policy");
  EXPECT_EQ(e.message(), "the spec's scatter_mode 'local' never corrects halo rows after a scatter, but model " +
                             mpnn.file.path + " corrects them and reads them afterwards: the results would be wrong");
  EXPECT_EQ(e.hint(), "use a spec with scatter_mode 'halo_correction' (the spec the model was exported with)");
  // The expanded shell computes halo rows instead of correcting them.
  models::HostFacts expanded = metal_host();
  expanded.halo = HaloStrategy::expanded;
  EXPECT_NO_THROW(models::bind_model(mpnn.file, info, expanded));
}

TEST(BindModel, HelpersWithoutNativeMeaningWarnOrStopUnderStrict) {
  Bound lj = load("lj_argon.json");
  lj.file.spec.core.third_party_helpers = {HelperRecord(PythonHelper{"acme.tools", "mystery", std::nullopt})};
  models::HostFacts host = metal_host();
  const models::RunPlan lenient = models::bind_model(lj.file, lj.model->info(), host);
  ASSERT_EQ(lenient.warnings.size(), 1u);
  EXPECT_EQ(lenient.warnings[0], "helper record 'acme.tools.mystery' (kind python) has no native meaning; ignored");
  host.strict = true;
  const Error e = binding_error(lj, host);
  EXPECT_EQ(e.pointer(), "/core/third_party_helpers");
  EXPECT_EQ(e.hint(), "remove it from the spec, or run with 'strict no' to ignore it");
}

TEST(BindModel, AGraphPartitionSpecSaysWhichPolicyToUse) {
  Bound ewald = load("nacl_ewald.json");
  ewald.file.spec = read_mlip_spec_file(wheel_spec("model_ewald_gp.json"));
  ewald.file.spec_source = "model_ewald_gp.json";
  const Error e = binding_error(ewald, metal_host());
  EXPECT_EQ(e.file(), "model_ewald_gp.json");
  EXPECT_EQ(e.pointer(), "/core/policy/kind");
  EXPECT_NE(e.hint().find("HaloStoragePolicy"), std::string::npos) << e.hint();
}


// A serial model (it maps periodic images onto their owners: SevenNet's own deployed module)
// runs on one rank, whatever its spec: the message says so before any rule of the spec.
TEST(BindModel, SerialModelsRunOnOneRank) {
  const Bound lj = load("lj_argon.json");
  models::ModelInfo serial = lj.model->info();
  serial.needs_owner_rows = true;
  EXPECT_NO_THROW(models::bind_model(lj.file, serial, metal_host(1)));
  const Error e = binding_error_of(lj.file, serial, metal_host(2));
  EXPECT_NE(e.message().find("is a serial model"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("this run has 2 MPI ranks"), std::string::npos) << e.message();
  EXPECT_NE(e.hint().find("export the model for many ranks"), std::string::npos) << e.hint();
}

}  // namespace
}  // namespace distspec
