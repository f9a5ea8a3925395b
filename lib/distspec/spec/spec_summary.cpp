#include "distspec/spec/spec_summary.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace distspec {
namespace {

// Names come from a file: show control and non-ASCII bytes as \xNN so they cannot garble the
// terminal.
std::string printable(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F) {
      out += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string or_dash(const std::optional<std::string>& s) { return s ? printable(*s) : "-"; }

std::string transform_name(ArgTransform t) { return std::string(to_string(t)); }
std::string transform_name(const OutputTransformEntry& t) {
  return std::string(to_string(t.type)) + (t.replicated_consumer ? "(replicated_consumer)" : "");
}

template <class Map>
std::string positions(const char* label, const Map& transforms) {
  if (transforms.empty()) return {};
  std::string text = std::string("  ") + label;
  for (const auto& [position, t] : transforms) {
    text += " " + std::to_string(position) + ":" + transform_name(t);
  }
  return text;
}

std::string helper_line(const HelperRecord& h) {
  std::string line = "    " + std::string(helper_kind(h)) + " " + printable(helper_target(h));
  if (const auto* f = std::get_if<ModuleForwardHelper>(&h))
    line += " [" + printable(f->label) + "]";
  if (const auto* m = std::get_if<MethodHelper>(&h)) line += " [" + printable(m->mode) + "]";
  if (const auto* j = std::get_if<JitHelper>(&h)) line += " [" + printable(j->mode) + "]";
  return line + "\n      -> " + std::string(to_string(native_action(h))) + "\n";
}

}  // namespace

std::string summarize_mlip_spec(const MLIPSpec& spec) {
  const DistributionSpec& core = spec.core;
  std::string out = "policy         " + printable(core.policy.kind);
  if (core.policy.is_halo_kind()) {
    out += " (scatter_mode " + or_dash(core.policy.scatter_mode) + ", gather_mode " +
           or_dash(core.policy.gather_mode) + ")";
  }
  out += "\ncustom_ops     " + std::to_string(core.custom_ops.size()) + "\n";
  for (const OpAdapter& op : core.custom_ops) {
    out += "    " + printable(op.op);
    out += op.pass_through()
               ? "  pass-through"
               : positions("args", op.arg_transforms) + positions("outputs", op.output_transforms);
    out += "\n";
  }
  out += "helpers        " + std::to_string(core.third_party_helpers.size()) + "\n";
  for (const HelperRecord& h : core.third_party_helpers) out += helper_line(h);

  // Every output the spec names, classified or not.
  std::set<std::string> names(spec.owned_only_outputs.begin(), spec.owned_only_outputs.end());
  names.insert(spec.all_reduce_outputs.begin(), spec.all_reduce_outputs.end());
  for (const auto& entry : spec.output_kinds) names.insert(entry.first);
  out += "outputs        " + std::to_string(names.size()) + "\n";
  std::size_t width = 0;
  for (const std::string& n : names) width = std::max(width, printable(n).size());
  for (const std::string& n : names) {
    const std::string shown = printable(n);
    const std::optional<OutputKind> kind = spec.output_kind(n);
    out += "    " + shown + std::string(width - shown.size() + 2, ' ') +
           (kind ? std::string(to_string(*kind)) : "(no kind)");
    if (spec.is_owned_only(n)) out += "  owned_only";
    if (spec.is_all_reduce(n)) out += "  all_reduce";
    out += "\n";
  }

  out += "shard_fields   ";
  if (core.shard_fields.empty()) out += "none (promote nothing)";
  for (std::size_t i = 0; i < core.shard_fields.size(); ++i) {
    out += (i ? ", " : "") + printable(core.shard_fields[i]);
  }
  if (core.shard_fields == default_shard_fields()) out += " (default)";
  out += "\nnode keys      energy " + or_dash(spec.node_energy_key) + ", virial " +
         or_dash(spec.node_virial_key) + "\n";
  out += std::string("flags          system_reductions ") +
         (spec.system_reductions ? "true" : "false") + ", gp_replicate_geometry " +
         (spec.gp_replicate_geometry ? "true" : "false") + "\n";
  out += "compile        ";
  if (!spec.compile) {
    out += spec.compile_written ? "null (the model computes its own forces)\n"
                                : "not written (the model computes its own forces)\n";
  } else {
    out += "force_strategy " + std::string(to_string(spec.compile->force_strategy)) +
           ", static_shapes " + (spec.compile->static_shapes ? "true" : "false") +
           ", stress_via_strain " + (spec.compile->stress_via_strain ? "true" : "false") + "\n";
  }
  return out;
}

}  // namespace distspec
