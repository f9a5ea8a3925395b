/* ----------------------------------------------------------------------
   DISTSPEC: pair_style distspec, CPU.

   compute() is three steps: build the graph (owned + ghost rows, edges from the full
   neighbour list), run the model through the spec's dispatcher (halo refreshes go through
   this style's comm callbacks), write energy, forces and virial back as the spec classifies
   them.
------------------------------------------------------------------------- */

#include "pair_distspec.h"

#include "collective.h"
#include "finite_outputs.h"
#include "lammps_compat.h"
#include "lammps_halo_exchange.h"
#include "rank_agreement.h"

#include "atom.h"
#include "comm.h"
#include "domain.h"
#include "error.h"
#include "force.h"
#include "memory.h"
#include "modify.h"
#include "neigh_list.h"
#include "neighbor.h"
#include "update.h"
#include "utils.h"

#include "distspec/error.h"
#include "distspec/spec/helper_record.h"
#include "models/model_factory.h"
#include "models/model_error.h"
#include "models/spec_binding.h"
#include "models/system_derived.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#ifdef DISTSPEC_WITH_CUDA
#include "lammps_device_halo_exchange.h"
#include "models/cuda_runtime.h"

#include <cuda_runtime_api.h>
#endif

using namespace LAMMPS_NS;

namespace {

std::vector<std::string> words_of(int narg, char **arg)
{
  return std::vector<std::string>(arg, arg + narg);
}

}    // namespace

/* ---------------------------------------------------------------------- */

PairDistspec::PairDistspec(LAMMPS *lmp) : PairWithEndOfRun(lmp)
{
  single_enable = 0;
  restartinfo = 0;
  one_coeff = 1;
  manybody_flag = 1;
  // Models return their own per-rank virial: f.r over ghost partials would be wrong for
  // models whose forces are declared owned-only.
  no_virial_fdotr_compute = 1;
  distspec::models::register_builtin_ops();
}

PairDistspec::~PairDistspec()
{
  if (allocated) {
    memory->destroy(setflag);
    memory->destroy(cutsq);
  }
}

/* ----------------------------------------------------------------------
   pair_style distspec [spec FILE] [halo per_layer|expanded] [device cpu|cuda] [strict yes|no]
                       [precision fp64|fp32] [gpu_share yes|no] [timing yes|no] [threads N]
------------------------------------------------------------------------- */

void PairDistspec::settings(int narg, char **arg)
{
  const auto before = settings_;
  run_collectively(lmp, "pair_style distspec", [&] { settings_ = DistspecSettings::parse(words_of(narg, arg)); });
  check_device();
  timing_.enable(settings_.timing);
  // A re-issued pair_style keeps the pair_coeff model: read it again under a new spec or
  // precision (the old ones must not run silently), rebuild it for a new device.
  if (model_file_ && (settings_.spec_file != before.spec_file || settings_.precision != before.precision))
    load_model(std::string(model_file_->path));
  else if (model_file_ && settings_.device != before.device)
    run_collectively(lmp, "pair_style distspec",
                     [&] { model_ = distspec::models::make_model(*model_file_, model_device()); });
}

void PairDistspec::check_device() const
{
  if (settings_.device != distspec::Device::cuda) return;
#ifdef DISTSPEC_WITH_CUDA
  select_gpu();
#else
  error->all(FLERR, "pair_style distspec: device cuda needs a DISTSPEC plugin built with CUDA "
                    "(DISTSPEC_ENABLE_CUDA); this one was built for CPUs");
#endif
}

distspec::Device PairDistspec::model_device() const
{
  return settings_.device;
}

// A CUDA model's feature rows stay on the GPU: its exchange packs the rows LAMMPS sends there.
std::unique_ptr<LammpsHaloExchangeBase> PairDistspec::make_halo_exchange()
{
#ifdef DISTSPEC_WITH_CUDA
  if (model_device() == distspec::Device::cuda) return std::make_unique<LammpsDeviceHaloExchange>(lmp, this);
#endif
  return std::make_unique<LammpsHaloExchange>(lmp, this);
}

