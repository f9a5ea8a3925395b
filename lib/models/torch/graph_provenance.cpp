#include "models/torch/graph_provenance.h"

#include <algorithm>
#include <cmath>

#include "distspec/error.h"
#include "distspec/util/sha256.h"
#include "models/json_fields.h"
#include "models/model_file.h"

namespace distspec::models::torch_kind {
namespace {

constexpr char kWrittenTogether[] =
    "tools/distspec-export writes the graph, its spec and the model file together; a model file must say what its "
    "graph was exported with";

std::string shown(const Json& value) { return value.dump(); }

// One contradiction between the model file's `pointer` and the graph's metadata.
[[noreturn]] void contradicts(const std::string& pointer, const Json& in_file, const Json& in_graph,
                              const std::string& graph) {
  const std::string key = pointer.substr(pointer.rfind('/') + 1);
  throw Error(model_error_id::value, pointer,
              "the model file says " + key + " " + shown(in_file) + ", but its graph " + graph +
                  " was exported with " + key + " " + shown(in_graph),
              std::string(kWrittenTogether) + ": restore \"" + key + "\": " + shown(in_graph) +
                  ", or export the model again with the " + key + " wanted");
}

bool is_sha256(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The digest a model file records at `pointer`, or empty where it records none.
std::string recorded(const ModelFile& file, const char* key) {
  const Json* value = file.parameters.is_object() ? find_member(file.parameters, key) : nullptr;
  if (!value) return {};
  const std::string pointer = std::string("/parameters/") + key;
  const std::string digest = expect_string(*value, pointer);
  if (!is_sha256(digest))
    fail_value(pointer, "expected a SHA-256 digest, 64 lowercase hex digits, found '" + digest + "'",
               std::string(kWrittenTogether) + ": export the model again");
  return digest;
}

void check_digests(const ModelFile& file, const GraphFacts& graph, std::vector<std::string>& warnings) {
  const std::string graph_digest = recorded(file, "graph_sha256");
  const std::string spec_digest = recorded(file, "spec_sha256");
  if (!graph_digest.empty()) {
    const std::string actual = sha256_file_hex(graph.path);
    if (actual != graph_digest)
      throw Error(model_error_id::value, "/parameters/graph_sha256",
                  "graph " + graph.path + " has SHA-256 " + actual + ", the model file records " + graph_digest +
                      ": it is not the graph this model file was exported with",
                  "restore the graph file distspec-export wrote with this model file, or export the model again (" +
                      std::string(kWrittenTogether) + ")");
  }
  // A spec given on the pair_style line (`spec FILE`) replaces the model's on purpose.
  if (!spec_digest.empty() && !file.spec_sha256.empty() && file.spec_sha256 != spec_digest)
    throw Error(model_error_id::value, "/parameters/spec_sha256",
                "the spec " + file.spec_source + " has SHA-256 " + file.spec_sha256 +
                    " (of its canonical JSON), the model file records " + spec_digest +
                    ": it is not the spec the graph was exported with",
                "restore the spec file distspec-export wrote (NAME.spec.json), or export the model again with the "
                "spec wanted (--spec FILE)");
  std::vector<std::string> missing;
  if (graph_digest.empty()) missing.push_back("graph_sha256");
  if (spec_digest.empty()) missing.push_back("spec_sha256");
  if (!missing.empty())
    warnings.push_back("model file " + file.path + " records no parameters." + join_names(missing) +
                       " (a distspec-export before they were written): whether its graph and spec are those it was "
                       "exported with is not checked; export the model again to have them checked");
}

void check_metadata(const ModelFile& file, const GraphFacts& graph, std::vector<std::string>& warnings) {
  if (graph.metadata_json.empty()) {
    warnings.push_back("graph " + graph.path +
                       " carries no distspec.json metadata (distspec-export did not write it): the model file's "
                       "cutoff, elements, units, precision, message_passing_layers and comm_width are not checked "
                       "against it");
    return;
  }
  const Json meta = Json::parse(graph.metadata_json, nullptr, false);
  if (!meta.is_object())
    throw Error(model_error_id::value, "/parameters/graph",
                "graph " + graph.path + " carries distspec.json metadata that is not a JSON object",
                "export the model again with tools/distspec-export");
  if (const Json* cutoff = find_member(meta, "cutoff"); cutoff && cutoff->is_number()) {
    const double c = cutoff->get<double>();
    if (std::abs(c - file.cutoff) > 1e-12 * std::max(1.0, std::abs(c))) contradicts("/cutoff", file.cutoff, c, graph.path);
  }
  if (const Json* elements = find_member(meta, "elements"); elements && elements->is_array() && *elements != Json(file.elements))
    contradicts("/elements", Json(file.elements), *elements, graph.path);
  if (const Json* units = find_member(meta, "units"); units && units->is_string() && *units != file.units)
    contradicts("/units", file.units, *units, graph.path);
  if (const Json* precision = find_member(meta, "precision"); precision && precision->is_string() && *precision != graph.precision)
    contradicts("/parameters/precision", graph.precision, *precision, graph.path);
  if (const Json* layers = find_member(meta, "message_passing_layers");
      layers && layers->is_number_integer() && *layers != graph.message_passing_layers)
    contradicts("/parameters/message_passing_layers", graph.message_passing_layers, *layers, graph.path);
  if (const Json* width = find_member(meta, "comm_width"); width && width->is_number_integer() && *width != graph.comm_width)
    contradicts("/parameters/comm_width", graph.comm_width, *width, graph.path);
}

}  // namespace

void check_graph_provenance(const ModelFile& file, const GraphFacts& graph, std::vector<std::string>& warnings) {
  check_digests(file, graph, warnings);
  check_metadata(file, graph, warnings);
}

}  // namespace distspec::models::torch_kind
