#include "models/torch/torch_model.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/script.h>
#include <torch/version.h>

#ifdef DISTSPEC_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#endif

#include "distspec/error.h"
#include "distspec/halo/indexed_halo_exchange.h"
#include "models/json_fields.h"
#include "models/model_file.h"
#include "models/torch/accelerators.h"
#include "models/torch/graph_provenance.h"
#include "models/torch/graph_tensors.h"
#include "models/torch/halo_ops.h"
#include "models/torch/sevennet_serial.h"
#include "models/torch/torch_runtime.h"

namespace distspec::models::torch_kind {
namespace {

namespace fs = std::filesystem;

// A graph's halo op as the dispatcher binds it: by name, with no state, since it runs inside the
// graph (graph_only_kernel). The handle points into `qualname`, which must outlive it.
Op<NoState> graph_op(const std::string& qualname) { return Op<NoState>{qualname.c_str()}; }

constexpr int kContract = 1;
// The graph's metadata the exporter writes (doc/torch_models.md, "What the graph file carries").
constexpr char kMetadataKey[] = "distspec.json";
constexpr char kContractInputs[] =
    "positions [N,3], species [N] int64, edge_index [2,E] int64, n_owned [] int64, send_index [0] int64, "
    "recv_dest [n_halo] int64, recv_real [n_halo] bool";
constexpr char kExportHint[] =
    "export the model again with tools/distspec-export, which writes calling convention 1 (doc/torch_models.md)";

enum class GraphFormat { aoti, torchscript };

struct Params {
  std::string graph;  // resolved path
  GraphFormat format = GraphFormat::aoti;
  at::ScalarType dtype = at::kDouble;
  std::string precision = "fp64";
  int layers = 1;
  int comm_width = 1;
  std::string torch_version;
  const Accelerator* accelerator = nullptr;  // the kernels the exporter built the model with
};

// 4.5, 1e-10: as a person writes them.
std::string number(double v) {
  std::ostringstream text;
  text << v;
  return text.str();
}

std::string ends(const std::string& text, std::size_t n) { return text.size() >= n ? text.substr(text.size() - n) : ""; }

// The version without its local part: "2.15.0+cu132" -> "2.15.0".
std::string base_version(const std::string& version) { return version.substr(0, version.find('+')); }

// The first line of a torch message (the rest is a C++ backtrace or a TorchScript frame dump).
Params parse_params(const ModelFile& file) {
  if (!file.parameters_file.empty())
    fail_value("/parameters_file", "architecture 'torch' names its graph under \"parameters\"",
               "give parameters.graph, the .pt2 or .pt file beside the model file");
  const Json& root = expect_object(file.parameters, "/parameters",
                                   {"graph", "format", "precision", "message_passing_layers", "comm_width",
                                    "contract", "torch_version", "accelerator", "graph_sha256", "spec_sha256"});
  Params p;
  const Json* graph = find_member(root, "graph");
  if (!graph)
    throw Error(model_error_id::missing_key, "/parameters/graph", "the model file names no graph",
                "a torch model runs a graph exported by tools/distspec-export: give parameters.graph, the .pt2 or .pt "
                "file beside the model file");
  const std::string name = expect_string(*graph, "/parameters/graph");
  if (name.empty()) fail_value("/parameters/graph", "expected a file name, found an empty string");
  p.graph = file.resolve(name);

  if (const Json* format = find_member(root, "format"))
    p.format = expect_choice(*format, "/parameters/format", {"aoti", "torchscript"}) == "aoti" ? GraphFormat::aoti
                                                                                             : GraphFormat::torchscript;
  else if (ends(name, 4) == ".pt2")
    p.format = GraphFormat::aoti;
  else if (ends(name, 3) == ".pt")
    p.format = GraphFormat::torchscript;
  else
    fail_value("/parameters/graph", "cannot tell the format of graph '" + name + "' from its name",
               "give parameters.format: \"aoti\" (a .pt2 package) or \"torchscript\" (a .pt module)");

  if (const Json* precision = find_member(root, "precision"))
    p.precision = expect_choice(*precision, "/parameters/precision", {"fp64", "fp32"});
  p.dtype = p.precision == "fp64" ? at::kDouble : at::kFloat;
  // The graph's dtype is fixed at export: another precision asked for must not pass silently.
  if (!file.precision.empty() && file.precision != p.precision)
    fail_value("/parameters/precision",
               "the graph was exported in " + p.precision + ", but precision " + file.precision + " was requested",
               "an exported graph runs in the precision it was exported in: drop the precision keyword, or export "
               "the model again in " + file.precision);

  const int contract = expect_int(require_member(root, "contract", "/parameters"), "/parameters/contract");
  if (contract != kContract)
    fail_value("/parameters/contract",
               "the graph uses calling convention " + std::to_string(contract) + ", this build runs convention 1 (and \"sevennet-serial\", SevenNet's own serial module)",
               kExportHint);
  p.layers = expect_int(require_member(root, "message_passing_layers", "/parameters"),
                        "/parameters/message_passing_layers");
  if (p.layers < 1) fail_value("/parameters/message_passing_layers", "expected at least 1, found " + std::to_string(p.layers));
  p.comm_width = expect_int(require_member(root, "comm_width", "/parameters"), "/parameters/comm_width");
  // 0: a strictly local graph (Allegro) calls no halo op and exchanges no feature.
  if (p.comm_width < 0)
    fail_value("/parameters/comm_width", "expected 0 (a graph without halo ops) or more, found " + std::to_string(p.comm_width));

  if (const Json* version = find_member(root, "torch_version"))
    p.torch_version = expect_string(*version, "/parameters/torch_version");
  if (const Json* accelerator = find_member(root, "accelerator"))
    p.accelerator = accelerator_named(expect_choice(*accelerator, "/parameters/accelerator", accelerator_names()));
  if (p.format == GraphFormat::aoti) {
    if (p.torch_version.empty())
      throw Error(model_error_id::missing_key, "/parameters/torch_version",
                  "an AOTInductor graph needs the version of the torch that compiled it",
                  "give parameters.torch_version (tools/distspec-export writes it)");
    if (base_version(p.torch_version) != TORCH_VERSION)
      fail_value("/parameters/torch_version",
                 "graph " + p.graph + " was compiled by torch " + p.torch_version + ", this plugin links torch " +
                     TORCH_VERSION + ", and an AOTInductor package runs only with the torch that compiled it",
                 "export the model again with torch " TORCH_VERSION
                 " (the Python environment this DISTSPEC was built with), or as TorchScript (.pt)");
  }
  std::error_code ec;
  if (!fs::is_regular_file(p.graph, ec))
    throw Error(model_error_id::io, "/parameters/graph", "graph file " + p.graph + " does not exist or is not a file",
                "the path is relative to the model file's folder; export the model again if the file is gone");
  return p;
}

std::string registered_ops_hint() {
  return "the ops this plugin provides are " + join_names(halo_op_names()) +
         "; export the model so that its graph calls only these and ATen's own ops";
}

[[noreturn]] void fail_missing_op(const Params& p, const std::string& op) {
  throw Error(model_error_id::value, "/parameters/graph",
              "graph " + p.graph + " calls op '" + op + "', which no loaded kernel provides", registered_ops_hint());
}

// Custom ops of our namespaces, which the dispatcher binds (ModelInfo::ops).
void keep_halo_op(const std::string& op, std::set<std::string>& ops) {
  const auto& ours = halo_op_names();
  if (std::find(ours.begin(), ours.end(), op) != ours.end()) ops.insert(op);
}

// ---- AOTInductor ---------------------------------------------------------------------------

// The ops an AOTInductor package calls outside its compiled code (custom ops, ATen fallbacks),
// from the extern-kernel nodes it keeps beside the .so (data/aotinductor/<model>/*.json):
// nullopt when the package has no readable list.
std::optional<std::vector<std::string>> aoti_extern_ops(const std::string& path) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    std::vector<std::string> ops;
    bool found = false;
    for (const std::string& record : reader.getAllRecords()) {
      if (record.find("data/aotinductor/") == std::string::npos || ends(record, 5) != ".json" ||
          ends(record, 14) == "_metadata.json")
        continue;
      auto [data, size] = reader.getRecord(record);
      const Json doc = Json::parse(std::string(static_cast<const char*>(data.get()), size), nullptr, false);
      if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array()) continue;
      found = true;
      for (const Json& node : doc["nodes"])
        if (node.contains("node") && node["node"].contains("target") && node["node"]["target"].is_string())
          ops.push_back(node["node"]["target"].get<std::string>());
    }
    if (!found) return std::nullopt;
    return ops;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// "ns::name" or "ns::name.overload" is registered with torch.
bool torch_has_op(const std::string& target) {
  const std::size_t colons = target.find("::");
  const std::size_t dot = colons == std::string::npos ? std::string::npos : target.find('.', colons);
  std::string overload = dot == std::string::npos ? "" : target.substr(dot + 1);
  if (overload == "default") overload.clear();
  return c10::Dispatcher::singleton().findSchema({target.substr(0, dot), overload}).has_value();
}

// Children of the pytree spec of the graph's positional arguments ("[1, {tuple: [args, kwargs]}]"),
// or -1 where the spec has another shape.
int pytree_arity(const std::string& spec, bool arguments) {
  const Json doc = Json::parse(spec, nullptr, false);
  if (!doc.is_array() || doc.size() != 2 || !doc[1].is_object()) return -1;
  const Json* node = &doc[1];
  if (arguments) {
    if (!node->contains("children_spec") || (*node)["children_spec"].empty()) return -1;
    node = &(*node)["children_spec"][0];
  }
  if (!node->contains("children_spec") || !(*node)["children_spec"].is_array()) return -1;
  return static_cast<int>((*node)["children_spec"].size());
}

// ---- the model ------------------------------------------------------------------------------

class TorchModel final : public Model {
 public:
  TorchModel(const ModelFile& file, Params params, Device device)
      : model_path_(file.path), family_(file.description), params_(std::move(params)), device_(device) {
    info_ = info_from(file);
    info_.message_passing_layers = params_.layers;
    info_.halo_feature_reads = params_.layers - 1;
    info_.comm_width = params_.comm_width;
    info_.forces_on_halo_rows = true;
    std::set<std::string> ops;
    if (params_.format == GraphFormat::aoti) load_aoti(ops);
    else load_torchscript(ops);
    // A graph whose op list cannot be read may call any of them.
    for (const std::string& op : ops_known_ ? std::vector<std::string>(ops.begin(), ops.end()) : halo_op_names())
      info_.ops.push_back(graph_op(op));
    info_.opaque_ops.assign(accelerated_.begin(), accelerated_.end());
    // A spec written for a graph of an accelerator may list its other kernels too (nvalchemi's
    // MACE spec for cuEquivariance lists seven, a force graph calls some): those that are loaded.
    std::set<const Accelerator*> used;
    for (const std::string& op : accelerated_) used.insert(accelerator_of_op(op));
    for (const Accelerator* a : used)
      for (const std::string& op : registered_ops(*a)) info_.family_ops.push_back(op);
    info_.halo_scatter_corrections = std::any_of(info_.ops.begin(), info_.ops.end(), [](const OpUse& op) {
      return op.qualname.find("::halo_scatter_correct_static") != std::string::npos;
    });
    // The model file against what its graph and spec were exported with, before a call that
    // would run a graph with another cutoff, precision or element order than the file says.
    check_graph_provenance(file, {params_.graph, graph_metadata_, params_.precision, params_.layers, params_.comm_width},
                           info_.warnings);
    if (file.edges == "skin") require_blind_beyond_cutoff();
    skin_edges_ = file.edges == "skin";
    if (file.cuda_graph && device_ != Device::cuda)
      throw Error(model_error_id::value, "", "cuda_graph yes: graph " + params_.graph + " runs on the cpu here, and a CUDA "
                      "graph captures GPU work", "run with device cuda (or distspec/kk on a GPU), or leave cuda_graph no",
                  model_path_);
    cuda_graph_ = file.cuda_graph;
    probe();
  }

