#include "models/eam/potential_file.h"

#include <array>
#include <filesystem>

#include "distspec/error.h"
#include "models/eam/eam_tables.h"
#include "models/model_error.h"

namespace distspec::models::eam {
namespace {

// Element symbols by atomic number (1-based), for funcfl files, which give only the number.
constexpr std::array<const char*, 118> kSymbols = {
    "H",  "He", "Li", "Be", "B",  "C",  "N",  "O",  "F",  "Ne", "Na", "Mg", "Al", "Si", "P",  "S",  "Cl", "Ar",
    "K",  "Ca", "Sc", "Ti", "V",  "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As", "Se", "Br", "Kr",
    "Rb", "Sr", "Y",  "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In", "Sn", "Sb", "Te", "I",  "Xe",
    "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb", "Dy", "Ho", "Er", "Tm", "Yb", "Lu", "Hf",
    "Ta", "W",  "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl", "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac", "Th",
    "Pa", "U",  "Np", "Pu", "Am", "Cm", "Bk", "Cf", "Es", "Fm", "Md", "No", "Lr", "Rf", "Db", "Sg", "Bh", "Hs",
    "Mt", "Ds", "Rg", "Cn", "Nh", "Fl", "Mc", "Lv", "Ts", "Og"};

// The LAMMPS pair style that reads a file of this format.
const char* style_for(const std::string& format) {
  return format == "funcfl" ? "eam" : format == "fs" ? "eam/fs" : "eam/alloy";
}

// What a file of one format says about the model it stands for.
struct Read {
  const char* format;  // the model file's parameters.file_format
  const char* style;   // the LAMMPS pair style that reads it
  std::vector<std::string> elements;
  double cutoff;
  bool trailing_values;
};

Read read_as(const std::string& format, std::string_view bytes, const std::string& path) {
  if (format == "funcfl") {
    const Funcfl f = parse_funcfl(bytes, path);
    if (f.atomic_number < 1 || f.atomic_number > static_cast<int>(kSymbols.size()))
      throw Error(model_error_id::potential_file, "",
                  "funcfl file of atomic number " + std::to_string(f.atomic_number) + ", which is no element",
                  "write a model file that names the element (doc/pair_distspec.rst, EAM)", path);
    return {"funcfl", style_for(format), {kSymbols[static_cast<std::size_t>(f.atomic_number - 1)]}, f.cut, f.trailing_values};
  }
  const bool fs = format == "fs";
  const Setfl s = fs ? parse_fs(bytes, path) : parse_setfl(bytes, path);
  return {fs ? "fs" : "setfl", style_for(format), s.elements, s.cut, s.trailing_values};
}

bool ends_with(const std::string& name, std::string_view suffix) {
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The formats a file of this name is tried as, in order; `strict`: the first is the name's.
std::vector<std::string> formats_for(const std::string& name, bool& strict) {
  strict = true;
  if (ends_with(name, ".eam.fs")) return {"fs"};
  if (ends_with(name, ".eam.alloy")) return {"setfl"};
  if (ends_with(name, ".eam")) return {"funcfl", "setfl"};
  strict = false;
  // A one-element eam/fs file is a setfl file; with more, the leftover values tell them apart.
  return {"setfl", "fs", "funcfl"};
}

}  // namespace

std::optional<Json> model_for_potential_file(std::string_view bytes, const std::string& path) {
  const auto first = bytes.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || bytes[first] == '{' || bytes[first] == '[') return std::nullopt;
  const std::string name = std::filesystem::path(path).filename().string();
  bool strict = false;
  const std::vector<std::string> formats = formats_for(name, strict);
  std::optional<Read> read;
  std::optional<Error> first_error;
  for (const std::string& format : formats) {
    try {
      Read r = read_as(format, bytes, path);
      // A file read as another format can leave values over (eam/fs as setfl): not that one.
      if (strict || !r.trailing_values) {
        read = std::move(r);
        break;
      }
    } catch (const Error& e) {
      if (e.id() == model_error_id::potential_file) throw;
      if (!first_error) first_error = e;
    }
  }
  if (!read) {
    // The error of the format the name gives, with what the name says.
    if (strict)
      throw Error(first_error->id(), "", first_error->message(),
                  "a file named *" + name.substr(name.find(".eam")) + " is read as pair_style " +
                      style_for(formats.front()) + " reads it; rename the file after its format (*.eam funcfl, "
                      "*.eam.alloy setfl, *.eam.fs Finnis-Sinclair), or write a model file that names the format",
                  path);
    return std::nullopt;
  }
  Json model = {{"format", "distspec-model"},
                {"format_version", 1},
                {"architecture", "eam"},
                {"description", "the LAMMPS potential file " + name + ", read as pair_style " + read->style + " reads it"},
                {"units", "metal"},
                {"cutoff", read->cutoff},
                {"elements", read->elements},
                {"parameters", {{"file_format", read->format}}},
                {"parameters_file", name}};
  return model;
}

}  // namespace distspec::models::eam
