// Per-step time of the message-passing model on the CPU: one rank's share of
// examples/mpnn/in.mpnn (fcc Cu, 20 x 10 x 19 cells = 15 200 atoms, a halo of periodic images
// within cutoff + skin), fp64 and fp32. Times are medians over the steps; forward is an
// energy-only step, backward the rest of a step with forces and virial. "MiB new/step" is what operator new handed out per step once
// warm: the model takes its tensors from its workspace, so what remains is this one-process
// halo exchange's (IndexedHaloExchange sums the reverse exchange in a fresh fp64 block).
//
// "threads" is the model's CPU threads (OutputRequest::threads): the rows repeat for 1 and for
// the count given, with the speed-up of the second over the first.
//
//   bench_mpnn_step [model.json] [steps] [fp64|fp32|both] [threads]
//   defaults: potentials/cu_mpnn_L2.json, 5, both, 1
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "distspec/spec/spec_json.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"
#include "periodic_graph.h"

namespace {

std::atomic<std::size_t> g_new_bytes{0};

}  // namespace

// Counting replacements of the global allocation functions (the array and nothrow forms
// forward here in libstdc++).
void* operator new(std::size_t n) {
  g_new_bytes += n;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace distspec;
using Clock = std::chrono::steady_clock;

constexpr double kLattice = 3.615;  // Angstrom, as in.mpnn
constexpr double kSkin = 1.0;       // in.mpnn: neighbor 1.0 bin
constexpr int kCells[3] = {20, 10, 19};

test::Crystal copper_slab() {
  test::Crystal c;
  c.box = test::Box::orthorhombic(kLattice * kCells[0], kLattice * kCells[1], kLattice * kCells[2]);
  const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  for (int i = 0; i < kCells[0]; ++i)
    for (int j = 0; j < kCells[1]; ++j)
      for (int k = 0; k < kCells[2]; ++k)
        for (const auto& b : basis)
          c.positions.push_back({kLattice * (i + b[0]), kLattice * (j + b[1]), kLattice * (k + b[2])});
  c.species.assign(c.positions.size(), 0);
  test::jiggle(c, 0.1, 7);  // thermal-like disorder; keeps every edge length distinct
  return c;
}

std::size_t edges_within(const test::PeriodicGraph& g, double cutoff) {
  const models::AtomGraph a = g.graph();
  std::size_t n = 0;
  for (std::size_t r = 0; r < a.n_receivers; ++r)
    for (int k = a.offsets[r]; k < a.offsets[r + 1]; ++k) {
      const double* xi = a.positions + 3 * a.receivers[r];
      const double* xj = a.positions + 3 * a.senders[k];
      const double d[3] = {xi[0] - xj[0], xi[1] - xj[1], xi[2] - xj[2]};
      n += d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < cutoff * cutoff;
    }
  return n;
}

struct Timing {
  double seconds = 0.0;  // per step: the median, which other work on the machine disturbs least
  double new_mib = 0.0;  // operator new per step
};

Timing time_steps(models::Model& model, const test::PeriodicGraph& g, Dispatcher& dispatch,
                  const models::OutputRequest& request, int steps) {
  models::ModelOutputs out;
  model.compute(g.graph(), dispatch, request, out);  // warm: workspaces sized, pages touched
  const std::size_t bytes0 = g_new_bytes;
  std::vector<double> seconds;
  for (int s = 0; s < steps; ++s) {
    const auto t0 = Clock::now();
    model.compute(g.graph(), dispatch, request, out);
    seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + steps / 2, seconds.end());
  return {seconds[steps / 2], double(g_new_bytes - bytes0) / steps / (1 << 20)};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : std::string(DISTSPEC_POTENTIALS_DIR) + "/cu_mpnn_L2.json";
  const int steps = std::max(1, argc > 2 ? std::atoi(argv[2]) : 5);
  const std::string only = argc > 3 && std::string(argv[3]) != "both" ? argv[3] : "";
  const int threads = std::max(1, argc > 4 ? std::atoi(argv[4]) : 1);
  models::register_builtin_ops();
  const models::ModelFile file = models::read_model_file(path);
  const DistributionSpec spec = file.spec.core;

  const test::PeriodicGraph g(copper_slab(), file.cutoff, kSkin);
  const std::size_t near = edges_within(g, file.cutoff);
  std::printf("%s: %zu atoms, %zu rows, %zu listed edges (cutoff + skin), %zu within the cutoff; %d steps\n",
              path.c_str(), g.n_owned(), g.n_rows(), g.n_edges(), near, steps);
  std::printf("%-9s %7s %8s %9s %12s %13s %11s %14s %13s %9s\n", "precision", "threads", "atoms", "edges",
              "forward ms", "backward ms", "total ms", "edges/s", "MiB new/step", "speed-up");

  std::vector<int> counts = {1};
  if (threads > 1) counts.push_back(threads);
  for (const std::string precision : {"fp64", "fp32"}) {
    if (!only.empty() && precision != only) continue;
    double one_thread = 0.0;
    for (const int t : counts) {
      models::OutputRequest energy_only;
      energy_only.forces = false;
      energy_only.threads = t;
      models::OutputRequest full{false, true, false};  // forces and global virial, as an MD step
      full.threads = t;
      models::ModelFile f = file;
      f.precision = precision;
      const auto model = models::make_model(f);
      Dispatcher dispatch(spec, Device::cpu, model->info().ops, 1);
      IndexedHaloExchange halo = g.halo_exchange();
      dispatch.attach(halo);
      const Timing fwd = time_steps(*model, g, dispatch, energy_only, steps);
      const Timing all = time_steps(*model, g, dispatch, full, steps);
      if (t == 1) one_thread = all.seconds;
      std::printf("%-9s %7d %8zu %9zu %12.1f %13.1f %11.1f %14.3g %13.1f %9.2f\n", precision.c_str(), t, g.n_owned(),
                  near, fwd.seconds * 1e3, (all.seconds - fwd.seconds) * 1e3, all.seconds * 1e3, near / all.seconds,
                  all.new_mib, one_thread / all.seconds);
    }
  }
}
