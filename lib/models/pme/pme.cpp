#include "models/pme/pme.h"

#include "distspec/error.h"
#include "models/edge_kernel.h"
#include "models/ewald/ewald_accuracy.h"
#include "models/ewald/ewald_kspace.h"
#include "models/model_error.h"
#include "models/model_file.h"
#include "models/pme/pme_accuracy.h"
#include "models/pme/pme_fft.h"
#include "models/pme/pme_system.h"
#include "models/system_derived.h"

namespace distspec::models::pme {
namespace {

// The model on the CPU. Per step:
//   with "accuracy": alpha and the mesh at the first step of a run (pme_accuracy.h)
//   spline_spread of the owned rows' charges, summed over ranks by the spec's adapter: every
//   rank holds the global charge mesh
//   the total charge, likewise
//   solve: FFT, Green function, inverse FFT (the same on every rank)
//   interpolate: k-space energy, forces and virial of the owned rows
//   real space: erfc pairs over the edge list (receivers are owned rows)
class PmeModel final : public Model, public SystemDerived {
 public:
  PmeModel(ModelInfo info, Params params) : info_(std::move(info)), params_(params) {}

  const ModelInfo& info() const override { return info_; }
  void begin_run() override { rule_.begin_run(); }
  std::string take_report() override { return rule_.take_report(params_); }

  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
               ModelOutputs& out) override {
    const std::size_t n = graph.n_rows(), n_owned = graph.n_owned;
    out.reset(n, request);
    check_cell(graph);
    ewald::model_charges(graph, charges_);
    rule_.prepare(graph, charges_, dispatch, params_);
    check_mesh(params_);
    const std::array<double, 9> inv_t = cell_inv_t(graph.cell);
    const std::size_t k = params_.mesh_points();
    const double alpha = params_.alpha;
    const OpState state{&params_, request.threads, &fft_};

    // The charge mesh of this rank's owned rows (slice_owned), summed over ranks (all_reduce_sum).
    mesh_.resize(k);
    const TensorRef x = TensorRef::of(graph.positions, n, 3), q = TensorRef::of(charges_.data(), n),
                    cell = TensorRef::of(inv_t.data(), 3, 3);
    dispatch.call(kSpreadOp, {x, q, cell}, {TensorRef::of(mesh_.data(), k)}, state);
    double total_charge = 0.0;
    dispatch.call(kTotalChargeOp, {q}, {TensorRef::of(&total_charge, 1)}, state);

    // The same solve on every rank.
    potential_.resize(k);
    virial_meshes_.resize(request.virial_rows ? 6 * k : 0);
    std::array<double, 6> recip_virial{};
    dispatch.call(kSolveOp, {TensorRef::of(mesh_.data(), k), cell, TensorRef::of(&alpha, 1)},
                  {TensorRef::of(potential_.data(), k), TensorRef::of(recip_virial.data(), 6),
                   TensorRef::of(virial_meshes_.data(), request.virial_rows ? 6 : 0, k)},
                  state);

    // The owned rows' shares.
    std::vector<double>& energy_rows = request.energy_rows ? out.energy_rows : scratch_energy_;
    energy_rows.assign(n, 0.0);
    const TensorRef x_owned = TensorRef::of(graph.positions, n_owned, 3), q_owned = TensorRef::of(charges_.data(), n_owned);
    dispatch.call(kInterpolateOp,
                  {x_owned, q_owned, cell, TensorRef::of(potential_.data(), k),
                   TensorRef::of(virial_meshes_.data(), request.virial_rows ? 6 : 0, k), TensorRef::of(&total_charge, 1),
                   TensorRef::of(&alpha, 1)},
                  {TensorRef::of(energy_rows.data(), n_owned), TensorRef::of(out.forces.data(), n_owned, 3),
                   TensorRef::of(out.virial_rows.data(), request.virial_rows ? n_owned : 0, 6)},
                  state);
    if (request.virial)
      add_virial_share(graph, request, recip_virial, rule_.natoms(), params_.coulomb_constant, out);

    // Real space: the Ewald model's kernel.
    const EdgeOpState<ewald::Params> edge_state{&params_.real_space,
                                                edge_call(graph, index_checks_, request, &thread_rows_)};
    std::vector<TensorRef> edges = edge_args(graph);
    edges.push_back(q);
    dispatch.call(ewald::kRealSpaceOp, edges, pair_output_refs(out, energy_rows, true), edge_state);
    out.energy = owned_energy(energy_rows, n_owned);
  }

 private:
  ModelInfo info_;
  Params params_;
  SystemRule rule_;
  RealFft3d fft_;
  std::vector<double> charges_, mesh_, potential_, virial_meshes_;
  std::vector<double> scratch_energy_;  // per-row energy when the host does not want it
  IndexCheckSchedule index_checks_;
  ThreadRows<double> thread_rows_;
};

}  // namespace

