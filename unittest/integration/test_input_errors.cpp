// Bad input lines, model files and specs stop every rank together with a message that names the
// file, key or keyword. A rank left behind in a collective would hang: ctest's timeout fails it.
#include <gtest/gtest.h>

#include <fstream>
#include <mpi.h>

#include "decks.h"
#include "lammps_session.h"

namespace dt = distspec::testing;

namespace {

using dt::potential;

const std::string& kArgon = dt::decks::argon_108;

// Writes `text` to a fresh file visible to every rank and returns its path.
std::string write_file(const std::string& name, const std::string& text)
{
  const std::string path = "/tmp/distspec_test_" + std::to_string(dt::world_size()) + "_" + name;
  if (dt::world_rank() == 0) std::ofstream(path) << text;
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

// A model file that is lj_argon.json with `spec` replaced.
std::string lj_model_with_spec(const std::string& name, const std::string& spec_json)
{
  return write_file(name + ".json", R"({"format": "distspec-model", "format_version": 1, "architecture": "lj",
 "units": "metal", "cutoff": 8.5, "elements": ["Ar"],
 "parameters": {"pairs": [{"elements": ["Ar", "Ar"], "epsilon": 0.0104, "sigma": 3.4}]},
 "spec": )" + spec_json + "}");
}

std::string spec_with(const std::string& policy, const std::string& ops = "[]")
{
  return R"({"version": 2, "core": {"policy": )" + policy + R"(, "custom_ops": )" + ops + "}}";
}

const std::string kHalo = R"({"kind": "halo", "scatter_mode": "halo_correction", "gather_mode": "halo_read"})";

std::string error_of(const std::string& pair_lines, const std::string& setup = kArgon)
{
  dt::LammpsSession lmp;
  return lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + setup + pair_lines + "\nrun 0 post no");
}

#define EXPECT_HAS(text, needle) EXPECT_NE((text).find(needle), std::string::npos) << (text)

TEST(InputErrors, UnknownKeyword)
{
  const std::string e = error_of("pair_style distspec colour blue\npair_coeff * * " + potential("lj_argon.json") + " Ar");
  EXPECT_HAS(e, "pair_style distspec: unknown keyword 'colour'; expected spec, halo, device, precision, strict, gpu_share, timing or threads");
}

TEST(InputErrors, KeywordValue)
{
  const std::string e = error_of("pair_style distspec halo thick\npair_coeff * * " + potential("lj_argon.json") + " Ar");
  EXPECT_HAS(e, "keyword 'halo' got 'thick'; expected one of per_layer|expanded");
}

TEST(InputErrors, GpuShareValue)
{
  const std::string e = error_of("pair_style distspec gpu_share maybe\npair_coeff * * " + potential("lj_argon.json") + " Ar");
  EXPECT_HAS(e, "keyword 'gpu_share' got 'maybe'; expected one of yes|no");
}

// `device cuda` where it cannot run names why: a plugin built without CUDA, no visible GPU, or
// more ranks on the node than GPUs without `gpu_share yes`. Where it can run, it runs.
TEST(InputErrors, DeviceCudaWhereItCannotRun)
{
  dt::LammpsSession lmp;
  const std::string input = "plugin load " + dt::plugin_path() + "\n" + kArgon + "pair_style distspec device cuda\npair_coeff * * " +
      potential("lj_argon.json") + " Ar\nrun 0 post no";
  const std::string e = lmp.run_expecting_error(input);
  if (e.empty()) GTEST_SKIP() << "device cuda ran: a GPU is usable here";
  const bool named = e.find("needs a DISTSPEC plugin built with CUDA") != std::string::npos ||
      e.find("found no usable CUDA device") != std::string::npos ||
      e.find("add 'gpu_share yes'") != std::string::npos;
  EXPECT_TRUE(named) << e;
}

TEST(InputErrors, MissingModelFile)
{
  const std::string e = error_of("pair_style distspec\npair_coeff * * /nonexistent/model.json Ar");
  EXPECT_HAS(e, "/nonexistent/model.json: cannot open file");
}

TEST(InputErrors, UnknownElement)
{
  const std::string e = error_of("pair_style distspec\npair_coeff * * " + potential("lj_argon.json") + " Xe");
  EXPECT_HAS(e, "element 'Xe' for atom type 1 is not in model file");
  EXPECT_HAS(e, "(elements: Ar)");
}

TEST(InputErrors, ElementCountNotMatchingTypes)
{
  const std::string e = error_of("pair_style distspec\npair_coeff * * " + potential("lj_argon.json") + " Ar Ar");
  EXPECT_HAS(e, "expected '* * MODEL_FILE' followed by 1 element name(s) or NULL, one per atom type; got 5 word(s)");
}

