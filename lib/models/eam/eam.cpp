#include "models/eam/eam.h"

#include <algorithm>
#include <cmath>

#include "distspec/error.h"
#include "distspec/strict_json.h"
#include "models/edge_kernel.h"
#include "models/model_file.h"

namespace distspec::models::eam {
namespace {

struct FileRef {
  std::string path;
  std::string pointer;  // where the model file names it
};

// The funcfl file of each element, in elements order: "files" for several, "parameters_file"
// for one.
std::vector<FileRef> funcfl_files(const ModelFile& file, const Json* files) {
  if (!files) {
    if (file.parameters_file.empty())
      throw Error(model_error_id::missing_key, "/parameters_file", "a funcfl model needs 'parameters_file'",
                  "name the LAMMPS *.eam file, or give parameters.files for several elements");
    if (file.elements.size() != 1)
      fail_value("/elements", "a funcfl file holds one element, the model has " + std::to_string(file.elements.size()),
                 "give one file per element in parameters.files, e.g. {\"Cu\": \"Cu_u3.eam\"}");
    return {{file.parameters_file, "/parameters_file"}};
  }
  if (!file.parameters_file.empty())
    fail_value("/parameters_file", "give either parameters_file or parameters.files, not both");
  if (!files->is_object())
    throw Error(model_error_id::type, "/parameters/files",
                "expected an object {element: file}, found " + json_type_phrase(*files));
  for (const auto& [element, path] : files->items())
    if (std::find(file.elements.begin(), file.elements.end(), element) == file.elements.end())
      fail_value("/parameters/files/" + json_pointer_token(element),
                 "element '" + element + "' is not one of the model's elements", "the model's elements: " + join_names(file.elements));
  std::vector<FileRef> refs;
  for (const std::string& element : file.elements) {
    const std::string pointer = "/parameters/files/" + json_pointer_token(element);
    const Json* path = find_member(*files, element.c_str());
    if (!path)
      throw Error(model_error_id::missing_key, pointer, "no funcfl file for element '" + element + "'",
                  "parameters.files needs one file per element");
    refs.push_back({file.resolve(expect_string(*path, pointer)), pointer});
  }
  return refs;
}

// The potential file's text and its "UNITS:", which must match the model's.
template <class Parsed>
Parsed read_potential(const ModelFile& file, const FileRef& ref, Parsed (*parse)(std::string_view, const std::string&)) {
  Parsed parsed = parse(read_file_bytes(ref.path, ref.pointer), ref.path);
  if (!parsed.units.empty() && parsed.units != file.units)
    fail_value("/units", "the potential file '" + ref.path + "' is in " + parsed.units + " units, the model file says " +
                             file.units);
  return parsed;
}

class EAMModel final : public Model {
 public:
  EAMModel(ModelInfo info, Tables tables) : info_(std::move(info)), tables_(std::move(tables)) {}

  const ModelInfo& info() const override { return info_; }

  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request,
               ModelOutputs& out) override {
    const std::size_t n = graph.n_rows(), n_owned = graph.n_owned;
    out.reset(n, request);
    const bool energy = request.energy || request.energy_rows;
    std::vector<double>& energy_rows = request.energy_rows ? out.energy_rows : scratch_energy_;
    energy_rows.assign(n, 0.0);
    rho_.assign(n, 0.0);
    fp_.assign(n, 0.0);
    std::vector<TensorRef> args = edge_args(graph);
    const EdgeOpState<Tables> state{&tables_, edge_call(graph, index_checks_, request, &thread_rows_)};

    // rho_i: density at each owned atom. A full or half_newton_off list gives owned rows every
    // pair they are in, so rho is complete there; only half_newton_on leaves parts on halo rows,
    // which the policy folds onto their owners.
    dispatch.call(kDensityOp, args, {TensorRef::of(rho_.data(), n)}, state);
    if (graph.edge_list == EdgeList::half_newton_on) dispatch.after_scatter(Rows<double>{rho_.data(), n, 1});
    // F(rho_i) and F'(rho_i) of owned atoms.
    dispatch.call(kEmbeddingOp, {TensorRef::of(rho_.data(), n_owned), TensorRef::of(graph.species, n_owned)},
                  {TensorRef::of(fp_.data(), n_owned), TensorRef::of(energy_rows.data(), n_owned)}, tables_);
    // F' of halo rows from their owners, then pair forces.
    dispatch.before_gather(Rows<double>{fp_.data(), n, 1});
    args.push_back(TensorRef::of(fp_.data(), n));
    const bool virial = request.virial || request.virial_rows;
    std::vector<TensorRef> outs = pair_output_refs(out, energy_rows, virial);
    if (!energy) outs[0] = TensorRef::of(energy_rows.data(), 0);  // no pair energy this step
    dispatch.call(kForcesOp, args, outs, state);
    out.energy = energy ? pair_energy(energy_rows, graph) : 0.0;
  }

