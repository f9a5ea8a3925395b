// libFuzzer target for the model-file reader: the model file's own keys, its inline or referenced
// spec, and each architecture's parameters (shapes, ranges, tables) as make_model() reads them.
// Findings: a crash or sanitizer report, any exception other than distspec::Error (it escapes
// and aborts), and an accepted model whose description breaks what the reader promises.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "distspec/error.h"
#include "models/model.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"

namespace {

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_model_file finding: %s\n", what);
  std::abort();
}

// The model file's name anchors relative paths: inside potentials/, seeds that name
// "CuNi.eam.alloy" or "specs/x.json" reach the table and spec readers too.
const std::string& model_path() {
  static const std::string path = std::string(DISTSPEC_POTENTIALS_DIR) + "/fuzz_model.json";
  return path;
}

// What an accepted model must satisfy whatever the bytes were.
void check_accepted(const distspec::models::ModelFile& file, const distspec::models::Model& model) {
  const distspec::models::ModelInfo& info = model.info();
  if (!(std::isfinite(info.cutoff) && info.cutoff > 0.0)) finding("accepted a model whose cutoff is not finite and > 0");
  if (info.elements.empty() || info.elements != file.elements) finding("model elements differ from the file's");
  if (info.message_passing_layers < 1) finding("accepted a model with fewer than one layer");
  if (info.comm_width < 0) finding("negative exchange width");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const distspec::models::ModelFile file =
        distspec::models::parse_model_file(bytes, model_path(), "", distspec::models::architecture_table());
    const auto model = distspec::models::make_model(file, distspec::Device::cpu);
    check_accepted(file, *model);
  } catch (const distspec::Error&) {
    // rejected cleanly: fine
  }
  return 0;
}
