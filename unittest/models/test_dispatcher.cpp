// The dispatcher: which halo exchanges each policy asks for, the order of an op adapter's
// transforms around its kernel, and what a spatial decomposition must refuse, with the
// pointer of the offending spec value.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "distspec/dispatch/dispatcher.h"
#include "distspec/error.h"
#include "distspec/halo/indexed_halo_exchange.h"
#include "model_test_util.h"
#include "recording_halo.h"

namespace distspec {

// A state no test op's handle declares; outside the anonymous namespace so that its spelling in
// error messages is the same for every compiler.
struct OtherState {};

namespace {

using test::error_of;
using test::RecordingHalo;

// Two owned rows, three halo rows (images of 0, 1, 0).
RecordingHalo small_halo() { return RecordingHalo(2, {0, 1, 0}); }

DistributionSpec spec_of(const std::string& kind, std::vector<OpAdapter> ops = {}) {
  DistributionSpec s;
  s.policy = StoragePolicy(kind);
  s.custom_ops = std::move(ops);
  return s;
}

using Log = std::vector<std::string>;

// The test ops: test::plain logs the string it is called with, the others read no state.
constexpr Op<NoState> kProbe{"test::probe"}, kSlow{"test::slow"}, kIdle{"test::idle"}, kCalled{"test::called"},
    kBatchedVariant{"test::batched_variant"}, kOp{"test::op"};
constexpr Op<std::string> kPlain{"test::plain"};

TEST(Dispatcher, HaloScatterIsReverseThenForward) {
  RecordingHalo halo = small_halo();
  Dispatcher d(spec_of("halo"), Device::cpu, {}, 2, HaloStrategy::per_layer, OpRegistry{});
  d.attach(halo);
  std::vector<double> acc{1, 2, 10, 20, 30};
  d.after_scatter(Rows<double>{acc.data(), acc.size(), 1});
  EXPECT_EQ(halo.log, (Log{"reverse", "forward"}));
  EXPECT_EQ(acc, (std::vector<double>{41, 22, 41, 22, 41}));
  EXPECT_EQ(d.stats().reverse, 1u);
  EXPECT_EQ(d.stats().forward, 1u);
}

TEST(Dispatcher, HaloReadGatherRefreshesFeaturesNotCoordinates) {
  RecordingHalo halo = small_halo();
  Dispatcher d(spec_of("halo"), Device::cpu, {}, 2, HaloStrategy::per_layer, OpRegistry{});
  d.attach(halo);
  std::vector<float> x{1, 2, 0, 0, 0};
  d.before_gather(Rows<float>{x.data(), x.size(), 1}, RowKind::coordinates);
  EXPECT_TRUE(halo.log.empty());
  d.before_gather(Rows<float>{x.data(), x.size(), 1});
  EXPECT_EQ(halo.log, Log{"forward"});
  EXPECT_EQ(x, (std::vector<float>{1, 2, 1, 2, 1}));
  d.before_gather_adjoint(Rows<float>{x.data(), x.size(), 1});
  EXPECT_EQ(halo.log, (Log{"forward", "reverse"}));
  EXPECT_EQ(x, (std::vector<float>{3, 4, 0, 0, 0}));
}

TEST(Dispatcher, ExpandedHaloExchangesNoFeatures) {
  RecordingHalo halo = small_halo();
  Dispatcher d(spec_of("halo"), Device::cpu, {}, 2, HaloStrategy::expanded, OpRegistry{});
  d.attach(halo);
  std::vector<double> acc{1, 2, 10, 20, 30};
  d.after_scatter(Rows<double>{acc.data(), acc.size(), 1});
  d.before_gather(Rows<double>{acc.data(), acc.size(), 1});
  EXPECT_TRUE(halo.log.empty());
}

TEST(Dispatcher, RefreshHaloWithLocalScatterDoesNoScatterExchange) {
  RecordingHalo halo = small_halo();
  Dispatcher d(spec_of("refresh_halo"), Device::cpu, {}, 2, HaloStrategy::per_layer, OpRegistry{});
  d.attach(halo);
  EXPECT_FALSE(d.scatter_corrects());
  std::vector<double> acc{1, 2, 10, 20, 30};
  d.after_scatter(Rows<double>{acc.data(), acc.size(), 1});
  EXPECT_TRUE(halo.log.empty());
  EXPECT_EQ(acc, (std::vector<double>{1, 2, 10, 20, 30}));
  d.before_gather(Rows<double>{acc.data(), acc.size(), 1});  // gather_mode defaults to halo_read
  EXPECT_EQ(halo.log, Log{"forward"});
}

// test::probe sees its arguments after gather_inputs (arg 0) and slice_owned (arg 1), and
// writes per-row partials (out 0, scatter_outputs) and a per-rank sum (out 1, all_reduce_sum).
TEST(Dispatcher, OpTransformsRunInTheSpecsOrder) {
  RecordingHalo halo = small_halo();
  OpRegistry registry;
  std::vector<double> seen_arg0;
  std::size_t seen_arg1_rows = 0;
  registry.add<Device::cpu>(kProbe, [&](Span<const TensorRef> args, Span<const TensorRef> outs, const NoState&) {
    halo.log.push_back("kernel");
    const double* a0 = args[0].as<double>();
    seen_arg0.assign(a0, a0 + args[0].size());
    seen_arg1_rows = args[1].rows;
    double* o0 = outs[0].as<double>();
    for (std::size_t i = 0; i < outs[0].rows; ++i) o0[i] = 1.0;
    *outs[1].as<double>() = 5.0;
  });
  const OpAdapter probe("test::probe", {{0, ArgTransform::gather_inputs}, {1, ArgTransform::slice_owned}},
                        {{0, OutputTransform::scatter_outputs}, {1, OutputTransform::all_reduce_sum}});
  Dispatcher d(spec_of("halo", {probe}), Device::cpu, {kProbe}, 2, HaloStrategy::per_layer, registry);
  d.attach(halo);
  std::vector<double> features{7, 8, 0, 0, 0}, positions(15, 0.0), per_row(5, 0.0), total(1, 0.0);
  d.call(kProbe, {TensorRef::of(features.data(), 5), TensorRef::of(positions.data(), 5, 3)},
         {TensorRef::of(per_row.data(), 5), TensorRef::of(total.data(), 1)}, NoState{});
  EXPECT_EQ(halo.log, (Log{"forward", "kernel", "reverse", "forward", "all_reduce"}));
  EXPECT_EQ(seen_arg0, (std::vector<double>{7, 8, 7, 8, 7}));
  EXPECT_EQ(seen_arg1_rows, 2u);
  EXPECT_EQ(per_row, (std::vector<double>{3, 2, 3, 2, 3}));  // row 0 has two images, row 1 one
  EXPECT_EQ(total[0], 10.0);
}

// `timing yes`'s op table: every bound op listed from the start (the same names on every rank),
// its calls counted, the kernel's time apart from its adapter's transforms, and reset_op_timing
// zeroing them all. The kernel sleeps 50 ms: its time has that lower bound, and the adapter's
// (an all-reduce of one value here) must not include it.
TEST(Dispatcher, OpTimingSplitsTheKernelFromItsAdapter) {
  RecordingHalo halo = small_halo();
  OpRegistry registry;
  registry.add<Device::cpu>(kSlow, [](Span<const TensorRef>, Span<const TensorRef>, const NoState&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  registry.add<Device::cpu>(kIdle, [](Span<const TensorRef>, Span<const TensorRef>, const NoState&) {});
  const OpAdapter slow("test::slow", {}, {{0, OutputTransform::all_reduce_sum}});
  Dispatcher d(spec_of("halo", {slow}), Device::cpu, {kSlow, kIdle}, 2, HaloStrategy::per_layer, registry);
  d.attach(halo);
  ASSERT_EQ(d.op_timing().size(), 2u);
  EXPECT_EQ(d.op_timing().at("test::idle").calls, 0u);
  double total = 0.0;
  d.call(kSlow, {}, {TensorRef::of(&total, 1)}, NoState{});
  d.call(kSlow, {}, {TensorRef::of(&total, 1)}, NoState{});
  const OpTiming& t = d.op_timing().at("test::slow");
  EXPECT_EQ(t.calls, 2u);
  EXPECT_GE(t.kernel_seconds, 0.1);
  EXPECT_LT(t.adapter_seconds, 0.05);
  EXPECT_EQ(halo.log, (Log{"all_reduce", "all_reduce"}));
  d.reset_op_timing();
  EXPECT_EQ(d.op_timing().at("test::slow").calls, 0u);
  EXPECT_EQ(d.op_timing().at("test::slow").kernel_seconds, 0.0);
  EXPECT_EQ(d.op_timing().size(), 2u);
}

TEST(Dispatcher, OpsWithoutAdapterPassThrough) {
  RecordingHalo halo = small_halo();
  OpRegistry registry;
  registry.add<Device::cpu>(kPlain, [&](Span<const TensorRef>, Span<const TensorRef>, const std::string& state) {
    halo.log.push_back(state);
  });
  Dispatcher d(spec_of("halo"), Device::cpu, {kPlain}, 2, HaloStrategy::per_layer, registry);
  d.attach(halo);
  d.call(kPlain, {}, {}, std::string("kernel"));
  EXPECT_EQ(halo.log, Log{"kernel"});
}

// Adjoints of the transforms around test::probe (args: 0 gather_inputs, 1 slice_owned; outs:
// 0 scatter_outputs, 1 all_reduce_sum, 2 all_reduce_sum with a replicated consumer).
TEST(Dispatcher, AdjointsOfTheTransforms) {
  RecordingHalo halo = small_halo();
  OpRegistry registry;
  registry.add<Device::cpu>(kProbe, [](Span<const TensorRef>, Span<const TensorRef>, const NoState&) {});
  const OpAdapter probe("test::probe", {{0, ArgTransform::gather_inputs}, {1, ArgTransform::slice_owned}},
                        {{0, OutputTransform::scatter_outputs},
                         {1, OutputTransform::all_reduce_sum},
                         {2, OutputTransformEntry(OutputTransform::all_reduce_sum, true)}});
  Dispatcher d(spec_of("halo", {probe}), Device::cpu, {kProbe}, 2, HaloStrategy::per_layer, registry);
  d.attach(halo);

  // Outputs: the partial gradient of a per-row scatter output is reverse-summed and refreshed;
  // a partial of a reduced value is summed over ranks; a replicated one is left alone.
  std::vector<double> g_rows{1, 2, 10, 20, 30}, g_partial{3}, g_replicated{4};
  d.adjoint_outputs("test::probe", {TensorRef::of(g_rows.data(), 5), TensorRef::of(g_partial.data(), 1),
                                    TensorRef::of(g_replicated.data(), 1)});
  EXPECT_EQ(halo.log, (Log{"reverse", "forward", "all_reduce"}));
  EXPECT_EQ(g_rows, (std::vector<double>{41, 22, 41, 22, 41}));
  EXPECT_EQ(g_partial[0], 6.0);  // two ranks holding the same partial
  EXPECT_EQ(g_replicated[0], 4.0);

  // Arguments: a gathered input's halo-row gradients return to their owners; a sliced one's
  // halo rows were never read, so nothing moves.
  halo.log.clear();
  std::vector<double> g_gathered{1, 2, 10, 20, 30}, g_sliced{5, 6, 0, 0, 0};
  d.adjoint_args("test::probe", {TensorRef::of(g_gathered.data(), 5), TensorRef::of(g_sliced.data(), 5)});
  EXPECT_EQ(halo.log, Log{"reverse"});
  EXPECT_EQ(g_gathered, (std::vector<double>{41, 22, 0, 0, 0}));
  EXPECT_EQ(g_sliced, (std::vector<double>{5, 6, 0, 0, 0}));
}

// Only the ops the model calls are bound; an adapter of any other op is checked, not bound.
TEST(Dispatcher, AdaptersOfOpsTheModelNeverCallsAreNotBound) {
  RecordingHalo halo = small_halo();
  OpRegistry registry;
  registry.add<Device::cpu>(kCalled, [](Span<const TensorRef>, Span<const TensorRef>, const NoState&) {});
  const OpAdapter batched("test::batched_variant", {{0, ArgTransform::slice_owned}});
  Dispatcher d(spec_of("halo", {OpAdapter("test::called"), batched}), Device::cpu, {kCalled}, 2,
               HaloStrategy::per_layer, registry);
  d.attach(halo);
  EXPECT_NO_THROW(d.call(kCalled, {}, {}, NoState{}));
  const Error e = error_of([&] { d.call(kBatchedVariant, {}, {}, NoState{}); });
  EXPECT_EQ(e.message(), "op 'test::batched_variant' was not bound when the model was set up");
  const OpAdapter sharded("test::batched_variant", {{0, ArgTransform::gather_inputs_full}});
  const Error checked = error_of([&] {
    Dispatcher(spec_of("halo", {sharded}), Device::cpu, {}, 2, HaloStrategy::per_layer, registry);
  });
  EXPECT_EQ(checked.pointer(), "/core/custom_ops/0/arg_transforms/0/type");
}

TEST(Dispatcher, RefusesWhatSpatialDecompositionCannotRun) {
  for (const char* kind : {"shard", "graph_parallel"}) {
    const Error e = error_of([&] { Dispatcher(spec_of(kind), Device::cpu, {}, 1, HaloStrategy::per_layer, OpRegistry{}); });
    EXPECT_EQ(e.pointer(), "/core/policy/kind") << kind;
    EXPECT_NE(e.message().find(kind), std::string::npos);
  }
  const Error local = error_of([] { Dispatcher(spec_of("local"), Device::cpu, {}, 2, HaloStrategy::per_layer, OpRegistry{}); });
  EXPECT_EQ(local.pointer(), "/core/policy/kind");
  EXPECT_EQ(local.message(), "policy 'local' runs on a single process, but this run has 2 MPI ranks");
  EXPECT_NO_THROW(Dispatcher(spec_of("local"), Device::cpu, {}, 1, HaloStrategy::per_layer, OpRegistry{}));

  OpRegistry registry;
  registry.add<Device::cpu>(kOp, [](Span<const TensorRef>, Span<const TensorRef>, const NoState&) {});
  const OpAdapter full("test::op", {{0, ArgTransform::slice_owned}, {1, ArgTransform::gather_inputs_full}});
  const Error f = error_of([&] { Dispatcher(spec_of("halo", {full}), Device::cpu, {}, 2, HaloStrategy::per_layer, registry); });
  EXPECT_EQ(f.pointer(), "/core/custom_ops/0/arg_transforms/1/type");
  const OpAdapter owned("test::op", {}, {{0, OutputTransform::slice_outputs_owned}});
  const Error o = error_of([&] { Dispatcher(spec_of("halo", {OpAdapter("test::op"), owned}), Device::cpu, {}, 2, HaloStrategy::per_layer, registry); });
  EXPECT_EQ(o.pointer(), "/core/custom_ops/1/output_transforms/0/type");
}

TEST(Dispatcher, UnknownOpsNameTheRegisteredOnes) {
  OpRegistry registry;
  for (const char* name : {"b::two", "a::one"})
    registry.add<Device::cpu>(Op<NoState>{name}, [](Span<const TensorRef>, Span<const TensorRef>, const NoState&) {});
  const Error spec_op = error_of(
      [&] { Dispatcher(spec_of("halo", {OpAdapter("nope::op")}), Device::cpu, {Op<NoState>{"nope::op"}}, 2, HaloStrategy::per_layer, registry); });
  EXPECT_EQ(spec_op.pointer(), "/core/custom_ops/0/op");
  EXPECT_EQ(spec_op.message(), "no loaded kernel provides op 'nope::op' on cpu");
  EXPECT_EQ(spec_op.hint(), "registered ops: a::one, b::two");
  const Error model_op = error_of([&] { Dispatcher(spec_of("halo"), Device::cuda, {Op<NoState>{"a::one"}}, 2, HaloStrategy::per_layer, registry); });
  EXPECT_EQ(model_op.message(), "the model needs op 'a::one', which no loaded kernel provides on cuda");
  EXPECT_EQ(model_op.hint(), "registered ops: a::one, b::two");
}

// A kernel whose state is not the one the model's handle declares (a kernel library built from
// another declaration of the op) is refused when the spec binds, naming both types: for an op
// the spec adapts and for one it passes through, and per device where the handle's states differ.
TEST(Dispatcher, AKernelOfAnotherStateIsRefusedAtBind) {
  OpRegistry registry;
  registry.add<Device::cpu>(Op<OtherState>{"test::probe"}, [](Span<const TensorRef>, Span<const TensorRef>, const OtherState&) {});
  const Error adapted = error_of([&] {
    Dispatcher(spec_of("halo", {OpAdapter("test::probe")}), Device::cpu, {kProbe}, 2, HaloStrategy::per_layer, registry);
  });
  EXPECT_EQ(adapted.pointer(), "/core/custom_ops/0/op");
  EXPECT_EQ(adapted.message(),
            "op 'test::probe' on cpu: the model calls it with state distspec::NoState, but its loaded kernel takes "
            "distspec::OtherState");
  const Error passed = error_of([&] { Dispatcher(spec_of("halo"), Device::cpu, {kProbe}, 2, HaloStrategy::per_layer, registry); });
  EXPECT_EQ(passed.pointer(), "");
  EXPECT_EQ(passed.message(), adapted.message());

  // One handle, a state per device: the cuda kernel takes OtherState, the cpu kernel NoState.
  constexpr Op<NoState, OtherState> kSplit{"test::split"};
  registry.add<Device::cpu>(kSplit, [](Span<const TensorRef>, Span<const TensorRef>, const NoState&) {});
  registry.add<Device::cuda>(kSplit, [](Span<const TensorRef>, Span<const TensorRef>, const OtherState&) {});
  EXPECT_NO_THROW(Dispatcher(spec_of("halo"), Device::cpu, {kSplit}, 2, HaloStrategy::per_layer, registry));
  EXPECT_NO_THROW(Dispatcher(spec_of("halo"), Device::cuda, {kSplit}, 2, HaloStrategy::per_layer, registry));
  const Error cuda = error_of([&] {
    Dispatcher(spec_of("halo"), Device::cuda, {Op<NoState>{"test::split"}}, 2, HaloStrategy::per_layer, registry);
  });
  EXPECT_EQ(cuda.message(),
            "op 'test::split' on cuda: the model calls it with state distspec::NoState, but its loaded kernel takes "
            "distspec::OtherState");
  // The call: with the handle's other state, the state of the other device.
  Dispatcher on_cpu(spec_of("halo"), Device::cpu, {kSplit}, 2, HaloStrategy::per_layer, registry);
  const Error other = error_of([&] { on_cpu.call(kSplit, {}, {}, OtherState{}); });
  EXPECT_EQ(other.message(), "op 'test::split' was called with its cuda state; this dispatcher runs it on cpu");
}

}  // namespace
}  // namespace distspec
