// Op adapters: which arguments and outputs of a named kernel ("namespace::name") cross ranks,
// and how. Per call: gather_inputs / slice_owned on the arguments, the kernel, then
// scatter_outputs / all_reduce_sum on the outputs; no transforms means pass-through.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace distspec {

enum class ArgTransform {
  gather_inputs,       // forward exchange: owned rows -> owned + halo rows
  gather_inputs_full,  // sharded storage only: gather every row
  slice_owned,         // keep the first n_owned rows so each row counts once
};

enum class OutputTransform {
  scatter_outputs,      // reverse then forward exchange
  all_reduce_sum,       // sum over ranks
  slice_outputs_owned,  // sharded storage only: back to owned rows
};

std::string_view to_string(ArgTransform t);
std::string_view to_string(OutputTransform t);
std::optional<ArgTransform> arg_transform_from_string(std::string_view name);
std::optional<OutputTransform> output_transform_from_string(std::string_view name);
std::string arg_transform_list();     // "gather_inputs, gather_inputs_full, slice_owned"
std::string output_transform_list();  // "scatter_outputs, all_reduce_sum, slice_outputs_owned"

// Why `op` is not an acceptable qualname ("ns::name", both parts non-empty), or nullopt.
std::optional<std::string> op_name_problem(std::string_view op);

struct OpAdapter {
  std::string op;  // kernel qualname; resolved when a model is bound, not here
  // Keyed by argument / output position; std::map keeps them in the ascending order the
  // spec writes them in ("2" before "10").
  std::map<int, ArgTransform> arg_transforms;
  std::map<int, OutputTransform> output_transforms;

  // Throws Error (spec.value) for a bad op name or a negative position.
  explicit OpAdapter(std::string op, std::map<int, ArgTransform> arg_transforms = {},
                     std::map<int, OutputTransform> output_transforms = {});

  bool pass_through() const { return arg_transforms.empty() && output_transforms.empty(); }
};

bool operator==(const OpAdapter& a, const OpAdapter& b);
inline bool operator!=(const OpAdapter& a, const OpAdapter& b) { return !(a == b); }

}  // namespace distspec