TEST(InputErrors, UnitsMismatch)
{
  std::string setup = kArgon;
  setup.replace(setup.find("units metal"), 11, "units real");
  const std::string e = error_of("pair_style distspec\npair_coeff * * " + potential("lj_argon.json") + " Ar", setup);
  EXPECT_HAS(e, "is in 'metal' units, this run uses 'units real'");
}

TEST(InputErrors, ShardedPolicyRejected)
{
  const std::string model = lj_model_with_spec("shard", spec_with(R"({"kind": "shard"})"));
  const std::string e = error_of("pair_style distspec\npair_coeff * * " + model + " Ar");
  EXPECT_HAS(e, "/core/policy/kind: policy 'shard' partitions rows across ranks without a halo");
}

TEST(InputErrors, LocalPolicyOnSeveralRanks)
{
  if (dt::world_size() == 1) GTEST_SKIP() << "local runs on one rank";
  const std::string model = lj_model_with_spec("local", spec_with(R"({"kind": "local"})"));
  const std::string e = error_of("pair_style distspec\npair_coeff * * " + model + " Ar");
  EXPECT_HAS(e, "policy 'local' runs on a single process, but this run has " + std::to_string(dt::world_size()) +
                    " MPI ranks");
}

TEST(InputErrors, AnAdapterForAnOpTheModelNeverCallsIsRefused)
{
  const std::string model = lj_model_with_spec(
      "unknown_op", spec_with(kHalo, R"([{"op": "acme::lj_magic", "arg_transforms": {}, "output_transforms": {}}])"));
  const std::string e = error_of("pair_style distspec\npair_coeff * * " + model + " Ar");
  EXPECT_HAS(e, "/core/custom_ops/0/op: the spec adapts op 'acme::lj_magic', which model ");
  EXPECT_HAS(e, "never calls (it calls: nvalchemi::lj_energy_forces_batch, nvalchemi::lj_energy_forces_virial_batch); "
                "use the spec written for this model");
}

TEST(InputErrors, ShardedTransformRejected)
{
  const std::string model = lj_model_with_spec(
      "gather_full", spec_with(kHalo, R"([{"op": "nvalchemi::lj_energy_forces_batch",
        "arg_transforms": {"0": {"type": "gather_inputs_full"}}, "output_transforms": {}}])"));
  const std::string e = error_of("pair_style distspec\npair_coeff * * " + model + " Ar");
  EXPECT_HAS(e, "/core/custom_ops/0/arg_transforms/0/type: arg transform 'gather_inputs_full' belongs to sharded storage");
}

TEST(InputErrors, MalformedSpecNamesFileAndPointer)
{
  const std::string model = lj_model_with_spec("bad_kind", spec_with(R"({"kind": "halo2"})"));
  const std::string e = error_of("pair_style distspec\npair_coeff * * " + model + " Ar");
  EXPECT_HAS(e, model + ": /spec/core/policy/kind: unknown policy 'halo2'");
}

TEST(InputErrors, StrictRejectsUnknownHelper)
{
  const std::string model = lj_model_with_spec("helper", R"({"version": 2, "core": {"policy": )" + kHalo +
                                                             R"(, "third_party_helpers": [{"kind": "python",
        "module_path": "acme.tools", "attr_name": "mystery", "replacement": null}]}})");
  const std::string pair = " * * " + model + " Ar";
  EXPECT_EQ(error_of("pair_style distspec\npair_coeff" + pair), "");
  const std::string e = error_of("pair_style distspec strict yes\npair_coeff" + pair);
  EXPECT_HAS(e, "helper record 'acme.tools.mystery' (kind python) has no native meaning");
}

// LAMMPS itself rejects `pair_coeff I J` for one_coeff styles (2021: "Incorrect args for pair
// coefficients", 2025: "Pair_coeff must start with * * ..."): every rank stops.
TEST(InputErrors, CoeffWithoutWildcards)
{
  const std::string e = error_of("pair_style distspec\npair_coeff 1 1 " + potential("lj_argon.json") + " Ar");
  EXPECT_TRUE(e.find("Incorrect args for pair coefficients") != std::string::npos ||
              e.find("Pair_coeff must start with * * for pair style distspec") != std::string::npos)
      << e;
}

// Pair and EAM kernels are fp64 only: asking for fp32 is an error, not silently ignored.
TEST(InputErrors, PrecisionTheModelDoesNotHave)
{
  const std::string e = error_of("pair_style distspec precision fp32\npair_coeff * * " + potential("lj_argon.json") + " Ar");
  EXPECT_HAS(e, "/runtime/precision: architecture 'lj' runs in fp64 only, fp32 was requested");
}

}  // namespace
