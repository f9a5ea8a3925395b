// What a file given where a model file belongs is, when it is not JSON: a PyTorch archive (a
// graph distspec-export wrote, TorchScript, an AOTInductor package, a model or checkpoint as
// mace-torch, sevenn or nequip saves it, a nequip package), another binary file. Told apart by
// the records of the zip archive PyTorch writes and the names its pickle holds, never by
// running anything, so the error can say what the file looks like and which file to give
// instead (the NAME.json distspec-export writes beside a graph, or how to export one).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace distspec::models {

struct NotModelFile {
  std::string looks_like;  // "a MACE model saved by mace-torch (...)"
  std::string hint;        // which file to give instead, or how to make it
};

// nullopt for text (a model file with a JSON error is still reported as one).
std::optional<NotModelFile> recognise_not_model_file(std::string_view bytes, const std::string& path);

// The hint for any text that is no JSON, where JSON was wanted.
std::string model_file_is_json_hint();

}  // namespace distspec::models
