#include "runtime/tuner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>

#include "codegen/forward_config.h"
#include "codegen/norm_problem.h"
#include "codegen/search_space.h"
#include "runtime/backward_call.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "runtime/forward_call.h"
#include "runtime/tuner_timing.h"

namespace normjit::runtime {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string format_us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f us", us);
  return buf;
}

class PrivateStream {
 public:
  PrivateStream() { NJ_CU(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "tuning: creating a stream"); }
  ~PrivateStream() { driver().cuStreamDestroy(stream_); }
  PrivateStream(const PrivateStream&) = delete;
  PrivateStream& operator=(const PrivateStream&) = delete;
  CUstream get() const { return stream_; }

 private:
  CUstream stream_ = nullptr;
};

// Elements between rows of a `dtype` tensor so every row starts on `alignment` bytes, as the
// problem promises its kernels: rows of N = 4095 bf16 tuned at align=16 are padded rows, and
// contiguous ones would make the kernel's vector loads fault (and poison the context).
int64_t aligned_row_stride(int64_t n, size_t element_bytes, int alignment) {
  const size_t a = static_cast<size_t>(std::max(1, alignment));
  const size_t row_bytes = (static_cast<size_t>(n) * element_bytes + a - 1) / a * a;
  return static_cast<int64_t>((row_bytes + element_bytes - 1) / element_bytes);
}

// m rows of `dtype` at a row stride of `stride` elements, random (padding included).
DeviceBuffer random_rows(DType dtype, int64_t m, int64_t stride, uint32_t seed, const std::string& what) {
  const size_t elements = static_cast<size_t>(m) * static_cast<size_t>(stride);
  DeviceBuffer rows(elements * codegen::dtype_size(dtype), what);
  rows.fill_random(dtype, elements, seed, what);
  return rows;
}

// The tuner's own tensors for m rows of a problem, filled with random data, laid out at the
// row alignment the problem assumes.
struct Scratch {
  DeviceBuffer x, dy, dx, mean, rstd, weight, dweight, dbias, workspace;
  DeviceBuffer dresidual, rowscale, keep_mask, dresidual_in, z, dz;  // fused options (docs/FUSED.md)
  DeviceBuffer dy1, weight1, dweight1, dbias1;                       // parallel norms
  DeviceBuffer y, bias;                                              // recompute from the output
  BackwardArgs args;

  Scratch(const NormProblem& p, int64_t m, size_t workspace_bytes) {
    const std::string what = "tuning " + codegen::describe(p);
    const size_t n = static_cast<size_t>(p.n);
    args.x_stride = aligned_row_stride(p.n, codegen::dtype_size(p.x_dtype), p.alignment);
    args.dy_stride = aligned_row_stride(p.n, codegen::dtype_size(p.dy_dtype), p.alignment);
    args.dx_stride = aligned_row_stride(p.n, codegen::dtype_size(p.dx_dtype), p.alignment);
    x = random_rows(p.x_dtype, m, args.x_stride, 1, what);
    dy = random_rows(p.dy_dtype, m, args.dy_stride, 2, what);
    dx = DeviceBuffer(static_cast<size_t>(m) * static_cast<size_t>(args.dx_stride) * codegen::dtype_size(p.dx_dtype),
                      what);
    mean = DeviceBuffer(static_cast<size_t>(m) * 4, what);
    rstd = DeviceBuffer(static_cast<size_t>(m) * 4, what);
    weight = DeviceBuffer(n * codegen::dtype_size(p.weight_dtype), what);
    dweight = DeviceBuffer(n * codegen::dtype_size(p.weight_dtype), what);
    dbias = DeviceBuffer(n * codegen::dtype_size(p.weight_dtype), what);
    workspace = DeviceBuffer(workspace_bytes, what);
    weight.upload(random_bytes(p.weight_dtype, n, 3), what);
    std::vector<char> stats = random_bytes(DType::F32, static_cast<size_t>(m), 4);
    auto* f = reinterpret_cast<float*>(stats.data());
    for (int64_t i = 0; i < m; ++i) f[i] *= 0.1f;
    mean.upload(stats, what);
    for (int64_t i = 0; i < m; ++i) f[i] = 1.0f + std::fabs(f[i]);
    rstd.upload(stats, what);

    args.m = m;
    args.x = x.get();
    args.dy = dy.get();
    args.mean = p.kind == NormKind::LayerNorm ? static_cast<const float*>(mean.get()) : nullptr;
    args.rstd = static_cast<const float*>(rstd.get());
    args.weight = p.has_weight ? weight.get() : nullptr;
    args.dx = dx.get();
    args.dweight = p.has_weight ? dweight.get() : nullptr;
    args.dbias = p.has_bias ? dbias.get() : nullptr;
    args.workspace = workspace.get();
    args.workspace_bytes = workspace.bytes();
    add_fused_inputs(p, m, stats, what);
  }

