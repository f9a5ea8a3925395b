#include "bad_input_catalogue.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "decks.h"
#include "lammps_session.h"

namespace distspec::testing {
namespace {

// Atom decks: argon and copper of 108 atoms (decks.h); a two-type argon.
const std::string& kArgon = decks::argon_108;
const std::string kArgonTwoTypes = R"(
units metal
lattice fcc 5.26
region box block 0 3 0 3 0 3
create_box 2 box
create_atoms 1 box
set type 1 type/fraction 2 0.5 4321
mass * 39.948
)";
const std::string& kCopper = decks::copper_108;

std::string read_text(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// `text` with `from` replaced by `to`; `from` must occur (a row that silently changed nothing
// would test the valid input).
std::string with(std::string text, const std::string& from, const std::string& to)
{
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("catalogue: '" + from + "' not found in a base input");
  return text.replace(at, from.size(), to);
}

// Base inputs the rows alter. Each runs cleanly as it is (BadInputCatalogue.BaseInputsRun).
const std::string kLJModel = R"({"format": "distspec-model", "format_version": 1, "architecture": "lj",
 "units": "metal", "cutoff": 8.5, "elements": ["Ar"],
 "parameters": {"pairs": [{"elements": ["Ar", "Ar"], "epsilon": 0.0104, "sigma": 3.4}]},
 "spec": "@POT@/specs/lj_halo.json"})";

std::string spec_with_policy(const std::string& policy, const std::string& ops = "[]", const std::string& extra = "")
{
  return R"({"version": 2, "core": {"policy": )" + policy + R"(, "custom_ops": )" + ops + "}" + extra + "}";
}
const std::string kHaloPolicy = R"({"kind": "halo", "scatter_mode": "halo_correction", "gather_mode": "halo_read"})";
const std::string kHaloSpec = spec_with_policy(kHaloPolicy);

std::string cu_u3() { return read_text(potential("Cu_u3.eam")); }
std::string eam_model() { return read_text(potential("cu_eam_u3.json")); }
std::string eam_model_here()
{
  return with(with(eam_model(), "\"Cu_u3.eam\"", "\"@POT@/Cu_u3.eam\""), "\"specs/eam_halo.json\"",
              "\"@POT@/specs/eam_halo.json\"");
}
// A 2-feature network small enough to alter by hand, with `layers` given (one layer by default).
const std::string kMpnnDense = R"({"weight": [[0.1, 0.05], [0.2, 0.15]], "bias": [0.0, 0.01]})";
const std::string kMpnnLayer = R"({"filter": {"weight": [[0.1, 0.05], [0.2, 0.15], [0.3, 0.25]], "bias": [0.0, 0.01]},
   "update": [)" + kMpnnDense + ", " + kMpnnDense + "]}";
std::string mpnn_model_here(const std::string& layers = "[" + kMpnnLayer + "]")
{
  return R"({"format": "distspec-model", "format_version": 1, "architecture": "mpnn", "units": "metal",
 "cutoff": 5.0, "elements": ["Cu"],
 "parameters": {"features": 2, "activation": "silu",
  "radial_basis": {"kind": "gaussian", "size": 3, "start": 0.0, "stop": 5.0, "width": 1.5},
  "embedding": {"Cu": [0.5, -0.2]},
  "layers": )" + layers + R"(,
  "readout": [)" + kMpnnDense + R"(, {"weight": [[0.1], [0.2]], "bias": [0.0]}],
  "baseline": {"kind": "morse", "switch_inner": 4.0, "pairs": [{"elements": ["Cu", "Cu"], "D": 0.34, "alpha": 1.36, "r0": 2.87}]}},
 "spec": "@POT@/specs/mpnn_halo.json",
 "runtime": {"autograd_outputs": ["forces", "stress"], "force_strategy": "autograd"}})";
}

const std::string kLJPair = "pair_style distspec\npair_coeff * * @DIR@/model.json Ar\n";
const std::string kEAMPair = "pair_style distspec\npair_coeff * * @DIR@/model.json Cu\n";
const std::string kRun = "run 0 post no\n";

// A row whose model file is `model` (written as model.json) on the given deck.
BadInput model_row(std::string name, std::string model, std::string expected, const std::string& deck = kArgon,
                   const std::string& pair = kLJPair)
{
  return {std::move(name), {{"model.json", std::move(model)}}, deck + pair + kRun, std::move(expected)};
}

// A row whose spec (written as spec.json) overrides lj_argon.json's with `pair_style ... spec`.
BadInput spec_row(std::string name, std::string spec, std::string expected)
{
  return {std::move(name), {{"spec.json", std::move(spec)}},
          kArgon + "pair_style distspec spec @DIR@/spec.json\npair_coeff * * @POT@/lj_argon.json Ar\n" + kRun,
          std::move(expected)};
}

