// nvalchemi's halo ops as DISTSPEC registers them with torch: the exact schemas, what each op
// does to rows [owned | halo] through the dispatcher, the checks of the routing tensors, and
// autograd through them (each op's backward is its adjoint), against an index-map exchange.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/error.h"
#include "models/torch/halo_ops.h"
#include "recording_halo.h"
#include "torch_script.h"

namespace distspec {
namespace {

using models::torch_kind::ActiveDispatcher;
using test::RecordingHalo;
using Log = std::vector<std::string>;

// Three owned rows, four halo rows: images of owned rows 2, 0, 0 and 1.
constexpr std::size_t kOwned = 3;
const std::vector<std::size_t> kHaloOwner{2, 0, 0, 1};
constexpr int64_t kRows = 7;

DistributionSpec halo_spec(const std::string& gather_mode = "halo_read") {
  DistributionSpec s;
  s.policy = StoragePolicy("halo");
  s.policy.gather_mode = gather_mode;
  return s;
}

// The routing tensors of calling convention 1 (doc/torch_models.md).
struct Routing {
  at::Tensor send_index = at::empty({0}, at::kLong);
  at::Tensor recv_dest = at::arange(int64_t(kOwned), kRows, at::kLong);
  at::Tensor recv_real = at::ones({kRows - int64_t(kOwned)}, at::kBool);
  at::Tensor n_owned = at::scalar_tensor(int64_t(kOwned), at::kLong);
};

// Calls a registered op by name through torch's dispatcher, boxed (as TorchScript and AOTI do).
at::Tensor call(const std::string& op, std::vector<c10::IValue> args) {
  const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(op.c_str(), "");
  torch::jit::Stack stack(args.begin(), args.end());
  handle.callBoxed(stack);
  return stack.at(0).toTensor();
}

at::Tensor call_exchange(const std::string& op, const at::Tensor& rows, const Routing& r = {}) {
  return call(op, {rows, r.send_index, r.recv_dest, r.recv_real, r.n_owned, int64_t(1)});
}

// Rows 0..6 of width 2: row i holds (i + 1, 10 (i + 1)).
at::Tensor numbered_rows(at::ScalarType dtype = at::kDouble) {
  return (at::arange(1, kRows + 1, at::kDouble).unsqueeze(1) * at::tensor({1.0, 10.0}, at::kDouble)).to(dtype);
}

std::vector<double> values(const at::Tensor& t) {
  const at::Tensor d = t.to(at::kDouble).contiguous();
  return {d.data_ptr<double>(), d.data_ptr<double>() + d.numel()};
}

class HaloOps : public ::testing::Test {
 protected:
  void SetUp() override { models::torch_kind::register_halo_ops(); }

