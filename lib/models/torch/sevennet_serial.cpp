#include "models/torch/sevennet_serial.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>

#include "distspec/error.h"
#include "models/json_fields.h"
#include "models/model_error.h"
#include "models/model_file.h"
#include "models/torch/torch_runtime.h"

namespace distspec::models::torch_kind {
namespace {

constexpr char kDeployHint[] =
    "give the module `sevenn_get_model` writes (deployed_serial.pt, without -p), or export the checkpoint for many "
    "ranks with tools/distspec-export --module distspec_export.sevennet:checkpoint";

class SevenNetSerial final : public Model {
 public:
  // TorchScript runs where its module is loaded: on the GPU with 'device cuda', the edges and
  // types built here and copied over, the edge gradients copied back and summed in fp64.
  SevenNetSerial(const ModelFile& file, Device device)
      : model_path_(file.path), device_(torch_device(device)) {
    const Json& params = expect_object(file.parameters, "/parameters", {"graph", "contract"});
    const std::string name = expect_string(require_member(params, "graph", "/parameters"), "/parameters/graph");
    graph_path_ = file.resolve(name);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(graph_path_, ec))
      throw Error(model_error_id::io, "/parameters/graph", "graph file " + graph_path_ + " does not exist or is not a file",
                  "the path is relative to the model file's folder");
    torch::jit::ExtraFilesMap extra{{"chemical_symbols_to_index", ""}, {"cutoff", ""}, {"dtype", ""}, {"model_type", ""}};
    try {
      module_ = torch::jit::load(graph_path_, device_, extra);
    } catch (const std::exception& e) {
      throw Error(model_error_id::io, "/parameters/graph",
                  "graph " + graph_path_ + " cannot be loaded as TorchScript: " + first_line(e.what()), kDeployHint);
    }
    module_->eval();
    if (extra["chemical_symbols_to_index"].empty() || extra["cutoff"].empty())
      throw Error(model_error_id::value, "/parameters/graph",
                  "graph " + graph_path_ + " carries no chemical_symbols_to_index or cutoff: it is not a module "
                  "SevenNet deployed",
                  kDeployHint);
    info_ = info_from(file);
    info_.needs_owner_rows = true;
    check_cutoff(std::stod(extra["cutoff"]));
    map_elements(extra["chemical_symbols_to_index"]);
    dtype_ = extra["dtype"] == "double" ? at::kDouble : at::kFloat;
    probe();
  }

  const ModelInfo& info() const override { return info_; }

  // No halo exchange: the dispatcher of a serial model's spec (local policy) has nothing to do.
  void compute(const AtomGraph& graph, Dispatcher&, const OutputRequest& request, ModelOutputs& out) override {
    evaluate(graph, request, out);
  }