// A row of LAMMPS input lines only.
BadInput input_row(std::string name, std::string commands, std::string expected)
{
  return {std::move(name), {}, std::move(commands), std::move(expected)};
}

std::vector<BadInput> build()
{
  std::vector<BadInput> rows;
  auto add = [&](BadInput row) { rows.push_back(std::move(row)); };
  const std::string lj = "pair_coeff * * @POT@/lj_argon.json Ar\n";

  // ---- LAMMPS input lines -----------------------------------------------------------------
  add(input_row("keyword_without_value", kArgon + "pair_style distspec spec\n" + lj + kRun,
                "keyword 'spec' needs a value; write 'spec FILE'"));
  add(input_row("device_value_unknown", kArgon + "pair_style distspec device tpu\n" + lj + kRun,
                "keyword 'device' got 'tpu'; expected one of cpu|cuda"));
  add(input_row("strict_value_unknown", kArgon + "pair_style distspec strict maybe\n" + lj + kRun,
                "keyword 'strict' got 'maybe'; expected one of yes|no"));
  add(input_row("precision_value_unknown", kArgon + "pair_style distspec precision fp16\n" + lj + kRun,
                "keyword 'precision' got 'fp16'; expected one of fp64|fp32"));
  add(input_row("threads_value_not_a_count", kArgon + "pair_style distspec threads 2x\n" + lj + kRun,
                "keyword 'threads' got '2x'; expected a whole number of threads per MPI rank, 1 to 1024"));
  add(input_row("threads_value_zero", kArgon + "pair_style distspec threads 0\n" + lj + kRun,
                "keyword 'threads' got '0'"));
  add(input_row("keyword_wrong_case", kArgon + "pair_style distspec Halo expanded\n" + lj + kRun,
                "unknown keyword 'Halo'"));
  add(input_row("spec_keyword_file_missing",
                kArgon + "pair_style distspec spec /nonexistent/spec.json\n" + lj + kRun,
                "/nonexistent/spec.json: cannot open"));
  add(input_row("spec_keyword_names_a_folder", kArgon + "pair_style distspec spec @DIR@\n" + lj + kRun,
                "@DIR@: cannot read"));
  add(input_row("model_file_names_a_folder", kArgon + "pair_style distspec\npair_coeff * * @DIR@ Ar\n" + kRun,
                "@DIR@: cannot open file (missing, unreadable or not a regular file)"));
  add(input_row("too_few_elements", kArgonTwoTypes + "pair_style distspec\npair_coeff * * @POT@/lj_argon.json Ar\n" + kRun,
                "followed by 2 element name(s) or NULL, one per atom type; got 4 word(s)"));
  add(input_row("no_elements", kArgon + "pair_style distspec\npair_coeff * * @POT@/lj_argon.json\n" + kRun,
                "followed by 1 element name(s) or NULL, one per atom type; got 3 word(s)"));
  add(input_row("element_wrong_case", kArgon + "pair_style distspec\npair_coeff * * @POT@/lj_argon.json ar\n" + kRun,
                "element 'ar' for atom type 1 is not in model file"));
  add(input_row("element_of_second_type_unknown",
                kArgonTwoTypes + "pair_style distspec\npair_coeff * * @POT@/lj_binary.json Ar Xe\n" + kRun,
                "element 'Xe' for atom type 2 is not in model file"));
  add(input_row("every_type_null",
                kArgon + "pair_style hybrid/overlay distspec lj/cut 8.5\npair_coeff * * distspec @POT@/lj_argon.json NULL\n" + kRun,
                "every atom type is NULL; map at least one to an element"));
  add(input_row("null_type_with_atoms_outside_hybrid",
                kArgonTwoTypes + "pair_style distspec\npair_coeff * * @POT@/lj_argon.json Ar NULL\n" + kRun,
                "atom type 2 is NULL, but distspec is the only pair style"));
  add(input_row("null_type_left_uncovered_in_hybrid",
                kArgonTwoTypes + "pair_style hybrid/overlay distspec lj/cut 8.5\n"
                                 "pair_coeff * * distspec @POT@/lj_argon.json Ar NULL\n" + kRun,
                "All pair coeffs are not set"));
  add(input_row("model_path_missing", kArgon + "pair_style distspec\npair_coeff * * @DIR@/no_such_model.json Ar\n" + kRun,
                "no_such_model.json: cannot open file"));
  // A user switching from pair_style eam/alloy or eam gives the potential file itself.
  add(input_row("setfl_file_as_model_file", kCopper + "pair_style distspec\npair_coeff * * @POT@/CuNi.eam.alloy Cu\n" + kRun,
                "CuNi.eam.alloy: this is a LAMMPS setfl potential file (pair_style eam/alloy; elements \"Ni\", \"Cu\"), "
                "not a DISTSPEC model file"));
  add(input_row("funcfl_file_as_model_file", kCopper + "pair_style distspec\npair_coeff * * @POT@/Cu_u3.eam Cu\n" + kRun,
                "\"elements\": [\"Cu\"],\n  \"parameters\": {\"file_format\": \"funcfl\"},\n  "
                "\"parameters_file\": \"Cu_u3.eam\""));
  add(input_row("run_before_pair_coeff", kArgon + "pair_style distspec\n" + kRun, "All pair coeffs are not set"));
  add(input_row("units_lj", with(kArgon, "units metal", "units lj") + "pair_style distspec\n" + lj + kRun,
                "is in 'metal' units, this run uses 'units lj'"));
  add(input_row("precision_fp32_reissued_after_coeff",
                kArgon + "pair_style distspec\n" + lj + "pair_style distspec precision fp32\n" + kRun,
                "/runtime/precision: architecture 'lj' runs in fp64 only, fp32 was requested"));
  add({"bad_spec_reissued_after_coeff", {{"spec.json", spec_with_policy(R"({"kind": "halo3"})")}},
       kArgon + "pair_style distspec\n" + lj + "pair_style distspec spec @DIR@/spec.json\n" + kRun,
       "@DIR@/spec.json: /core/policy/kind: unknown policy 'halo3'"});
  add({"local_policy_spec_keyword_on_several_ranks", {{"local.json", spec_with_policy(R"({"kind": "local"})")}},
       kArgon + "pair_style distspec spec @DIR@/local.json\n" + lj + kRun, "policy 'local' runs on a single process", 2});

  // Point charges (the Ewald model reads q) on an atom style without them, and a spec that does
  // not hand them to the model.
  add(input_row("charges_requested_without_q",
                kArgonTwoTypes + "pair_style distspec\npair_coeff * * @POT@/nacl_ewald.json Na Cl\n" + kRun,
                "atom style 'atomic' has no charge; use an atom style with charges"));
  add({"charges_not_promoted_by_the_spec",
       {{"spec.json", with(read_text(potential("specs/ewald_halo.json")), "\"third_party_helpers\": []",
                           "\"third_party_helpers\": [], \"shard_fields\": [\"positions\", \"atomic_numbers\"]")}},
       with(kArgonTwoTypes, "units metal", "units metal\natom_style charge") +
           "set type 1 charge 1.0\nset type 2 charge -1.0\npair_style distspec spec @DIR@/spec.json\n"
           "pair_coeff * * @POT@/nacl_ewald.json Na Cl\n" + kRun,
       "the spec's shard_fields do not promote 'charges' onto halo rows"});

  // ---- ranks that disagree --------------------------------------------------------------------
  // Each rank reads its own copy of the spec (a node-local path): rank 0's differs from the rest.
  add({"spec_differs_between_ranks",
       {{"spec.json", R"({"version": 2, "core": {"policy": {"kind": "halo"}}, "node_energy_key": "e@RANK@"})"}},
       kArgon + "pair_style distspec spec @DIR@/spec.json\n" + lj + kRun, "MPI ranks would run different specs or models",
       2});
  // The words of pair_style differ by rank (a getenv variable set per rank by the harness).
  add({"pair_style_words_differ_between_ranks", {},
       kCopper + "variable halo getenv DISTSPEC_CATALOGUE_WORD\npair_style distspec halo ${halo}\n"
                 "pair_coeff * * @POT@/cu_mpnn_L2.json Cu\n" + kRun,
       "MPI ranks would run different specs or models", 2});
  // Rank 0 reads the model file, but every rank resolves its relative parameters_file from the
  // model path it was given, here its own folder: the tables differ on rank 0.
  add({"parameters_file_differs_between_ranks",
       {{"Cu_u3.eam", with(cu_u3(), "-3.1561636903424350e-01", "-3.15616369034243@RANK@e-01")},
        {"model.json", with(eam_model(), "\"specs/eam_halo.json\"", "\"@POT@/specs/eam_halo.json\"")}},
       kCopper + kEAMPair + kRun, "MPI ranks would run different specs or models", 2});

  // ---- spec files -----------------------------------------------------------------------------
  add(spec_row("spec_empty", "", "spec.json: empty input"));
  add(spec_row("spec_not_json", "policy: halo\n", "spec.json: invalid JSON at byte 0"));
  add(spec_row("spec_truncated", R"({"version": 2, "core": {"policy": )", "spec.json: /core: invalid JSON at byte 34"));
  add(spec_row("spec_invalid_utf8", "{\"version\": 2, \"core\": {\"policy\": {\"kind\": \"ha\xff\"}}}",
               "invalid UTF-8 at byte"));
  add(spec_row("spec_top_level_array", "[]", "expected object, found"));
  add(spec_row("spec_duplicate_key", R"({"version": 2, "version": 2, "core": {"policy": {"kind": "halo"}}})",
               "/version: duplicate key 'version'"));
  add(spec_row("spec_version_1", R"({"version": 1, "core": {"policy": {"kind": "halo"}}})",
               "/version: expected integer 2, found"));
  add(spec_row("spec_version_string", R"({"version": "2", "core": {"policy": {"kind": "halo"}}})",
               "/version: expected integer 2, found"));
  add(spec_row("spec_without_core", R"({"version": 2})", "missing required key 'core'"));
  add(spec_row("spec_policy_without_kind", R"({"version": 2, "core": {"policy": {}}})",
               "/core/policy: missing required key 'kind'"));
  add(spec_row("spec_policy_graph_parallel", spec_with_policy(R"({"kind": "graph_parallel"})"),
               "policy 'graph_parallel' partitions rows across ranks without a halo"));
  // nvalchemi's own graph-partition spec of its Ewald model, as the released wheel saved it.
  add(spec_row("spec_nvalchemi_graph_partition",
               read_text(std::string(DISTSPEC_SOURCE_DIR) + "/unittest/golden_specs/nvalchemi-0.2.0/model_ewald_gp.json"),
               "policy 'graph_parallel' partitions rows across ranks without a halo; spatial domain decomposition "
               "cannot run it; use the model's spec with policy 'halo'"));
  add(spec_row("spec_byte_order_mark", "\xEF\xBB\xBF" + kHaloSpec, "spec.json: the file starts with a UTF-8 byte-order mark"));
  add(spec_row("spec_compile_bad_force_strategy",
               spec_with_policy(kHaloPolicy, "[]", R"(, "compile": {"force_strategy": "autograd"})"),
               "/compile/force_strategy: unknown force strategy 'autograd'; expected one of model_internal, "
               "framework_from_node_energy, framework_from_global_energy"));
  add(spec_row("spec_transform_extra_field",
               spec_with_policy(kHaloPolicy, R"([{"op": "nvalchemi::lj_energy_forces_batch", "arg_transforms": {},
                 "output_transforms": {"0": {"type": "scatter_outputs", "replicated_consumer": true}}}])"),
               "/core/custom_ops/0/output_transforms/0/replicated_consumer: transform 'scatter_outputs' has no field "
               "'replicated_consumer'"));
  add(spec_row("spec_of_another_model",
               read_text(std::string(DISTSPEC_SOURCE_DIR) + "/unittest/golden_specs/nvalchemi-0.2.0/model_ewald_halo.json"),
               "/core/custom_ops/0/op: the spec adapts op 'alchemiops::_ewald_compute_partial_structure_factors', "
               "which model"));
  add(spec_row("spec_custom_ops_not_a_list", spec_with_policy(kHaloPolicy, "{}"), "/core/custom_ops: expected array"));
  add(spec_row("spec_op_without_namespace",
               spec_with_policy(kHaloPolicy, R"([{"op": "lj_energy", "arg_transforms": {}, "output_transforms": {}}])"),
               "/core/custom_ops/0/op"));
  add(spec_row("spec_unknown_arg_transform",
               spec_with_policy(kHaloPolicy, R"([{"op": "nvalchemi::lj_energy_forces_batch",
                 "arg_transforms": {"0": {"type": "gather_everything"}}, "output_transforms": {}}])"),
               "/core/custom_ops/0/arg_transforms/0/type: unknown arg transform 'gather_everything'"));
  add(spec_row("spec_transform_position_not_a_number",
               spec_with_policy(kHaloPolicy, R"([{"op": "nvalchemi::lj_energy_forces_batch",
                 "arg_transforms": {"x": {"type": "gather_inputs"}}, "output_transforms": {}}])"),
               "/core/custom_ops/0/arg_transforms"));
  add(spec_row("spec_sharded_output_transform",
               spec_with_policy(kHaloPolicy, R"([{"op": "nvalchemi::lj_energy_forces_batch", "arg_transforms": {},
                 "output_transforms": {"0": {"type": "slice_outputs_owned"}}}])"),
               "output transform 'slice_outputs_owned' belongs to sharded storage"));
  add(spec_row("spec_unknown_shard_field",
               R"({"version": 2, "core": {"policy": {"kind": "halo"}, "shard_fields": ["velocities"]}})",
               "/core/shard_fields/0: unknown shard field 'velocities'"));
  // Every model reads positions and species on halo rows (these used to crash the run).
  add(spec_row("spec_positions_not_promoted",
               R"({"version": 2, "core": {"policy": {"kind": "halo"}, "shard_fields": ["atomic_numbers"]}})",
               "/core/shard_fields: model @POT@/lj_argon.json (lj) reads positions on every row, but the spec's "
               "shard_fields do not promote 'positions' onto halo rows"));
  add(spec_row("spec_species_not_promoted",
               R"({"version": 2, "core": {"policy": {"kind": "halo"}, "shard_fields": ["positions"]}})",
               "do not promote 'atomic_numbers' onto halo rows"));
  add(spec_row("spec_unknown_output_kind", kHaloSpec.substr(0, kHaloSpec.size() - 1) +
                                               R"(, "output_kinds": [["forces", "per_edge"]]})",
               "unknown output kind 'per_edge'"));
  add(spec_row("spec_forces_declared_per_graph", kHaloSpec.substr(0, kHaloSpec.size() - 1) +
                                                     R"(, "output_kinds": [["forces", "per_graph"]]})",
               "output 'forces' is declared per_graph, LAMMPS needs it per_node"));
  // The message-passing model leaves parts of forces on halo rows; pair models (LJ, EAM) do not,
  // and run such a spec (cases/lj_argon_owned_forces.json).
  add({"spec_forces_owned_only_for_a_message_passing_model",
       {{"spec.json", kHaloSpec.substr(0, kHaloSpec.size() - 1) + R"(, "owned_only_outputs": ["forces"]})"}},
       kCopper + "pair_style distspec spec @DIR@/spec.json\npair_coeff * * @POT@/cu_mpnn_L2.json Cu\n" + kRun,
       "lists 'forces' in owned_only_outputs, but model"});
  add(spec_row("spec_adapts_an_op_of_another_model",
               spec_with_policy(kHaloPolicy, R"([{"op": "distspec_eam::density", "arg_transforms": {},
                 "output_transforms": {}}])"),
               "/core/custom_ops/0/op: the spec adapts op 'distspec_eam::density', which model"));
  add(spec_row("spec_unknown_helper_kind", R"({"version": 2, "core": {"policy": {"kind": "halo"},
                 "third_party_helpers": [{"kind": "lambda", "target": "x"}]}})",
               "/core/third_party_helpers/0/kind: unknown helper kind 'lambda'"));
  add(spec_row("spec_nested_too_deep", R"({"version": 2, "core": )" + std::string(600, '[') + std::string(600, ']') + "}",
               "nested deeper than"));
  add({"spec_gather_never_refreshes_for_eam",
       {{"spec.json", spec_with_policy(R"({"kind": "halo", "scatter_mode": "halo_correction", "gather_mode": "local"})",
                                       R"([{"op": "distspec_eam::density", "arg_transforms": {}, "output_transforms": {}}])")}},
       kCopper + "pair_style distspec spec @DIR@/spec.json\npair_coeff * * @POT@/cu_eam_u3.json Cu\n" + kRun,
       "the spec's gather_mode 'local' never refreshes halo rows"});
  add({"spec_refresh_halo_without_halo_gather_for_mpnn",
       {{"spec.json", spec_with_policy(R"({"kind": "refresh_halo", "scatter_mode": "local", "gather_mode": "local"})")}},
       kCopper + "pair_style distspec spec @DIR@/spec.json\npair_coeff * * @POT@/cu_mpnn_L2.json Cu\n" + kRun,
       "never refreshes halo rows, but model"});
  add({"spec_unknown_helper_under_strict",
       {{"spec.json", R"({"version": 2, "core": {"policy": {"kind": "halo"}, "third_party_helpers": [
           {"kind": "method", "module_path": "acme.nn", "class_name": "Block", "method_name": "forward",
            "replacement": null, "mode": "patch"}]}})"}},
       kArgon + "pair_style distspec strict yes spec @DIR@/spec.json\n" + lj + kRun,
       "helper record 'acme.nn.Block.forward' (kind method) has no native meaning"});

  // ---- model files ----------------------------------------------------------------------------
  add(model_row("model_empty", "", "model.json: empty input"));
  add(model_row("model_not_an_object", "[1, 2]", "model.json: expected an object, found an array"));
  add(model_row("model_format_wrong", with(kLJModel, "distspec-model", "lammps-model"), "/format: expected \"distspec-model\""));
  add(model_row("model_format_version_2", with(kLJModel, "\"format_version\": 1", "\"format_version\": 2"),
                "/format_version: expected 1, found 2"));
  add(model_row("model_architecture_unknown", with(kLJModel, "\"lj\"", "\"mace\""),
                "/architecture: unknown value 'mace'; expected one of lj, eam, mpnn"));
  add(model_row("model_units_unknown", with(kLJModel, "\"metal\"", "\"atomic\""), "/units: unknown value 'atomic'"));
  add(model_row("model_cutoff_negative", with(kLJModel, "8.5", "-8.5"), "/cutoff: expected a positive number"));
  add(model_row("model_cutoff_string", with(kLJModel, "8.5", "\"8.5\""), "/cutoff: expected a number, found a string"));
  add(model_row("model_elements_empty", with(kLJModel, "[\"Ar\"]", "[]"), "/elements: expected at least one element"));
  add(model_row("model_elements_repeated", with(kLJModel, "[\"Ar\"]", "[\"Ar\", \"Ar\"]"),
                "/elements/1: element 'Ar' is listed twice"));
  add(model_row("model_key_misspelt", with(kLJModel, "\"spec\"", "\"spec_file\""), "/spec_file: unknown key 'spec_file'"));
  add(model_row("model_without_parameters",
                with(kLJModel, R"( "parameters": {"pairs": [{"elements": ["Ar", "Ar"], "epsilon": 0.0104, "sigma": 3.4}]},)", ""),
                "/parameters: missing both 'parameters' and 'parameters_file'"));
  add(model_row("model_without_spec", with(kLJModel, ",\n \"spec\": \"@POT@/specs/lj_halo.json\"", ""),
                "/spec: missing required key 'spec'"));
  add(model_row("model_spec_path_missing", with(kLJModel, "specs/lj_halo.json", "specs/no_such_spec.json"),
                "/spec: cannot read file"));
  add(model_row("model_spec_number", with(kLJModel, "\"@POT@/specs/lj_halo.json\"", "2"),
                "/spec: expected an MLIPSpec object or a path string, found an integer"));
  add(model_row("model_inline_spec_bad", with(kLJModel, "\"@POT@/specs/lj_halo.json\"", spec_with_policy(R"({"kind": 7})")),
                "/spec/core/policy/kind: expected string"));
  add(model_row("model_runtime_unknown_strategy",
                with(kLJModel, "\"spec\"", "\"runtime\": {\"force_strategy\": \"numeric\"}, \"spec\""),
                "/runtime/force_strategy: unknown value 'numeric'"));
  add(model_row("model_lj_takes_no_parameters_file",
                with(kLJModel, "\"spec\"", "\"parameters_file\": \"@POT@/Cu_u3.eam\", \"spec\""),
                "/parameters_file: architecture 'lj' takes its parameters inline"));
  add(model_row("model_lj_pair_unknown_element", with(kLJModel, "[\"Ar\", \"Ar\"]", "[\"Ar\", \"Kr\"]"),
                "/parameters/pairs/0/elements/1: element 'Kr' is not one of the model's elements"));
  add(model_row("model_lj_pair_three_elements", with(kLJModel, "[\"Ar\", \"Ar\"]", "[\"Ar\", \"Ar\", \"Ar\"]"),
                "/parameters/pairs/0/elements: expected two element names, found 3"));
  add(model_row("model_lj_missing_self_pair", with(with(kLJModel, "[\"Ar\"]", "[\"Ar\", \"Kr\"]"), "[\"Ar\", \"Ar\"]", "[\"Ar\", \"Kr\"]"),
                "/parameters/pairs: no pair Ar Ar is given"));
  add(model_row("model_lj_sigma_zero", with(kLJModel, "\"sigma\": 3.4", "\"sigma\": 0"),
                "/parameters/pairs/0/sigma: expected a positive number"));
  add(model_row("model_lj_pair_cutoff_beyond_model_cutoff", with(kLJModel, "\"sigma\": 3.4", "\"sigma\": 3.4, \"cutoff\": 9.0"),
                "/parameters/pairs/0/cutoff: pair cutoff 9.0 exceeds the model cutoff 8.5"));
  add(model_row("model_lj_nan_parameter", with(kLJModel, "0.0104", "NaN"),
                "/parameters/pairs/0/epsilon: non-finite number NaN"));
  add(model_row("model_lj_infinite_parameter", with(kLJModel, "3.4", "Infinity"),
                "/parameters/pairs/0/sigma: non-finite number Infinity"));
  add(model_row("model_lj_negative_infinite_cutoff", with(kLJModel, "8.5", "-Infinity"),
                "/cutoff: non-finite number -Infinity"));
  add(model_row("model_lj_overflowing_number", with(kLJModel, "0.0104", "1e999"),
                "/parameters/pairs/0/epsilon: number 1e999 at byte 194 (line 3, column 69) is out of range"));
  add(model_row("model_lj_coefficients_overflow", with(kLJModel, "\"sigma\": 3.4", "\"sigma\": 1e30"),
                "/parameters/pairs: pair Ar Ar: epsilon 0.0104 and sigma 1e+30 overflow"));
  add(model_row("model_mpnn_filter_wrong_rows",
                with(mpnn_model_here(), ", [0.3, 0.25]]", "]"),
                "/parameters/layers/0/filter/weight: expected 3 rows (one per radial basis function), found 2", kCopper,
                kEAMPair));
  add(model_row("model_mpnn_bias_wrong_length", with(mpnn_model_here(), "[0.0, 0.01]}", "[0.0]}"),
                "/parameters/layers/0/filter/bias: expected 2 numbers, found 1", kCopper, kEAMPair));
  add(model_row("model_mpnn_embedding_wrong_length", with(mpnn_model_here(), "[0.5, -0.2]", "[0.5]"),
                "/parameters/embedding/Cu: expected 2 numbers, found 1", kCopper, kEAMPair));
  add(model_row("model_mpnn_no_layers", mpnn_model_here("[]"), "/parameters/layers: expected 1 to", kCopper, kEAMPair));
  add(model_row("model_mpnn_readout_two_outputs", with(mpnn_model_here(), "[[0.1], [0.2]]", "[[0.1, 0.3], [0.2, 0.4]]"),
                "/parameters/readout/1/weight/0: expected 1 numbers, found 2", kCopper, kEAMPair));
  add(model_row("model_mpnn_nan_weight", with(mpnn_model_here(), "[0.5, -0.2]", "[NaN, -0.2]"),
                "/parameters/embedding/Cu/0: non-finite number NaN", kCopper, kEAMPair));
  add(model_row("model_mpnn_features_zero", with(mpnn_model_here(), "\"features\": 2", "\"features\": 0"),
                "/parameters/features: expected at least one feature channel", kCopper, kEAMPair));
  add(model_row("model_mpnn_basis_too_large", with(mpnn_model_here(), "\"size\": 3", "\"size\": 100000"),
                "/parameters/radial_basis/size: expected 1 to 1024 basis functions", kCopper, kEAMPair));
  add(model_row("model_eam_cutoff_disagrees_with_table", with(eam_model_here(), "4.95", "5.5"),
                "/cutoff: the model cutoff 5.5 differs from the potential file's", kCopper, kEAMPair));
  add(model_row("model_eam_parameters_file_missing", with(eam_model_here(), "@POT@/Cu_u3.eam", "@DIR@/Cu_u4.eam"),
                "/parameters_file: cannot read file", kCopper, kEAMPair));
  add(model_row("model_eam_units_real", with(eam_model_here(), "\"metal\"", "\"real\""),
                "/units: EAM potentials are in metal units", with(kCopper, "units metal", "units real"), kEAMPair));
  add(model_row("model_eam_fp32", with(eam_model_here(), "\"force_strategy\"", "\"precision\": \"fp32\", \"force_strategy\""),
                "/runtime/precision: architecture 'eam' runs in fp64 only", kCopper, kEAMPair));
  // A setfl file (Ni, Cu) asked for an element it does not hold.
  add({"model_eam_setfl_element_missing",
       {{"model.json", with(with(with(with(with(eam_model(), "\"Cu_u3.eam\"", "\"@POT@/CuNi.eam.alloy\""), "\"funcfl\"",
                                           "\"setfl\""),
                                      "\"specs/eam_halo.json\"", "\"@POT@/specs/eam_halo.json\""),
                                 "\"cutoff\": 4.95", "\"cutoff\": 6.394332378"),
                            "[\n    \"Cu\"\n  ]", "[\"Cu\", \"Fe\"]")}},
       with(kCopper, "create_box 1", "create_box 2") + "mass 2 55.8\npair_style distspec\n"
                                                       "pair_coeff * * @DIR@/model.json Cu Fe\n" + kRun,
       "/elements: element 'Fe' is not in the setfl file '@POT@/CuNi.eam.alloy', which has Ni, Cu"});
  add({"model_eam_table_holds_nan",
       {{"Cu_u3.eam", with(cu_u3(), "-3.1561636903424350e-01", "nan")},
        {"model.json", with(with(eam_model(), "\"Cu_u3.eam\"", "\"@DIR@/Cu_u3.eam\""), "\"specs/eam_halo.json\"",
                            "\"@POT@/specs/eam_halo.json\"")}},
       kCopper + kEAMPair + kRun, "Cu_u3.eam: line 4: expected a number for"});
  add({"model_eam_table_truncated",
       {{"Cu_u3.eam", cu_u3().substr(0, 2000)},
        {"model.json", with(with(eam_model(), "\"Cu_u3.eam\"", "\"@DIR@/Cu_u3.eam\""), "\"specs/eam_halo.json\"",
                            "\"@POT@/specs/eam_halo.json\"")}},
       kCopper + kEAMPair + kRun, "before the end of the file"});

  // ---- the torch kind: model files of exported graphs (rows that need a graph file are in
  // unittest/torch/test_torch_lammps.cpp, which runs on the exported fixtures) -------------------
  const std::string torch_model = with(with(kLJModel, "\"lj\"", "\"torch\""),
      R"("pairs": [{"elements": ["Ar", "Ar"], "epsilon": 0.0104, "sigma": 3.4}])",
      R"("graph": "@DIR@/argon.pt", "message_passing_layers": 2, "comm_width": 8, "contract": 1)");