// One GPU per rank by node-local rank: GPU (local rank % GPUs on the node). More ranks on a node
// than GPUs is an error unless `gpu_share yes`. Every rank decides the same way.
void PairDistspec::select_gpu() const
{
#ifdef DISTSPEC_WITH_CUDA
  int local_rank = 0, local_size = 1;
#ifndef MPI_STUBS
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, comm->me, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
#endif
  std::string why;
  int n_devices = 0;
  if (distspec::models::cuda::device_available(&why) && cudaGetDeviceCount(&n_devices) != cudaSuccess) {
    why = "cudaGetDeviceCount failed";
    n_devices = 0;
  }
  // {no GPU here, more ranks than GPUs here, most ranks on a node, fewest GPUs on a node}
  int local[4] = {n_devices == 0, local_size > n_devices, local_size, -n_devices};
  int any[4];
  MPI_Allreduce(local, any, 4, MPI_INT, MPI_MAX, world);
  if (any[0])
    error->all(FLERR, "pair_style distspec: device cuda, but {} found no usable CUDA device{}; use 'device cpu', or "
               "run where a GPU is visible (CUDA_VISIBLE_DEVICES)",
               n_devices == 0 ? "this rank" : "a rank", why.empty() ? "" : " (" + why + ")");
  if (any[1] && !settings_.gpu_share)
    error->all(FLERR, "pair_style distspec: device cuda: up to {} MPI ranks share a node with {} GPU(s); run at most "
               "one rank per GPU, or add 'gpu_share yes' to let ranks share the node's GPUs round-robin",
               any[2], -any[3]);
  const int device = local_rank % n_devices;
  const cudaError_t status = cudaSetDevice(device);
  if (status != cudaSuccess)
    error->one(FLERR, "pair_style distspec: device cuda: cudaSetDevice({}) failed: {}", device,
               cudaGetErrorString(status));
  if (comm->me == 0)
    utils::logmesg(lmp, "DISTSPEC: device cuda: rank 0 on GPU {} of {} ({}); {} rank(s) on its node{}\n", device,
                   n_devices, distspec::models::cuda::device_description(), local_size,
                   any[1] ? ", GPUs shared (gpu_share yes)" : "");
#endif
}

/* ----------------------------------------------------------------------
   pair_coeff * * MODEL_FILE ELEM|NULL ... (one element name per atom type)
------------------------------------------------------------------------- */

void PairDistspec::coeff(int narg, char **arg)
{
  const int ntypes = atom->ntypes;
  if (narg != 3 + ntypes)
    error->all(FLERR,
               "pair_coeff distspec: expected '* * MODEL_FILE' followed by {} element name(s) or NULL, one per "
               "atom type; got {} word(s)",
               ntypes, narg);
  if (strcmp(arg[0], "*") != 0 || strcmp(arg[1], "*") != 0)
    error->all(FLERR, "pair_coeff distspec: the first two arguments must be '* *', got '{} {}'", arg[0], arg[1]);

  load_model(arg[2]);

  const auto &elements = model_->info().elements;
  type_to_species_.assign(ntypes + 1, -1);
  type_elements_.assign(ntypes + 1, "");
  for (int t = 1; t <= ntypes; ++t) {
    const std::string name = arg[2 + t];
    type_elements_[t] = name;
    // NULL leaves a type to another style of a hybrid; alone, its atoms would feel no force.
    if (name == "NULL" && force->pair == this)
      error->all(FLERR, "pair_coeff distspec: atom type {} is NULL, but distspec is the only pair style: NULL leaves "
                 "a type to another style of pair_style hybrid or hybrid/overlay. Map type {} to one of the elements of "
                 "model file {}, or use a hybrid style", t, t, arg[2]);
    if (name == "NULL") continue;
    auto it = std::find(elements.begin(), elements.end(), name);
    if (it == elements.end()) {
      std::string known;
      for (const auto &e : elements) known += (known.empty() ? "" : " ") + e;
      error->all(FLERR, "pair_coeff distspec: element '{}' for atom type {} is not in model file {} (elements: {})",
                 name, t, arg[2], known);
    }
    type_to_species_[t] = static_cast<int>(it - elements.begin());
  }

  if (!allocated) {
    allocated = 1;
    memory->create(setflag, ntypes + 1, ntypes + 1, "pair:setflag");
    memory->create(cutsq, ntypes + 1, ntypes + 1, "pair:cutsq");
  }
  int mapped = 0;
  for (int i = 1; i <= ntypes; ++i)
    for (int j = 1; j <= ntypes; ++j) {
      setflag[i][j] = (type_to_species_[i] >= 0 && type_to_species_[j] >= 0) ? 1 : 0;
      mapped += setflag[i][j];
    }
  if (mapped == 0) error->all(FLERR, "pair_coeff distspec: every atom type is NULL; map at least one to an element");

  // A potential file's masses, as pair_style eam and eam/alloy set them (a later `mass` wins).
  const auto &masses = model_->info().element_masses;
  if (!masses.empty())
    for (int t = 1; t <= ntypes; ++t)
      if (type_to_species_[t] >= 0) atom->set_mass(FLERR, t, masses[type_to_species_[t]]);
}

