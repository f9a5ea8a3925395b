#include "models/not_model_file.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "distspec/error.h"
#include "distspec/util/zip_records.h"

namespace distspec::models {
namespace {

constexpr char kExportHowTo[] =
    "pair_coeff takes a DISTSPEC model file (JSON), which tools/distspec-export writes beside the graph it exports: "
    "--from mace FILE, --from sevennet FILE, --from nequip FILE, or --module for a module of your own, then "
    "`pair_coeff * * DIR/NAME.json ELEMENTS` (doc/torch_models.md)";

// "distspec-export --from KIND FILE ..." for a model its package saved.
std::string export_from(const std::string& kind, const std::string& path, const std::string& extra = "") {
  return "export it first: `distspec-export --from " + kind + " " + path + extra +
         " --out DIR --name NAME`, then give pair_coeff DIR/NAME.json, the model file it writes (doc/torch_models.md)";
}

// The model file distspec-export wrote beside a graph file: the same stem, .json.
std::string model_file_beside(const std::string& graph) {
  return std::filesystem::path(graph).replace_extension(".json").string();
}

class Archive {
 public:
  explicit Archive(std::vector<ZipRecord> records) : records_(std::move(records)) {}

  // A record `name` at the top of the archive's folder ("<archive>/name"), or anywhere below it
  // for a name that ends in '/'.
  const ZipRecord* find(const std::string& name) const {
    for (const ZipRecord& r : records_) {
      const std::size_t slash = r.name.find('/');
      const std::string inner = slash == std::string::npos ? r.name : r.name.substr(slash + 1);
      if (name.back() == '/' ? inner.rfind(name, 0) == 0 : inner == name) return &r;
    }
    return nullptr;
  }
  bool has(const std::string& name) const { return find(name) != nullptr; }

  bool any_name_contains(std::string_view part) const {
    return std::any_of(records_.begin(), records_.end(),
                       [&](const ZipRecord& r) { return r.name.find(part) != std::string::npos; });
  }

