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
#include "models/torch/graph_tensors.h"
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
    fuse_for_dynamic_shapes();
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
  // SevenNet's inputs from the graph, built by torch ops on the module's device from the graph's
  // arrays where they live (host memory, or distspec/kk's device views).
  void evaluate(const AtomGraph& graph, const OutputRequest& request, ModelOutputs& out) {
    if (graph.n_rows() > 0 && (!graph.positions || !graph.species || !graph.owner_rows))
      throw Error(model_error_id::value, "", "SevenNet's serial module needs positions, species and owner rows",
                  "run it through pair_style distspec on one rank", model_path_);
    const auto n_rows = static_cast<int64_t>(graph.n_rows());
    const c10::Device where = graph_device(graph, device_.is_cuda() ? Device::cuda : Device::cpu);
    const GraphTensors rows = wrap_graph(graph, where).to(device_);
    const auto i64 = at::dtype(at::kLong).device(device_);
    const at::Tensor& x = rows.positions;
    const at::Tensor species = rows.species.to(at::kLong);
    const auto host_ints = at::dtype(at::kInt).device(where);
    const at::Tensor owners =
        (n_rows ? at::from_blob(const_cast<int*>(graph.owner_rows), {n_rows}, host_ints) : at::empty({0}, host_ints))
            .to(device_, at::kLong);

    // Nodes: the owned atoms of this model (NULL types of a hybrid style are left out).
    const at::Tensor is_node = species.slice(0, 0, static_cast<int64_t>(graph.n_owned)) >= 0;
    const at::Tensor row_of_node = is_node.nonzero().squeeze(1);
    const int64_t n = row_of_node.numel();
    RowResults results;
    results.energy_rows = at::zeros({n_rows}, x.options());
    results.forces = at::zeros({n_rows, 3}, x.options());
    const bool virial = request.virial || request.virial_rows;
    if (virial) results.virial_rows = at::zeros({n_rows, 6}, x.options());
    if (n == 0) return deliver(std::move(results), graph.n_rows(), request, out, kept_);
    at::Tensor node_of_row = at::full({n_rows}, -1, i64);
    node_of_row.index_copy_(0, row_of_node, at::arange(n, i64));
    const at::Tensor types = type_index_.to(device_).index_select(0, species.index_select(0, row_of_node));

    EdgePairs pairs = expand_edges(rows);
    pairs = pairs.where(node_of_row.index_select(0, pairs.receivers).ge(0).logical_and(
        species.index_select(0, pairs.senders).ge(0)));
    const at::Tensor owner = owners.index_select(0, pairs.senders);
    if (owner.lt(0).any().item<bool>())
      throw Error(model_error_id::value, "", "a neighbour of an owned atom is owned by another rank",
                  "SevenNet's serial module runs on one rank", model_path_);
    const at::Tensor close = within_cutoff(x, pairs, info_.cutoff);
    pairs = pairs.where(close);
    // Each neighbour's image is mapped onto its owner.
    const at::Tensor owner_rows = owner.masked_select(close);
    const at::Tensor centre = node_of_row.index_select(0, pairs.receivers);
    const at::Tensor neighbour = node_of_row.index_select(0, owner_rows);
    // r_j - r_i in fp32, as SevenNet's pair style takes it.
    const at::Tensor vec32 = (x.index_select(0, pairs.senders) - x.index_select(0, pairs.receivers)).to(at::kFloat);
    at::Tensor edge_vec = vec32.to(dtype_, false, true);
    edge_vec.requires_grad_(true);
    const at::Tensor count = at::full({1}, n, i64);

    // The module writes into its input dict: a fresh one per call.
    c10::Dict<std::string, at::Tensor> input;
    input.insert("x", types);
    input.insert("edge_index", at::stack({centre, neighbour}));
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
        throw Error(model_error_id::value, "", out_of_memory_message(graph_path_, graph.n_rows(), pairs.size()),
                    kOutOfMemoryHint, model_path_);
      throw Error(model_error_id::value, "", "graph " + graph_path_ + " failed: " + first_line(ex.what()), kDeployHint,
                  model_path_);
    }
    if (atomic.size(0) != n)
      throw Error(model_error_id::value, "",
                  "graph " + graph_path_ + " returned " + std::to_string(atomic.size(0)) + " atomic energies for " +
                      std::to_string(n) + " atoms",
                  kDeployHint, model_path_);
    results.energy_rows.index_copy_(0, row_of_node, atomic.detach().to(at::kDouble));
    if (pairs.size() > 0 && total.requires_grad()) {
      // With g = dE/d(edge_vec): F_i += g, F_owner(j) -= g; virial -edge_vec (x) g, per atom whole on
      // the neighbour's owner, SevenNet's own partition (as pair_style e3gnn and the exported graph).
      const at::Tensor g = torch::autograd::grad({total}, {edge_vec}, {}, false, false, true)[0].detach().to(at::kDouble);
      results.forces.index_add_(0, pairs.receivers, g).index_add_(0, owner_rows, -g);
      if (virial) {
        const at::Tensor w = -sevennet_virial_rows_of(vec32.to(at::kDouble), g);
        results.virial_rows.index_add_(0, owner_rows, w);
      }
    }
    deliver(std::move(results), graph.n_rows(), request, out, kept_);
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
    std::vector<int64_t> types;
    for (std::size_t k = 0; k < info_.elements.size(); ++k) {
      const auto it = index.find(info_.elements[k]);
      if (it == index.end())
        throw Error(model_error_id::value, "/elements/" + std::to_string(k),
                    "element '" + info_.elements[k] + "' is not one of the " + std::to_string(index.size()) +
                        " elements of " + graph_path_,
                    "list only elements the model was trained on", model_path_);
      types.push_back(it->second);
    }
    type_index_ = at::tensor(types, at::dtype(at::kLong));
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

  std::string model_path_, graph_path_;
  c10::Device device_;
  ModelInfo info_;
  std::optional<torch::jit::Module> module_;
  at::Tensor type_index_;  // SevenNet's type index of each of the model's elements (int64, on the cpu)
  RowResults kept_;        // rows left on the device for the host (OutputRequest::rows_on_device)
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