  // The fused options' tensors, so a fused kernel is timed with all of its traffic (dh
  // written as well, where it may be).
  void add_fused_inputs(const NormProblem& p, int64_t m, const std::vector<char>& positive_floats,
                        const std::string& what) {
    // dresidual and dh share dx's row stride (in place, dx may be dresidual itself).
    const size_t dx_bytes = static_cast<size_t>(m) * static_cast<size_t>(args.dx_stride) * codegen::dtype_size(p.dx_dtype);
    if (p.residual) {
      dresidual = random_rows(p.dx_dtype, m, args.dx_stride, 5, what);
      args.dresidual = dresidual.get();
      args.dresidual_stride = args.dx_stride;
    }
    if (p.rowscale) {
      rowscale = DeviceBuffer(static_cast<size_t>(m) * 4, what);
      rowscale.upload(positive_floats, what);
      args.rowscale = static_cast<const float*>(rowscale.get());
    }
    if (p.dropout != DropoutMask::None) {
      const int64_t row_bytes = aligned_row_stride(codegen::dropout_mask_row_bytes(p.dropout, p.n), 1, p.alignment);
      const std::vector<char> mask(static_cast<size_t>(m * row_bytes), 0x5b);  // a mix of kept and dropped
      keep_mask = DeviceBuffer(mask.size(), what);
      keep_mask.upload(mask, what);
      args.dropout_mask = keep_mask.get();
      args.dropout_mask_stride = row_bytes;
      args.dropout_p = 0.1;
    }
    if (p.rowscale || p.dropout != DropoutMask::None) {
      dresidual_in = DeviceBuffer(dx_bytes, what);
      args.dresidual_in = dresidual_in.get();
      args.dresidual_in_stride = args.dx_stride;
    }
    if (p.gate != Gate::None) {
      // z at x's row stride, dz at dx's (the alignment the problem assumes).
      z = random_rows(p.x_dtype, m, args.x_stride, 6, what);
      args.z = z.get();
      args.z_stride = args.x_stride;
      dz = DeviceBuffer(dx_bytes, what);
      args.dz = dz.get();
      args.dz_stride = args.dx_stride;
    }
    if (p.parallel) {
      const size_t n = static_cast<size_t>(p.n), weight_bytes = n * codegen::dtype_size(p.weight_dtype);
      dy1 = random_rows(p.dy_dtype, m, args.dy_stride, 7, what);
      args.dy1 = dy1.get();
      args.dy1_stride = args.dy_stride;
      weight1 = DeviceBuffer(weight_bytes, what);
      weight1.upload(random_bytes(p.weight_dtype, n, 8), what);
      dweight1 = DeviceBuffer(weight_bytes, what);
      dbias1 = DeviceBuffer(weight_bytes, what);
      args.weight1 = p.has_weight ? weight1.get() : nullptr;
      args.dweight1 = p.has_weight ? dweight1.get() : nullptr;
      args.dbias1 = p.has_bias ? dbias1.get() : nullptr;
    }
    if (p.recompute_from_output) {
      // The memory-efficient call: y (at x's row stride) and β instead of x and mean.
      y = random_rows(p.x_dtype, m, args.x_stride, 9, what);
      args.y = y.get();
      args.y_stride = args.x_stride;
      args.x = nullptr;
      args.mean = nullptr;
      if (p.has_bias) {
        const size_t n = static_cast<size_t>(p.n);
        bias = DeviceBuffer(n * codegen::dtype_size(p.weight_dtype), what);
        bias.upload(random_bytes(p.weight_dtype, n, 10), what);
        args.bias = bias.get();
      }
    }
  }
};