  const ModelInfo& info() const override { return info_; }

  // Inputs of the contract from the graph, the graph with this step's exchange active, outputs
  // as the request asks.
  void compute(const AtomGraph& graph, Dispatcher& dispatch, const OutputRequest& request, ModelOutputs& out) override {
    if (graph.n_rows() > 0 && (!graph.positions || !graph.species))
      throw Error(model_error_id::value, "", "a torch model needs positions and species on every row",
                  "the spec's core.shard_fields must promote positions and atomic_numbers", model_path_);
    // Every rank asks alike (LAMMPS' vflag_atom) and knows alike (the probe at load): all stop.
    if (request.virial_rows && !atomic_virials_) throw no_atomic_virials();
    // A rank that owns no atom has no edges, no energy and no forces; it only joins the graph's
    // collectives, as the probe recorded them (an exported graph need not take zero rows).
    if (graph.n_owned == 0) {
      out.reset(graph.n_rows(), request);
      replay_without_rows(dispatch, probe_calls_);
      return;
    }
    const auto n_rows = static_cast<int64_t>(graph.n_rows());
    const auto n_owned = static_cast<int64_t>(graph.n_owned);
    std::vector<at::Tensor> inputs = make_inputs(graph);
    at::Tensor energies, forces, virials;
    {
      ActiveDispatcher active(dispatch);
      active.record(recording_ ? &probe_calls_ : nullptr);
      const std::int64_t failed_before = failed_allocations(torch_device(device_));
      try {
        // One rank only: on more, LAMMPS' comm moves rows through the host, which no capture holds.
        if (cuda_graph_ && !recording_ && graph.topology_generation != 0 && dispatch.halo().n_ranks() == 1)
          std::tie(energies, forces, virials) = run_captured(inputs, graph.topology_generation, n_owned);
        else
          std::tie(energies, forces, virials) = run(inputs, n_owned);
      } catch (const std::exception& e) {
        if (out_of_memory(e.what()) || failed_allocations(torch_device(device_)) > failed_before)
          throw Error(model_error_id::value, "", out_of_memory_message(params_.graph, graph.n_rows(), n_edges_),
                      kOutOfMemoryHint, model_path_);
        throw graph_error(std::current_exception(), active);
      }
    }
    check_outputs(energies, forces, virials, n_rows);
    if (recording_) atomic_virials_ = virials.defined() && virials.size(0) == n_rows;
    write_outputs(graph, energies, forces, virials, request, out);
    // It may wrap the host's array, which may be reallocated before the next call.
    positions_ = at::Tensor();
  }