#ifdef DISTSPEC_WITH_TORCH
  add(model_row("model_torch_without_graph", with(torch_model, R"("graph": "@DIR@/argon.pt", )", ""),
                "/parameters/graph: the model file names no graph; a torch model runs a graph exported by "
                "tools/distspec-export"));
  add(model_row("model_torch_graph_missing", torch_model, "@DIR@/argon.pt does not exist or is not a file"));
  add(model_row("model_torch_graph_format_unknown", with(torch_model, "argon.pt", "argon.onnx"),
                "/parameters/graph: cannot tell the format of graph '@DIR@/argon.onnx' from its name; give "
                "parameters.format"));
  add(model_row("model_torch_contract_unknown", with(torch_model, "\"contract\": 1", "\"contract\": 3"),
                "/parameters/contract: the graph uses calling convention 3, this build runs convention 1"));
  add(model_row("model_torch_parameters_file",
                with(torch_model, "\"spec\"", "\"parameters_file\": \"@POT@/Cu_u3.eam\", \"spec\""),
                "/parameters_file: architecture 'torch' names its graph under \"parameters\""));
  add(model_row("model_torch_aoti_without_torch_version", with(torch_model, "argon.pt", "argon.pt2"),
                "/parameters/torch_version: an AOTInductor graph needs the version of the torch that compiled it"));
