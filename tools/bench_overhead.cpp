// normjit bench --overhead: what the launch path costs the host on a cache hit, against the
// bare driver launches of the same kernels (issue 4: a database hit ≤ 2 µs; issue 6: ≤ 2 µs
// through the C++ API).
//
// Host time per call is the wall time of many back-to-back calls divided by their count. That
// is the host's cost only while the GPU keeps up, so the GPU's own time per call (events
// around the same calls) is printed beside it: the row is valid where gpu µs < host µs.
#include <chrono>
#include <cstdio>

#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "codegen/search_space.h"
#include "runtime/backward_call.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "runtime/launch_params.h"
#include "runtime/launch_plan.h"
#include "runtime/tuner_timing.h"
#include "runtime/tuning_db.h"
#include "runtime/tuning_key.h"
#include "tools/bench_overhead.h"

namespace normjit::tools {
namespace {

using runtime::driver;
using Clock = std::chrono::steady_clock;

constexpr int kCalls = 2000;

template <class Work>
double host_us_per_call(int calls, Work&& work) {
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) work();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / calls;
}

struct OverheadCase {
  const char* name;
  NormKind kind;
  int64_t m, n;
  bool caller_workspace;
};

}  // namespace

void run_overhead(Engine& engine, CUcontext ctx, CUstream stream) {
  const auto& d = driver();
  const std::string what = "bench --overhead";
  const OverheadCase cases[] = {
      {"LN bf16 M=1 N=1024 (one kernel)", NormKind::LayerNorm, 1, 1024, true},
      {"RMS bf16 M=199 N=1024 + reduction, caller workspace", NormKind::RMSNorm, 199, 1024, true},
      {"RMS bf16 M=199 N=1024 + reduction, stream-ordered workspace", NormKind::RMSNorm, 199, 1024, false},
  };
  runtime::DeviceBuffer x(199 * 1024 * 2, what), dy(199 * 1024 * 2, what), dx(199 * 1024 * 2, what);
  runtime::DeviceBuffer stats(199 * 4, what), weight(1024 * 4, what), dweight(1024 * 4, what), dbias(1024 * 4, what);
  x.upload(runtime::random_bytes(DType::BF16, 199 * 1024, 1), what);
  dy.upload(runtime::random_bytes(DType::BF16, 199 * 1024, 2), what);
  auto s = runtime::random_bytes(DType::F32, 199, 3);
  for (int i = 0; i < 199; ++i) reinterpret_cast<float*>(s.data())[i] = 1.0f;
  stats.upload(s, what);
  weight.upload(runtime::random_bytes(DType::F32, 1024, 4), what);
  runtime::EventTimer timer(what);

  std::printf("\nhost cost per backward call on a cache hit, %d back-to-back calls (C++ API, Engine::backward)\n",
              kCalls);
  std::printf("%-62s %10s %10s %10s %10s\n", "case", "engine us", "driver us", "overhead", "gpu us");
  for (const OverheadCase& c : cases) {
    NormProblem problem;
    problem.kind = c.kind;
    problem.n = c.n;
    problem.x_dtype = DType::BF16;
    problem.weight_dtype = DType::F32;
    problem.has_bias = c.kind == NormKind::LayerNorm;
    BackwardArgs a;
    a.m = c.m;
    a.x = x.get();
    a.dy = dy.get();
    a.mean = c.kind == NormKind::LayerNorm ? reinterpret_cast<const float*>(stats.get()) : nullptr;
    a.rstd = reinterpret_cast<const float*>(stats.get());
    a.weight = weight.get();
    a.dx = dx.get();
    a.dweight = dweight.get();
    a.dbias = problem.has_bias ? dbias.get() : nullptr;
    runtime::DeviceBuffer workspace;
    if (c.caller_workspace) {
      const size_t bytes = engine.workspace_size(problem, c.m);
      workspace = runtime::DeviceBuffer(bytes, what);
      a.workspace = workspace.get();
      a.workspace_bytes = bytes;
    }
    auto call = [&] { engine.backward(problem, a, stream); };
    for (int i = 0; i < 50; ++i) call();  // compile, load, warm
    NJ_CU(d.cuStreamSynchronize(stream), what);
    const double engine_us = host_us_per_call(kCalls, call);
    NJ_CU(d.cuStreamSynchronize(stream), what);
    const double gpu_us = timer.microseconds(stream, [&] {
      for (int i = 0; i < kCalls; ++i) call();
    }) / kCalls;

    // The same kernels launched straight through the driver, with the same parameters.
    const NormProblem resolved = runtime::check_backward_call(problem, a).problem;
    const LoadedKernel& k = engine.impl().kernel_for(ctx, resolved, c.m);
    const int64_t groups = runtime::row_groups(k.config, k.limits, c.m, k.resident_groups);
    const bool direct = runtime::writes_gradients_directly(k.config, groups);
    runtime::DeviceBuffer partial(std::max<size_t>(runtime::launch_workspace_bytes(resolved, k.config, groups), 256),
                                  what);
    runtime::BackwardParams params{a.m,      a.x,      0,         a.dy,      0,
                                   a.mean,   a.rstd,   a.weight,  a.dx,      0,
                                   direct ? nullptr : reinterpret_cast<float*>(partial.get()), groups, 0, a.dweight, a.dbias};
    params.x_stride = params.dy_stride = params.dx_stride = c.n;
    auto raw = [&] { Engine::Impl::launch_kernels(k, resolved, params, groups, stream); };
    for (int i = 0; i < 50; ++i) raw();
    NJ_CU(d.cuStreamSynchronize(stream), what);
    const double raw_us = host_us_per_call(kCalls, raw);
    NJ_CU(d.cuStreamSynchronize(stream), what);
    std::printf("%-62s %10.2f %10.2f %10.2f %10.2f\n", c.name, engine_us, raw_us, engine_us - raw_us, gpu_us);
  }

  // A tuning-database hit, as the engine makes it when a (problem, M bucket) is first met:
  // the key, the lookup, and the checks that the stored config can run. Later calls of that
  // bucket never see the database (the loaded kernel is remembered).
  NormProblem p;
  p.kind = NormKind::LayerNorm;
  p.n = 4096;
  p.x_dtype = DType::BF16;
  p.weight_dtype = DType::F32;
  p.has_bias = true;
  const NormProblem resolved = codegen::resolve_problem(p);
  const runtime::DeviceLimits limits = engine.impl().query_limits(ctx);
  const runtime::TuningDevice device = engine.impl().tuning_device(limits);
  runtime::TuningDb db;  // memory only
  for (int64_t m = 1; m <= (int64_t{1} << 20); m *= 2) {  // a database of some size
    runtime::TunedConfig t;
    t.config = codegen::choose_launch_config(resolved, limits.sm);
    t.us = 100;
    db.put(runtime::make_tuning_key(device, resolved, m).text(), t);
  }
  int hits = 0;
  const double lookup_us = host_us_per_call(100000, [&] {
    const auto hit = db.find(runtime::make_tuning_key(device, resolved, 16384).text());
    if (hit && codegen::prune_reason(resolved, hit->config, device.sm).empty()) {
      codegen::check_launch_config(resolved, hit->config);
      ++hits;
    }
  });
  std::printf("tuning-database hit (key, lookup, config checks), once per problem and M bucket: %.2f us (%d hits)\n",
              lookup_us, hits);
}

}  // namespace normjit::tools
