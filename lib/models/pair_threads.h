// Threads for the CPU pair kernels (LJ, EAM), as LAMMPS' OPENMP package runs its pair styles:
// the receivers are split into contiguous ranges of about equal edge counts, one per thread, and
// every thread but the first adds what it puts on other atoms (the `both` side of a pair, and the
// global virial) into its own zeroed copy of those rows, which are summed into the real rows in
// thread order afterwards. Sums are therefore deterministic for a given thread count; 1 and N
// threads agree to rounding.
//
// OpenMP where the build has it (DISTSPEC_ENABLE_OPENMP), otherwise one thread: the thread count
// a host asks for (OutputRequest::threads) is then ignored.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#ifdef DISTSPEC_WITH_OPENMP
#include <omp.h>
#endif

namespace distspec::models {

// How many threads a kernel may use: what the host asks for, 1 in a build without OpenMP.
inline int usable_threads(int asked) {
#ifdef DISTSPEC_WITH_OPENMP
  return std::max(asked, 1);
#else
  (void) asked;
  return 1;
#endif
}

// Receivers [begin(t), begin(t + 1)) of thread t: ranges of about equal edge counts (offsets is
// the CSR of n_receivers + 1 entries).
inline std::vector<std::size_t> receiver_ranges(const int* offsets, std::size_t n_receivers, int threads) {
  std::vector<std::size_t> begin(static_cast<std::size_t>(threads) + 1, n_receivers);
  begin[0] = 0;
  const long long n_edges = n_receivers ? offsets[n_receivers] : 0;
  for (int t = 1; t < threads; ++t) {
    const long long target = n_edges * t / threads;
    begin[t] = static_cast<std::size_t>(std::lower_bound(offsets, offsets + n_receivers, target) - offsets);
    begin[t] = std::max(begin[t], begin[t - 1]);
  }
  return begin;
}

// Runs body(t) on threads t = 0 .. threads - 1 (serially without OpenMP).
template <class Body>
void run_threads(int threads, Body&& body) {
#ifdef DISTSPEC_WITH_OPENMP
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    body(omp_get_thread_num());
    return;
  }
#endif
  for (int t = 0; t < threads; ++t) body(t);
}

// Private copies of output rows for threads 1 .. T-1, kept between calls (a model owns one).
class ThreadRows {
 public:
  // Sizes thread t's copy of slot `slot` to n values, zeroed, and returns it; thread 0 gets
  // `real`. Call before the threads start.
  double* rows(int t, int slot, double* real, std::size_t n) {
    if (t == 0 || !real) return real;
    std::vector<double>& copy = copy_of(t, slot);
    copy.assign(n, 0.0);
    return copy.data();
  }
  // Adds the copies of `slot` into `real` (n values), in thread order.
  void sum_into(int threads, int slot, double* real, std::size_t n) {
    if (!real) return;
    for (int t = 1; t < threads; ++t) {
      const double* copy = copy_of(t, slot).data();
      for (std::size_t k = 0; k < n; ++k) real[k] += copy[k];
    }
  }

 private:
  std::vector<double>& copy_of(int t, int slot) {
    const std::size_t index = static_cast<std::size_t>(t) * kSlots + static_cast<std::size_t>(slot);
    if (copies_.size() <= index) copies_.resize(index + 1);
    return copies_[index];
  }
  static constexpr std::size_t kSlots = 4;
  std::vector<std::vector<double>> copies_;
};

}  // namespace distspec::models
