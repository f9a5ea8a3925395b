// Reverse-mode differentiation on a tape. Each op computes its value at once (forward) and, when
// an input wants a gradient, records a closure that adds the op's vector-Jacobian product into
// its inputs' gradients. Tape::backward replays those closures in reverse order, so by the time
// an op's closure runs, its output gradient holds every later use's contribution.
//
// A Var is a handle to a value and, for values that depend on what is being differentiated,
// the gradient accumulated into it. Copies share one node, as closures capture handles to keep
// their inputs alive until the tape is replayed or cleared.
#pragma once

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "distspec/tensor/tensor.h"

namespace distspec::tensor {

template <class T>
class Var {
 public:
  Var() = default;

  // A value no gradient is taken with respect to (parameters, inputs held fixed).
  static Var constant(Tensor<T> value) { return Var(std::move(value), false); }
  // A value gradients flow into: an input being differentiated by, or an op output that depends
  // on one. Its gradient starts at zero, in the value's shape and from the value's storage
  // (the heap, or the workspace the value came from).
  static Var variable(Tensor<T> value) { return Var(std::move(value), true); }
  // An op's output: a variable exactly when some input was one.
  static Var result(Tensor<T> value, bool requires_grad) { return Var(std::move(value), requires_grad); }

  bool requires_grad() const { return node_->requires_grad; }
  // The handle is shared: value() and grad() give the one node every copy sees. Ops that refresh
  // halo rows in place write through value().
  Tensor<T>& value() const { return node_->value; }
  Tensor<T>& grad() const;

  std::size_t rows() const { return node_->value.rows(); }
  std::size_t cols() const { return node_->value.cols(); }

 private:
  struct Node {
    Tensor<T> value;
    Tensor<T> grad;
    bool requires_grad = false;
  };
  Var(Tensor<T> value, bool requires_grad);

  std::shared_ptr<Node> node_;
};

class Tape {
 public:
  using Backward = std::function<void()>;

  Tape() = default;
  // Op outputs, and their gradients, take their storage from `workspace` (see workspace.h):
  // it must outlive every value the tape's ops produce. Ops run their loops, forward and
  // adjoint, on `threads` CPU threads (distspec/util/threads.h); the workspace zeroes on as many.
  explicit Tape(Workspace& workspace, int threads = 1) : workspace_(&workspace), threads_(threads) {
    workspace.set_threads(threads);
  }
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;
  Tape(Tape&&) = default;
  Tape& operator=(Tape&&) = default;

  // Zeros for an op's output, from the tape's workspace when it has one.
  template <class T>
  Tensor<T> tensor(std::size_t rows, std::size_t cols) const {
    return Tensor<T>(rows, cols, workspace_);
  }

  void record(Backward backward) { steps_.push_back(std::move(backward)); }
  // Replays the recorded adjoints, last op first, then forgets them and the values they hold.
  // Seed the output's gradient before calling it.
  void backward();
  void clear() { steps_.clear(); }
  std::size_t size() const { return steps_.size(); }
  int threads() const { return threads_; }
  // Where the tape's tensors come from (null: the heap); adjoints take scratch from it too.
  Workspace* workspace() const { return workspace_; }

 private:
  std::vector<Backward> steps_;
  Workspace* workspace_ = nullptr;
  int threads_ = 1;
};

template <class T>
Var<T>::Var(Tensor<T> value, bool requires_grad) : node_(std::make_shared<Node>()) {
  node_->requires_grad = requires_grad;
  if (requires_grad) node_->grad = value.zeros_like();
  node_->value = std::move(value);
}

template <class T>
Tensor<T>& Var<T>::grad() const {
  if (!node_->requires_grad)
    throw Error("tensor.grad", "", "a constant has no gradient", "create the value with Var::variable");
  return node_->grad;
}

}  // namespace distspec::tensor
