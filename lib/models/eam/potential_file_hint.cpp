#include "models/eam/potential_file_hint.h"

#include <array>
#include <cstdio>
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

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

std::string model_file_lines(const std::string& format, double cutoff, const std::vector<std::string>& elements,
                             const std::string& file_name) {
  char cut[32];
  std::snprintf(cut, sizeof cut, "%.10g", cutoff);
  return "{\n"
         "  \"format\": \"distspec-model\",\n"
         "  \"format_version\": 1,\n"
         "  \"architecture\": \"eam\",\n"
         "  \"units\": \"metal\",\n"
         "  \"cutoff\": " + std::string(cut) + ",\n"
         "  \"elements\": [" + quoted_list(elements) + "],\n"
         "  \"parameters\": {\"file_format\": \"" + format + "\"},\n"
         "  \"parameters_file\": \"" + file_name + "\",\n"
         "  \"spec\": \"specs/eam_halo.json\"\n"
         "}";
}

}  // namespace

std::optional<Error> potential_file_hint(std::string_view bytes, const std::string& path) {
  const auto first = bytes.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || bytes[first] == '{' || bytes[first] == '[') return std::nullopt;
  const std::string name = std::filesystem::path(path).filename().string();
  auto error = [&](const std::string& what, const std::string& format, double cutoff,
                   const std::vector<std::string>& elements) {
    return Error(model_error_id::potential_file, "", "this is a LAMMPS " + what + ", not a DISTSPEC model file",
                 "pair_style distspec reads a model file (JSON) that names the potential file; write one beside it, "
                 "e.g. model.json:\n" + model_file_lines(format, cutoff, elements, name) +
                     "\nwith the spec potentials/specs/eam_halo.json of DISTSPEC copied into specs/ (or the spec "
                     "nvalchemi wrote for the model), and give pair_coeff model.json with the elements of your types",
                 path);
  };
  try {
    const Setfl s = parse_setfl(bytes, path);
    return error("setfl potential file (pair_style eam/alloy; elements " + quoted_list(s.elements) + ")", "setfl",
                 s.cut, s.elements);
  } catch (const Error&) {
  }
  try {
    const Funcfl f = parse_funcfl(bytes, path);
    const bool known = f.atomic_number >= 1 && f.atomic_number <= static_cast<int>(kSymbols.size());
    const std::string element = known ? kSymbols[static_cast<std::size_t>(f.atomic_number - 1)] : "X";
    return error("funcfl potential file (pair_style eam; atomic number " + std::to_string(f.atomic_number) + ")",
                 "funcfl", f.cut, {element});
  } catch (const Error&) {
  }
  return std::nullopt;
}

}  // namespace distspec::models::eam
