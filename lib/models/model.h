// The interface between the LAMMPS glue (or any other host) and a model: a flat graph in, the
// physical outputs out. Models run their stages through a distspec::Dispatcher, which applies
// the spec's storage policy and op adapters; they never see MPI or LAMMPS.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distspec/dispatch/dispatcher.h"

namespace distspec::models {

// How the edges of an AtomGraph hold each pair of atoms (LAMMPS' full and half neighbour lists).
enum class EdgeList {
  // Every receiver lists all its senders: a pair of owned atoms is there twice, j -> i and i -> j.
  full,
  // Each pair once, for ops whose pair terms are symmetric in i and j, which put a pair's terms on
  // both atoms. A pair of an owned and a halo atom is listed on every rank that owns one of the
  // two, and each puts terms on its owned atom only (LAMMPS `newton off`).
  half_newton_off,
  // Each pair once over all ranks: a pair of an owned and a halo atom is listed on one of the two
  // ranks only, which leaves the halo atom's terms on its halo row for the host to fold onto the
  // owner (LAMMPS `newton on`, whose reverse comm of forces does that fold).
  half_newton_on,
};
const char* edge_list_name(EdgeList list);

// Rows are [owned | halo]; halo rows carry periodic-image coordinates already.
struct AtomGraph {
  std::size_t n_owned = 0;
  std::size_t n_halo = 0;
  const double* positions = nullptr;  // (n_owned + n_halo) x 3
  const int* species = nullptr;       // per row: index into ModelInfo::elements, -1 = not this model's atom
  const double* charges = nullptr;    // per row, or nullptr when the spec promotes no charges
  // Edges j -> i in CSR form by receiver: receivers[r] is an owned row, its senders are
  // senders[offsets[r] .. offsets[r+1]). Pairs may lie beyond the cutoff (a neighbour-list
  // skin); kernels apply the cutoff.
  std::size_t n_receivers = 0;
  const int* receivers = nullptr;
  const int* offsets = nullptr;  // n_receivers + 1
  const int* senders = nullptr;
  EdgeList edge_list = EdgeList::full;  // half lists only for models that take them (ModelInfo::half_list)
  // With a half_newton_off list, for models that ask for it (ModelInfo::newton_on_forces): per
  // receiver, the end of the senders that newton on's list would hold on this rank, which the
  // host orders first (senders[offsets[r] .. newton_on_ends[r])). The other pairs with halo
  // atoms are computed on the other atom's rank. nullptr: none given. A host that gives it gives
  // owner_rows too, so that such a model may fold pairs with periodic images of its own atoms.
  const int* newton_on_ends = nullptr;
  // Names the topology: row counts, species, charges, receivers, offsets and senders. A host
  // bumps it whenever one of them changes (LAMMPS: at reneighbouring), so that a device model
  // uploads them only then; positions are uploaded every call. 0 means "unknown": device
  // models then upload the topology at every call.
  std::uint64_t topology_generation = 0;
  // The simulation cell, for models that sum over periodic images (Ewald): rows are the lattice
  // vectors a, b, c (LAMMPS: a = (xprd, 0, 0), b = (xy, yprd, 0), c = (xz, yz, zprd)), and which
  // of x, y, z are periodic. has_cell false: the host gives none.
  bool has_cell = false;
  std::array<double, 9> cell{};
  std::array<bool, 3> periodic{};
  // The host declares the box triclinic (LAMMPS: domain->triclinic), tilts zero or not: LAMMPS'
  // pppm sizes its grid differently then, and a model that follows its rule must know.
  bool triclinic = false;
  // Per row, the owned row whose atom it is (owned rows: themselves; halo rows: the periodic
  // image's owner), or -1 where that atom is owned by another rank. Given to models that ask for
  // it (ModelInfo::needs_owner_rows), which map periodic images onto their owners instead of
  // reading halo rows, and with newton_on_ends.
  const int* owner_rows = nullptr;

  std::size_t n_rows() const { return n_owned + n_halo; }
};

// A graph of n_owned + n_halo rows (positions, species) and its CSR edges j -> i; the other
// fields keep their defaults, for the host to set where it has them (charges, cell, edge list).
// The graph points into the arrays: they must outlive it.
AtomGraph csr_graph(std::size_t n_owned, std::size_t n_halo, const double* positions, const int* species,
                    const std::vector<int>& receivers, const std::vector<int>& offsets, const std::vector<int>& senders);

struct OutputRequest {
  bool energy_rows = false;  // per-atom energy
  bool virial = false;       // global virial
  bool virial_rows = false;  // per-atom virial
  // false with no virial asked for: energies only. A model may then skip its reverse pass
  // (forces stay zero); finite-difference references and benchmarks use this.
  bool forces = true;
  // The host keeps its atom data in GPU memory (distspec/kk under a CUDA execution space): a
  // model whose rows are on the device leaves its per-row outputs there (ModelOutputs::device)
  // instead of downloading them, so that nothing crosses PCIe per step. Host models ignore it.
  bool rows_on_device = false;
  // false: the host does not read the energy on this step (LAMMPS: eflag 0), and pair kernels
  // skip it; ModelOutputs::energy is then 0. Models that differentiate their energy ignore it.
  bool energy = true;
  // CPU threads the model's kernels may use (the plain style's `threads` keyword; distspec/kk's
  // Kokkos host threads; distspec/util/threads.h). The native CPU models use them; torch models
  // and GPU kernels ignore them.
  int threads = 1;
};

// Per-row outputs left in device memory (OutputRequest::rows_on_device): n_rows rows each, or
// nullptr where not requested. They stay valid, and the host may fold them in place, until the
// model's next compute().
struct DeviceOutputRows {
  double* forces = nullptr;       // n_rows x 3
  double* energy_rows = nullptr;  // n_rows
  double* virial_rows = nullptr;  // n_rows x 6
};

// Per-row outputs may hold partial values on halo rows; the host folds them to owners.
struct ModelOutputs {
  double energy = 0.0;                  // this rank's owned rows only
  std::vector<double> energy_rows;      // n_rows, if requested
  std::vector<double> forces;           // n_rows x 3
  std::array<double, 6> virial{};       // xx, yy, zz, xy, xz, yz; this rank's partial
  std::vector<double> virial_rows;      // n_rows x 6, if requested
  // Set instead of the three row vectors (which stay empty) by a model that honours
  // OutputRequest::rows_on_device.
  DeviceOutputRows device;

