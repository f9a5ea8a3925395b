/* ----------------------------------------------------------------------
   DISTSPEC: per-run time breakdown of pair_style distspec.
------------------------------------------------------------------------- */

#include "run_timing.h"

#include "lammps.h"
#include "timer.h"
#include "utils.h"

#include "distspec/dispatch/dispatcher.h"

#include <algorithm>
#include <mpi.h>
#include <vector>

using namespace LAMMPS_NS;

const char *RunTiming::name(Stage stage)
{
  switch (stage) {
    case kernels: return "Kernels";
    case exchanges: return "Exchange";
    case graph: return "Graph";
    case edges: return "Edges";
    case checks: return "Checks";
    case write_back: return "Writeback";
    default: return "?";
  }
}

void RunTiming::begin_run()
{
  seconds_.fill(0.0);
  steps_ = 0;
  drop_step_ = true;
}

void RunTiming::begin_step()
{
  if (!enabled_) return;
  step_.fill(0.0);
  mark_ = MPI_Wtime();
}

void RunTiming::lap(Stage stage)
{
  if (!enabled_) return;
  const double now = MPI_Wtime();
  step_[stage] += now - mark_;
  mark_ = now;
}

void RunTiming::lap_model(double exchange_seconds)
{
  if (!enabled_) return;
  const double now = MPI_Wtime();
  // Both clocks are wall clocks; a coarse clock could make the difference slightly negative.
  const double model = now - mark_;
  step_[exchanges] += std::min(exchange_seconds, model);
  step_[kernels] += model - std::min(exchange_seconds, model);
  mark_ = now;
}

void RunTiming::end_step(distspec::Dispatcher &dispatcher)
{
  if (!enabled_) return;
  lap(write_back);
  if (drop_step_) {
    drop_step_ = false;
    dispatcher.reset_op_timing();
    return;
  }
  for (int s = 0; s < n_stages; ++s) seconds_[s] += step_[s];
  ++steps_;
}

// Min / avg / max over ranks of each stage and of their sum, as LAMMPS' Finish prints its own
// sections; the percentages are of LAMMPS' Pair time (the same clock around compute()).
void RunTiming::report(LAMMPS *lmp, const std::string &style, distspec::Dispatcher &dispatcher)
{
  if (!enabled_) return;
  constexpr int n = n_stages + 2;    // the stages, their total, LAMMPS' Pair time
  double local[n];
  double total = 0.0;
  for (int s = 0; s < n_stages; ++s) total += local[s] = seconds_[s];
  local[n_stages] = total;
  local[n_stages + 1] = lmp->timer->has_normal() ? lmp->timer->get_wall(Timer::PAIR) : 0.0;
  double sum[n], min[n], max[n];
  MPI_Allreduce(local, sum, n, MPI_DOUBLE, MPI_SUM, lmp->world);
  MPI_Allreduce(local, min, n, MPI_DOUBLE, MPI_MIN, lmp->world);
  MPI_Allreduce(local, max, n, MPI_DOUBLE, MPI_MAX, lmp->world);
  long steps = steps_;
  seconds_.fill(0.0);
  steps_ = 0;
  report_ops(lmp, style, steps, dispatcher);
  int me = 0, nprocs = 1;
  MPI_Comm_rank(lmp->world, &me);
  MPI_Comm_size(lmp->world, &nprocs);
  if (me != 0 || steps == 0) return;

  double avg[n];
  for (int k = 0; k < n; ++k) avg[k] = sum[k] / nprocs;
  // Without `timer normal` LAMMPS keeps no Pair time: percentages are of DISTSPEC's own total.
  const double pair = avg[n_stages + 1];
  const double base = pair > 0.0 ? pair : avg[n_stages];
  auto percent = [&](double v) { return base > 0.0 ? 100.0 * v / base : 0.0; };

  std::string text = fmt::format("\nDISTSPEC timing breakdown (pair_style {} timing yes, {} steps, {} MPI tasks):\n"
                                 "Section   |  min time  |  avg time  |  max time  | %{}\n"
                                 "---------------------------------------------------------\n",
                                 style, steps, nprocs, pair > 0.0 ? "pair " : "total");
  auto row = [&](const char *label, int k) {
    text += fmt::format("{:<10}| {:<10.5g} | {:<10.5g} | {:<10.5g} |{:6.2f}\n", label, min[k], avg[k], max[k],
                        percent(avg[k]));
  };
  for (int s = 0; s < n_stages; ++s) row(name(static_cast<Stage>(s)), s);
  row("Total", n_stages);
  if (pair > 0.0)
    text += fmt::format("LAMMPS Pair time: avg {:.5g} s; the sections above cover {:.1f} % of it\n", pair,
                        percent(avg[n_stages]));
  else
    text += "LAMMPS keeps no Pair time at this timer level ('timer normal' or 'timer full' gives one)\n";
  utils::logmesg(lmp, text);
}

// Per op, seconds per step of its kernel and of its adapter's transforms, min / avg / max over
// ranks (every rank binds the same ops). Printed after the stage table, then forgotten.
void RunTiming::report_ops(LAMMPS *lmp, const std::string &style, long steps, distspec::Dispatcher &dispatcher)
{
  const auto &ops = dispatcher.op_timing();
  std::vector<double> local;
  std::vector<std::uint64_t> calls;
  for (const auto &op : ops) {
    local.push_back(op.second.kernel_seconds);
    local.push_back(op.second.adapter_seconds);
    calls.push_back(op.second.calls);
  }
  dispatcher.reset_op_timing();
  const int n = static_cast<int>(local.size());
  if (n == 0) return;
  std::vector<double> sum(n), min(n), max(n);
  MPI_Allreduce(local.data(), sum.data(), n, MPI_DOUBLE, MPI_SUM, lmp->world);
  MPI_Allreduce(local.data(), min.data(), n, MPI_DOUBLE, MPI_MIN, lmp->world);
  MPI_Allreduce(local.data(), max.data(), n, MPI_DOUBLE, MPI_MAX, lmp->world);
  int me = 0, nprocs = 1;
  MPI_Comm_rank(lmp->world, &me);
  MPI_Comm_size(lmp->world, &nprocs);
  if (me != 0 || steps == 0) return;

  const double per_step = 1.0 / static_cast<double>(steps);
  std::size_t width = 3;
  for (const auto &op : ops) width = std::max(width, op.first.size() + 1);
  std::string text = fmt::format("\nDISTSPEC op timing (pair_style {} timing yes, {} steps, {} MPI tasks; seconds per step,\n"
                                 "host wall clock; adapter: the spec's transforms around the kernel):\n"
                                 "{:<{}}| calls | kernel min / avg / max        | adapter min / avg / max\n",
                                 style, steps, nprocs, "Op", width);
  text += std::string(width + 68, '-') + "\n";
  std::size_t k = 0;
  for (const auto &op : ops) {
    const std::size_t a = 2 * k, b = 2 * k + 1;
    text += fmt::format("{:<{}}| {:>5.3g} | {:<9.3g} {:<9.3g} {:<9.3g}  | {:<9.3g} {:<9.3g} {:.3g}\n", op.first, width,
                        calls[k] * per_step, min[a] * per_step, sum[a] / nprocs * per_step, max[a] * per_step,
                        min[b] * per_step, sum[b] / nprocs * per_step, max[b] * per_step);
    ++k;
  }
  utils::logmesg(lmp, text);
}