// Rank 0 reads the model file and broadcasts it; every rank parses it, so all fail together.
void PairDistspec::load_model(const std::string &model_path)
{
  run_collectively(lmp, "pair_coeff distspec", [&] {
    const std::string bytes = read_file_on_rank0(lmp, model_path);
    model_file_ = std::make_unique<distspec::models::ModelFile>(
        distspec::models::parse_model_file(bytes, model_path, settings_.spec_file));
    if (!settings_.precision.empty()) model_file_->precision = settings_.precision;
    model_ = distspec::models::make_model(*model_file_, model_device());
    output_plan_ = OutputPlan::from_spec(model_file_->spec);
    model_fingerprint_ = model_fingerprint(*model_file_);
  });
}

/* ---------------------------------------------------------------------- */

void PairDistspec::init_style()
{
  if (!model_) error->all(FLERR, "pair_style distspec: no model loaded; pair_coeff * * MODEL_FILE ... must come first");
  const auto &info = model_->info();
  const auto &spec = model_file_->spec;

  // Specs, parameter files and input words that differ by rank would hang or mix models.
  Fingerprint run;
  run.add(std::to_string(model_fingerprint_)).add(DistspecSettings::name(settings_.halo)).add(settings_.precision);
  run.add(settings_.strict ? "strict" : "lenient").add(std::to_string(int(settings_.device)));
  for (const auto &element : type_elements_) run.add(element);
  require_same_on_every_rank(lmp, run.value(), model_file_->spec_source);

  // Every spec x model rule lives in the models layer; this style hands in LAMMPS' facts.
  distspec::models::Binding binding;
  run_collectively(lmp, "pair_style distspec", [&] {
    binding = distspec::models::bind_model(*model_file_, info, host_facts());
    dispatcher_ = std::make_unique<distspec::Dispatcher>(spec.core, model_device(), info.ops, comm->nprocs,
                                                         binding.halo);
  });
  if (comm->me == 0)
    for (const auto &warning : binding.warnings) error->warning(FLERR, "pair_style distspec: " + warning);
  expanded_ = binding.halo == distspec::HaloStrategy::expanded;
  const int layers = info.message_passing_layers;

  // The widest row one exchange carries: the model's features, or a per-atom virial fold.
  comm_forward = comm_reverse = std::max(info.comm_width, 6);
  halo_ = make_halo_exchange();
  halo_->set_max_width(comm_forward);

  edge_list_ = choose_edge_list();
  give_newton_on_ends_ = edge_list_ == distspec::models::EdgeList::half_newton_off && info.newton_on_forces &&
      halo_shares_folded();
  distspec_compat::request_neighbor_list(neighbor, this, instance_me, neighbor_list_kind(), expanded_);
  // The expanded shell: ghosts out to L cutoffs, without widening the neighbour list itself.
  if (expanded_) comm->cutghostuser = std::max(comm->cutghostuser, layers * info.cutoff + neighbor->skin);
  edges_built_at_ = -1;
  install_end_of_run_hook();
  log_setup();
}

// The edge list this run gives the model: a half list where the model takes one (as LAMMPS'
// own pair styles do) and the halo is per-layer; newton on's only where what it leaves on halo
// rows is folded: forces by LAMMPS' reverse comm (newton_pair on), per-atom energy and virial by
// this style, none of them declared owned-only by the spec.
distspec::models::EdgeList PairDistspec::choose_edge_list() const
{
  using distspec::models::EdgeList;
  const std::optional<EdgeList> half = model_->info().half_list;
  if (expanded_ || !half) return EdgeList::full;
  const EdgeList wanted =
      *half == EdgeList::half_newton_on && halo_shares_folded() ? EdgeList::half_newton_on : EdgeList::half_newton_off;
  return half_edge_list_allowed(wanted) ? wanted : EdgeList::full;
}

