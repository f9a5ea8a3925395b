// What a model file says against what its graph was exported with. The exporter writes the same
// facts twice: into the graph (its `distspec.json` metadata: cutoff, elements, precision, units,
// message_passing_layers, comm_width) and into the model file, which also records the SHA-256
// of the graph file's bytes (parameters.graph_sha256) and of the spec the graph was exported
// with (parameters.spec_sha256, over the spec's canonical JSON: distspec/util/canonical_json.h,
// so a spec file and its copy inline in the model file agree). A model file edited after the
// export (its cutoff from 4.5 to 4.0), or a graph or spec file swapped or edited beside it,
// would run silently with numbers the model was never trained for; each contradiction is an
// error naming the model file's key, both values, and what to do.
//
// A model file without the two digests (written before distspec-export recorded them), or a
// graph without the metadata (a module written by hand), is not refused: the checks it allows
// are made, and a warning says what could not be checked and to export the model again.
//
// This header includes no torch header; torch_model.cpp reads the metadata from the graph.
#pragma once

#include <string>
#include <vector>

namespace distspec::models {
struct ModelFile;
}

namespace distspec::models::torch_kind {

struct GraphFacts {
  std::string path;           // the graph file, as the model file resolves it
  std::string metadata_json;  // its `distspec.json` metadata; empty where the graph carries none
  std::string precision;      // parameters.precision of the model file (its default applied)
  int message_passing_layers = 0;
  int comm_width = 0;
};

// Throws distspec::Error (model.value) at the model file's key for the first contradiction;
// appends to `warnings` what could not be checked.
void check_graph_provenance(const ModelFile& file, const GraphFacts& graph, std::vector<std::string>& warnings);

}  // namespace distspec::models::torch_kind
