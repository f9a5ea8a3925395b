// Throughput of the CUDA models on one GPU: LJ (argon), EAM (Cu, u3) and the message-passing
// network (L = 2 and 4 at F = 64, and L = 4 at F = 128: the F = 64 parameters widened in code,
// unittest/support/mpnn_widen.h) on jiggled fcc crystals of about 32 000, 256 000 and 1 000 000
// atoms built here, in a periodic cube whose halo rows are periodic images (one rank).
//
// A step is one compute() with forces and the global virial (an MD step with pressure): the
// positions go up, the kernels run, forces and virial come down. Steps are timed with CUDA events
// over --steps steps after warm-up; atom-steps/s and ns/day (1 fs steps) follow. Then, from a
// few profiled steps (models/cuda_runtime.h), each model's hottest kernels: time per step, and
// the bytes they move per second against the device-to-device cudaMemcpy bandwidth measured here
// (stream = every array once, gather = with every per-edge row gather counted; see
// cuda_runtime.h), and GFLOP/s.
//
// The halo exchange is the single-process one of periodic images: by default on the device
// (DeviceIndexedHaloExchange, what a one-GPU run needs), or with --halo staged the host's
// IndexedHaloExchange through DeviceStagingHaloExchange (every exchange a round trip over PCIe
// and a host loop: what a GPU model under a host communicator pays).
//
// With --device cpu the same systems run on DISTSPEC's CPU kernels (one core, host halo exchange,
// wall-clock time): the CPU numbers beside the GPU's.
//
//   bench_gpu_models [--steps N] [--sizes 32000,256000,1000000] [--models lj,eam,mpnn2,mpnn4,mpnn4w]
//                    [--precision fp64|fp32|both] [--halo device|staged] [--device cuda|cpu]
// Model files come from $DISTSPEC_SOURCE_DIR/potentials (default: the source tree it was built from).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/error.h"
#include "distspec/halo/device_indexed_halo_exchange.h"
#include "distspec/halo/indexed_halo_exchange.h"
#include "models/cuda_runtime.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"
#include "mpnn_widen.h"

namespace {

using namespace distspec;
using Clock = std::chrono::steady_clock;

void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

std::string source_dir() {
  if (const char* dir = std::getenv("DISTSPEC_SOURCE_DIR"); dir && *dir) return dir;
  return DISTSPEC_SOURCE_DIR;
}

// ---------------------------------------------------------------------------------------------
// A periodic fcc crystal as one rank holding every atom sees it: owned rows, then the periodic
// images within `reach` of the cube's faces, and a full neighbour list (cutoff + skin) of the
// owned rows from a cell list, built on every core.

struct Lattice {
  std::size_t n_owned = 0;
  std::vector<double> x;
  std::vector<int> species;
  std::vector<std::size_t> halo_owner;
  std::vector<int> receivers, offsets, senders;

  models::AtomGraph graph() const {
    models::AtomGraph g =
        models::csr_graph(n_owned, halo_owner.size(), x.data(), species.data(), receivers, offsets, senders);
    g.topology_generation = 1;  // one topology for the whole run: uploaded once
    return g;
  }
};

Lattice fcc_lattice(double a, int cells, double reach, unsigned seed) {
  Lattice l;
  const double box = a * cells;
  const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-0.05 * a, 0.05 * a);  // thermal-like disorder
  for (int i = 0; i < cells; ++i)
    for (int j = 0; j < cells; ++j)
      for (int k = 0; k < cells; ++k)
        for (const auto& b : basis) {
          const double p[3] = {a * (i + b[0]), a * (j + b[1]), a * (k + b[2])};
          for (double c : p) {
            double v = c + u(rng);
            v -= box * std::floor(v / box);
            l.x.push_back(v);
          }
        }
  l.n_owned = l.x.size() / 3;
  l.species.assign(l.n_owned, 0);
  for (int sx = -1; sx <= 1; ++sx)
    for (int sy = -1; sy <= 1; ++sy)
      for (int sz = -1; sz <= 1; ++sz) {
        if (!sx && !sy && !sz) continue;
        const int s[3] = {sx, sy, sz};
        for (std::size_t i = 0; i < l.n_owned; ++i) {
          double p[3];
          bool inside = true;
          for (int d = 0; d < 3; ++d) {
            p[d] = l.x[3 * i + d] + s[d] * box;
            inside = inside && p[d] >= -reach && p[d] < box + reach;
          }
          if (!inside) continue;
          l.x.insert(l.x.end(), p, p + 3);
          l.species.push_back(0);
          l.halo_owner.push_back(i);
        }
      }