distspec_compat::NeighborListKind PairDistspec::neighbor_list_kind() const
{
  using distspec::models::EdgeList;
  using distspec_compat::NeighborListKind;
  if (edge_list_ == EdgeList::full) return NeighborListKind::full;
  return edge_list_ == EdgeList::half_newton_on ? NeighborListKind::half : NeighborListKind::half_newton_off;
}

bool PairDistspec::halo_shares_folded() const
{
  return force->newton_pair && !output_plan_.forces_owned_only && !output_plan_.energy_rows_owned_only &&
      !output_plan_.virial_rows_owned_only;
}

bool PairDistspec::halo_rows_stay_zero() const
{
  return !model_->info().forces_on_halo_rows && edge_list_ != distspec::models::EdgeList::half_newton_on &&
      !give_newton_on_ends_;
}

// What the binding rules need to know about this run.
distspec::models::HostFacts PairDistspec::host_facts() const
{
  distspec::models::HostFacts host;
  host.units = update->unit_style;
  host.n_ranks = comm->nprocs;
  host.has_charges = atom->q_flag;
  host.atom_style = atom->atom_style;
  const char *kind = "pfsm";
  for (int d = 0; d < 3; ++d) {
    host.periodic[d] = domain->periodicity[d];
    host.boundary += fmt::format("{}{}{}", d ? " " : "", kind[domain->boundary[d][0]], kind[domain->boundary[d][1]]);
  }
  host.bonds_scale_coulomb = atom->nbonds > 0 &&
      (force->special_coul[1] != 1.0 || force->special_coul[2] != 1.0 || force->special_coul[3] != 1.0);
  host.special_coul = fmt::format("{} {} {}", force->special_coul[1], force->special_coul[2], force->special_coul[3]);
  host.halo = settings_.halo;
  host.strict = settings_.strict;
  return host;
}

double PairDistspec::init_one(int i, int j)
{
  if (setflag[i][j] == 0) return 0.0;
  return model_->info().cutoff;
}

void PairDistspec::log_setup() const
{
  if (comm->me != 0) return;
  const auto &info = model_->info();
  const auto &spec = model_file_->spec;
  std::string text = fmt::format("DISTSPEC: model {} ({}), cutoff {} {}, {} message-passing layer(s)\n",
                                 model_file_->path, info.architecture, info.cutoff, info.units,
                                 info.message_passing_layers);
  const auto &adapters = spec.core.custom_ops;
  const auto called = std::count_if(adapters.begin(), adapters.end(), [&](const distspec::OpAdapter &a) {
    return std::find(info.ops.begin(), info.ops.end(), a.op) != info.ops.end();
  });
  const std::string unbound = called == static_cast<long>(adapters.size())
      ? std::string()
      : fmt::format(" ({} for kernels of the model's family it never calls, unbound)", adapters.size() - called);
  text += fmt::format("DISTSPEC: spec {}: policy {} (scatter {}, gather {}), {} op adapter(s){}, halo {}\n",
                      model_file_->spec_source, spec.core.policy.kind, spec.core.policy.scatter_mode.value_or("-"),
                      spec.core.policy.gather_mode.value_or("-"), adapters.size(), unbound,
                      DistspecSettings::name(settings_.halo));
  for (const auto &helper : spec.core.third_party_helpers)
    text += fmt::format("DISTSPEC:   helper {}: {}\n", distspec::helper_target(helper),
                        distspec::native_meaning(helper).value_or("not applicable natively"));
  text += "DISTSPEC: outputs: " + output_plan_.describe();
  utils::logmesg(lmp, text);
}

/* ---------------------------------------------------------------------- */

// Called at the start of every run.
void PairDistspec::setup()
{
  report_pending_ = true;
  timing_.begin_run();
  // Where LAMMPS re-initialises (kspace init()), a model that derives settings from the system
  // (Ewald's accuracy) derives them afresh.
  if (auto *derived = dynamic_cast<distspec::models::SystemDerived *>(model_.get())) derived->begin_run();
}

void PairDistspec::end_of_run()
{
  finite_check_.settle(lmp, kokkosable ? nullptr : list, finite_check_subject());
  timing_.report(lmp, style_name());
}

