// CPU threads for the kernels of the models and of the tensor ops they are made of, as LAMMPS'
// OPENMP package runs its pair styles: work is split into contiguous ranges, one per thread
// (receivers of about equal edge counts, or equal counts of rows), and whatever a thread adds
// to rows that other threads may also add to (the `both` side of a pair, a scattered gradient,
// a global sum) goes into its own zeroed copy, summed into the real rows in thread order
// afterwards. Results are therefore deterministic for a given thread count; 1 and N threads
// agree to rounding.
//
// OpenMP where the build has it (DISTSPEC_ENABLE_OPENMP), otherwise one thread: the thread count
// a host asks for (OutputRequest::threads) is then ignored. A body run on the threads must not
// throw (an exception cannot leave an OpenMP region): check arguments before.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

// DISTSPEC_WITH_OPENMP is the build's switch, the same in every file, so that every inline
// function here means one thing everywhere; _OPENMP says whether this file's compiler runs
// OpenMP (CUDA files of an OpenMP build are compiled without it, and launch no CPU threads).
#if defined(DISTSPEC_WITH_OPENMP) && defined(_OPENMP)
#include <omp.h>
#endif

namespace distspec {

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
#if defined(DISTSPEC_WITH_OPENMP) && defined(_OPENMP)
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    body(omp_get_thread_num());
    return;
  }
#elif defined(DISTSPEC_WITH_OPENMP)
  static_assert(sizeof(Body) == 0, "CPU threads in a file compiled without OpenMP: compile it as C++");
#endif
  for (int t = 0; t < threads; ++t) body(t);
}

// Below this many items per thread a loop runs on fewer threads: starting a thread costs more
// than a few thousand cheap items (an element, a row of a small layer, an edge's basis). Loops
// whose items are heavy (an atom's sum over every k-vector) give a smaller grain.
inline constexpr std::size_t kMinItemsPerThread = 2048;

// The grain of a loop whose items are rows of `row_cost` cheap items each (a row of a layer's
// output costs its inputs times its outputs): so many rows that a thread gets as much work as
// kMinItemsPerThread cheap items.
inline std::size_t row_grain(std::size_t row_cost) {
  return std::max<std::size_t>(kMinItemsPerThread / std::max<std::size_t>(row_cost, 1), 1);
}

// The threads a loop over n items runs on, of the `threads` asked for.
inline int loop_threads(int threads, std::size_t n, std::size_t grain = kMinItemsPerThread) {
  const std::size_t most = std::max<std::size_t>(n / std::max<std::size_t>(grain, 1), 1);
  return static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(usable_threads(threads)), most));
}

// body(begin, end, t) over [0, n) in contiguous, about equal ranges, one per thread.
template <class Body>
void parallel_for(int threads, std::size_t n, Body&& body, std::size_t grain = kMinItemsPerThread) {
  const int used = loop_threads(threads, n, grain);
  if (used == 1) {
    if (n) body(std::size_t{0}, n, 0);
    return;
  }
  run_threads(used, [&](int t) {
    const std::size_t k = static_cast<std::size_t>(t), parts = static_cast<std::size_t>(used);
    body(n * k / parts, n * (k + 1) / parts, t);
  });
}

// Private copies of output rows for threads 1 .. T-1, kept between calls (a model owns one).
template <class T>
class ThreadRows {
 public:
  // Sizes thread t's copy of slot `slot` to n values, zeroed, and returns it; thread 0 gets
  // `real`. Call before the threads start.
  T* rows(int t, int slot, T* real, std::size_t n) {
    if (t == 0 || !real) return real;
    std::vector<T>& copy = copy_of(t, slot);
    copy.assign(n, T(0));
    return copy.data();
  }
  // Adds the copies of `slot` into `real` (n values), in thread order, the values split over
  // `threads` threads.
  void sum_into(int threads, int slot, T* real, std::size_t n) {
    if (!real || threads < 2) return;
    for (int t = 1; t < threads; ++t) copy_of(t, slot);  // sized before the threads read the list
    parallel_for(threads, n, [&](std::size_t begin, std::size_t end, int) {
      for (int t = 1; t < threads; ++t) {
        const T* copy = copies_[index(t, slot)].data();
        for (std::size_t k = begin; k < end; ++k) real[k] += copy[k];
      }
    });
  }

 private:
  static std::size_t index(int t, int slot) {
    return static_cast<std::size_t>(t) * kSlots + static_cast<std::size_t>(slot);
  }
  std::vector<T>& copy_of(int t, int slot) {
    if (copies_.size() <= index(t, slot)) copies_.resize(index(t, slot) + 1);
    return copies_[index(t, slot)];
  }
  static constexpr std::size_t kSlots = 4;
  std::vector<std::vector<T>> copies_;
};

}  // namespace distspec
