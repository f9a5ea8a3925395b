// Storage that persists from one step to the next. A model runs the same ops on nearly the same
// shapes every MD step; taking each op's output from buffers the last step gave back, instead
// of fresh heap blocks, saves the allocation and, for blocks of many megabytes, the page faults
// of touching new memory.
//
// take() hands out the smallest free buffer that holds the request (zero-filled), else a new one
// with room to grow (kGrowth), so that a next step a little larger (more neighbours after a
// reneighbouring) still fits. Buffers come back through give_back(), which Tensor's destructor
// calls for tensors made from a workspace. Not thread-safe; every tensor made from a workspace
// must be destroyed before it.
#pragma once

#include <cstddef>
#include <vector>

namespace distspec::tensor {

class Workspace {
 public:
  static constexpr double kGrowth = 1.25;

  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // n zeros.
  template <class T>
  std::vector<T> take(std::size_t n);
  // Keeps the buffer's storage for a later take (or frees it, if keeping it fails).
  template <class T>
  void give_back(std::vector<T>&& buffer) noexcept;

  // Buffers allocated over the workspace's life: flat once its users' shapes repeat.
  std::size_t allocations() const { return allocations_; }
  // Free buffers held now.
  std::size_t free_buffers() const { return free_doubles_.size() + free_floats_.size(); }
  // The threads that zero the buffers take() hands out (distspec/util/threads.h): the model's.
  void set_threads(int threads) { threads_ = threads; }

 private:
  template <class T>
  std::vector<std::vector<T>>& free_list();

  std::vector<std::vector<double>> free_doubles_;
  std::vector<std::vector<float>> free_floats_;
  std::size_t allocations_ = 0;
  int threads_ = 1;
};

}  // namespace distspec::tensor
