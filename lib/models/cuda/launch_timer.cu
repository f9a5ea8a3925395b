// Per-launch timing: CUDA events around each launch while profiling is on, summed per label.
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "models/cuda/check.cuh"
#include "models/cuda/launch_timer.cuh"
#include "models/cuda_runtime.h"

namespace distspec::models::cuda {

namespace {

struct Pending {
  std::string label;
  cudaEvent_t start = nullptr, stop = nullptr;
  double stream_bytes = 0.0, gather_bytes = 0.0, flops = 0.0;
};

struct Profiler {
  std::mutex mutex;
  bool on = false;
  std::vector<Pending> pending;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> spare;
  std::map<std::string, KernelTiming> totals;
};

Profiler& profiler() {
  static Profiler p;
  return p;
}

}  // namespace

void set_profiling(bool on) {
  Profiler& p = profiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.on = on;
}

bool profiling() { return profiler().on; }

void reset_profile() {
  profile();
  Profiler& p = profiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.totals.clear();
}

std::vector<KernelTiming> profile() {
  Profiler& p = profiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  for (Pending& r : p.pending) {
    check(cudaEventSynchronize(r.stop), "cudaEventSynchronize");
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, r.start, r.stop), "cudaEventElapsedTime");
    KernelTiming& t = p.totals[r.label];
    t.label = r.label;
    ++t.calls;
    t.ms += ms;
    t.stream_bytes += r.stream_bytes;
    t.gather_bytes += r.gather_bytes;
    t.flops += r.flops;
    p.spare.emplace_back(r.start, r.stop);
  }
  p.pending.clear();
  std::vector<KernelTiming> out;
  for (const auto& [label, t] : p.totals) out.push_back(t);
  std::sort(out.begin(), out.end(), [](const KernelTiming& a, const KernelTiming& b) { return a.ms > b.ms; });
  return out;
}

LaunchTimer::LaunchTimer(const char* label, double stream_bytes, double gather_bytes, double flops) {
  Profiler& p = profiler();
  if (!p.on) return;
  std::lock_guard<std::mutex> lock(p.mutex);
  Pending r;
  r.label = label;
  r.stream_bytes = stream_bytes;
  r.gather_bytes = gather_bytes;
  r.flops = flops;
  if (p.spare.empty()) {
    check(cudaEventCreate(&r.start), "cudaEventCreate");
    check(cudaEventCreate(&r.stop), "cudaEventCreate");
  } else {
    std::tie(r.start, r.stop) = p.spare.back();
    p.spare.pop_back();
  }
  check(cudaEventRecord(r.start), "cudaEventRecord");
  slot_ = static_cast<int>(p.pending.size());
  p.pending.push_back(std::move(r));
}

LaunchTimer::~LaunchTimer() {
  if (slot_ < 0) return;
  Profiler& p = profiler();
  std::lock_guard<std::mutex> lock(p.mutex);
  cudaEventRecord(p.pending[static_cast<std::size_t>(slot_)].stop);
}

}  // namespace distspec::models::cuda