#else
  add(model_row("model_torch_in_a_build_without_torch", torch_model,
                "/architecture: architecture 'torch' needs a DISTSPEC built with LibTorch"));
#endif

  // ---- atoms closer than the model allows -------------------------------------------------------
  // A second atom on top of the one at the origin: r = 0.
  add(input_row("overlapping_atoms_lj", kArgon + "create_atoms 1 single 0 0 0 units box\npair_style distspec\n" + lj + kRun,
                "returned non-finite energy or forces (first on MPI rank 0); the closest atoms are IDs 1 and 109 at "
                "distance 0"));
  add(input_row("overlapping_atoms_eam",
                kCopper + "create_atoms 1 single 0 0 0 units box\npair_style distspec\npair_coeff * * @POT@/cu_eam_u3.json Cu\n" + kRun,
                "the closest atoms are IDs 1 and 109 at distance 0"));
  add(input_row("overlapping_atoms_mpnn",
                kCopper + "create_atoms 1 single 0 0 0 units box\npair_style distspec\npair_coeff * * @POT@/cu_mpnn_L2.json Cu\n" + kRun,
                "the closest atoms are IDs 1 and 109 at distance 0"));
  // Two atoms that fix move puts onto each other at step 7, between thermo steps (thermo 100,
  // run 20), where the ranks agree on the check one step later: the message names step 7, and
  // the closest pair as it is at step 8, after passing through each other with those forces
  // zeroed. Steps and speeds are powers of two, so that the atoms meet exactly.
  const std::string meeting = R"(units metal