FiniteCheckSubject PairDistspec::finite_check_subject() const
{
  return {style_name(), model_file_ ? model_file_->path : std::string(), model_ ? model_->info().cutoff : 0.0};
}

void PairDistspec::compute(int eflag, int vflag)
{
  ev_init(eflag, vflag);
  timing_.begin_step();
  build_graph();
  run_model("distspec");
  // At once on the steps LAMMPS reads the energy or virial; else agreed at the next step, with
  // this step's non-finite forces zeroed meanwhile (finite_outputs.h).
  double *forces = model_outputs_.forces.data();
  const std::size_t n_forces = 3 * graph_.n_rows();
  const bool finite = std::isfinite(model_outputs_.energy) && all_finite(forces, n_forces);
  if (finite_check_.check(lmp, list, finite, eflag || vflag, finite_check_subject())) zero_non_finite(forces, n_forces);
  timing_.lap(RunTiming::checks);
  write_back();
  timing_.end_step();
  if (report_pending_) log_halo_report();
}

// Per run: rows and feature exchanges of one step, over all ranks.
void PairDistspec::log_halo_report()
{
  report_pending_ = false;
  const auto &st = dispatcher_->stats();
  double local[4] = {double(atom->nlocal), double(atom->nghost), double(st.bytes), double(graph_.n_receivers)};
  double sum[4], max[4], min[4];
  MPI_Allreduce(local, sum, 4, MPI_DOUBLE, MPI_SUM, world);
  MPI_Allreduce(local, max, 4, MPI_DOUBLE, MPI_MAX, world);
  MPI_Allreduce(local, min, 4, MPI_DOUBLE, MPI_MIN, world);
  if (comm->me != 0) return;
  utils::logmesg(lmp,
                 fmt::format("DISTSPEC halo ({}): owned rows {:.0f} (min {:.0f}, max {:.0f} per rank), halo rows {:.0f} "
                             "(min {:.0f}, max {:.0f}), feature exchanges per step: {} forward + {} reverse + {} all-reduce, "
                             "feature bytes per step {:.0f} (max {:.0f} per rank)\n",
                             DistspecSettings::name(settings_.halo), sum[0], min[0], max[0], sum[1], min[1], max[1],
                             st.forward, st.reverse, st.all_reduce, sum[2], max[2]));
}

// The model on the graph of this step, asked for what the ev flags request.
void PairDistspec::run_model(const char *style)
{
  dispatcher_->reset_stats();
  distspec::models::OutputRequest request;
  request.energy = eflag_global != 0;
  request.energy_rows = eflag_atom != 0;
  request.virial = vflag_global != 0;
  request.virial_rows = vflag_atom != 0;
  request.rows_on_device = rows_on_device_;
  request.threads = model_threads();
  // The cell may change every step (fix npt, fix deform); both styles pass here.
  graph_.has_cell = true;
  graph_.cell = {domain->xprd, 0.0, 0.0, domain->xy, domain->yprd, 0.0, domain->xz, domain->yz, domain->zprd};
  graph_.periodic = {domain->xperiodic != 0, domain->yperiodic != 0, domain->zperiodic != 0};
  try {
    model_->compute(graph_, *dispatcher_, request, model_outputs_);
  } catch (const distspec::Error &e) {
    // Errors about the system itself come from quantities every rank shares (the box, a net
    // charge after an all-reduce): every rank raises them, so every rank stops together. One
    // that points at a parameter names the model file.
    if (e.id() == distspec::models::model_error_id::system)
      error->all(FLERR, std::string("pair_style ") + style + ": " +
                 (e.pointer().empty() || !e.file().empty() ? e : e.with_file(model_file_->path)).what());
    // A rank-local failure in the middle of a step: stop every rank rather than leave the
    // others waiting in the next exchange.
    error->one(FLERR, std::string("pair_style ") + style + ": " + e.what());
  }
  timing_.lap_model(dispatcher_->stats().seconds);
  if (auto *derived = dynamic_cast<distspec::models::SystemDerived *>(model_.get())) {
    const std::string text = derived->take_report();
    if (!text.empty() && comm->me == 0) utils::logmesg(lmp, text);
  }
}

