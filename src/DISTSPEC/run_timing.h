/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: where the time of pair_style distspec goes (`timing yes`).

   compute() marks the end of each of its stages; the time since the previous mark goes to that
   stage. At the end of a run the per-rank totals are reduced to min / avg / max over ranks and
   printed on rank 0 as a table in the shape of LAMMPS' "MPI task timing breakdown", beside the
   Pair time LAMMPS measured, which the sections should add up to; then, for a model that calls
   ops through the dispatcher, where its Kernels and Exchange went per op (the kernel, and the
   spec adapter's transforms around it: a PME mesh's all-reduce, an Ewald structure factor's).
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_RUN_TIMING_H
#define LMP_DISTSPEC_RUN_TIMING_H

#include <array>
#include <string>

namespace distspec {
class Dispatcher;
}

namespace LAMMPS_NS {

class LAMMPS;

class RunTiming {
 public:
  // Table order: the model's own work first, then what the glue adds around it.
  enum Stage { kernels, exchanges, graph, edges, checks, write_back, n_stages };

  void enable(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }

  // Pair::setup(), at the start of a run: forget the last run. The setup force computation that
  // follows lies outside LAMMPS' loop timer, so it is dropped too.
  void begin_run();
  void begin_step();
  // The time since the last mark goes to `stage`.
  void lap(Stage stage);
  // The time since the last mark was the model: `exchange_seconds` of it inside halo
  // exchanges, the rest in kernels.
  void lap_model(double exchange_seconds);
  // The last stage of compute(): write-back, then count the step (the setup step's op times,
  // kept by `dispatcher`, are dropped with it).
  void end_step(distspec::Dispatcher &dispatcher);

  // Collective over the ranks of `lmp`: rank 0 logs the tables of this run, then all forget it.
  void report(LAMMPS *lmp, const std::string &style, distspec::Dispatcher &dispatcher);

  static const char *name(Stage stage);

 private:
  void report_ops(LAMMPS *lmp, const std::string &style, long steps, distspec::Dispatcher &dispatcher);

  bool enabled_ = false;
  bool drop_step_ = false;    // the current step is the setup computation
  double mark_ = 0.0;
  std::array<double, n_stages> seconds_{};
  std::array<double, n_stages> step_{};    // this step's stages until end_step() keeps them
  long steps_ = 0;
};

}    // namespace LAMMPS_NS

#endif
