// Op adapters: which arguments and outputs of a named kernel ("namespace::name") cross ranks,
// and how. Per call: gather_inputs / slice_owned on the arguments, the kernel, then
// scatter_outputs / all_reduce_sum on the outputs; no transforms means pass-through.
// Transforms are nvalchemi's frozen dataclasses (distributed/_core/op_transforms.py): a JSON
// transform is {"type": NAME} plus every field of that dataclass; only all_reduce_sum has one.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// Why `op` is not an acceptable qualname, or nullopt: exactly one "::" with a non-empty
// namespace and name, which is what torch.ops can resolve ("a::b::c" names no op).
std::optional<std::string> op_name_problem(std::string_view op);

// The fields a transform type has besides "type", in nvalchemi's order.
std::vector<std::string_view> transform_fields(ArgTransform t);
std::vector<std::string_view> transform_fields(OutputTransform t);

// One output transform: its type and the values of that type's fields.
struct OutputTransformEntry {
  OutputTransform type;
  // all_reduce_sum: whether the gradient arriving at this output in the backward pass is already
  // the global sum on every rank. false: it is this rank's partial, and the adjoint is another
  // all-reduce; true: summing again would multiply it by the number of ranks, so the adjoint is
  // the identity (nvalchemi's AllReduceSum.replicated_consumer, measured per op there).
  bool replicated_consumer = false;
  // Spelling, not meaning: whether the file wrote the type's fields (nvalchemi >= 0.2 writes
  // them all; older writers only "type"), so that a file is written back in its own bytes.
  bool fields_written = true;

  OutputTransformEntry(OutputTransform t, bool replicated = false)  // NOLINT: implicit by design
      : type(t), replicated_consumer(replicated) {}
};

inline bool operator==(const OutputTransformEntry& a, OutputTransform t) { return a.type == t; }
inline bool operator!=(const OutputTransformEntry& a, OutputTransform t) { return a.type != t; }
inline bool operator==(const OutputTransformEntry& a, const OutputTransformEntry& b) {
  return a.type == b.type && a.replicated_consumer == b.replicated_consumer;
}
inline bool operator!=(const OutputTransformEntry& a, const OutputTransformEntry& b) { return !(a == b); }

struct OpAdapter {
  std::string op;  // kernel qualname; resolved when a model is bound, not here
  // Keyed by argument / output position; std::map keeps them in the ascending order the
  // spec writes them in ("2" before "10").
  std::map<int, ArgTransform> arg_transforms;
  std::map<int, OutputTransformEntry> output_transforms;

  // Throws Error (spec.value) for a bad op name or a negative position.
  explicit OpAdapter(std::string op, std::map<int, ArgTransform> arg_transforms = {},
                     std::map<int, OutputTransformEntry> output_transforms = {});

  bool pass_through() const { return arg_transforms.empty() && output_transforms.empty(); }
};

bool operator==(const OpAdapter& a, const OpAdapter& b);
inline bool operator!=(const OpAdapter& a, const OpAdapter& b) { return !(a == b); }

}  // namespace distspec