 private:
  ModelInfo info_;
  Tables tables_;
  // Per-step buffers, kept so they reallocate only when the row count grows.
  std::vector<double> rho_, fp_, scratch_energy_;
  IndexCheckSchedule index_checks_;
  ThreadRows<double> thread_rows_;
};

}  // namespace

Tables load_tables(const ModelFile& file) {
  try {
    const Json& params = expect_object(file.parameters, "/parameters", {"file_format", "files"});
    const std::string format =
        expect_choice(require_member(params, "file_format", "/parameters"), "/parameters/file_format", {"funcfl", "setfl", "fs"});
    // pair_eam.cpp's funcfl constants (27.2 eV/Hartree, 0.529 Angstrom/Bohr) fix the units.
    if (file.units != "metal")
      fail_value("/units", "EAM potentials are in metal units, the model file says " + file.units,
                 "set \"units\": \"metal\"");
    const Json* files = find_member(params, "files");
    Tables tables;
    if (format == "funcfl") {
      std::vector<Funcfl> funcfl;
      for (const FileRef& ref : funcfl_files(file, files)) funcfl.push_back(read_potential(file, ref, parse_funcfl));
      tables = tables_from_funcfl(funcfl);
    } else {
      const bool fs = format == "fs";
      if (files)
        fail_value("/parameters/files", std::string("a ") + format + " file holds every element", "name it in parameters_file");
      if (file.parameters_file.empty())
        throw Error(model_error_id::missing_key, "/parameters_file", std::string("a ") + format + " model needs 'parameters_file'",
                    fs ? "name the LAMMPS *.eam.fs file" : "name the LAMMPS *.eam.alloy file");
      const FileRef ref{file.parameters_file, "/parameters_file"};
      tables = tables_from_setfl(read_potential(file, ref, fs ? parse_fs : parse_setfl), file.elements, ref.path);
    }
    // The model cutoff sizes the neighbour list; LAMMPS uses the file's (init_one).
    if (std::abs(file.cutoff - tables.cutoff) > 1e-9 * tables.cutoff)
      fail_value("/cutoff", "the model cutoff " + Json(file.cutoff).dump() + " differs from the potential file's " +
                                Json(tables.cutoff).dump(),
                 "set \"cutoff\" to the file's cutoff");
    return tables;
  } catch (const Error& e) {
    // Errors in a potential file already name it; the rest point into the model file.
    if (e.file().empty()) throw e.with_file(file.path);
    throw;
  }
}

std::unique_ptr<Model> make_model(const ModelFile& file, Device device) {
  ModelInfo info = info_from(file);
  info.comm_width = 1;  // rho and F' cross ranks, one value per atom each
  info.halo_feature_reads = 1;  // F' of neighbours
  info.ops = {kDensityOp, kEmbeddingOp, kForcesOp};
  Tables tables = load_tables(file);
  info.element_masses = tables.masses;
  if (device == Device::cuda) {
    if constexpr (kCudaBuild) return make_cuda_model(std::move(info), std::move(tables));
    throw_no_cuda("eam");
  }
  // The CPU kernels take half lists. newton off's, where every rank sees all pairs of its owned
  // atoms: rho is then complete on owned rows, and a step needs one exchange (F'), against
  // pair_eam's reverse of rho and forward of F' under newton on. The forces, as pair_eam's
  // under newton on, over the pairs newton on's list holds (each pair once over all ranks).
  info.half_list = EdgeList::half_newton_off;
  info.newton_on_forces = true;
  return std::make_unique<EAMModel>(std::move(info), std::move(tables));
}

}  // namespace distspec::models::eam