atom_style atomic
boundary p p p
region box block 0 20 0 20 0 20 units box
create_box 1 box
create_atoms 1 single 9.125 10 10 units box
create_atoms 1 single 10.875 10 10 units box
mass 1 39.948
group left id 1
group right id 2
timestep 0.0009765625
fix 1 left move linear 128 0 0
fix 2 right move linear -128 0 0
thermo 100
pair_style distspec
)" + lj + "run 20 post no\n";
  add(input_row("atoms_meet_between_thermo_steps", meeting,
                "step 7: model @POT@/lj_argon.json returned non-finite energy or forces"));
  add(input_row("atoms_meet_between_thermo_steps_agreed_a_step_later", meeting,
                "at distance 0.25 (model cutoff 8.5) (agreed at step 8; those forces were zeroed, not integrated)"));
  // The run ends at that step, and nothing reads the energy there (no pe among the thermo
  // keywords): the end of the run settles the check (Pair::finish, or the internal fix's
  // post_run in LAMMPS 2021), at the step itself.
  std::string meeting_at_the_end = meeting;
  meeting_at_the_end.replace(meeting_at_the_end.find("thermo 100\n"), 11, "thermo 100\nthermo_style custom step temp\n");
  meeting_at_the_end.replace(meeting_at_the_end.find("run 20"), 6, "run 7");
  add(input_row("atoms_meet_at_the_last_step_of_a_run", meeting_at_the_end,
                "step 7: model @POT@/lj_argon.json returned non-finite energy or forces"));
  add(input_row("atoms_meet_at_the_last_step_of_a_run_settled_at_its_end", meeting_at_the_end,
                "at distance 0 (model cutoff 8.5). Atoms closer than the model allows"));
  return rows;
}

// The inputs the rows alter, unaltered: each must run (expected is empty).
std::vector<BadInput> build_bases()
{
  return {model_row("lj_base", kLJModel, ""), model_row("mpnn_base", mpnn_model_here(), "", kCopper, kEAMPair),
          model_row("eam_base", eam_model_here(), "", kCopper, kEAMPair),
          spec_row("spec_base", kHaloSpec, "")};
}

}  // namespace

const std::vector<BadInput>& valid_base_inputs()
{
  static const std::vector<BadInput> rows = build_bases();
  return rows;
}

const std::vector<BadInput>& bad_input_catalogue()
{
  static const std::vector<BadInput> rows = build();
  return rows;
}

}  // namespace distspec::testing