 private:
  void evaluate(const AtomGraph& graph, const OutputRequest& request, ModelOutputs& out) {
    if (graph.n_rows() > 0 && (!graph.positions || !graph.species || !graph.owner_rows))
      throw Error(model_error_id::value, "", "SevenNet's serial module needs positions, species and owner rows",
                  "run it through pair_style distspec on one rank", model_path_);
    out.reset(graph.n_rows(), request);
    // Nodes: the owned atoms of this model (NULL types of a hybrid style are left out).
    std::vector<int64_t> node_of_row(graph.n_owned, -1), row_of_node, types;
    for (std::size_t i = 0; i < graph.n_owned; ++i)
      if (graph.species[i] >= 0) {
        node_of_row[i] = static_cast<int64_t>(row_of_node.size());
        row_of_node.push_back(static_cast<int64_t>(i));
        types.push_back(type_index_[graph.species[i]]);
      }
    const auto n = static_cast<int64_t>(row_of_node.size());
    if (n == 0) return;

    std::vector<int64_t> centre, neighbour;
    std::vector<float> vec;
    const double cut2 = info_.cutoff * info_.cutoff;
    for (std::size_t r = 0; r < graph.n_receivers; ++r) {
      const int i = graph.receivers[r];
      if (node_of_row[i] < 0) continue;
      const double* xi = graph.positions + 3 * static_cast<std::size_t>(i);
      for (int k = graph.offsets[r]; k < graph.offsets[r + 1]; ++k) {
        const int j = graph.senders[k];
        if (graph.species[j] < 0) continue;
        const int owner = graph.owner_rows[j];
        if (owner < 0)
          throw Error(model_error_id::value, "", "a neighbour of an owned atom is owned by another rank",
                      "SevenNet's serial module runs on one rank", model_path_);
        const double* xj = graph.positions + 3 * static_cast<std::size_t>(j);
        const double d[3] = {xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]};
        if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= cut2) continue;
        centre.push_back(node_of_row[i]);
        neighbour.push_back(node_of_row[owner]);
        vec.insert(vec.end(), {static_cast<float>(d[0]), static_cast<float>(d[1]), static_cast<float>(d[2])});
      }
    }
    const auto e = static_cast<int64_t>(centre.size());
    const auto i64 = at::dtype(at::kLong);
    at::Tensor edge_index = at::empty({2, e}, i64);
    std::copy(centre.begin(), centre.end(), edge_index.data_ptr<int64_t>());
    std::copy(neighbour.begin(), neighbour.end(), edge_index.data_ptr<int64_t>() + e);
    at::Tensor edge_vec = at::from_blob(vec.data(), {e, 3}, at::dtype(at::kFloat)).to(device_, dtype_, false, true);
    edge_vec.requires_grad_(true);
    const at::Tensor count = at::full({1}, n, i64).to(device_);

