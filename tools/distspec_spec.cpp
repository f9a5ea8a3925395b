// distspec-spec: validate MLIPSpec v2 files and show what the native runtime does with them,
// print a spec's canonical bytes, a built-in architecture's default spec, or the model file a
// LAMMPS potential file stands for.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fstream>
#include <sstream>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/error.h"
#include "distspec/spec/spec_json.h"
#include "distspec/spec/spec_summary.h"
#include "distspec/strict_json.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"

namespace {

constexpr char kUsage[] =
    "usage: distspec-spec check [--strict] FILE...\n"
    "       distspec-spec format FILE\n"
    "       distspec-spec default ARCHITECTURE\n"
    "       distspec-spec model POTENTIAL_FILE\n"
    "\n"
    "check   validate each MLIPSpec v2 file and summarise it: policy and modes, op adapters\n"
    "        and their transforms, helpers and their native meaning, outputs, shard fields.\n"
    "        A DISTSPEC model file is checked as pair_coeff would load it: its parameters, its\n"
    "        spec (inline or referenced) and the binding of every op to a loaded kernel.\n"
    "        --strict also rejects helpers that have no native meaning.\n"
    "        A LAMMPS potential file (Cu_u3.eam, *.eam.alloy, *.eam.fs) is checked as the model\n"
    "        file it stands for.\n"
    "format  print the canonical bytes of FILE (what nvalchemi's MLIPSpec.save() writes).\n"
    "default print the spec a model file of a built-in ARCHITECTURE (lj, eam, mpnn, ewald) runs\n"
    "        under when it names none: the file to start from for a spec of your own.\n"
    "model   print the model file pair_style distspec reads a LAMMPS potential file as (the file\n"
    "        given to pair_coeff in place of a model file): to edit, e.g. to name a spec.\n"
    "\n"
    "exit status: 0 all valid, 1 a file is invalid or unreadable, 2 bad usage\n";

int usage_error(const char* why) {
  std::fprintf(stderr, "distspec-spec: %s\n%s", why, kUsage);
  return 2;
}

// True when the file is a DISTSPEC model file rather than a bare spec, or a potential file
// that reads as one.
bool is_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const auto j = nlohmann::json::parse(bytes.str(), nullptr, false);
  if (j.is_discarded()) {
    try {
      return distspec::models::model_for_foreign_file(bytes.str(), path).has_value();
    } catch (const distspec::Error&) {
      return true;  // a broken potential file: the model reader says what is wrong with it
    }
  }
  return j.is_object() && j.contains("format") && j["format"] == "distspec-model";
}

int print_default_spec(const std::string& architecture) {
  const auto& names = distspec::models::architecture_names();
  if (std::find(names.begin(), names.end(), architecture) == names.end()) {
    std::fprintf(stderr, "distspec-spec: unknown architecture '%s' (known: lj, eam, mpnn, ewald, torch)\n",
                 architecture.c_str());
    return 1;
  }
  const auto spec = distspec::models::default_spec(architecture);
  if (!spec) {
    std::fprintf(stderr,
                 "distspec-spec: architecture '%s' has no default spec: its model files name the spec "
                 "the exporter wrote\n",
                 architecture.c_str());
    return 1;
  }
  std::fwrite(spec->text.data(), 1, spec->text.size(), stdout);
  return 0;
}

int print_model_file(const std::string& path) {
  try {
    const std::string bytes = distspec::models::read_file_bytes(path);
    const auto model = distspec::models::model_for_foreign_file(bytes, path);
    if (!model) {
      std::fprintf(stderr, "%s: not a LAMMPS potential file that a built-in architecture reads\n", path.c_str());
      return 1;
    }
    const auto& architectures = distspec::models::architecture_table();
    distspec::models::make_model(distspec::models::parse_model_file(bytes, path, "", architectures));  // it must load
    std::printf("%s\n", model->dump(2).c_str());
    return 0;
  } catch (const distspec::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

// Loads a model file the way pair_coeff does (one rank) and returns its spec; prints the model.
distspec::MLIPSpec check_model(const std::string& path) {
  const distspec::models::ModelFile file = distspec::models::read_model_file(path);
  const auto model = distspec::models::make_model(file);
  distspec::models::register_builtin_ops();
  const auto& info = model->info();
  const distspec::Dispatcher bound(file.spec.core, distspec::Device::cpu, info.ops, 1);
  std::string elements;
  for (const auto& e : info.elements) elements += (elements.empty() ? "" : " ") + e;
  std::printf("%s: valid DISTSPEC model (%s, elements %s, cutoff %g %s, %d message-passing layer(s))\n",
              path.c_str(), info.architecture.c_str(), elements.c_str(), info.cutoff, info.units.c_str(),
              info.message_passing_layers);
  std::printf("  spec: %s\n", file.spec_source.c_str());
  return file.spec;
}

// Returns true when the file is valid (and, if strict, every helper has a native meaning).
bool check_one(const std::string& path, bool strict) {
  try {
    const bool model = is_model_file(path);
    const distspec::MLIPSpec spec = model ? check_model(path) : distspec::read_mlip_spec_file(path);
    bool ok = true;
    if (strict) {
      const auto& helpers = spec.core.third_party_helpers;
      for (std::size_t i = 0; i < helpers.size(); ++i) {
        if (distspec::native_action(helpers[i]) != distspec::NativeAction::unknown) continue;
        const distspec::Error e(
            distspec::error_id::value, "/core/third_party_helpers/" + std::to_string(i),
            "helper " + distspec::quote(distspec::helper_target(helpers[i])) +
                " has no native meaning",
            "strict mode rejects helpers the native runtime cannot stand in for", path);
        std::fprintf(stderr, "%s\n", e.what());
        ok = false;
      }
    }
    if (!ok) return false;
    if (!model) std::printf("%s: valid MLIPSpec v%d\n", path.c_str(), distspec::MLIPSpec::version);
    const std::string summary = distspec::summarize_mlip_spec(spec);
    std::size_t start = 0;
    while (start < summary.size()) {  // indent each line under the file name
      const std::size_t end = summary.find('\n', start);
      std::printf("  %s\n", summary.substr(start, end - start).c_str());
      start = end + 1;
    }
    return true;
  } catch (const distspec::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("no command given");
  const std::string& command = args[0];
  if (command == "-h" || command == "--help" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "check") {
    bool strict = false;
    std::vector<std::string> files;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--strict") {
        strict = true;
      } else if (args[i].size() > 1 && args[i][0] == '-') {
        return usage_error(("unknown option " + args[i]).c_str());
      } else {
        files.push_back(args[i]);
      }
    }
    if (files.empty()) return usage_error("check needs at least one FILE");
    bool all_ok = true;
    for (const std::string& f : files) all_ok = check_one(f, strict) && all_ok;
    return all_ok ? 0 : 1;
  }
  if (command == "format") {
    if (args.size() != 2) return usage_error("format takes exactly one FILE");
    try {
      const std::string bytes = distspec::write_mlip_spec(distspec::read_mlip_spec_file(args[1]));
      std::fwrite(bytes.data(), 1, bytes.size(), stdout);
      return 0;
    } catch (const distspec::Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return 1;
    }
  }
  if (command == "default") {
    if (args.size() != 2) return usage_error("default takes exactly one ARCHITECTURE");
    return print_default_spec(args[1]);
  }
  if (command == "model") {
    if (args.size() != 2) return usage_error("model takes exactly one POTENTIAL_FILE");
    return print_model_file(args[1]);
  }
  return usage_error(("unknown command " + command).c_str());
}