// Rows [owned | halo] = LAMMPS atoms [0, nlocal) and ghosts [nlocal, nlocal + nghost).
void PairDistspec::build_graph()
{
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  halo_->resize(nlocal, atom->nghost);
  dispatcher_->attach(*halo_);

  species_.resize(nall);
  const int *type = atom->type;
  for (int i = 0; i < nall; ++i) species_[i] = type_to_species_[type[i]];

  const auto &fields = model_file_->spec.core.shard_fields;
  auto promoted = [&](const char *f) { return std::find(fields.begin(), fields.end(), f) != fields.end(); };
  graph_.n_owned = nlocal;
  graph_.n_halo = atom->nghost;
  graph_.positions = (nall > 0 && promoted("positions")) ? &atom->x[0][0] : nullptr;
  graph_.species = promoted("atomic_numbers") ? species_.data() : nullptr;
  graph_.charges = (promoted("charges") && atom->q_flag) ? atom->q : nullptr;

  timing_.lap(RunTiming::graph);
  // Charges are part of the topology a device model caches, and may change every step (fix qeq).
  if (neighbor->ncalls != edges_built_at_) {
    rebuild_edges();
    timing_.lap(RunTiming::edges);
  } else if (graph_.charges && model_->info().reads_charges) graph_.topology_generation = ++topology_generation_;
}

// Each row's owned row on this rank, by atom ID (-1 where the atom is owned elsewhere), for a
// serial model.
void PairDistspec::rebuild_owner_rows()
{
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  std::unordered_map<tagint, int> owned;
  owned.reserve(nlocal);
  for (int i = 0; i < nlocal; ++i) owned.emplace(atom->tag[i], i);
  owner_rows_.resize(nall);
  for (int i = 0; i < nall; ++i) {
    const auto it = owned.find(atom->tag[i]);
    owner_rows_[i] = it == owned.end() ? -1 : it->second;
  }
  graph_.owner_rows = owner_rows_.data();
}

// Edge arrays from the full neighbour list, without atoms of NULL types (which hybrid skip
// lists leave out already, but a plain style would not).
void PairDistspec::rebuild_edges()
{
  // Expanded: ghosts are receivers too, each layer computed on them instead of exchanged.
  const int inum = list->inum + (expanded_ ? list->gnum : 0);
  const int *ilist = list->ilist;
  receivers_.clear();
  senders_.clear();
  offsets_.assign(1, 0);
  receivers_.reserve(inum);
  for (int ii = 0; ii < inum; ++ii) {
    const int i = ilist[ii];
    if (species_[i] < 0) continue;
    const int *jlist = list->firstneigh[i];
    const int jnum = list->numneigh[i];
    receivers_.push_back(i);
    for (int jj = 0; jj < jnum; ++jj) {
      const int j = jlist[jj] & NEIGHMASK;
      if (species_[j] >= 0) senders_.push_back(j);
    }
    offsets_.push_back(static_cast<int>(senders_.size()));
  }
  graph_.n_receivers = receivers_.size();
  graph_.receivers = receivers_.data();
  graph_.offsets = offsets_.data();
  graph_.senders = senders_.data();
  graph_.edge_list = edge_list_;
  graph_.newton_on_ends = nullptr;
  graph_.owner_rows = nullptr;
  if (give_newton_on_ends_) order_newton_on_pairs_first(senders_.data());
  edges_built_at_ = neighbor->ncalls;
  if (model_->info().needs_owner_rows) rebuild_owner_rows();
  // Row counts, species and edges change only here: a device model uploads them only then.
  graph_.topology_generation = ++topology_generation_;
}