 private:
  void load_aoti(std::set<std::string>& ops) {
    // Ops the graph calls that nothing registered would fail deep in the loader: name them first.
    if (auto externs = aoti_extern_ops(params_.graph)) {
      ops_known_ = true;
      for (const std::string& op : *externs) {
        const std::string name = op.substr(0, op.find('.', op.find("::")));
        if (accelerate(name)) continue;
        if (!torch_has_op(op)) fail_missing_op(params_, op);
        keep_halo_op(name, ops);
      }
    } else if (params_.accelerator) {
      // Where the package lists no ops, the model file's word decides what to load.
      require_accelerator(*params_.accelerator, std::string(params_.accelerator->op_namespace) + "::*", params_.graph,
                          "/parameters/accelerator");
    }
    std::unordered_map<std::string, std::string> metadata;
    try {
      metadata = torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(params_.graph, "model");
      graph_metadata_ = metadata.count(kMetadataKey) ? metadata[kMetadataKey] : "";
    } catch (const std::exception& e) {
      static const std::regex none("$^");
      throw load_error("is not an AOTInductor package with a model named 'model'", e, none);
    }
    const std::string compiled_for = metadata.count("AOTI_DEVICE_KEY") ? metadata["AOTI_DEVICE_KEY"] : "cpu";
    if (compiled_for != device_name(device_))
      throw Error(model_error_id::device, "/parameters/graph",
                  "graph " + params_.graph + " was compiled for " + compiled_for + ", this run asks for " +
                      device_name(device_),
                  "run with 'device " + compiled_for + "', or export the model for " + device_name(device_));
    // The package's own checks of its inputs' dtypes, shapes and devices, instead of undefined
    // behaviour: the generated code runs them when this is set before its first call.
    setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 0);
    try {
      aoti_ = std::make_unique<torch::inductor::AOTIModelPackageLoader>(params_.graph, "model", false, 1,
                                                                        torch_device(device_).index());
    } catch (const std::exception& e) {
      static const std::regex missing("[Cc]ould not find schema for ([A-Za-z0-9_]+::[A-Za-z0-9_]+)");
      throw load_error("cannot be loaded", e, missing);
    }
    const std::vector<std::string> spec = aoti_->get_call_spec();
    const int inputs = spec.size() == 2 ? pytree_arity(spec[0], true) : -1;
    const int outputs = spec.size() == 2 ? pytree_arity(spec[1], false) : -1;
    if ((inputs >= 0 && inputs != 7) || (outputs >= 0 && outputs != 2 && outputs != 3))
      throw Error(model_error_id::value, "/parameters/graph",
                  "graph " + params_.graph + " takes " + std::to_string(inputs) + " inputs and returns " +
                      std::to_string(outputs) + " outputs; calling convention 1 passes 7 (" + kContractInputs +
                      ") and expects 3 (atomic_energies [N], forces [N,3], atomic_virials [N,6]) or the first 2",
                  kExportHint);
  }

