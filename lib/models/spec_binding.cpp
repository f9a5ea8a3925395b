#include "models/spec_binding.h"

#include <algorithm>

#include "distspec/error.h"

namespace distspec::models {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

// An error about a spec value, attributed to where the spec came from: a spec file, or the
// model file for an inline spec, whose pointers then start at /spec.
Error attributed(const Error& e, const BindingSources& sources) {
  if (sources.spec_source == "inline") return e.with_pointer_prefix("/spec").with_file(sources.model_file);
  return e.with_file(sources.spec_source);
}

[[noreturn]] void fail_spec(const BindingSources& sources, const std::string& pointer, std::string message,
                            std::string hint) {
  throw attributed(Error(error_id::value, pointer, std::move(message), std::move(hint)), sources);
}

}  // namespace

void check_policy_runs(const MLIPSpec& spec, int n_ranks, const BindingSources& sources) {
  try {
    Dispatcher::check_policy(spec.core.policy, n_ranks);
  } catch (const Error& e) {
    throw attributed(e, sources);
  }
}

void check_adapted_ops(const MLIPSpec& spec, const ModelInfo& info, const BindingSources& sources) {
  const auto& ops = spec.core.custom_ops;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const std::string& op = ops[k].op;
    if (contains(info.ops, op) || contains(info.family_ops, op)) continue;
    fail_spec(sources, "/core/custom_ops/" + std::to_string(k) + "/op",
              "the spec adapts op '" + op + "', which model " + sources.model_file + " (" + info.architecture +
                  ") never calls (it calls: " +
                  (info.ops.empty() ? std::string("no op through the dispatcher") : joined(info.ops)) + ")",
              "use the spec written for this model");
  }
}

}  // namespace distspec::models