// Which pairs of an owned and a ghost atom newton on's list holds on this rank, decided the
// same way on both ranks of a pair, from the two atom IDs alone (exact on both): the lower ID's
// where the IDs' sum is even, the higher's where it is odd, so that the pairs a subdomain
// boundary cuts are split evenly between its two ranks even where IDs follow position (as
// create_atoms and most data files number atoms); for an atom and its own periodic image, the
// image above it (z, then y, then x). Pairs of owned atoms are in a half list once already.
void PairDistspec::order_newton_on_pairs_first(int *senders)
{
  const int nlocal = atom->nlocal;
  const tagint *tag = atom->tag;
  double **x = atom->x;
  auto on_this_rank = [&](int i, int j) {
    if (j < nlocal) return true;
    if (tag[i] != tag[j]) return ((tag[i] + tag[j]) % 2 == 0) == (tag[i] < tag[j]);
    for (int d = 2; d >= 0; --d)
      if (x[j][d] != x[i][d]) return x[j][d] > x[i][d];
    return false;
  };
  newton_on_ends_rows_.resize(graph_.n_receivers);
  for (std::size_t r = 0; r < graph_.n_receivers; ++r) {
    const int i = graph_.receivers[r];
    int *first = senders + graph_.offsets[r], *last = senders + graph_.offsets[r + 1];
    int *mid = std::stable_partition(first, last, [&](int j) { return on_this_rank(i, j); });
    newton_on_ends_rows_[r] = static_cast<int>(mid - senders);
  }
  graph_.newton_on_ends = newton_on_ends_rows_.data();
  // With the ends, the owner of each halo row (AtomGraph::newton_on_ends): a pair with a periodic
  // image of this rank's own atom can then be taken once, from newton on's side.
  rebuild_owner_rows();
}

// Energy, forces and virial into LAMMPS, as OutputPlan says.
void PairDistspec::write_back()
{
  const int nlocal = atom->nlocal;
  const int nall = nlocal + atom->nghost;
  const std::size_t n_rows = nall;
  // Halo rows that hold nothing need no fold (a reverse exchange) before they are dropped.
  const bool halo_zero = halo_rows_stay_zero();
  auto zero_halo = [&](std::vector<double> &rows, int width) {
    std::fill(rows.begin() + static_cast<std::size_t>(nlocal) * width, rows.begin() + n_rows * width, 0.0);
  };
  auto fold = [&](std::vector<double> &rows, int width, bool owned_only) {
    if (owned_only) zero_halo(rows, width);
    else if (!halo_zero) halo_->reverse(distspec::Rows<double>{rows.data(), n_rows, width});
  };

  if (eflag_global) eng_vdwl += model_outputs_.energy;

  // Under newton_pair on, LAMMPS' reverse comm of f folds ghost partials itself.
  double **f = atom->f;
  if (output_plan_.forces_owned_only) zero_halo(model_outputs_.forces, 3);
  else if (!force->newton_pair) fold(model_outputs_.forces, 3, false);
  const int force_rows = force->newton_pair && !halo_zero ? nall : nlocal;
  for (int i = 0; i < force_rows; ++i)
    for (int c = 0; c < 3; ++c) f[i][c] += model_outputs_.forces[3 * i + c];

  if (eflag_atom) {
    fold(model_outputs_.energy_rows, 1, output_plan_.energy_rows_owned_only);
    for (int i = 0; i < nlocal; ++i) eatom[i] += model_outputs_.energy_rows[i];
  }
  if (vflag_global)
    for (int k = 0; k < 6; ++k) virial[k] += model_outputs_.virial[k];
  if (vflag_atom) {
    fold(model_outputs_.virial_rows, 6, output_plan_.virial_rows_owned_only);
    for (int i = 0; i < nlocal; ++i)
      for (int k = 0; k < 6; ++k) vatom[i][k] += model_outputs_.virial_rows[6 * i + k];
  }
}

/* ----------------------------------------------------------------------
   comm callbacks: the halo exchange of the moment decides which block moves
------------------------------------------------------------------------- */

int PairDistspec::pack_forward_comm(int n, int *list, double *buf, int /*pbc_flag*/, int * /*pbc*/)
{
  // Feature rows carry no coordinates: periodic shifts do not apply.
  return halo_->pack_forward(n, list, buf);
}

void PairDistspec::unpack_forward_comm(int n, int first, double *buf)
{
  halo_->unpack_forward(n, first, buf);
}

int PairDistspec::pack_reverse_comm(int n, int first, double *buf)
{
  return halo_->pack_reverse(n, first, buf);
}

void PairDistspec::unpack_reverse_comm(int n, int *list, double *buf)
{
  halo_->unpack_reverse(n, list, buf);
}

double PairDistspec::memory_usage()
{
  double bytes = Pair::memory_usage();
  bytes += sizeof(int) * (species_.capacity() + receivers_.capacity() + offsets_.capacity() + senders_.capacity());
  bytes += sizeof(double) * (model_outputs_.forces.capacity() + model_outputs_.energy_rows.capacity() + model_outputs_.virial_rows.capacity());
  return bytes;
}