  // A TorchScript graph runs on the run's device: loaded on the cpu, checked for a device its
  // trace fixed, then moved.
  void load_torchscript(std::set<std::string>& ops) {
    // TorchScript resolves every op when the module loads.
    if (params_.accelerator)
      require_accelerator(*params_.accelerator, std::string(params_.accelerator->op_namespace) + "::*", params_.graph,
                          "/parameters/accelerator");
    torch::jit::ExtraFilesMap extra{{kMetadataKey, ""}};
    load_script(c10::Device(c10::kCPU), &extra);
    graph_metadata_ = extra[kMetadataKey];
    const c10::FunctionSchema& schema = script_->get_method("forward").function().getSchema();
    const std::size_t inputs = schema.arguments().size() - 1;  // less self
    const c10::TypePtr returns = schema.returns().size() == 1 ? schema.returns()[0].type() : nullptr;
    const auto tuple = returns ? returns->cast<c10::TupleType>() : nullptr;
    energies_only_ = returns && returns->kind() == c10::TypeKind::TensorType;
    if (inputs != 7 ||
        !(energies_only_ || (tuple && (tuple->elements().size() == 2 || tuple->elements().size() == 3))))
      throw Error(model_error_id::value, "/parameters/graph",
                  "graph " + params_.graph + " has forward(" + std::to_string(inputs) + " inputs) -> " +
                      (returns ? returns->str() : "?") +
                      "; calling convention 1 passes 7 (" + kContractInputs +
                      ") and expects (atomic_energies [N], forces [N,3][, atomic_virials [N,6]]) or atomic_energies "
                      "alone",
                  kExportHint);
    // Every op the inlined graph calls, nested blocks included.
    auto graph = script_->get_method("forward").graph()->copy();
    torch::jit::Inline(*graph);
    std::vector<torch::jit::Block*> blocks{graph->block()};
    while (!blocks.empty()) {
      torch::jit::Block* block = blocks.back();
      blocks.pop_back();
      for (torch::jit::Node* node : block->nodes()) {
        if (node->kind() == c10::prim::Constant && node->output()->type()->kind() == c10::TypeKind::DeviceObjType)
          require_device(c10::Device(node->s(c10::attr::value)));
        if (accelerate(node->kind().toQualString())) continue;
        keep_halo_op(node->kind().toQualString(), ops);
        for (torch::jit::Block* inner : node->blocks()) blocks.push_back(inner);
      }
    }
    ops_known_ = true;
    // Loaded again onto the device: the trace's weights are plain attributes, which only
    // the loader's map location moves (Module::to moves parameters and buffers).
    if (device_ != Device::cpu) load_script(torch_device(device_));
  }

  // `extra`: the module's extra files to read, by name.
  void load_script(const c10::Device& where, torch::jit::ExtraFilesMap* extra = nullptr) {
    fuse_for_dynamic_shapes();
    try {
      torch::jit::ExtraFilesMap none;
      script_ = torch::jit::load(params_.graph, where, extra ? *extra : none);
    } catch (const std::exception& e) {
      static const std::regex missing("Unknown builtin op: ([A-Za-z0-9_]+::[A-Za-z0-9_]+)");
      throw load_error("cannot be loaded as TorchScript", e, missing);
    }
    script_->eval();
  }

  // A device the graph names as a constant (a trace that fixed its device: distspec-export
  // before TorchScript devices followed the positions) must be the run's.
  void require_device(const c10::Device& fixed) const {
    if (fixed.type() == (device_ == Device::cuda ? c10::kCUDA : c10::kCPU)) return;
    throw Error(model_error_id::device, "/parameters/graph",
                "graph " + params_.graph + " fixes its tensors to " + fixed.str() + ", this run asks for " +
                    device_name(device_),
                "run with 'device " + std::string(c10::DeviceTypeName(fixed.type(), true)) +
                    "', or export the model again with this distspec-export: its TorchScript runs on every device");
  }

  // An op of an accelerator: its library loaded (or the reason it cannot be), the op kept for
  // the spec check. False for any other op.
  bool accelerate(const std::string& op) {
    const Accelerator* a = accelerator_of_op(op);
    if (!a) return false;
    require_accelerator(*a, op, params_.graph, "/parameters/graph");
    accelerated_.insert(op);
    return true;
  }

