/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: pair_style distspec

   Runs a model described by a DISTSPEC model file under LAMMPS domain decomposition, as its
   nvalchemi MLIPSpec says: ghost atoms are the halo rows of the spec's storage policy, halo
   refreshes run through this style's comm callbacks, and the spec's output lists decide how
   energy, forces and virial return to LAMMPS.
------------------------------------------------------------------------- */

#ifdef PAIR_CLASS
// clang-format off
PairStyle(distspec,PairDistspec);
// clang-format on
#else

#ifndef LMP_PAIR_DISTSPEC_H
#define LMP_PAIR_DISTSPEC_H

#include "pair.h"

#include "finite_outputs.h"
#include "lammps_compat.h"
#include "lammps_halo_exchange_base.h"
#include "neighbor_builds.h"
#include "models/plan/style_settings.h"
#include "pair_with_end_of_run.h"
#include "run_timing.h"

#include "distspec/dispatch/dispatcher.h"
#include "models/model.h"
#include "models/model_file.h"
#include "models/plan/run_plan.h"
#include "models/plan/spec_binding.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace LAMMPS_NS {

class PairDistspec : public PairWithEndOfRun {
 public:
  PairDistspec(class LAMMPS *);
  ~PairDistspec() override;

  void settings(int, char **) override;
  void coeff(int, char **) override;
  void init_style() override;
  double init_one(int, int) override;
  void setup() override;
  void compute(int, int) override;

  int pack_forward_comm(int, int *, double *, int, int *) override;
  void unpack_forward_comm(int, int, double *) override;
  int pack_reverse_comm(int, int, double *) override;
  void unpack_reverse_comm(int, int *, double *) override;
  double memory_usage() override;

  // The end of a run (collective): settles the non-finite output check still pending, and
  // under `timing yes` logs where the run's pair time went.
  void end_of_run() override;

 protected:
  // Whether this build can run where `device` asks; the KOKKOS variant lets Kokkos decide.
  virtual void check_device() const;
  // What the binding rules and the run plan need of LAMMPS.
  distspec::models::HostFacts host_facts() const;
  void select_gpu() const;    // device cuda: this rank's GPU by node-local rank
  // Where the model's kernels run: the device keyword; the KOKKOS variant follows its execution space.
  virtual distspec::Device model_device() const;
  // The halo exchange for where the model's rows live: host rows, a CUDA model's device rows;
  // the KOKKOS variant's, Kokkos views.
  virtual std::unique_ptr<LammpsHaloExchangeBase> make_halo_exchange();
  // CPU threads for the model's kernels: the threads keyword; the KOKKOS variant's host threads.
  virtual int model_threads() const { return settings_.threads; }
  void load_model(const std::string &model_path);
  // Newton on's pairs first in each receiver's senders (graph_'s, in host memory, whose
  // writable `senders` this is), and their ends (RunPlan::newton_on_ends).
  void order_newton_on_pairs_first(int *senders);
  void build_graph();
  void rebuild_edges();
  // The edge arrays just built (in the execution space's memory) as graph_'s edges.
  void point_graph_at_edges(std::size_t n_receivers, const int *receivers, const int *offsets, const int *senders);
  // After the edge arrays changed: the neighbour-list build they follow, and a new topology
  // generation (a device model uploads the graph again).
  void edges_rebuilt();
  void rebuild_owner_rows();
  void run_model(const char *style);
  void write_back();
  void log_setup() const;
  void log_halo_report();
  // What a non-finite output check names: the style, the model file, the cutoff.
  FiniteCheckSubject finite_check_subject() const;
  const char *style_name() const { return style_name_; }
  // The neighbour list in host memory that the finite check searches for the closest pair; the
  // KOKKOS variant's lives in its execution space, and the check searches all pairs instead.
  virtual NeighList *host_neighbor_list() const { return list; }

  const char *style_name_ = "distspec";    // in messages: the KOKKOS variant's is distspec/kk
  distspec::models::StyleSettings settings_;
  std::unique_ptr<distspec::models::ModelFile> model_file_;
  std::unique_ptr<distspec::models::Model> model_;
  std::uint64_t model_fingerprint_ = 0;    // what this rank read (rank_agreement.h)
  std::unique_ptr<distspec::Dispatcher> dispatcher_;
  // The exchange of this run's rows (make_halo_exchange), made by init_style.
  std::unique_ptr<LammpsHaloExchangeBase> halo_;
  // How this run is laid out (edges, neighbour list, what becomes of each output's halo rows),
  // decided by the models layer at init_style; this style applies it.
  distspec::models::RunPlan plan_;
  // What the execution space's kernels can take (HostFacts): the KOKKOS variant's differ.
  bool space_takes_half_lists_ = true;
  bool half_lists_follow_newton_pair_ = false;

  std::vector<int> type_to_species_;    // per LAMMPS type (1-based), -1 = NULL
  std::vector<std::string> type_elements_;

  // The graph: edge arrays are rebuilt only when LAMMPS rebuilds its neighbour list.
  distspec::models::AtomGraph graph_;
  std::vector<int> species_;
  std::vector<int> receivers_, offsets_, senders_;
  std::vector<int> owner_rows_;  // serial models and newton-on ends, rebuilt with the edges
  NeighborBuilds neighbor_builds_;    // the list builds the edge arrays follow
  std::vector<int> newton_on_ends_rows_;
  bool report_pending_ = false;    // log the halo report after the first step of a run
  std::uint64_t topology_generation_ = 0;    // bumped at every edge rebuild (graph_.topology_generation)
  distspec::models::ModelOutputs model_outputs_;    // what the model computed this step
  // The atom data live in GPU memory (distspec/kk under CUDA): a CUDA model leaves its per-row
  // outputs there (OutputRequest::rows_on_device).
  bool rows_on_device_ = false;
  RunTiming timing_;    // `timing yes`: stages of compute() over a run
  FiniteOutputCheck finite_check_;
};

}    // namespace LAMMPS_NS

#endif
#endif