// The forward's tensors for m rows: x random, y, mean and rstd written, γ and β random; with
// fused options their tensors too (h and the keep-mask written), so a fused forward is timed
// with all of its traffic.
struct ForwardScratch {
  DeviceBuffer x, y, mean, rstd, weight, bias, residual, h, rowscale, keep_mask, z, weight1, bias1, y1;
  ForwardArgs args;

  ForwardScratch(const NormProblem& p, int64_t m) {
    const std::string what = "tuning " + codegen::describe_forward(p);
    const size_t n = static_cast<size_t>(p.n), w = codegen::dtype_size(p.weight_dtype);
    args.m = m;
    args.x_stride = args.y_stride = aligned_row_stride(p.n, codegen::dtype_size(p.x_dtype), p.alignment);
    const size_t x_bytes = static_cast<size_t>(m) * static_cast<size_t>(args.x_stride) * codegen::dtype_size(p.x_dtype);
    // y in its own dtype (dy_dtype), at the same row stride: a wider y only raises the alignment.
    const size_t y_bytes = static_cast<size_t>(m) * static_cast<size_t>(args.y_stride) * codegen::dtype_size(p.dy_dtype);
    x = random_rows(p.x_dtype, m, args.x_stride, 1, what);
    y = DeviceBuffer(y_bytes, what);
    mean = DeviceBuffer(static_cast<size_t>(m) * 4, what);
    rstd = DeviceBuffer(static_cast<size_t>(m) * 4, what);
    weight = DeviceBuffer(n * w, what);
    bias = DeviceBuffer(n * w, what);
    weight.upload(random_bytes(p.weight_dtype, n, 3), what);
    bias.upload(random_bytes(p.weight_dtype, n, 4), what);
    args.x = x.get();
    args.y = y.get();
    args.weight = p.has_weight ? weight.get() : nullptr;
    args.bias = p.has_bias ? bias.get() : nullptr;
    args.mean = p.kind == NormKind::LayerNorm ? static_cast<float*>(mean.get()) : nullptr;
    args.rstd = static_cast<float*>(rstd.get());
    if (p.residual) {
      residual = random_rows(p.x_dtype, m, args.x_stride, 5, what);
      args.residual = residual.get();
      args.residual_stride = args.x_stride;
    }
    if (codegen::forms_pre_norm_sum(p)) {
      h = DeviceBuffer(x_bytes, what);
      args.residual_out = h.get();
      args.residual_out_stride = args.x_stride;
    }
    if (p.rowscale) {
      const std::vector<float> ones(static_cast<size_t>(m), 1.0f);  // h stays x's scale
      rowscale = DeviceBuffer(static_cast<size_t>(m) * 4, what);
      rowscale.upload(std::vector<char>(reinterpret_cast<const char*>(ones.data()),
                                        reinterpret_cast<const char*>(ones.data() + ones.size())),
                      what);
      args.rowscale = static_cast<const float*>(rowscale.get());
    }
    if (p.dropout != DropoutMask::None) {
      const int64_t row_bytes = aligned_row_stride(codegen::dropout_mask_row_bytes(p.dropout, p.n), 1, p.alignment);
      keep_mask = DeviceBuffer(static_cast<size_t>(m * row_bytes), what);
      args.dropout_mask = keep_mask.get();
      args.dropout_mask_stride = row_bytes;
      args.dropout_p = 0.1;
      args.dropout_seed = 1;
    }
    if (p.gate != Gate::None) {
      z = random_rows(p.x_dtype, m, args.x_stride, 7, what);
      args.z = z.get();
      args.z_stride = args.x_stride;
    }
    if (p.parallel) {
      y1 = DeviceBuffer(y_bytes, what);
      args.y1 = y1.get();
      args.y1_stride = args.y_stride;
      weight1 = DeviceBuffer(n * w, what);
      bias1 = DeviceBuffer(n * w, what);
      weight1.upload(random_bytes(p.weight_dtype, n, 8), what);
      bias1.upload(random_bytes(p.weight_dtype, n, 9), what);
      args.weight1 = p.has_weight ? weight1.get() : nullptr;
      args.bias1 = p.has_bias ? bias1.get() : nullptr;
    }
  }
};

}  // namespace