  // The loader's error, unless it is about an op no kernel provides (`missing_op` finds its
  // name in the text): then that one, naming it.
  // One call at load on a small graph of its own (three owned rows, two halo rows copying owned
  // ones, one rank), so that a graph that does not follow the contract is reported when the
  // model file is read, by every rank alike, rather than by some rank in the first step. It
  // records the collectives a call makes: a traced graph makes the same ones at every call.
  void probe() {
    const std::vector<double> x{0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 2.0, 2.0, 0.0, 0.0, 0.0, 2.0};
    const std::vector<int> species(5, 0), receivers{0, 1, 2}, offsets{0, 4, 8, 12},
        senders{1, 2, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4};
    const AtomGraph graph = csr_graph(3, 2, x.data(), species.data(), receivers, offsets, senders);
    DistributionSpec spec;
    spec.policy = StoragePolicy("halo");
    Dispatcher dispatch(spec, device_, {}, 1, HaloStrategy::per_layer, OpRegistry{});
    IndexedHaloExchange halo(3, {0, 1});
    dispatch.attach(halo);
    ModelOutputs out;
    recording_ = true;
    compute(graph, dispatch, OutputRequest{}, out);
    recording_ = false;
  }

  // `edges skin` hands the graph pairs up to cutoff + skin apart, which is right only for a graph
  // whose energy ignores pairs beyond its cutoff (an envelope that is zero there, or a mask).
  // Checked at load on a small graph of its own: its energies and forces with and without pairs
  // 1.02 and 1.3 cutoffs apart must agree. SevenNet's polynomial envelope, which is not zero past
  // its cutoff, fails it.
  void require_blind_beyond_cutoff() {
    const double rc = info_.cutoff;
    // The probe's rows, and two images of owned row 0 beyond the cutoff (halo rows 5 and 6).
    const std::vector<double> x{0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 2.0, 2.0, 0.0, 0.0, 0.0, 2.0,
                                0.0, 0.0, -1.02 * rc, 0.0, 0.0, -1.3 * rc};
    const at::Device device = torch_device(device_);
    const at::Tensor positions = at::tensor(x, at::dtype(at::kDouble)).reshape({7, 3});
    std::vector<int64_t> senders, receivers;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j)
        if (j != i && (positions[j] - positions[i]).norm().item<double>() < rc) senders.push_back(j), receivers.push_back(i);
    DistributionSpec spec;
    spec.policy = StoragePolicy("halo");
    Dispatcher dispatch(spec, device_, {}, 1, HaloStrategy::per_layer, OpRegistry{});
    IndexedHaloExchange halo(3, {0, 1, 0, 0});
    dispatch.attach(halo);
    const auto longs = at::dtype(at::kLong).device(device);
    // (owned energies, forces) of the graph on these edges, fp64 on the cpu.
    auto outputs = [&]() {
      std::vector<at::Tensor> inputs{positions.to(device, params_.dtype), at::zeros({7}, longs),
                                     at::stack({at::tensor(senders, at::kLong), at::tensor(receivers, at::kLong)}).to(device),
                                     at::scalar_tensor(int64_t(3), longs), at::empty({0}, longs), at::arange(3, 7, longs),
                                     at::ones({4}, at::dtype(at::kBool).device(device))};
      ActiveDispatcher active(dispatch);
      try {
        auto [energies, forces, virials] = run(inputs, 3);
        return std::pair{energies.slice(0, 0, 3).to(at::kCPU, at::kDouble), forces.to(at::kCPU, at::kDouble)};
      } catch (const std::exception&) {
        throw graph_error(std::current_exception(), active);
      }
    };
    const auto [e_within, f_within] = outputs();
    for (const int64_t far : {5, 6})
      for (const int64_t i : {0, 1}) senders.push_back(far), receivers.push_back(i);
    const auto [e_skin, f_skin] = outputs();
    const double scale = std::max({1.0, e_within.abs().max().item<double>(), f_within.abs().max().item<double>()});
    const double change = std::max((e_skin - e_within).abs().max().item<double>(),
                                   (f_skin - f_within).abs().max().item<double>()) / scale;
    // fp64: the same sums with exact zeros added, in another grouping; fp32: its rounding.
    const double tolerance = params_.dtype == at::kDouble ? 1e-10 : 1e-5;
    if (!(change <= tolerance))
      throw Error(model_error_id::value, "", "edges skin: graph " + params_.graph + " is not blind to pairs beyond its cutoff " +
                      number(rc) + ": pairs 1.02 and 1.3 cutoffs apart changed its energies or forces by " +
                      number(change) + " (relative; at most " + number(tolerance) +
                      " for a graph that ignores them), so it must get exactly the pairs within its cutoff",
                  "use edges cutoff (the default), or export the model with an envelope that is zero beyond its "
                  "cutoff (doc/torch_models.md, \"Edges between neighbour-list builds\")",
                  model_path_);
  }

  Error load_error(const std::string& what, const std::exception& e, const std::regex& missing_op) const {
    std::smatch m;
    const std::string text = e.what();
    if (std::regex_search(text, m, missing_op)) {
      // An accelerator's op says which library is missing and how to get it.
      if (const Accelerator* a = accelerator_of_op(m[1])) require_accelerator(*a, m[1], params_.graph, "/parameters/graph");
      fail_missing_op(params_, m[1]);
    }
    return Error(model_error_id::io, "/parameters/graph", "graph " + params_.graph + " " + what + ": " + first_line(e.what()),
                 params_.format == GraphFormat::aoti
                     ? "an AOTInductor package runs only with the torch that compiled it (this plugin links torch " TORCH_VERSION
                       "); export the model again with it"
                     : std::string(kExportHint));
  }

  // What a failed graph call reports, naming the model file: an op's own error (the routing, the
  // exchange's width) as the op raised it, whatever the graph's runtime made of it; else the
  // runtime's.
  Error graph_error(std::exception_ptr failure, const ActiveDispatcher& active) const {
    try {
      std::rethrow_exception(active.kernel_error() ? active.kernel_error() : failure);
    } catch (const Error& e) {
      return e.file().empty() ? e.with_file(model_path_) : e;
    } catch (const std::exception& e) {
      return run_error(e);
    }
  }

  // A failed run: an AOTInductor package's own check of its inputs names one by number
  // (`input_handles[4]: ...`, with AOTI_RUNTIME_CHECK_INPUTS), which the contract names.
  Error run_error(const std::exception& e) const {
    static const std::regex input("input_handles\\[([0-9])\\]");
    static const char* const names[] = {"positions [N,3]", "species [N] int64", "edge_index [2,E] int64",
                                        "n_owned [] int64", "send_index [0] int64", "recv_dest [n_halo] int64",
                                        "recv_real [n_halo] bool"};
    const std::string text = first_line(e.what());
    std::smatch m;
    if (std::regex_search(text, m, input) && std::stoi(m[1]) < 7)
      return Error(model_error_id::value, "",
                   "graph " + params_.graph + " does not accept input " + m[1].str() + " of calling convention 1, " +
                       names[std::stoi(m[1])] + " (" + params_.precision + "): " + text,
                   "check the model file's precision against the graph; " + std::string(kExportHint), model_path_);
    return Error(model_error_id::value, "", "graph " + params_.graph + " failed: " + text,
                 "check that the model file's precision and device match the graph; " + std::string(kExportHint),
                 model_path_);
  }

  // The contract's inputs on the model's device, over the graph's own arrays where they are
  // already there (distspec/kk on a GPU: nothing crosses PCIe). What depends on the topology
  // alone is made at a neighbour-list build and kept until the next (refresh_topology). Edges:
  // under `edges cutoff` those beyond the cutoff (the neighbour list's skin) are left out, on the
  // device, so the graph sees the pairs it was trained on; under `edges skin` the build's pairs
  // go in as they are.
  std::vector<at::Tensor> make_inputs(const AtomGraph& graph) {
    const at::Device device = torch_device(device_);
    const c10::Device where = graph_device(graph, device_);
    refresh_topology(graph, where, device);
    positions_ = wrap_positions(graph, where).to(device);
    at::Tensor edge_index = topology_.edge_index;
    if (!skin_edges_) {
      // The one read of a call: how many pairs are within the cutoff. It waits for the position
      // upload and this filter only (the graph is not queued yet).
      const EdgePairs pairs = topology_.pairs.where(within_cutoff(positions_, topology_.pairs, info_.cutoff));
      edge_index = at::stack({pairs.senders, pairs.receivers});
    }
    n_edges_ = static_cast<std::size_t>(edge_index.size(1));
    // An fp64 graph on the rows' device reads the positions in place.
    return {positions_.to(params_.dtype), topology_.species, edge_index,    topology_.n_owned,
            topology_.send_index,         topology_.recv_dest, topology_.recv_real};
  }

  // What a call derives from the rows' topology (AtomGraph::topology_generation): made again when
  // the host names another topology, or at every call where it names none (0).
  void refresh_topology(const AtomGraph& graph, c10::Device where, c10::Device device) {
    const auto n_rows = static_cast<int64_t>(graph.n_rows());
    const auto n_owned = static_cast<int64_t>(graph.n_owned);
    if (graph.topology_generation != 0 && graph.topology_generation == topology_.generation &&
        n_rows == topology_.n_rows && n_owned == topology_.n_owned_rows)
      return;
    Topology t;
    t.generation = graph.topology_generation;
    t.n_rows = n_rows;
    t.n_owned_rows = n_owned;
    // Reads the edge count (offsets' last entry), once per build.
    const GraphTensors rows = wrap_graph(graph, where).to(device);
    // Rows of atoms that are not this model's (NULL types of a hybrid style) get species 0: they
    // have no edges, and their energy is not counted (counted).
    t.species = rows.species.clamp_min(0).to(at::kLong);
    t.pairs = expand_edges(rows);
    if (skin_edges_) t.edge_index = at::stack({t.pairs.senders, t.pairs.receivers});
    const auto longs = at::dtype(at::kLong).device(device);
    t.n_owned = at::scalar_tensor(n_owned, longs);
    t.send_index = at::empty({0}, longs);
    t.recv_dest = at::arange(n_owned, n_rows, longs);
    t.recv_real = at::ones({n_rows - n_owned}, at::dtype(at::kBool).device(device));
    t.counted = (at::arange(n_rows, longs) < n_owned).logical_and(rows.species >= 0);
    topology_ = std::move(t);
  }

  // (atomic_energies, forces, atomic_virials) from the graph; the last undefined where the graph
  // returns two.
  std::tuple<at::Tensor, at::Tensor, at::Tensor> run(std::vector<at::Tensor>& inputs, int64_t n_owned) {
    if (aoti_) {
      std::vector<at::Tensor> outs = aoti_->run(inputs);
      if (outs.size() != 2 && outs.size() != 3) throw contract_error("returned " + std::to_string(outs.size()) + " outputs");
      return {outs[0], outs[1], outs.size() == 3 ? outs[2] : at::Tensor()};
    }
    // A leaf of its own: the positions may be the host's rows themselves (wrap_graph).
    if (energies_only_) inputs[0] = inputs[0].detach().requires_grad_(true);
    const at::Tensor positions = inputs[0];
    const c10::IValue result = script_->forward(std::vector<c10::IValue>(inputs.begin(), inputs.end()));
    if (!energies_only_) {
      const auto& items = result.toTupleRef().elements();
      const bool tensors = std::all_of(items.begin(), items.end(), [](const c10::IValue& v) { return v.isTensor(); });
      if ((items.size() != 2 && items.size() != 3) || !tensors)
        throw contract_error("returned a tuple of " + std::to_string(items.size()) + " that is not two or three tensors");
      return {items[0].toTensor().detach(), items[1].toTensor().detach(),
              items.size() == 3 ? items[2].toTensor().detach() : at::Tensor()};
    }
    // Forces by autograd: -d(sum of the owned atomic energies)/d(positions), every row.
    const at::Tensor energies = result.toTensor();
    if (energies.dim() != 1 || energies.size(0) != positions.size(0)) return {energies.detach(), at::Tensor(), at::Tensor()};
    const at::Tensor owned_energy = energies.slice(0, 0, n_owned).sum();
    at::Tensor grad;
    if (owned_energy.requires_grad())
      grad = torch::autograd::grad({owned_energy}, {positions}, {}, false, false, true)[0];
    at::Tensor forces = grad.defined() ? -grad : at::zeros_like(positions);
    return {energies.detach(), forces.detach(), at::Tensor()};
  }

  // `cuda_graph yes`: the step captured in a CUDA graph once per neighbour-list build and replayed
  // until the next, so that its hundreds of kernels cost one launch. The build's first call runs
  // eagerly (its results are that step's; it also makes the one-rank exchange's index map, which
  // the capture records), then the same call is captured on a side stream (capture needs one
  // other than the default); later calls copy their positions into the capture's own buffer and
  // replay. Every other input is the build's (topology_), so the shapes hold: edges skin.
  std::tuple<at::Tensor, at::Tensor, at::Tensor> run_captured(std::vector<at::Tensor>& inputs, std::uint64_t generation,
                                                              int64_t n_owned) {
#ifdef DISTSPEC_WITH_CUDA
    if (captured_.graph && captured_.generation == generation) {
      captured_.inputs[0].copy_(inputs[0]);
      captured_.graph->replay();
      return {captured_.energies, captured_.forces, captured_.virials};
    }
    captured_ = Captured{};  // the previous build's graph and its memory pool go first
    auto eager = run(inputs, n_owned);
    Captured c;
    c.generation = generation;
    c.inputs = inputs;
    c.inputs[0] = inputs[0].clone();  // the positions may be the host's rows (a Kokkos view)
    c.graph = std::make_unique<at::cuda::CUDAGraph>();
    {
      const c10::cuda::CUDAStreamGuard side(c10::cuda::getStreamFromPool(false, torch_device(device_).index()));
      c.graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
      try {
        std::tie(c.energies, c.forces, c.virials) = run(c.inputs, n_owned);
        c.graph->capture_end();
      } catch (const std::exception& e) {
        // The stream leaves capture mode whatever happened, so that the error can be reported.
        const std::string why = first_line(e.what());
        try {
          c.graph->capture_end();
        } catch (...) {
        }
        throw Error(model_error_id::value, "", "cuda_graph yes: the step of graph " + params_.graph +
                        " could not be captured in a CUDA graph: " + why,
                    "run with cuda_graph no (the default), and report the graph with this message", model_path_);
      }
    }
    captured_ = std::move(c);
    return eager;
#else
    (void)generation;
    return run(inputs, n_owned);
#endif
  }

  Error contract_error(const std::string& what) const {
    return Error(model_error_id::value, "", "graph " + params_.graph + " " + what +
                     "; calling convention 1 expects (atomic_energies [N], forces [N,3][, atomic_virials [N,6]]) in " +
                     params_.precision,
                 kExportHint, model_path_);
  }

  void check_outputs(const at::Tensor& energies, const at::Tensor& forces, const at::Tensor& virials,
                     int64_t n_rows) const {
    const char* dtype = params_.precision == "fp64" ? "float64" : "float32";
    auto describe = [](const at::Tensor& t) {
      if (!t.defined()) return std::string("(none)");
      std::string shape;
      for (int64_t d = 0; d < t.dim(); ++d) shape += (d ? ", " : "") + std::to_string(t.size(d));
      return std::string(c10::toString(t.scalar_type())) + " [" + shape + "] on " + t.device().str();
    };
    const bool energies_ok = energies.defined() && energies.dim() == 1 && energies.size(0) == n_rows &&
                             energies.scalar_type() == params_.dtype;
    const bool forces_ok = forces.defined() && forces.dim() == 2 && forces.size(0) == n_rows && forces.size(1) == 3 &&
                           forces.scalar_type() == params_.dtype;
    if (!energies_ok || !forces_ok)
      throw contract_error("returned atomic_energies " + describe(energies) + " and forces " + describe(forces) +
                           " for N = " + std::to_string(n_rows) + " rows (expected " + dtype + ")");
    // [N,6], or [0,6]: none.
    if (virials.defined() && !(virials.dim() == 2 && (virials.size(0) == n_rows || virials.size(0) == 0) &&
                               virials.size(1) == 6 && virials.scalar_type() == params_.dtype))
      throw contract_error("returned atomic_virials " + describe(virials) + " for N = " + std::to_string(n_rows) +
                           " rows (expected " + dtype + " [N, 6] or [0, 6])");
  }

  // compute stress/atom (or any per-atom virial) of a graph that gives none.
  Error no_atomic_virials() const {
    return Error(model_error_id::system, "",
                 "a per-atom virial (compute stress/atom, centroid/stress/atom) was requested, but graph " +
                     params_.graph + " (" + family_ + ")" +
                     " gives none: its energy function took no edge_shift, so no edge's dE/dr reached the export, "
                     "and r (x) f of each row depends on the origin and on which periodic images are rows",
                 "export the model again with this distspec-export (its adapters for MACE, NequIP/Allegro and "
                 "SevenNet pass edge_shift; a plain module's forward takes it as an 8th argument added to its edge "
                 "vectors, doc/torch_models.md), or leave the per-atom virial out",
                 model_path_);
  }

  // Energy: owned rows of this model's atoms only (halo rows repeat other ranks' atoms). Virial:
  // the graph's per-row virial where it gives one (sum = sum over edges of -r (x) dE/dr), else
  // -sum over all rows of r (x) dE/dr = sum of r (x) f, halo rows at their image positions.
  void write_outputs(const AtomGraph& graph, const at::Tensor& energies, const at::Tensor& forces,
                     const at::Tensor& virials, const OutputRequest& request, ModelOutputs& out) {
    RowResults results;
    results.energy_rows = at::where(topology_.counted, energies.to(at::kDouble), 0.0).contiguous();
    results.forces = forces.to(at::kDouble).contiguous();
    if (request.virial || request.virial_rows)
      results.virial_rows = atomic_virials_ ? virials.to(at::kDouble).contiguous()
                                            : virial_rows_of(positions_, results.forces);
    deliver(std::move(results), graph.n_rows(), request, out, kept_);
  }

  std::string model_path_;
  std::string family_;  // the model file's description: the model and its package
  Params params_;
  Device device_;
  ModelInfo info_;
  bool ops_known_ = false;
  std::set<std::string> accelerated_;  // accelerator ops the graph calls
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> aoti_;
  std::optional<torch::jit::Module> script_;
  bool energies_only_ = false;  // a TorchScript module returning atomic energies alone
  std::string graph_metadata_;  // the graph's distspec.json (graph_provenance.h); empty where it has none
  bool atomic_virials_ = false;  // the graph returns atomic_virials [N,6] (seen by the probe)
  std::vector<HaloCall> probe_calls_;  // the collectives of one call, in order
  bool recording_ = false;
  // What a call derives from the topology, on the model's device (refresh_topology).
  struct Topology {
    std::uint64_t generation = 0;  // AtomGraph::topology_generation; 0: made for one call
    int64_t n_rows = -1, n_owned_rows = -1;
    EdgePairs pairs;       // the neighbour list's pairs, skin included
    at::Tensor edge_index;  // [2,E] of them, under `edges skin`
    at::Tensor species, n_owned, send_index, recv_dest, recv_real;  // the contract's inputs
    at::Tensor counted;    // [N] bool: owned rows of this model's atoms, whose energy counts
  };
  Topology topology_;
  bool skin_edges_ = false;  // `edges skin`: the graph gets the build's pairs (checked blind beyond its cutoff)
  bool cuda_graph_ = false;  // `cuda_graph yes` (run_captured)
