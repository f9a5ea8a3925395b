/* ----------------------------------------------------------------------
   DISTSPEC: pair_style distspec, CPU.

   compute() is three steps: build the graph (owned + ghost rows, edges from LAMMPS' neighbour
   list as the run plan lists them: pair_distspec_graph.cpp), run the model through the spec's
   dispatcher (halo refreshes go through this style's comm callbacks), write energy, forces and
   virial back as the run plan says (pair_distspec_write_back.cpp). Where the model runs (the
   device keyword, each rank's GPU): pair_distspec_device.cpp.
------------------------------------------------------------------------- */

#include "pair_distspec.h"

#include "collective.h"
#include "finite_outputs.h"
#include "lammps_compat.h"
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
#include "models/factory/model_factory.h"
#include "models/model_error.h"
#include "models/plan/spec_binding.h"
#include "models/system_derived.h"

#include <algorithm>
#include <cstring>

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
                       [edges cutoff|skin] [cuda_graph yes|no]
------------------------------------------------------------------------- */

void PairDistspec::settings(int narg, char **arg)
{
  const auto before = settings_;
  run_collectively(lmp, FLERR, "pair_style distspec", [&] { settings_ = distspec::models::StyleSettings::parse(words_of(narg, arg)); });
  check_device();
  timing_.enable(settings_.timing);
  // A re-issued pair_style keeps the pair_coeff model: read it again under a new spec or
  // precision (the old ones must not run silently), rebuild it for a new device.
  if (model_file_ && (settings_.spec_file != before.spec_file || settings_.precision != before.precision ||
                      settings_.edges != before.edges || settings_.cuda_graph != before.cuda_graph))
    load_model(std::string(model_file_->path));
  else if (model_file_ && settings_.device != before.device)
    run_collectively(lmp, FLERR, "pair_style distspec",
                     [&] { model_ = distspec::models::make_model(*model_file_, model_device()); });
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
  run_collectively(lmp, FLERR, "pair_coeff distspec", [&] {
    const std::string path = find_potential_file(model_path);
    const std::string bytes = read_file_on_rank0(lmp, path);
    model_file_ = std::make_unique<distspec::models::ModelFile>(
        distspec::models::parse_model_file(bytes, path, settings_.spec_file,
                                           distspec::models::architecture_table()));
    if (!settings_.precision.empty()) model_file_->precision = settings_.precision;
    model_file_->edges = settings_.edges;
    model_file_->cuda_graph = settings_.cuda_graph;
    model_ = distspec::models::make_model(*model_file_, model_device());
    // Output lists LAMMPS cannot take are refused here, before the run plan is made.
    (void) distspec::models::OutputPlan::from_spec(model_file_->spec);
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
  run.add(std::to_string(model_fingerprint_)).add(distspec::models::StyleSettings::name(settings_.halo)).add(settings_.precision);
  run.add(settings_.strict ? "strict" : "lenient").add(std::to_string(int(settings_.device))).add(settings_.edges);
  run.add(settings_.cuda_graph ? "cuda_graph" : "eager");
  for (const auto &element : type_elements_) run.add(element);
  require_same_on_every_rank(lmp, run.value(), model_file_->spec_source);

  // Every spec x model rule lives in the models layer; this style hands in LAMMPS' facts.
  run_collectively(lmp, FLERR, "pair_style distspec", [&] {
    plan_ = distspec::models::bind_model(*model_file_, info, host_facts());
    dispatcher_ = std::make_unique<distspec::Dispatcher>(spec.core, model_device(), info.ops, comm->nprocs,
                                                         plan_.halo);
  });
  if (comm->me == 0)
    for (const auto &warning : plan_.warnings) error->warning(FLERR, "pair_style distspec: " + warning);

  comm_forward = comm_reverse = plan_.comm_width;
  // Under pair_style hybrid, Comm sizes its buffers from the hybrid's widths, which it took from
  // its sub-styles at pair_style time, before this width was known (the model is read by
  // pair_coeff): raise them, or a wide row (SevenNet's 480 features) overruns LAMMPS' buffers.
  if (force->pair && force->pair != this) {
    force->pair->comm_forward = std::max(force->pair->comm_forward, comm_forward);
    force->pair->comm_reverse = std::max(force->pair->comm_reverse, comm_reverse);
  }
  halo_ = make_halo_exchange();
  halo_->set_max_width(comm_forward);

  distspec_compat::request_neighbor_list(neighbor, this, instance_me, plan_.neighbor_list, plan_.expanded());
  // The expanded shell: ghosts out to L cutoffs, without widening the neighbour list itself.
  if (plan_.expanded())
    comm->cutghostuser = std::max(comm->cutghostuser, info.message_passing_layers * info.cutoff + neighbor->skin);
  neighbor_builds_.reset();
  install_end_of_run_hook();
  log_setup();
}

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
  host.newton_pair = force->newton_pair != 0;
  host.takes_half_lists = space_takes_half_lists_;
  host.half_lists_follow_newton_pair = half_lists_follow_newton_pair_;
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
                      distspec::models::StyleSettings::name(settings_.halo));
  for (const auto &helper : spec.core.third_party_helpers)
    text += fmt::format("DISTSPEC:   helper {}: {}\n", distspec::helper_target(helper),
                        distspec::native_meaning(helper).value_or("not applicable natively"));
  text += "DISTSPEC: outputs: " + plan_.outputs.describe();
  for (const auto &line : utils::split_lines(plan_.describe())) text += "DISTSPEC: " + line + "\n";
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
  finite_check_.settle(lmp, host_neighbor_list(), finite_check_subject());
  if (dispatcher_) timing_.report(lmp, style_name(), *dispatcher_);
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
  if (finite_check_.check(lmp, host_neighbor_list(), finite, eflag || vflag, finite_check_subject())) zero_non_finite(forces, n_forces);
  timing_.lap(RunTiming::checks);
  write_back();
  timing_.end_step(*dispatcher_);
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
                             distspec::models::StyleSettings::name(settings_.halo), sum[0], min[0], max[0], sum[1], min[1], max[1],
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
  graph_.triclinic = domain->triclinic != 0;
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