  // Whether a stored record whose name ends in `suffix` holds `text`.
  bool holds(std::string_view suffix, std::string_view text) const {
    return std::any_of(records_.begin(), records_.end(), [&](const ZipRecord& r) {
      return r.name.size() >= suffix.size() && r.name.compare(r.name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
             r.data.find(text) != std::string_view::npos;
    });
  }

  std::string first_names(std::size_t n) const {
    std::string out;
    for (std::size_t k = 0; k < records_.size() && k < n; ++k) out += (k ? ", " : "") + quote(records_[k].name);
    return records_.size() > n ? out + ", ..." : out;
  }

 private:
  std::vector<ZipRecord> records_;
};

// A torch.save archive: what its pickle names (the module of a pickled class, a dict's keys:
// both are plain text in protocol 2, which torch.save writes).
NotModelFile torch_save(const Archive& a, const std::string& path) {
  const ZipRecord* pickle = a.find("data.pkl");
  const std::string_view p = pickle ? pickle->data : std::string_view();
  auto names = [&](std::string_view text) { return p.find(text) != std::string_view::npos; };
  if (names("mace.modules"))
    return {"a MACE model saved by mace-torch (a torch.save zip archive whose data.pkl names mace.modules classes)",
            export_from("mace", path)};
  if (names("pytorch-lightning_version")) {
    if (names("nequip"))
      return {"a nequip training checkpoint (a PyTorch Lightning *.ckpt naming nequip)", export_from("nequip", path)};
    return {"a PyTorch Lightning checkpoint (*.ckpt)", kExportHowTo};
  }
  if (names("model_state_dict") && names("config"))
    return {"a SevenNet checkpoint (a torch.save zip archive of a dict with 'config' and 'model_state_dict', as "
            "sevenn writes checkpoint_best.pth)",
            export_from("sevennet", path, " --precision fp32")};
  if (names("aimnet"))
    return {"an AIMNet2 model saved with torch.save (its data.pkl names aimnet classes)",
            "build it in a factory of your own and export that: `distspec-export --module FILE.py:FACTORY --kind "
            "aimnet ... --out DIR --name NAME`, then give pair_coeff DIR/NAME.json (doc/torch_models.md)"};
  return {"a file torch.save wrote (a zip archive with data.pkl: a model or its weights)", kExportHowTo};
}

std::optional<NotModelFile> pytorch_archive(const Archive& a, const std::string& path) {
  const std::string ours = "give pair_coeff the model file distspec-export wrote beside it, " + model_file_beside(path) +
                           " (it names this graph, its spec, cutoff and elements; `--name NAME` writes NAME.json "
                           "and the graph together)";
  if (a.any_name_contains("data/aotinductor/")) {
    if (a.holds("_metadata.json", "distspec.json"))
      return NotModelFile{"an AOTInductor package (.pt2) distspec-export wrote: the graph of an exported model",
                          ours};
    return NotModelFile{"an AOTInductor package (.pt2, data/aotinductor/ inside) that distspec-export did not write",
                        kExportHowTo};
  }
  if (a.has("constants.pkl") && a.has("code/")) {
    if (a.has("extra/distspec.json"))
      return NotModelFile{"a TorchScript module (.pt) distspec-export wrote: the graph of an exported model",
                          ours};
    if (a.has("extra/chemical_symbols_to_index"))
      return NotModelFile{"a TorchScript module SevenNet deployed (sevenn_get_model's deployed_serial.pt)",
                          "write its model file: `distspec-export --deployed " + path +
                              " --elements ... --cutoff ... --units metal --out DIR --name NAME`, then give pair_coeff "
                              "DIR/NAME.json (doc/torch_models.md)"};
    return NotModelFile{"a TorchScript module (a zip archive with code/ and constants.pkl)", kExportHowTo};
  }
  if (a.has(".data/extern_modules")) {
    if (a.has("nequip/"))  // nequip's own code, packaged with the model
      return NotModelFile{"a nequip package (nequip-package's *.nequip.zip, a torch.package archive)",
                          export_from("nequip", path)};
    return NotModelFile{"a torch.package archive (.data/extern_modules inside)", kExportHowTo};
  }
  if (a.has("data.pkl")) return torch_save(a, path);
  return std::nullopt;
}

bool starts(std::string_view bytes, std::string_view magic) { return bytes.substr(0, magic.size()) == magic; }

}  // namespace

std::string model_file_is_json_hint() {
  return std::string("a model file is a JSON object (doc/pair_distspec.rst); for an exported PyTorch model, ") +
         kExportHowTo;
}

std::optional<NotModelFile> recognise_not_model_file(std::string_view bytes, const std::string& path) {
  if (looks_like_zip(bytes)) {
    const auto records = zip_records(bytes);
    if (!records) return NotModelFile{"a zip archive cut short (no central directory)", kExportHowTo};
    const Archive archive(*records);
    if (auto torch = pytorch_archive(archive, path)) return torch;
    return NotModelFile{"a zip archive (" + archive.first_names(4) + "), not one PyTorch writes", kExportHowTo};
  }
  // Pickle protocols 2 to 5 open with PROTO n: torch.save's legacy format, or pickle.dump.
  if (bytes.size() >= 2 && bytes[0] == '\x80' && bytes[1] >= 2 && bytes[1] <= 5)
    return NotModelFile{"a Python pickle (torch.save's legacy format, or pickle.dump)", kExportHowTo};
  if (starts(bytes, "\x89HDF\r\n\x1a\n")) return NotModelFile{"an HDF5 file", kExportHowTo};
  if (starts(bytes, "\x1f\x8b")) return NotModelFile{"a gzip-compressed file", "uncompress it; " + std::string(kExportHowTo)};
  if (starts(bytes, "\x7f" "ELF")) return NotModelFile{"a shared library or executable (ELF)", kExportHowTo};
  // Text has no NUL byte; a binary file of another kind almost always has one early.
  if (bytes.substr(0, 4096).find('\0') != std::string_view::npos)
    return NotModelFile{"a binary file (it starts " + quote(bytes.substr(0, 8)) + ")", kExportHowTo};
  return std::nullopt;
}

}  // namespace distspec::models
