#include "models/ewald/ewald.h"

#include <map>

#include "distspec/error.h"
#include "models/edge_kernel.h"
#include "models/ewald/ewald_accuracy.h"
#include "models/ewald/ewald_kspace.h"
#include "models/model_file.h"
#include "models/system_derived.h"

namespace distspec::models::ewald {
namespace {

// The model on the CPU. Per step:
//   with "accuracy": alpha at the first step of a run, kmax when the cell changes (ewald_accuracy.h)
//   k-vectors of the cell (host; recomputed when the cell changes)
//   stage 1: the structure factor of the owned rows, summed over ranks by the spec's adapter
//   neutrality check on the global total charge (the same number on every rank)
//   stage 2: k-space energy, forces and virial of the owned rows
//   real space: erfc pairs over the edge list (receivers are owned rows)
class EwaldModel final : public Model, public SystemDerived {
 public:
  EwaldModel(ModelInfo info, Params params) : info_(std::move(info)), params_(params), accuracy_(params) {}

  const ModelInfo& info() const override { return info_; }
  void begin_run() override { accuracy_.begin_run(); }
  std::string take_report() override { return accuracy_.take_report(params_, kvectors_.count()); }

  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
               ModelOutputs& out) override {
    const std::size_t n = graph.n_rows(), n_owned = graph.n_owned;
    out.reset(n, request);
    check_cell(graph);
    model_charges(graph, charges_);
    accuracy_.prepare(graph, charges_, dispatch, params_);
    kvectors_.update(graph, params_.kmax);
    const std::size_t n_k = kvectors_.count();
    const double alpha = params_.alpha;

    // Stage 1 on every row; the spec's slice_owned keeps the owned ones, all_reduce_sum sums ranks.
    real_sf_.assign(n_k, 0.0);
    imag_sf_.assign(n_k, 0.0);
    double total_charge = 0.0;
    std::vector<TensorRef> kspace{TensorRef::of(graph.positions, n, 3), TensorRef::of(charges_.data(), n),
                                  TensorRef::of(kvectors_.cell().data(), 3, 3),
                                  TensorRef::of(kvectors_.vectors().data(), n_k, 3), TensorRef::of(&alpha, 1)};
    // Every op of the step runs on the request's threads, with the model's per-thread rows.
    const EdgeOpState<Params> state{&params_, edge_call(graph, index_checks_, request, &thread_rows_)};
    dispatch.call(kStructureFactorsOp, kspace,
                  {TensorRef::of(real_sf_.data(), n_k), TensorRef::of(imag_sf_.data(), n_k), TensorRef::of(&total_charge, 1)},
                  state);
    check_neutral(total_charge);

    // Stage 2 on the owned rows (the first n_owned of each per-row block).
    std::vector<double>& energy_rows = request.energy_rows ? out.energy_rows : scratch_energy_;
    energy_rows.assign(n, 0.0);
    const bool virial = request.virial || request.virial_rows;
    kspace[0].rows = kspace[1].rows = n_owned;
    std::vector<TensorRef> args = kspace;
    args.insert(args.end(), {TensorRef::of(real_sf_.data(), n_k), TensorRef::of(imag_sf_.data(), n_k),
                             TensorRef::of(&total_charge, 1)});
    dispatch.call(kReciprocalOp, args,
                  {TensorRef::of(energy_rows.data(), n_owned), TensorRef::of(out.forces.data(), n_owned, 3),
                   TensorRef::of(out.virial.data(), virial ? 6 : 0),
                   TensorRef::of(out.virial_rows.data(), request.virial_rows ? n_owned : 0, 6)},
                  state);

    // Real space.
    std::vector<TensorRef> edges = edge_args(graph);
    edges.push_back(TensorRef::of(charges_.data(), n));
    dispatch.call(kRealSpaceOp, edges, pair_output_refs(out, energy_rows, true), state);
    out.energy = owned_energy(energy_rows, n_owned);
  }

 private:
  ModelInfo info_;
  Params params_;
  AccuracyRule accuracy_;
  KVectors kvectors_;
  std::vector<double> charges_, real_sf_, imag_sf_;
  std::vector<double> scratch_energy_;  // per-row energy when the host does not want it
  IndexCheckSchedule index_checks_;
  ThreadRows<double> thread_rows_;
};

}  // namespace

