// Writing an MLIPSpec v2 in the key order of nvalchemi's to_dict(), through the Python-exact
// dumper, so the bytes equal MLIPSpec.save()'s.
#include <algorithm>
#include <string>

#include "distspec/error.h"
#include "distspec/spec/python_json.h"
#include "distspec/spec/spec_json.h"

namespace distspec {
namespace {

using Json = nlohmann::ordered_json;

// A spec built in C++ can hold what the reader would reject; refuse to write what cannot be
// read back, with the pointer the reader would report.
[[noreturn]] void refuse(std::string pointer, std::string message, std::string hint = {}) {
  throw Error(error_id::value, std::move(pointer), std::move(message), std::move(hint));
}

Json string_or_null_json(const Replacement& r) { return r ? Json(*r) : Json(nullptr); }

Json policy_json(const StoragePolicy& policy) {
  const std::optional<PolicyKind> info = find_policy_kind(policy.kind);
  if (!info) {
    refuse("/core/policy/kind", "unknown policy " + quote(policy.kind),
           "expected one of " + policy_kind_list());
  }
  Json j = Json::object();
  j["kind"] = policy.kind;
  if (info->halo) {
    j["scatter_mode"] = policy.scatter_mode.value_or(info->default_scatter_mode);
    j["gather_mode"] = policy.gather_mode.value_or(info->default_gather_mode);
  }
  return j;
}

// {"type": NAME} plus the type's fields, in nvalchemi's order, where the transform writes them.
Json transform_json(ArgTransform t) {
  Json entry = Json::object();
  entry["type"] = std::string(to_string(t));
  return entry;
}

Json transform_json(const OutputTransformEntry& t) {
  Json entry = Json::object();
  entry["type"] = std::string(to_string(t.type));
  if (t.type == OutputTransform::all_reduce_sum && t.fields_written) {
    entry["replicated_consumer"] = t.replicated_consumer;
  }
  return entry;
}

template <class Map>
Json transforms_json(const Map& transforms, const std::string& pointer) {
  Json j = Json::object();
  for (const auto& [position, transform] : transforms) {  // std::map: ascending positions
    if (position < 0) refuse(pointer + "/" + std::to_string(position), "position is negative");
    j[std::to_string(position)] = transform_json(transform);
  }
  return j;
}

Json op_json(const OpAdapter& op, const std::string& pointer) {
  if (auto problem = op_name_problem(op.op)) refuse(pointer + "/op", *problem);
  Json j = Json::object();
  j["op"] = op.op;
  j["arg_transforms"] = transforms_json(op.arg_transforms, pointer + "/arg_transforms");
  j["output_transforms"] = transforms_json(op.output_transforms, pointer + "/output_transforms");
  return j;
}

Json helper_json(const HelperRecord& helper) {
  Json j = Json::object();
  j["kind"] = std::string(helper_kind(helper));
  if (const auto* h = std::get_if<JitHelper>(&helper)) {
    j["module_path"] = h->module_path;
    j["attr_name"] = h->attr_name;
    j["replacement"] = string_or_null_json(h->replacement);
    j["mode"] = h->mode;
  } else if (const auto* h = std::get_if<PythonHelper>(&helper)) {
    j["module_path"] = h->module_path;
    j["attr_name"] = h->attr_name;
    j["replacement"] = string_or_null_json(h->replacement);
  } else if (const auto* h = std::get_if<MethodHelper>(&helper)) {
    j["module_path"] = h->module_path;
    j["class_name"] = h->class_name;
    j["method_name"] = h->method_name;
    j["replacement"] = string_or_null_json(h->replacement);
    j["mode"] = h->mode;
  } else {
    const auto& f = std::get<ModuleForwardHelper>(helper);
    j["target"] = f.target;
    j["label"] = f.label;
  }
  return j;
}

Json core_json(const DistributionSpec& core) {
  Json j = Json::object();
  j["policy"] = policy_json(core.policy);
  j["custom_ops"] = Json::array();
  for (std::size_t i = 0; i < core.custom_ops.size(); ++i) {
    j["custom_ops"].push_back(op_json(core.custom_ops[i], "/core/custom_ops/" + std::to_string(i)));
  }
  j["third_party_helpers"] = Json::array();
  for (const HelperRecord& h : core.third_party_helpers)
    j["third_party_helpers"].push_back(helper_json(h));
  // Left out when it is the default, as nvalchemi does; [] ("promote nothing") is kept.
  if (core.shard_fields != default_shard_fields()) {
    const auto& known = default_shard_fields();
    for (std::size_t i = 0; i < core.shard_fields.size(); ++i) {
      const std::string& name = core.shard_fields[i];
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        refuse("/core/shard_fields/" + std::to_string(i), "unknown shard field " + quote(name),
               "expected one of " + shard_field_list());
      }
    }
    j["shard_fields"] = core.shard_fields;
  }
  return j;
}

Json compile_json(const std::optional<CompilePolicy>& compile) {
  if (!compile) return Json(nullptr);
  Json j = Json::object();
  j["static_shapes"] = compile->static_shapes;
  j["force_strategy"] = std::string(to_string(compile->force_strategy));
  j["stress_via_strain"] = compile->stress_via_strain;
  return j;
}

Json sorted_names(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return Json(names);
}

}  // namespace

nlohmann::ordered_json mlip_spec_to_json(const MLIPSpec& spec) {
  Json j = Json::object();
  j["version"] = MLIPSpec::version;
  j["core"] = core_json(spec.core);
  j["system_reductions"] = spec.system_reductions;
  j["node_energy_key"] = string_or_null_json(spec.node_energy_key);
  j["node_virial_key"] = string_or_null_json(spec.node_virial_key);
  j["gp_replicate_geometry"] = spec.gp_replicate_geometry;
  j["owned_only_outputs"] = sorted_names(spec.owned_only_outputs);
  j["all_reduce_outputs"] = sorted_names(spec.all_reduce_outputs);
  auto kinds = spec.output_kinds;
  std::sort(kinds.begin(), kinds.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  j["output_kinds"] = Json::array();
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0 && kinds[i].first == kinds[i - 1].first) {
      refuse("/output_kinds/" + std::to_string(i) + "/0",
             "output " + quote(kinds[i].first) + " listed twice");
    }
    j["output_kinds"].push_back(
        Json::array({kinds[i].first, std::string(to_string(kinds[i].second))}));
  }
  if (spec.compile_written) j["compile"] = compile_json(spec.compile);
  return j;
}

std::string write_mlip_spec(const MLIPSpec& spec) {
  return dump_python_json(mlip_spec_to_json(spec));
}

}  // namespace distspec