#ifdef DISTSPEC_WITH_CUDA
  // The step captured at a build (run_captured): its graph, its own input rows (the positions
  // buffer replays read) and the outputs replays write.
  struct Captured {
    std::uint64_t generation = 0;
    std::unique_ptr<at::cuda::CUDAGraph> graph;
    std::vector<at::Tensor> inputs;
    at::Tensor energies, forces, virials;
  };
  Captured captured_;
#endif
  at::Tensor positions_;     // this call's [N,3] fp64 on the model's device (over the host's rows where they are there)
  std::size_t n_edges_ = 0;  // this call's pairs
  RowResults kept_;        // rows left on the device for the host (OutputRequest::rows_on_device)
};

// The dispatcher's view of a graph op: it runs inside the graph, never through Dispatcher::call.
void graph_only_kernel(Span<const TensorRef>, Span<const TensorRef>, const NoState&) {
  throw Error(model_error_id::op_args, "", "a torch graph's halo op was called through the dispatcher",
              "these ops run inside exported graphs only");
}

}  // namespace

bool is_sevennet_serial(const ModelFile& file) {
  const Json* contract = file.parameters.is_object() ? find_member(file.parameters, "contract") : nullptr;
  return contract && contract->is_string() && contract->get<std::string>() == kSevenNetSerialContract;
}

std::unique_ptr<Model> make_sevennet_serial_model(const ModelFile& file, Device device) {
  register_halo_ops();
  return make_sevennet_serial(file, device);
}

std::unique_ptr<Model> make_model(const ModelFile& file, Device device) {
  register_halo_ops();
  try {
    return std::make_unique<TorchModel>(file, parse_params(file), device);
  } catch (const Error& e) {
    if (e.file().empty()) throw e.with_file(file.path);
    throw;
  }
}

void register_ops(OpRegistry& registry) {
  register_halo_ops();
  for (const std::string& op : halo_op_names()) {
    registry.add<Device::cpu>(graph_op(op), graph_only_kernel);
    registry.add<Device::cuda>(graph_op(op), graph_only_kernel);
  }
}

}  // namespace distspec::models::torch_kind