TunedConfig TuneResult::tuned() const {
  TunedConfig t;
  t.config = winner().config;
  t.us = winner().us();
  t.heuristic_us = heuristic().ok ? heuristic().us() : 0;
  t.candidates = static_cast<int>(std::count_if(candidates.begin(), candidates.end(),
                                                [](const CandidateTiming& c) { return c.ok; }));
  return t;
}

int64_t timed_rows(const NormProblem& p, int64_t m, const TuneOptions& options) {
  return std::max<int64_t>(1, std::min(m_bucket(m), std::max<int64_t>(1, options.max_elements / p.n)));
}

std::vector<codegen::LaunchConfig> candidate_configs(const NormProblem& p, const DeviceLimits& limits, int64_t m,
                                                     codegen::Pass pass) {
  return pass == codegen::Pass::Forward
             ? codegen::forward_search_space(p, limits.sm, m, limits.sm_count, limits.memory_bytes_per_sm_cycle)
             : codegen::search_space(p, limits.sm, limits.sm_count, m, limits.memory_bytes_per_sm_cycle);
}

TuneResult tune(Engine::Impl& engine, CUcontext ctx, const NormProblem& p, int64_t m, const TuneOptions& options,
                codegen::Pass pass) {
  const auto start = Clock::now();
  const bool forward = pass == codegen::Pass::Forward;
  const std::string what = "tuning " + codegen::describe(p, pass);
  if (!ctx) throw Error(Status::NoDevice, "normjit: " + what + ": no CUDA context; tuning needs a GPU.");
  ScopedContext current(ctx);
  const DeviceLimits limits = Engine::Impl::query_limits(ctx);
  auto report = [&](const std::string& step, const std::string& outcome) {
    if (options.progress) options.progress(step, outcome);
  };

  TuneResult result;
  result.problem = p;
  result.m_timed = timed_rows(p, m, options);
  const std::vector<codegen::LaunchConfig> space =
      !options.only.empty() ? options.only : candidate_configs(p, limits, result.m_timed, pass);
  for (const codegen::LaunchConfig& c : space) {
    CandidateTiming timing;
    timing.config = c;
    result.candidates.push_back(timing);
  }
  std::vector<CandidateTiming>& cands = result.candidates;
  const size_t count = cands.size();

  // 1. Compile them all at once on host threads, the costliest first (codegen::compile_cost):
  // the compile wall is then close to the longest compile, not that plus whatever started
  // before it.
  std::vector<std::shared_ptr<const CompiledKernel>> compiled(count);
  {
    const auto compile_start = Clock::now();
    std::vector<size_t> compile_order(count);
    for (size_t i = 0; i < count; ++i) compile_order[i] = i;
    std::stable_sort(compile_order.begin(), compile_order.end(), [&](size_t a, size_t b) {
      return codegen::compile_cost(p, cands[a].config) > codegen::compile_cost(p, cands[b].config);
    });
    std::atomic<size_t> next{0}, done{0};
    std::mutex report_mu;
    auto worker = [&] {
      for (size_t k = next++; k < count; k = next++) {
        const size_t i = compile_order[k];
        const auto t0 = Clock::now();
        std::string outcome;
        try {
          compiled[i] = engine.compile(p, cands[i].config, limits.sm, pass);
          cands[i].compile_ms = compiled[i]->from_disk ? 0 : ms_since(t0);
          outcome = compiled[i]->from_disk ? "from the disk cache" : std::to_string(std::lround(ms_since(t0))) + " ms";
        } catch (const std::exception& e) {
          cands[i].error = e.what();
          outcome = "FAILED";
        }
        std::lock_guard<std::mutex> lock(report_mu);
        report("compile " + std::to_string(++done) + "/" + std::to_string(count) + " " +
                   codegen::describe(cands[i].config),
               outcome);
      }
    };
    const unsigned cores = options.compile_threads > 0 ? static_cast<unsigned>(options.compile_threads)
                                                       : std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (size_t t = 1; t < std::min<size_t>(count, cores); ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
    result.compile_wall_ms = ms_since(compile_start);
  }

  // 2. Load, and time on a private stream over private buffers.
  const auto time_start = Clock::now();
  std::vector<std::unique_ptr<LoadedKernel>> loaded(count);
  size_t workspace_bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!compiled[i]) continue;
    try {
      loaded[i] = engine.load(ctx, p, cands[i].config, limits, pass);
      if (!forward)
        workspace_bytes = std::max(workspace_bytes, launch_workspace_bytes(p, cands[i].config,
                                                                           max_row_groups(cands[i].config, limits, result.m_timed)));
    } catch (const std::exception& e) {
      cands[i].error = e.what();
    }
  }
  struct Unload {
    std::vector<std::unique_ptr<LoadedKernel>>& loaded;
    ~Unload() {
      for (auto& k : loaded)
        if (k) driver().cuModuleUnload(k->module);
    }
  } unload{loaded};

  PrivateStream stream;
  std::unique_ptr<Scratch> scratch;
  std::unique_ptr<ForwardScratch> forward_scratch;
  std::function<void(const LoadedKernel&)> launch;
  if (forward) {
    forward_scratch = std::make_unique<ForwardScratch>(p, result.m_timed);
    const ForwardArgs args = check_forward_call(p, forward_scratch->args).args;
    launch = [&, args](const LoadedKernel& k) { Engine::Impl::launch_forward_kernel(k, p, args, stream.get()); };
  } else {
    scratch = std::make_unique<Scratch>(p, result.m_timed, workspace_bytes);
    const CheckedCall call = check_backward_call(p, scratch->args);
    launch = [&, call](const LoadedKernel& k) { Engine::Impl::launch(k, call.problem, call.args, stream.get()); };
  }
  L2Flush flush(what);
  EventTimer timer(what);
  // Each candidate's backward (every kernel it launches), or forward, is captured in a CUDA graph and timed
  // as graph replays: launched one by one, a second kernel (the reduction) waits out the host's
  // launch latency, which favoured single-kernel configs (merged blocks) that graph replays and
  // a busy stream find slower (bench/NOTES.md, entry 17). L2 is flushed before every replay.
  // A candidate's graph is captured at its first timing and kept for its final one.
  std::vector<std::unique_ptr<CapturedLaunch>> graphs(count);
  auto replay_once = [&](size_t i) {
    if (!graphs[i]) {
      launch(*loaded[i]);  // warm: first launch costs more
      graphs[i] = std::make_unique<CapturedLaunch>(stream.get(), [&] { launch(*loaded[i]); }, what);
    }
    flush(stream.get());
    return timer.microseconds(stream.get(), [&] { graphs[i]->replay(stream.get()); });
  };
  // Repetitions of a backward of about `us` that replay for `budget_us` in all, within [least, most].
  auto reps_for = [](double us, double budget_us, int least, int most) {
    const double wanted = std::ceil(budget_us / std::max(us, 0.1));
    return static_cast<int>(std::clamp<double>(wanted, least, std::max(least, most)));
  };
  auto screen = [&](size_t i) {
    std::vector<double> times;
    for (int r = 0; r < options.screen_reps; ++r) times.push_back(replay_once(i));
    const int reps = reps_for(median(times), options.screen_replay_us, options.screen_reps, options.max_screen_reps);
    while (static_cast<int>(times.size()) < reps) times.push_back(replay_once(i));
    return median(std::move(times));
  };
  auto final_reps = [&](double us) {
    return reps_for(us, options.final_replay_us, options.final_reps, options.max_final_reps);
  };
  // The final repetitions of several candidates, taken in turns (one replay of each, then the
  // next round): whatever drifts over the timing (clocks, the host) falls on all of them alike.
  // At µs-scale shapes, timing them one after the other moved their ratio by up to 3%.
  auto time_in_turns = [&](const std::vector<size_t>& which) {
    std::vector<int> reps(which.size());
    std::vector<std::vector<double>> times(which.size());
    int rounds = 0;
    for (size_t k = 0; k < which.size(); ++k) rounds = std::max(rounds, reps[k] = final_reps(cands[which[k]].screen_us));
    for (int r = 0; r < rounds; ++r)
      for (size_t k = 0; k < which.size(); ++k) {
        const size_t i = which[k];
        if (r >= reps[k] || !cands[i].ok) continue;
        try {
          times[k].push_back(replay_once(i));
        } catch (const std::exception& e) {
          cands[i].ok = false;
          cands[i].error = e.what();
        }
      }
    for (size_t k = 0; k < which.size(); ++k)
      if (cands[which[k]].ok) cands[which[k]].final_us = median(std::move(times[k]));
  };
  size_t timed = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!loaded[i]) continue;
    try {
      cands[i].screen_us = screen(i);
      cands[i].ok = true;
    } catch (const std::exception& e) {
      cands[i].error = e.what();
    }
    report("time " + std::to_string(++timed) + "/" + std::to_string(count) + " " + codegen::describe(cands[i].config),
           cands[i].ok ? format_us(cands[i].screen_us) : "FAILED");
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < count; ++i)
    if (cands[i].ok) order.push_back(i);
  // 3. Finalists, with the heuristic always among them, timed again with more repetitions, in
  // turns; with `exhaustive`, every candidate.
  if (!options.exhaustive) {
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cands[a].screen_us < cands[b].screen_us; });
    const double close = cands[order.front()].screen_us * (1 + options.finalist_margin);
    size_t keep = std::min<size_t>(order.size(), static_cast<size_t>(std::max(1, options.finalists)));
    while (keep < order.size() && keep < static_cast<size_t>(options.max_finalists) && cands[order[keep]].screen_us <= close) ++keep;
    order.resize(keep);
    if (cands[0].ok && std::find(order.begin(), order.end(), 0) == order.end()) order.push_back(0);
  }
  time_in_turns(order);
  if (!options.exhaustive)
    for (size_t i : order) report("final " + codegen::describe(cands[i].config), cands[i].ok ? format_us(cands[i].final_us) : "FAILED");
  order.erase(std::remove_if(order.begin(), order.end(), [&](size_t i) { return !cands[i].ok; }), order.end());
  if (order.empty())
    throw Error(Status::Internal, "normjit: " + what + ": no candidate config could be compiled and run (the first error: " +
                                      (cands.empty() ? std::string("no candidates") : cands.front().error) +
                                      "); this is a normjit bug: please report it with the problem.");

  result.best = *std::min_element(order.begin(), order.end(), [&](size_t a, size_t b) { return cands[a].us() < cands[b].us(); });
  result.time_wall_ms = ms_since(time_start);
  result.wall_ms = ms_since(start);
  return result;
}

}  // namespace normjit::runtime