double coulomb_constant_of(const std::string& units) {
  // LAMMPS update.cpp set_units(): force->qqr2e per units style.
  static const std::map<std::string, double> qqr2e{{"lj", 1.0},        {"real", 332.06371},  {"metal", 14.399645},
                                                   {"si", 8.9876e9},    {"cgs", 1.0},        {"electron", 1.0},
                                                   {"micro", 8.987556e6}, {"nano", 230.7078669}};
  const auto it = qqr2e.find(units);
  if (it == qqr2e.end())
    fail_value("/units", "no Coulomb constant is known for units '" + units + "'",
               "give \"coulomb_constant\" under \"parameters\"");
  return it->second;
}

Params parse_params(const Json& parameters, const std::string& units, int n_species, double cutoff) {
  const Json& root =
      expect_object(parameters, "/parameters", {"alpha", "kmax", "accuracy", "erfc", "coulomb_constant"});
  Params p;
  p.n_species = n_species;
  p.cutoff = cutoff;
  p.cutsq = cutoff * cutoff;
  // accuracy: kspace_style ewald's; alpha and kmax then default to LAMMPS' rule (ewald_accuracy.h).
  const std::string or_accuracy = " or give \"accuracy\" to derive it as kspace_style ewald ACC does";
  const Json* accuracy = parse_accuracy_and_alpha(root, units, "ewald", or_accuracy, p);
  const Json* kmax_value = accuracy ? find_member(root, "kmax")
                                    : &require_member(root, "kmax", "/parameters",
                                                      "[kx, ky, kz] as LAMMPS' kspace_modify kmax/ewald;" + or_accuracy);
  if (!kmax_value) p.derive_kmax = true;
  if (kmax_value) {
    const Json& kmax = expect_array(*kmax_value, "/parameters/kmax");
    if (kmax.size() != 3)
      fail_value("/parameters/kmax",
                 "expected three integers [kx, ky, kz], found " + std::to_string(kmax.size()) + " value(s)");
    for (int d = 0; d < 3; ++d) {
      const std::string at = "/parameters/kmax/" + std::to_string(d);
      p.kmax[d] = expect_int(kmax[d], at);
      // LAMMPS' kmax/ewald takes 1 and up; 200 in each direction is already ~1.7e7 k-vectors.
      if (p.kmax[d] < 1 || p.kmax[d] > kMaxKmax)
        fail_value(at, "expected an integer from 1 to 200, found " + std::to_string(p.kmax[d]),
                   "the number of reciprocal cells along that box edge (kspace_modify kmax/ewald)");
    }
  }
  if (const Json* erfc = find_member(root, "erfc"))
    p.erfc = expect_choice(*erfc, "/parameters/erfc", {"exact", "lammps_polynomial"}) == "exact" ? Erfc::exact
                                                                                                 : Erfc::lammps_polynomial;
  if (const Json* c = find_member(root, "coulomb_constant"))
    p.coulomb_constant = expect_positive(*c, "/parameters/coulomb_constant");
  else
    p.coulomb_constant = coulomb_constant_of(units);
  return p;
}

void check_spec(const MLIPSpec& spec) {
  const std::string hint = "adapt it as potentials/specs/ewald_halo.json does: arguments 0 and 1 slice_owned, outputs "
                           "0, 1 and 2 all_reduce_sum";
  check_global_sum_adapter(spec, {kStructureFactorsOp.qualname, {0, 1}, {0, 1, 2}, "structure factor"},
                           "the structure factor would count halo images and miss other ranks' atoms", hint);
}

std::unique_ptr<Model> make_model(const ModelFile& file, Device device) {
  ModelInfo info = info_from(file);
  info.ops = {kStructureFactorsOp, kReciprocalOp, kRealSpaceOp};
  // nvalchemi's Ewald spec adapts its batched and slab-correction kernels too; a single
  // periodic system without a slab needs neither.
  info.family_ops = {kBatchStructureFactorsOp, kSlabMomentsOp, kBatchSlabMomentsOp};
  return with_model_file_errors(file, [&]() -> std::unique_ptr<Model> {
    const Params params = read_kspace_params(file, parse_params, check_spec, info);
    if (device == Device::cuda) {
      if constexpr (kCudaBuild) return make_cuda_model(std::move(info), params);
      throw_no_cuda("ewald");
    }
    return std::make_unique<EwaldModel>(std::move(info), params);
  });
}

}  // namespace distspec::models::ewald