  RecordingHalo halo{kOwned, kHaloOwner, 2};
  Dispatcher dispatch{halo_spec(), Device::cpu, {}, 2, HaloStrategy::per_layer, OpRegistry{}};
  void attach() { dispatch.attach(halo); }
};

TEST_F(HaloOps, SchemasAreNvalchemisExactly) {
  models::torch_kind::register_halo_ops();  // twice: registration is idempotent
  const std::vector<std::string> schemas{
      "halo_forward_static(Tensor padded_in, Tensor send_index, Tensor recv_dest, Tensor recv_real, Tensor n_owned, "
      "SymInt world_size) -> Tensor",
      "halo_scatter_correct_static(Tensor padded_in, Tensor send_index, Tensor recv_dest, Tensor recv_real, Tensor "
      "n_owned, SymInt world_size) -> Tensor",
      "halo_forward_static_backward(Tensor grad_out, Tensor send_index, Tensor recv_dest, Tensor recv_real, Tensor "
      "n_owned, SymInt world_size) -> Tensor",
      "per_system_reduce(Tensor local_vals, Tensor system_index, SymInt n_systems) -> Tensor",
      "per_system_reduce_backward(Tensor grad_out, Tensor system_index) -> Tensor",
      "halo_keepalive(Tensor x, Tensor si, Tensor rd, Tensor rr, Tensor no) -> Tensor",
  };
  for (const char* ns : {"nvalchemi", "distspec"})
    for (const std::string& schema : schemas) {
      const std::string name = std::string(ns) + "::" + schema.substr(0, schema.find('('));
      const auto op = c10::Dispatcher::singleton().findSchema({name, ""});
      ASSERT_TRUE(op.has_value()) << name;
      EXPECT_EQ(c10::toString(op->schema()), std::string(ns) + "::" + schema);
    }
  EXPECT_EQ(models::torch_kind::halo_op_names().size(), 12u);
}

TEST_F(HaloOps, ForwardCopiesOwnersIntoHaloRows) {
  attach();
  ActiveDispatcher active(dispatch);
  for (auto dtype : {at::kDouble, at::kFloat}) {
    halo.log.clear();
    const at::Tensor in = numbered_rows(dtype);
    const at::Tensor out = call_exchange("nvalchemi::halo_forward_static", in);
    EXPECT_EQ(out.scalar_type(), dtype);
    EXPECT_EQ(values(out), (std::vector<double>{1, 10, 2, 20, 3, 30, 3, 30, 1, 10, 1, 10, 2, 20}));
    EXPECT_EQ(values(in), values(numbered_rows())) << "the op is functional: its input is unchanged";
    EXPECT_EQ(halo.log, Log{"forward"});
  }
  EXPECT_EQ(dispatch.stats().forward, 2u);
}

TEST_F(HaloOps, ScatterCorrectFoldsHaloRowsThenRefreshesThem) {
  attach();
  ActiveDispatcher active(dispatch);
  const at::Tensor out = call_exchange("distspec::halo_scatter_correct_static", numbered_rows());
  // Owner 0 gets halo rows 4 and 5 (5 + 6), owner 1 row 6 (7), owner 2 row 3 (4).
  EXPECT_EQ(values(out), (std::vector<double>{12, 120, 9, 90, 7, 70, 7, 70, 12, 120, 12, 120, 9, 90}));
  EXPECT_EQ(halo.log, (Log{"reverse", "forward"}));
}

TEST_F(HaloOps, ForwardBackwardFoldsHaloRowsAndZeroesThem) {
  attach();
  ActiveDispatcher active(dispatch);
  const at::Tensor out = call_exchange("nvalchemi::halo_forward_static_backward", numbered_rows(at::kFloat));
  EXPECT_EQ(values(out), (std::vector<double>{12, 120, 9, 90, 7, 70, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(halo.log, Log{"reverse"});
}

TEST_F(HaloOps, ExchangesFollowTheSpecsPolicy) {
  // A gather that never refreshes: the forward op is the identity, as the spec says (a
  // multi-layer model is refused under such a spec before it ever runs).
  Dispatcher local(halo_spec("local"), Device::cpu, {}, 2, HaloStrategy::per_layer, OpRegistry{});
  local.attach(halo);
  ActiveDispatcher active(local);
  EXPECT_EQ(values(call_exchange("nvalchemi::halo_forward_static", numbered_rows())), values(numbered_rows()));
  EXPECT_TRUE(halo.log.empty());
}

TEST_F(HaloOps, PerSystemReduceSumsOwnedRowsOverRanks) {
  attach();
  ActiveDispatcher active(dispatch);
  const at::Tensor system = at::tensor({0, 1, 0, 1, 1, 0, 0}, at::kLong);
  const at::Tensor out = call("nvalchemi::per_system_reduce", {numbered_rows(), system, int64_t(2)});
  // Owned rows 0 and 2 in system 0, row 1 in system 1; two ranks holding the same sums.
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values(out), (std::vector<double>{8, 80, 4, 40}));
  EXPECT_EQ(halo.log, Log{"all_reduce"});
  // Owned rows only also when local_vals has only those.
  const at::Tensor owned = call("distspec::per_system_reduce",
                                {at::tensor({1.5, 2.5, 3.0}, at::kFloat), at::tensor({0, 0, 0}, at::kLong), int64_t(1)});
  EXPECT_EQ(owned.scalar_type(), at::kFloat);
  EXPECT_EQ(values(owned), std::vector<double>{14});
}

TEST_F(HaloOps, KeepaliveIsTheIdentity) {
  const Routing r;
  const at::Tensor x = numbered_rows();
  const at::Tensor out = call("nvalchemi::halo_keepalive", {x, r.send_index, r.recv_dest, r.recv_real, r.n_owned});
  EXPECT_EQ(values(out), values(x));
  EXPECT_NE(out.data_ptr(), x.data_ptr());
}

// The error of a call, which must be a distspec::Error whatever torch wraps around it.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a distspec::Error: ") + e.what();
  }
  return "";
}

TEST_F(HaloOps, RoutingIsCheckedAgainstTheExchangesRows) {
  attach();
  ActiveDispatcher active(dispatch);
  const std::string op = "nvalchemi::halo_forward_static";
  EXPECT_EQ(error_of([&] { call_exchange(op, numbered_rows().slice(0, 0, 5)); }),
            op + ": padded_in has shape [5, 2], but this step's rows are n_owned + n_halo = 3 + 4; per-node inputs "
                 "span owned and halo rows (positions' first dimension)");
  Routing wrong_owned;
  wrong_owned.n_owned = at::scalar_tensor(int64_t(4), at::kLong);
  EXPECT_EQ(error_of([&] { call_exchange(op, numbered_rows(), wrong_owned); }),
            op + ": n_owned is 4, but this step's rows are n_owned + n_halo = 3 + 4; pass the graph's n_owned input "
                 "through");
  Routing short_dest;
  short_dest.recv_dest = at::arange(3, 6, at::kLong);
  EXPECT_EQ(error_of([&] { call_exchange("distspec::halo_scatter_correct_static", numbered_rows(), short_dest); }),
            "distspec::halo_scatter_correct_static: recv_dest has shape [3], expected [4]: this step's rows are "
            "n_owned + n_halo = 3 + 4; pass the graph's routing inputs through");
  EXPECT_EQ(error_of([&] { call_exchange(op, at::ones({kRows, 2}, at::kLong)); }),
            op + ": padded_in is Long; halo exchanges move float32 or float64 rows");
  EXPECT_TRUE(halo.log.empty()) << "nothing is exchanged when the routing does not match";
  // The scope keeps the first error, which a graph runtime may have reworded.
  ASSERT_TRUE(active.kernel_error());
  EXPECT_EQ(error_of([&] { std::rethrow_exception(active.kernel_error()); }).find(op + ": padded_in has shape [5, 2]"),
            0u);
}

TEST_F(HaloOps, WithoutAnActiveDispatcherTheOpsSaySo) {
  EXPECT_EQ(error_of([&] { call_exchange("nvalchemi::halo_forward_static", numbered_rows()); }),
            "nvalchemi::halo_forward_static: called with no halo exchange active; the op runs inside a DISTSPEC torch "
            "model (pair_style distspec), which attaches the step's exchange");
}

// <A x, y> = <x, A^T y> for random x, y: the backward each op registers is the adjoint of its
// forward, as autograd computes it.
TEST_F(HaloOps, AutogradBackwardIsTheAdjoint) {
  attach();
  ActiveDispatcher active(dispatch);
  at::manual_seed(7);
  for (const char* op : {"nvalchemi::halo_forward_static", "distspec::halo_scatter_correct_static",
                         "nvalchemi::halo_forward_static_backward"}) {
    SCOPED_TRACE(op);
    const at::Tensor x = at::randn({kRows, 3}, at::kDouble).requires_grad_(true);
    const at::Tensor y = at::randn({kRows, 3}, at::kDouble);
    const at::Tensor ax = call_exchange(op, x);
    ASSERT_TRUE(ax.requires_grad());
    const at::Tensor grad = torch::autograd::grad({(ax * y).sum()}, {x})[0];
    EXPECT_NEAR((ax * y).sum().item<double>(), (x * grad).sum().item<double>(), 1e-12);
  }
  // The forward op's backward is the reverse exchange; the scatter-correction's, itself.
  halo.log.clear();
  const at::Tensor x = numbered_rows().requires_grad_(true);
  const at::Tensor w = numbered_rows();
  const at::Tensor g = torch::autograd::grad({(call_exchange("nvalchemi::halo_forward_static", x) * w).sum()}, {x})[0];
  EXPECT_EQ(halo.log, (Log{"forward", "reverse"}));
  EXPECT_EQ(values(g), values(call_exchange("nvalchemi::halo_forward_static_backward", w)));
}

TEST_F(HaloOps, AutogradOfPerSystemReduceAllReducesThenGathers) {
  attach();
  ActiveDispatcher active(dispatch);
  const at::Tensor x = numbered_rows().requires_grad_(true);
  const at::Tensor system = at::tensor({1, 0, 1, 1, 0, 0, 1}, at::kLong);
  const at::Tensor sums = call("nvalchemi::per_system_reduce", {x, system, int64_t(2)});
  const at::Tensor weight = at::tensor({1.0, 2.0, 3.0, 4.0}, at::kDouble).reshape({2, 2});
  const at::Tensor g = torch::autograd::grad({(sums * weight).sum()}, {x})[0];
  // Each rank's gradient is summed over the two ranks (x2), then gathered to owned rows by system.
  EXPECT_EQ(values(g), (std::vector<double>{6, 8, 2, 4, 6, 8, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(halo.log, (Log{"all_reduce", "all_reduce"}));
}

// The opaque backward the exporter traces (tools/distspec_export/ops.py) against an independent
// reference: the gradient summed over the two ranks, row i of the result the gradient of
// system_index[i] for owned rows, zero for halo rows. Its adjoint is per_system_reduce.
TEST_F(HaloOps, PerSystemReduceBackwardAllReducesThenGathersIntoOwnedRows) {
  attach();
  ActiveDispatcher active(dispatch);
  const at::Tensor system = at::tensor({1, 0, 1, 1, 0, 0, 1}, at::kLong);
  const at::Tensor grad_out = at::tensor({1.0, 2.0, 3.0, 4.0}, at::kFloat).reshape({2, 2});
  for (const char* op : {"nvalchemi::per_system_reduce_backward", "distspec::per_system_reduce_backward"}) {
    SCOPED_TRACE(op);
    halo.log.clear();
    const at::Tensor g = call(op, {grad_out, system});
    EXPECT_EQ(g.scalar_type(), at::kFloat);
    EXPECT_EQ(g.sizes(), (std::vector<int64_t>{kRows, 2}));
    std::vector<double> expected(kRows * 2, 0.0);
    const std::vector<double> per_system{1, 2, 3, 4};
    for (std::size_t i = 0; i < kOwned; ++i)
      for (std::size_t c = 0; c < 2; ++c)
        expected[i * 2 + c] = 2 * per_system[system[i].item<int64_t>() * 2 + c];  // two ranks
    EXPECT_EQ(values(g), expected);
    EXPECT_EQ(halo.log, Log{"all_reduce"});
  }
  // The same as per_system_reduce's own autograd.
  const at::Tensor x = numbered_rows().requires_grad_(true);
  const at::Tensor sums = call("nvalchemi::per_system_reduce", {x, system, int64_t(2)});
  const at::Tensor weight = grad_out.to(at::kDouble);
  EXPECT_EQ(values(torch::autograd::grad({(sums * weight).sum()}, {x})[0]),
            values(call("nvalchemi::per_system_reduce_backward", {weight, system})));
  // <B g, x> = <g, B^T x> through its autograd kernel, B^T being per_system_reduce.
  at::manual_seed(11);
  const at::Tensor g = at::randn({2, 3}, at::kDouble).requires_grad_(true);
  const at::Tensor y = at::randn({kRows, 3}, at::kDouble);
  const at::Tensor bg = call("distspec::per_system_reduce_backward", {g, system});
  const at::Tensor grad = torch::autograd::grad({(bg * y).sum()}, {g})[0];
  EXPECT_NEAR((bg * y).sum().item<double>(), (g * grad).sum().item<double>(), 1e-12);
  EXPECT_EQ(values(grad), values(call("distspec::per_system_reduce", {y, system, int64_t(2)})));
  // Bad arguments name the op.
  EXPECT_NE(error_of([&] { call("nvalchemi::per_system_reduce_backward", {grad_out, system.to(at::kFloat)}); })
                .find("nvalchemi::per_system_reduce_backward: system_index must be an integer vector"),
            std::string::npos);
}

// On one rank nothing is summed over ranks: per_system_reduce and its adjoint stay on the rows'
// device (no download, no wait for the graph) and give what the path through the host's
// all-reduce gives on a rank whose all-reduce is the identity. Each still records its collective,
// which a rank without atoms of a run of several makes in its place.
TEST_F(HaloOps, OnOneRankTheReductionsStayOnTheRowsDevice) {
  const at::Tensor system = at::tensor({1, 0, 1, 1, 0, 0, 1}, at::kLong);
  const at::Tensor grad_out = at::tensor({1.0, 2.0, 3.0, 4.0}, at::kFloat).reshape({2, 2});
  // Through the host: an exchange that says two ranks, whose all-reduce keeps the values.
  RecordingHalo two_ranks{kOwned, kHaloOwner, 2};
  struct Identity final : HaloExchange {
    RecordingHalo& inner;
    explicit Identity(RecordingHalo& h) : inner(h) {}
    std::size_t n_owned() const override { return inner.n_owned(); }
    std::size_t n_halo() const override { return inner.n_halo(); }
    int n_ranks() const override { return 2; }
    void forward(Rows<double> r) override { inner.forward(r); }
    void forward(Rows<float> r) override { inner.forward(r); }
    void reverse(Rows<double> r) override { inner.reverse(r); }
    void reverse(Rows<float> r) override { inner.reverse(r); }
    void all_reduce_sum(double*, std::size_t) override { inner.log.push_back("all_reduce"); }
  } through_host(two_ranks);
  RecordingHalo one_rank{kOwned, kHaloOwner, 1};
  std::vector<std::vector<double>> results[2];
  std::vector<models::torch_kind::HaloCall> calls[2];
  for (int k = 0; k < 2; ++k) {
    Dispatcher d{halo_spec(), Device::cpu, {}, 1, HaloStrategy::per_layer, OpRegistry{}};
    if (k == 0) d.attach(through_host);
    else d.attach(one_rank);
    ActiveDispatcher active(d);
    active.record(&calls[k]);
    results[k].push_back(values(call("nvalchemi::per_system_reduce", {numbered_rows(at::kFloat), system, int64_t(2)})));
    results[k].push_back(values(call("nvalchemi::per_system_reduce_backward", {grad_out, system})));
  }
  EXPECT_EQ(results[1], results[0]);
  EXPECT_EQ(results[1][0], (std::vector<double>{2, 20, 4, 40}));  // system 0: row 1; system 1: rows 0 and 2
  EXPECT_EQ(two_ranks.log, (Log{"all_reduce", "all_reduce"}));
  EXPECT_TRUE(one_rank.log.empty()) << "one rank has nothing to all-reduce";
  ASSERT_EQ(calls[1].size(), 2u);
  for (int c = 0; c < 2; ++c) {
    EXPECT_EQ(calls[1][c].kind, calls[0][c].kind);
    EXPECT_EQ(calls[1][c].width, calls[0][c].width);
  }
  // A system index out of range is named, on the host.
  Dispatcher d{halo_spec(), Device::cpu, {}, 1, HaloStrategy::per_layer, OpRegistry{}};
  d.attach(one_rank);
  ActiveDispatcher active(d);
  EXPECT_EQ(error_of([&] { call("nvalchemi::per_system_reduce", {numbered_rows(), system, int64_t(1)}); }),
            "nvalchemi::per_system_reduce: system_index[0] = 1 is not in [0, 1)");
}

// The exchange ops check n_owned against the shapes: recv_dest has one entry per halo row, so a
// graph whose rows and routing match the exchange's has its owned count; a host n_owned is read
// too (no wait), a device one never is.
TEST_F(HaloOps, TheShapesFixTheOwnedCount) {
  attach();
  ActiveDispatcher active(dispatch);
  Routing r;
  r.recv_dest = at::arange(2, kRows, at::kLong);  // five halo rows: n_owned would be 2
  r.recv_real = at::ones({kRows - 2}, at::kBool);
  r.n_owned = at::scalar_tensor(int64_t(2), at::kLong);
  EXPECT_NE(error_of([&] { call_exchange("nvalchemi::halo_forward_static", numbered_rows(), r); }).find("n_owned is 2"),
            std::string::npos);
  r.n_owned = at::scalar_tensor(int64_t(kOwned), at::kLong);
  EXPECT_EQ(error_of([&] { call_exchange("nvalchemi::halo_forward_static", numbered_rows(), r); }),
            "nvalchemi::halo_forward_static: recv_dest has shape [5], expected [4]: this step's rows are n_owned + "
            "n_halo = 3 + 4; pass the graph's routing inputs through");
}

// TorchScript resolves the ops by schema, so a scripted graph calls DISTSPEC's kernels.
TEST_F(HaloOps, TorchScriptCallsTheRegisteredKernels) {
  attach();
  ActiveDispatcher active(dispatch);
  torch::jit::CompilationUnit unit;
  unit.define(std::nullopt, R"JIT(
def refresh(x, si, rd, rr, no):
    return nvalchemi.halo_forward_static(x, si, rd, rr, no, 1) + distspec.halo_keepalive(x, si, rd, rr, no)
)JIT", test::op_namespace_resolver(), nullptr);
  const Routing r;
  const at::Tensor x = numbered_rows();
  const at::Tensor out = unit.run_method("refresh", x, r.send_index, r.recv_dest, r.recv_real, r.n_owned).toTensor();
  EXPECT_EQ(values(out), values(call_exchange("nvalchemi::halo_forward_static", x) + x));
}

}  // namespace
}  // namespace distspec
