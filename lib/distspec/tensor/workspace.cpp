#include "distspec/tensor/workspace.h"

#include <algorithm>

#include "distspec/util/threads.h"

namespace distspec::tensor {

template <>
std::vector<std::vector<double>>& Workspace::free_list<double>() {
  return free_doubles_;
}
template <>
std::vector<std::vector<float>>& Workspace::free_list<float>() {
  return free_floats_;
}

template <class T>
std::vector<T> Workspace::take(std::size_t n) {
  if (n == 0) return {};
  std::vector<std::vector<T>>& list = free_list<T>();
  // Best fit: a small request never takes the buffer a larger one of the same step needs,
  // so a step that repeats the last one's requests finds a buffer for each.
  auto best = list.end();
  for (auto it = list.begin(); it != list.end(); ++it)
    if (it->capacity() >= n && (best == list.end() || it->capacity() < best->capacity())) best = it;
  std::vector<T> buffer;
  if (best != list.end()) {
    buffer = std::move(*best);
    list.erase(best);
  } else {
    // Nothing fits: drop the largest free buffer, outgrown, so that a system which grows
    // leaves no trail of buffers too small to use.
    const auto largest = std::max_element(
        list.begin(), list.end(), [](const auto& a, const auto& b) { return a.capacity() < b.capacity(); });
    if (largest != list.end()) list.erase(largest);
    buffer.reserve(static_cast<std::size_t>(static_cast<double>(n) * kGrowth));
    ++allocations_;
  }
  // Zeroed on the model's threads: a step zeroes hundreds of megabytes of edge blocks. The part
  // of a reused buffer past its last size is value-initialised by resize.
  if (buffer.size() > n) buffer.resize(n);
  parallel_for(threads_, buffer.size(), [&](std::size_t begin, std::size_t end, int) {
    std::fill(buffer.begin() + static_cast<std::ptrdiff_t>(begin), buffer.begin() + static_cast<std::ptrdiff_t>(end), T(0));
  });
  buffer.resize(n);
  return buffer;
}

template <class T>
void Workspace::give_back(std::vector<T>&& buffer) noexcept {
  if (buffer.capacity() == 0) return;
  try {
    free_list<T>().push_back(std::move(buffer));
  } catch (...) {
    // Out of memory for the list itself: the buffer is freed with its owner instead.
  }
}

template std::vector<double> Workspace::take<double>(std::size_t);
template std::vector<float> Workspace::take<float>(std::size_t);
template void Workspace::give_back<double>(std::vector<double>&&) noexcept;
template void Workspace::give_back<float>(std::vector<float>&&) noexcept;

}  // namespace distspec::tensor
