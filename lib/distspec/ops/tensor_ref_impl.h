#pragma once

#include <string>
#include <type_traits>

#include "distspec/error.h"

namespace distspec {

template <class T>
T* TensorRef::as() const {
  using U = std::remove_const_t<T>;
  if (dtype != dtype_of<U>())
    throw Error("op.dtype", "", std::string("op argument has dtype ") + dtype_name(dtype) + ", the kernel expects " +
                        dtype_name(dtype_of<U>()));
  return static_cast<T*>(data);
}

}  // namespace distspec
