// Binding rules between a spec and a model, without a host: each the exact error, file and
// pointer a user sees, and the nvalchemi-written specs of the models DISTSPEC has accepted.
#include <gtest/gtest.h>

#include <string>

#include "distspec/error.h"
#include "distspec/spec/spec_json.h"
#include "models/ewald/ewald.h"
#include "models/lj/lj.h"
#include "models/model_factory.h"
#include "models/model_file.h"
#include "models/spec_binding.h"

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
  try {
    models::check_adapted_ops(read_mlip_spec_file(wheel_spec("model_ewald_halo.json")), lj,
                              {"lj_argon.json", "specs/model_ewald_halo.json"});
    FAIL() << "the Ewald spec was accepted for an LJ model";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "specs/model_ewald_halo.json");
    EXPECT_EQ(e.pointer(), "/core/custom_ops/0/op");
    EXPECT_EQ(e.message(), "the spec adapts op 'alchemiops::_ewald_compute_partial_structure_factors', which model "
                           "lj_argon.json (lj) never calls (it calls: nvalchemi::lj_energy_forces_batch, "
                           "nvalchemi::lj_energy_forces_virial_batch)");
    EXPECT_EQ(e.hint(), "use the spec written for this model");
  }
}

TEST(SpecBinding, AnInlineSpecIsReportedInsideTheModelFile) {
  models::ModelInfo info;
  info.architecture = "lj";
  MLIPSpec spec;
  spec.core.custom_ops = {OpAdapter("acme::magic")};
  try {
    models::check_adapted_ops(spec, info, {"model.json", "inline"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "model.json");
    EXPECT_EQ(e.pointer(), "/spec/core/custom_ops/0/op");
    EXPECT_NE(e.message().find("(it calls: no op through the dispatcher)"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace distspec