  // Cell list over [-reach, box + reach)^3, cells no smaller than reach.
  const std::size_t n_rows = l.x.size() / 3;
  const int nb = std::max(1, static_cast<int>((box + 2 * reach) / reach));
  const double cell = (box + 2 * reach) / nb;
  auto bin = [&](double v) { return std::min(nb - 1, std::max(0, static_cast<int>((v + reach) / cell))); };
  std::vector<int> head(static_cast<std::size_t>(nb) * nb * nb + 1, 0), order(n_rows);
  std::vector<int> cell_of(n_rows);
  for (std::size_t r = 0; r < n_rows; ++r) {
    cell_of[r] = (bin(l.x[3 * r]) * nb + bin(l.x[3 * r + 1])) * nb + bin(l.x[3 * r + 2]);
    ++head[cell_of[r] + 1];
  }
  for (std::size_t c = 1; c < head.size(); ++c) head[c] += head[c - 1];
  {
    std::vector<int> fill(head.begin(), head.end() - 1);
    for (std::size_t r = 0; r < n_rows; ++r) order[fill[cell_of[r]]++] = static_cast<int>(r);
  }
  const unsigned n_threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::vector<int>> part_senders(n_threads), part_counts(n_threads);
  std::vector<std::thread> threads;
  const double reach2 = reach * reach;
  for (unsigned t = 0; t < n_threads; ++t)
    threads.emplace_back([&, t] {
      const std::size_t begin = l.n_owned * t / n_threads, end = l.n_owned * (t + 1) / n_threads;
      for (std::size_t i = begin; i < end; ++i) {
        const int cx = bin(l.x[3 * i]), cy = bin(l.x[3 * i + 1]), cz = bin(l.x[3 * i + 2]);
        int count = 0;
        for (int dx = -1; dx <= 1; ++dx)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dz = -1; dz <= 1; ++dz) {
              const int bx = cx + dx, by = cy + dy, bz = cz + dz;
              if (bx < 0 || by < 0 || bz < 0 || bx >= nb || by >= nb || bz >= nb) continue;
              const int c = (bx * nb + by) * nb + bz;
              for (int q = head[c]; q < head[c + 1]; ++q) {
                const int j = order[q];
                if (static_cast<std::size_t>(j) == i) continue;
                const double d0 = l.x[3 * i] - l.x[3 * j], d1 = l.x[3 * i + 1] - l.x[3 * j + 1],
                             d2 = l.x[3 * i + 2] - l.x[3 * j + 2];
                if (d0 * d0 + d1 * d1 + d2 * d2 < reach2) {
                  part_senders[t].push_back(j);
                  ++count;
                }
              }
            }
        part_counts[t].push_back(count);
      }
    });
  for (std::thread& th : threads) th.join();
  l.offsets.push_back(0);
  for (unsigned t = 0; t < n_threads; ++t) {
    for (int c : part_counts[t]) l.offsets.push_back(l.offsets.back() + c);
    l.senders.insert(l.senders.end(), part_senders[t].begin(), part_senders[t].end());
    std::vector<int>().swap(part_senders[t]);
  }
  for (std::size_t i = 0; i < l.n_owned; ++i) l.receivers.push_back(static_cast<int>(i));
  return l;
}

// ---------------------------------------------------------------------------------------------

struct ModelCase {
  std::string key;       // --models name
  std::string label;
  std::string file;      // in potentials/
  int widen = 1;         // feature copies (mpnn_widen.h)
  bool argon = false;    // LJ: argon lattice and cutoff
  bool mpnn = false;
};

double memcpy_bandwidth() {
  const std::size_t bytes = std::size_t(1) << 30;
  void *a = nullptr, *b = nullptr;
  cuda_check(cudaMalloc(&a, bytes), "cudaMalloc");
  cuda_check(cudaMalloc(&b, bytes), "cudaMalloc");
  cuda_check(cudaMemset(a, 1, bytes), "cudaMemset");
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i) cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  const int reps = 10;
  cudaEventRecord(start);
  for (int i = 0; i < reps; ++i) cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, start, stop);
  cudaFree(a);
  cudaFree(b);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return 2.0 * bytes * reps / (ms * 1e-3);  // read + written
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

struct Row {
  std::string model, precision;
  std::size_t atoms = 0, edges = 0;
  double ms = 0.0, kernel_ms = 0.0;
  std::vector<models::cuda::KernelTiming> kernels;  // per step
};

}  // namespace