Params parse_params(const Json& parameters, const std::string& units, int n_species, double cutoff) {
  const Json& root = expect_object(parameters, "/parameters",
                                   {"accuracy", "alpha", "mesh", "order", "erfc", "coulomb_constant"});
  Params p;
  p.n_species = n_species;
  p.cutoff = cutoff;
  if (const Json* order = find_member(root, "order")) {
    p.order = expect_int(*order, "/parameters/order");
    if (p.order < kMinOrder || p.order > kMaxOrder)
      fail_value("/parameters/order", "expected a B-spline order from 2 to 7, found " + std::to_string(p.order),
                 "the points per axis of each charge's spline, as kspace_modify order (LAMMPS: \"PPPM order cannot "
                 "be < 2 or > 7\"); 5 is LAMMPS' default");
  }
  const std::string or_accuracy = " or give \"accuracy\" to derive it as kspace_style pppm ACC does";
  const Json* accuracy = ewald::parse_accuracy_and_alpha(root, units, "pppm", or_accuracy, p);
  const Json* mesh = accuracy ? find_member(root, "mesh")
                              : &require_member(root, "mesh", "/parameters",
                                                "[K1, K2, K3], the mesh points along a, b, c (kspace_modify mesh);" +
                                                    or_accuracy);
  if (mesh) {
    const Json& values = expect_array(*mesh, "/parameters/mesh");
    if (values.size() != 3)
      fail_value("/parameters/mesh", "expected three integers [K1, K2, K3], found " + std::to_string(values.size()) +
                                         " value(s)");
    for (int d = 0; d < 3; ++d) {
      const std::string at = "/parameters/mesh/" + std::to_string(d);
      int k = expect_int(values[d], at);
      if (k < p.order || k >= kMaxMesh)
        fail_value(at, "expected from " + std::to_string(p.order) + " (the order) to " + std::to_string(kMaxMesh - 1) +
                           " mesh points, found " + std::to_string(k),
                   "each charge's spline spans \"order\" points per axis: the mesh must have at least as many");
      while (!factorable(k)) ++k;  // as pppm.cpp raises its grid
      p.mesh[d] = k;
    }
  } else {
    p.derive_mesh = true;
  }
  ewald::Params& r = p.real_space;
  r.n_species = n_species;
  r.cutoff = cutoff;
  r.cutsq = cutoff * cutoff;
  r.alpha = p.alpha;
  if (const Json* erfc = find_member(root, "erfc"))
    r.erfc = expect_choice(*erfc, "/parameters/erfc", {"exact", "lammps_polynomial"}) == "exact"
                 ? ewald::Erfc::exact
                 : ewald::Erfc::lammps_polynomial;
  if (const Json* c = find_member(root, "coulomb_constant"))
    p.coulomb_constant = expect_positive(*c, "/parameters/coulomb_constant");
  else
    p.coulomb_constant = ewald::coulomb_constant_of(units);
  r.coulomb_constant = p.coulomb_constant;
  return p;
}

void check_spec(const MLIPSpec& spec) {
  const std::string hint = "adapt them as potentials/specs/pme_halo.json (nvalchemi's own) does: " +
                           std::string(kSpreadOp.qualname) +
                           " arguments 0 and 1 slice_owned and output 0 all_reduce_sum, " + kTotalChargeOp.qualname +
                           " argument 0 slice_owned and output 0 all_reduce_sum";
  const std::string missing = "the mesh would count halo images and miss other ranks' atoms";
  ewald::check_global_sum_adapter(spec, {kSpreadOp.qualname, {0, 1}, {0}, "charges"}, missing, hint);
  ewald::check_global_sum_adapter(spec, {kTotalChargeOp.qualname, {0}, {0}, "charges"}, missing, hint);
}

std::unique_ptr<Model> make_model(const ModelFile& file, Device device) {
  ModelInfo info = info_from(file);
  info.ops = {kSpreadOp, kTotalChargeOp, kSolveOp, kInterpolateOp, ewald::kRealSpaceOp};
  // nvalchemi's PME spec adapts its batched and slab-correction kernels too; a single periodic
  // system without a slab needs neither.
  info.family_ops = {kBatchSpreadOp, kBatchTotalChargeOp, ewald::kSlabMomentsOp, ewald::kBatchSlabMomentsOp};
  return with_model_file_errors(file, [&]() -> std::unique_ptr<Model> {
    const Params params = ewald::read_kspace_params(file, parse_params, check_spec, info);
    if (device == Device::cuda) {
      if constexpr (kCudaBuild) return make_cuda_model(std::move(info), params);
      throw_no_cuda("pme");
    }
    if (!cpu_fft_available())
      throw Error(model_error_id::device, "/architecture", "architecture 'pme' on the cpu needs a DISTSPEC built with FFTW3",
                  "install FFTW3 (Debian: libfftw3-dev) and configure again, or run it with device cuda");
    return std::make_unique<PmeModel>(std::move(info), params);
  });
}

}  // namespace distspec::models::pme
