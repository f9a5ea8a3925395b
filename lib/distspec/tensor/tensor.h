// An owning row-block tensor: `rows` rows of `cols` contiguous values, row-major. Node data is
// laid out [owned | halo] rows, edge data one row per edge, so "row" is the only index a
// kernel or a halo exchange needs; a view of it (Rows<T>) is what halo exchanges take.
//
// Storage is the heap's, or a Workspace's (tensor/workspace.h): a tensor made from a workspace
// gives its buffer back when destroyed, for the next step's tensors. Copies are always on the
// heap, so a copy may outlive the workspace; the tensor itself may not.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "distspec/error.h"
#include "distspec/halo/rows.h"
#include "distspec/tensor/workspace.h"

namespace distspec::tensor {

template <class T>
class Tensor {
 public:
  Tensor() = default;
  Tensor(std::size_t rows, std::size_t cols) : rows_(rows), cols_(cols), data_(rows * cols, T(0)) {}
  // Zeros in storage from `workspace`, or from the heap when it is null.
  Tensor(std::size_t rows, std::size_t cols, Workspace* workspace)
      : rows_(rows),
        cols_(cols),
        data_(workspace ? workspace->take<T>(rows * cols) : std::vector<T>(rows * cols, T(0))),
        home_(workspace) {}
  // Takes `values` (row-major, rows * cols of them).
  Tensor(std::size_t rows, std::size_t cols, std::vector<T> values)
      : rows_(rows), cols_(cols), data_(std::move(values)) {
    if (data_.size() != rows * cols)
      throw Error("tensor.shape", "",
                  "a " + std::to_string(rows) + " x " + std::to_string(cols) + " tensor needs " +
                      std::to_string(rows * cols) + " values, got " + std::to_string(data_.size()));
  }

  Tensor(const Tensor& other) : rows_(other.rows_), cols_(other.cols_), data_(other.data_) {}
  Tensor(Tensor&& other) noexcept
      : rows_(std::exchange(other.rows_, 0)),
        cols_(std::exchange(other.cols_, 0)),
        data_(std::move(other.data_)),
        home_(std::exchange(other.home_, nullptr)) {}
  Tensor& operator=(const Tensor& other) {
    if (this != &other) *this = Tensor(other);
    return *this;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      release();
      rows_ = std::exchange(other.rows_, 0);
      cols_ = std::exchange(other.cols_, 0);
      data_ = std::move(other.data_);
      home_ = std::exchange(other.home_, nullptr);
    }
    return *this;
  }
  ~Tensor() { release(); }

  // Zeros of this shape, in storage from where this tensor's came from.
  Tensor zeros_like() const { return Tensor(rows_, cols_, home_); }

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t size() const { return data_.size(); }
  bool empty() const { return data_.empty(); }

  T* data() { return data_.data(); }
  const T* data() const { return data_.data(); }
  T* row(std::size_t i) { return data_.data() + i * cols_; }
  const T* row(std::size_t i) const { return data_.data() + i * cols_; }
  T& operator()(std::size_t i, std::size_t c) { return data_[i * cols_ + c]; }
  T operator()(std::size_t i, std::size_t c) const { return data_[i * cols_ + c]; }

  void fill(T value) { std::fill(data_.begin(), data_.end(), value); }
  Rows<T> view() { return Rows<T>{data_.data(), rows_, static_cast<int>(cols_)}; }

 private:
  void release() noexcept {
    if (home_) home_->give_back(std::move(data_));
    data_ = std::vector<T>();
    home_ = nullptr;
  }

  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
  std::vector<T> data_;
  Workspace* home_ = nullptr;  // where data_ goes back to; null: the heap
};

// A copy of `t` in another precision, element by element (on the heap).
template <class To, class From>
Tensor<To> tensor_cast(const Tensor<From>& t) {
  Tensor<To> out(t.rows(), t.cols());
  for (std::size_t i = 0; i < t.size(); ++i) out.data()[i] = static_cast<To>(t.data()[i]);
  return out;
}

}  // namespace distspec::tensor