  // Zeroes the outputs for n_rows rows. rows_on_device: the model will set `device`, and the
  // row vectors are left empty rather than sized.
  void reset(std::size_t n_rows, const OutputRequest& request, bool rows_on_device = false);
  bool rows_on_device() const { return device.forces != nullptr; }
};

struct ModelInfo {
  std::string architecture;
  std::string units;                 // LAMMPS units name the parameters are in
  double cutoff = 0.0;               // interaction cutoff (one message-passing hop)
  std::vector<std::string> elements;
  int message_passing_layers = 1;    // hops of the receptive field; 1 for pair and EAM-like models
  // How many times a step reads halo rows of a per-node quantity the model computed itself
  // (EAM's F'(rho): 1; an L-layer network: L - 1). Such a model is wrong under a spec whose
  // gathers never refresh the halo, and the host refuses to run it.
  int halo_feature_reads = 0;
  // Whether the model corrects halo rows after its own scatters (an exported graph that calls
  // halo_scatter_correct_static): halo rows then hold owners' sums only under a spec whose
  // scatter_mode corrects them, and the host refuses any other.
  bool halo_scatter_corrections = false;
  int comm_width = 0;                // widest node row exchanged per atom (doubles)
  std::vector<OpUse> ops;            // the ops the model calls through the dispatcher (their handles)
  // Ops of the same family that a spec written for this model may adapt although this model
  // never calls them (nvalchemi's Ewald spec adapts the batched and slab-correction kernels
  // beside the single-system one). An adapter for any other op means the spec was written for
  // another model, and binding refuses it.
  std::vector<std::string> family_ops;
  // Ops the model's graph calls outside the dispatcher, from a kernel library loaded for it (an
  // accelerator's tensor products): a spec for the model lists each as a pass-through op
  // adapter, and binding refuses a spec that leaves one out.
  std::vector<std::string> opaque_ops;
  bool reads_charges = false;        // needs per-row charges (promoted by the spec's shard_fields)
  // Reads its inputs as plain rows, owned and halo, and calls no op that the spec's adapters
  // wrap: the spec's shard_fields (which inputs nvalchemi wraps for its ops' halo dispatch) do
  // not apply, and an empty list is this model's spec as nvalchemi writes it (DFT-D3).
  bool plain_input_rows = false;
  // Forces on owned rows are partial: halo rows hold parts that belong to their owners (pair
  // and many-body kernels over the edges j -> i push -dE/dx_j onto senders). A spec that
  // declares forces owned-only would drop those parts, so the host refuses it.
  bool forces_on_halo_rows = false;
  // The half edge list the model's ops take (their pair terms are symmetric in i and j), if any;
  // half_newton_on implies half_newton_off. The host chooses which list to give
  // (AtomGraph::edge_list): half_newton_on leaves partial forces, energy and virial rows on halo
  // rows whatever forces_on_halo_rows says, so the host gives it only where it folds them.
  std::optional<EdgeList> half_list;
  // With half_list half_newton_off: the force op may walk only the newton-on part of the list
  // (AtomGraph::newton_on_ends) and leave halo atoms' shares on their rows, as half_newton_on
  // does, while the other ops read every pair. The host gives it only where it folds halo rows.
  bool newton_on_forces = false;
  bool needs_periodic_cell = false;  // sums over periodic images: AtomGraph::cell, periodic in x, y, z
  // Maps every halo row onto its owner (AtomGraph::owner_rows) rather than reading halo rows: a
  // serial model, which runs on one rank only, where every atom's owner is local.
  bool needs_owner_rows = false;
  // Per element (ModelInfo::elements order), the atomic mass the model's potential file gives,
  // which pair_coeff sets on the element's atom types as LAMMPS' eam styles do; empty: the
  // model gives none (the input script's `mass` commands alone set them).
  std::vector<double> element_masses;
  // What the model found at load that the host should report and run on regardless (an exported
  // model file too old to record what its graph was exported with); bind_model passes them on
  // in RunPlan::warnings.
  std::vector<std::string> warnings;
};

// Throws distspec::Error (model.device): a model was asked for on cuda in a build without CUDA.
[[noreturn]] void throw_no_cuda(const std::string& architecture);

// Whether this build has the models' CUDA variants (configured with DISTSPEC_ENABLE_CUDA). Without
// them a model's make_cuda_model is declared but defined nowhere: name it only in the branch of
// an `if constexpr (kCudaBuild)`, which a build without CUDA discards (and so links nothing).
#ifdef DISTSPEC_WITH_CUDA
inline constexpr bool kCudaBuild = true;
#else
inline constexpr bool kCudaBuild = false;
#endif

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelInfo& info() const = 0;
  virtual void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
                       ModelOutputs& out) = 0;
};

}  // namespace distspec::models