int main(int argc, char** argv) {
  int steps = 20;
  std::vector<std::string> sizes{"32000", "256000", "1000000"};
  std::vector<std::string> wanted{"lj", "eam", "mpnn2", "mpnn4", "mpnn4w"};
  std::vector<std::string> precisions{"fp64", "fp32"};
  std::string halo_kind = "device";
  std::string device_name = "cuda";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--steps") steps = std::max(1, std::atoi(value.c_str()));
    else if (key == "--sizes") sizes = split(value);
    else if (key == "--models") wanted = split(value);
    else if (key == "--halo") halo_kind = value;
    else if (key == "--device") device_name = value;
    else if (key == "--precision") precisions = value == "both" ? std::vector<std::string>{"fp64", "fp32"} : split(value);
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      return 2;
    }
  }
  const bool on_cpu = device_name == "cpu";
  std::string why;
  if (!on_cpu && !models::cuda::device_available(&why)) {
    std::printf("no CUDA device (%s): nothing to measure\n", why.c_str());
    return 0;
  }
  models::register_builtin_ops();
  const double bandwidth = on_cpu ? 0.0 : memcpy_bandwidth();
  if (on_cpu) {
    std::printf("device: cpu, one core (%u hardware threads here build the neighbour lists)\n",
                std::thread::hardware_concurrency());
  } else {
    std::printf("device: %s\n", models::cuda::device_description().c_str());
    std::printf("device-to-device cudaMemcpy: %.0f GB/s (bytes read + written)\n", bandwidth * 1e-9);
  }
  std::printf("%d timed steps after 3 warm-up steps; a step = compute() with forces and global virial\n", steps);
  std::printf("halo exchange: %s\n\n", on_cpu ? "IndexedHaloExchange on the host" : halo_kind == "staged" ? "IndexedHaloExchange on the host, staged through pinned memory"
                                                              : "DeviceIndexedHaloExchange (on the device)");

  const std::vector<ModelCase> cases{
      {"lj", "LJ argon", "lj_argon.json", 1, true, false},
      {"eam", "EAM Cu u3", "cu_eam_u3.json", 1, false, false},
      {"mpnn2", "MPNN L2 F64", "cu_mpnn_L2.json", 1, false, true},
      {"mpnn4", "MPNN L4 F64", "cu_mpnn_L4.json", 1, false, true},
      {"mpnn4w", "MPNN L4 F128", "cu_mpnn_L4.json", 2, false, true},
  };
  std::vector<Row> rows;
  for (const std::string& size : sizes) {
    const double atoms = std::atof(size.c_str());
    const int cells = std::max(1, static_cast<int>(std::lround(std::cbrt(atoms / 4.0))));
    for (bool argon : {true, false}) {
      bool any = false;
      for (const ModelCase& m : cases)
        any = any || (m.argon == argon && std::find(wanted.begin(), wanted.end(), m.key) != wanted.end());
      if (!any) continue;
      // Argon: a = 5.26, LJ cutoff 8.5; copper: a = 3.615, cutoffs 4.95 (EAM) and 5.0 (MPNN); skin 1.
      const auto t0 = Clock::now();
      const Lattice lattice = argon ? fcc_lattice(5.26, cells, 9.5, 7) : fcc_lattice(3.615, cells, 6.0, 7);
      std::printf("built %s fcc %d^3 cells: %zu atoms, %zu halo rows, %zu listed edges (%.1f s)\n",
                  argon ? "argon" : "copper", cells, lattice.n_owned, lattice.halo_owner.size(), lattice.senders.size(),
                  std::chrono::duration<double>(Clock::now() - t0).count());
      std::fflush(stdout);
      for (const ModelCase& m : cases) {
        if (m.argon != argon || std::find(wanted.begin(), wanted.end(), m.key) == wanted.end()) continue;
        for (const std::string& precision : m.mpnn ? precisions : std::vector<std::string>{"fp64"}) {
          Row row;
          row.model = m.label;
          row.precision = precision;
          row.atoms = lattice.n_owned;
          row.edges = lattice.senders.size();
          try {
            models::ModelFile file = models::read_model_file(source_dir() + "/potentials/" + m.file);
            if (m.mpnn) file.precision = precision;
            if (m.widen > 1) file.parameters = test::widen_mpnn_parameters(file.parameters, m.widen);
            const Device device = on_cpu ? Device::cpu : Device::cuda;
            auto model = models::make_model(file, device);
            Dispatcher dispatch(file.spec.core, device, model->info().ops, 1);
            IndexedHaloExchange host_halo(lattice.n_owned, lattice.halo_owner);
            std::unique_ptr<DeviceIndexedHaloExchange> device_halo;
            if (on_cpu || halo_kind == "staged") {
              dispatch.attach(host_halo);  // the model stages it (DeviceStagingHaloExchange)
            } else {
              device_halo = std::make_unique<DeviceIndexedHaloExchange>(lattice.n_owned, lattice.halo_owner);
              dispatch.attach(*device_halo);
            }
            const models::AtomGraph graph = lattice.graph();
            const models::OutputRequest request{false, true, false};
            models::ModelOutputs out;
            for (int s = 0; s < (on_cpu ? 1 : 3); ++s) model->compute(graph, dispatch, request, out);
            if (on_cpu) {
              const auto begin = Clock::now();
              for (int s = 0; s < steps; ++s) model->compute(graph, dispatch, request, out);
              row.ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count() / steps;
              std::printf("  %-13s %-5s %9zu atoms: %9.3f ms/step (cpu), E/N = %.6f eV\n", m.label.c_str(),
                          precision.c_str(), row.atoms, row.ms, out.energy / row.atoms);
              std::fflush(stdout);
              rows.push_back(std::move(row));
              continue;
            }
            cudaEvent_t start, stop;
            cudaEventCreate(&start);
            cudaEventCreate(&stop);
            cudaEventRecord(start);
            for (int s = 0; s < steps; ++s) model->compute(graph, dispatch, request, out);
            cudaEventRecord(stop);
            cudaEventSynchronize(stop);
            float ms = 0.0f;
            cudaEventElapsedTime(&ms, start, stop);
            cudaEventDestroy(start);
            cudaEventDestroy(stop);
            row.ms = ms / steps;
            // Kernel times from a few profiled steps.
            const int profiled = std::min(steps, 5);
            models::cuda::reset_profile();
            models::cuda::set_profiling(true);
            for (int s = 0; s < profiled; ++s) model->compute(graph, dispatch, request, out);
            models::cuda::set_profiling(false);
            row.kernels = models::cuda::profile();
            for (auto& k : row.kernels) {
              k.ms /= profiled;
              k.stream_bytes /= profiled;
              k.gather_bytes /= profiled;
              k.flops /= profiled;
              k.calls /= profiled;
              row.kernel_ms += k.ms;
            }
            std::printf("  %-13s %-5s %9zu atoms: %9.3f ms/step (kernels %8.3f ms), E/N = %.6f eV\n", m.label.c_str(),
                        precision.c_str(), row.atoms, row.ms, row.kernel_ms, out.energy / row.atoms);
          } catch (const std::exception& e) {
            std::printf("  %-13s %-5s %9zu atoms: failed: %s\n", m.label.c_str(), precision.c_str(), row.atoms, e.what());
            row.ms = -1.0;
          }
          std::fflush(stdout);
          rows.push_back(std::move(row));
        }
      }
    }
  }

  std::printf("\n%-13s %-5s %9s %11s %10s %10s %13s %9s\n", "model", "prec", "atoms", "edges", "ms/step", "kernel ms",
              "atom-steps/s", "ns/day");
  for (const Row& r : rows) {
    if (r.ms < 0) {
      std::printf("%-13s %-5s %9zu %11zu %10s\n", r.model.c_str(), r.precision.c_str(), r.atoms, r.edges, "failed");
      continue;
    }
    const double steps_per_s = 1e3 / r.ms;
    std::printf("%-13s %-5s %9zu %11zu %10.3f %10.3f %13.3e %9.2f\n", r.model.c_str(), r.precision.c_str(), r.atoms,
                r.edges, r.ms, r.kernel_ms, steps_per_s * r.atoms, steps_per_s * 86400.0 * 1e-6);
  }

  if (on_cpu) return 0;
  std::printf("\nhottest kernels (per step; %% of the cudaMemcpy bandwidth %.0f GB/s)\n", bandwidth * 1e-9);
  std::printf("%-13s %-5s %9s %-42s %9s %11s %7s %11s %9s\n", "model", "prec", "atoms", "kernel", "ms", "stream GB/s",
              "%bw", "gather GB/s", "GFLOP/s");
  for (const Row& r : rows) {
    if (r.ms < 0) continue;
    for (std::size_t k = 0; k < std::min<std::size_t>(3, r.kernels.size()); ++k) {
      const auto& t = r.kernels[k];
      const double s = t.ms * 1e-3;
      std::printf("%-13s %-5s %9zu %-42s %9.3f %11.0f %6.1f%% %11.0f %9.0f\n", r.model.c_str(), r.precision.c_str(),
                  r.atoms, t.label.c_str(), t.ms, t.stream_bytes / s * 1e-9, 100.0 * t.stream_bytes / s / bandwidth,
                  t.gather_bytes / s * 1e-9, t.flops / s * 1e-9);
    }
  }
  return 0;
}
