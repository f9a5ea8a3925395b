#include "distspec/spec/op_adapter.h"

#include <array>
#include <utility>

#include "distspec/error.h"
#include "distspec/spec/name_table.h"

namespace distspec {
namespace {

using name_table::list_of;
using name_table::name_of;
using name_table::value_of;

// Names as nvalchemi's op_transforms registry spells them, in its order.
constexpr std::array<std::pair<ArgTransform, std::string_view>, 3> kArgNames{{
    {ArgTransform::gather_inputs, "gather_inputs"},
    {ArgTransform::gather_inputs_full, "gather_inputs_full"},
    {ArgTransform::slice_owned, "slice_owned"},
}};
constexpr std::array<std::pair<OutputTransform, std::string_view>, 3> kOutputNames{{
    {OutputTransform::scatter_outputs, "scatter_outputs"},
    {OutputTransform::all_reduce_sum, "all_reduce_sum"},
    {OutputTransform::slice_outputs_owned, "slice_outputs_owned"},
}};

}  // namespace

std::string_view to_string(ArgTransform t) { return name_of(kArgNames, t); }
std::string_view to_string(OutputTransform t) { return name_of(kOutputNames, t); }
std::optional<ArgTransform> arg_transform_from_string(std::string_view name) {
  return value_of(kArgNames, name);
}
std::optional<OutputTransform> output_transform_from_string(std::string_view name) {
  return value_of(kOutputNames, name);
}
std::string arg_transform_list() { return list_of(kArgNames); }
std::string output_transform_list() { return list_of(kOutputNames); }

std::optional<std::string> op_name_problem(std::string_view op) {
  const auto sep = op.find("::");
  if (sep == std::string_view::npos || sep == 0 || sep + 2 == op.size() ||
      op.find("::", sep + 2) != std::string_view::npos) {
    return "op name " + quote(op) + " is not of the form 'namespace::name'";
  }
  return std::nullopt;
}

std::vector<std::string_view> transform_fields(ArgTransform) { return {}; }

std::vector<std::string_view> transform_fields(OutputTransform t) {
  if (t == OutputTransform::all_reduce_sum) return {"replicated_consumer"};
  return {};
}

OpAdapter::OpAdapter(std::string op_name, std::map<int, ArgTransform> args,
                     std::map<int, OutputTransformEntry> outputs)
    : op(std::move(op_name)),
      arg_transforms(std::move(args)),
      output_transforms(std::move(outputs)) {
  if (auto problem = op_name_problem(op)) throw Error(error_id::value, "", *problem);
  const bool negative = (!arg_transforms.empty() && arg_transforms.begin()->first < 0) ||
                        (!output_transforms.empty() && output_transforms.begin()->first < 0);
  if (negative)
    throw Error(error_id::value, "", "op " + quote(op) + " has a negative transform position");
}

bool operator==(const OpAdapter& a, const OpAdapter& b) {
  return a.op == b.op && a.arg_transforms == b.arg_transforms &&
         a.output_transforms == b.output_transforms;
}

}  // namespace distspec