    // The module writes into its input dict: a fresh one per call.
    c10::Dict<std::string, at::Tensor> input;
    input.insert("x", at::from_blob(types.data(), {n}, i64).to(device_, at::kLong, false, true));
    input.insert("edge_index", edge_index.to(device_));
    input.insert("edge_vec", edge_vec);
    input.insert("num_atoms", count);
    input.insert("nlocal", count.clone());
    at::Tensor atomic, total;
    try {
      const c10::IValue result = module_->forward({input});
      const auto dict = result.toGenericDict();
      total = dict.at("inferred_total_energy").toTensor().squeeze();
      atomic = dict.at("atomic_energy").toTensor().reshape({-1});
    } catch (const std::exception& ex) {
      if (out_of_memory(ex.what()))
        throw Error(model_error_id::value, "", out_of_memory_message(graph_path_, graph.n_rows(), centre.size()),
                    kOutOfMemoryHint, model_path_);
      throw Error(model_error_id::value, "", "graph " + graph_path_ + " failed: " + first_line(ex.what()), kDeployHint,
                  model_path_);
    }
    if (atomic.size(0) != n)
      throw Error(model_error_id::value, "",
                  "graph " + graph_path_ + " returned " + std::to_string(atomic.size(0)) + " atomic energies for " +
                      std::to_string(n) + " atoms",
                  kDeployHint, model_path_);
    at::Tensor g = e > 0 && total.requires_grad()
                       ? torch::autograd::grad({total}, {edge_vec}, {}, false, false, true)[0]
                       : at::Tensor();
    write_outputs(row_of_node, atomic, g, centre, neighbour, vec, request, out);
  }

  void check_cutoff(double module_cutoff) {
    if (std::abs(module_cutoff - info_.cutoff) > 1e-9 * std::max(1.0, module_cutoff)) {
      std::ostringstream s;
      s << "the model file's cutoff " << info_.cutoff << " is not the module's, " << module_cutoff;
      throw Error(model_error_id::value, "/cutoff", s.str(),
                  "give the cutoff the module was trained with: its envelope is not zero beyond it", model_path_);
    }
  }

  void map_elements(const std::string& symbols) {
    std::unordered_map<std::string, int64_t> index;
    std::istringstream in(symbols);
    std::string symbol;
    for (int64_t k = 0; in >> symbol; ++k) index.emplace(symbol, k);
    for (std::size_t k = 0; k < info_.elements.size(); ++k) {
      const auto it = index.find(info_.elements[k]);
      if (it == index.end())
        throw Error(model_error_id::value, "/elements/" + std::to_string(k),
                    "element '" + info_.elements[k] + "' is not one of the " + std::to_string(index.size()) +
                        " elements of " + graph_path_,
                    "list only elements the model was trained on", model_path_);
      type_index_.push_back(it->second);
    }
  }

  // One call at load on two atoms of the first element, 2.3 apart: a module that does not take
  // SevenNet's inputs is reported when the model file is read.
  void probe() {
    const std::vector<double> x{0.0, 0.0, 0.0, 2.3, 0.0, 0.0};
    const std::vector<int> species{0, 0}, owners{0, 1}, receivers{0, 1}, offsets{0, 1, 2}, senders{1, 0};
    AtomGraph graph;
    graph.n_owned = 2;
    graph.positions = x.data();
    graph.species = species.data();
    graph.owner_rows = owners.data();
    graph.n_receivers = 2;
    graph.receivers = receivers.data();
    graph.offsets = offsets.data();
    graph.senders = senders.data();
    ModelOutputs out;
    evaluate(graph, OutputRequest{}, out);
  }

  void write_outputs(const std::vector<int64_t>& row_of_node, const at::Tensor& atomic, const at::Tensor& g,
                     const std::vector<int64_t>& centre, const std::vector<int64_t>& neighbour,
                     const std::vector<float>& vec, const OutputRequest& request, ModelOutputs& out) const {
    const at::Tensor energies = atomic.detach().to(at::kCPU, at::kDouble).contiguous();
    const double* ev = energies.data_ptr<double>();
    for (std::size_t k = 0; k < row_of_node.size(); ++k) {
      out.energy += ev[k];
      if (request.energy_rows) out.energy_rows[row_of_node[k]] = ev[k];
    }
    if (!g.defined()) return;
    const at::Tensor grad = g.detach().to(at::kCPU, at::kDouble).contiguous();
    const double* gv = grad.data_ptr<double>();
    for (std::size_t k = 0; k < centre.size(); ++k) {
      const double* ge = gv + 3 * k;
      const std::size_t i = row_of_node[centre[k]], j = row_of_node[neighbour[k]];
      for (int c = 0; c < 3; ++c) {
        out.forces[3 * i + c] += ge[c];
        out.forces[3 * j + c] -= ge[c];
      }
      if (!request.virial && !request.virial_rows) continue;
      const float* d = vec.data() + 3 * k;
      // -edge_vec (x) g, LAMMPS' order xx, yy, zz, xy, xz, yz.
      const double w[6] = {-d[0] * ge[0], -d[1] * ge[1], -d[2] * ge[2],
                           -d[0] * ge[1], -d[0] * ge[2], -d[1] * ge[2]};
      for (int c = 0; c < 6; ++c) {
        if (request.virial) out.virial[c] += w[c];
        if (request.virial_rows) {
          out.virial_rows[6 * i + c] += 0.5 * w[c];
          out.virial_rows[6 * j + c] += 0.5 * w[c];
        }
      }
    }
  }

  std::string model_path_, graph_path_;
  c10::Device device_;
  ModelInfo info_;
  std::optional<torch::jit::Module> module_;
  std::vector<int64_t> type_index_;  // SevenNet's type index of each of the model's elements
  at::ScalarType dtype_ = at::kFloat;
};

}  // namespace

std::unique_ptr<Model> make_sevennet_serial(const ModelFile& file, Device device) {
  try {
    return std::make_unique<SevenNetSerial>(file, device);
  } catch (const Error& e) {
    if (e.file().empty()) throw e.with_file(file.path);
    throw;
  }
}

}  // namespace distspec::models::torch_kind
