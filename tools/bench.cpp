// normjit bench: effective bandwidth of the whole backward (every kernel it launches) over a
// sweep of shapes, as a share of the device's copy bandwidth measured in the same run.
//   effective bandwidth = minimum bytes / median time
//   minimum bytes: LayerNorm 3·M·N·b + 8·M + 3·N·w, RMSNorm 3·M·N·b + 4·M + 2·N·w
//   (x and dy read, dx written, the fp32 statistics, γ read, dγ/dβ written)
// --forward times the forward instead: minimum bytes LayerNorm 2·M·N·b + 8·M + 2·N·w (x read, y
// written, mean and rstd written, γ and β read), RMSNorm 2·M·N·b + 4·M + N·w.
// --fused LIST also times each shape with fused options (docs/FUSED.md), adding what each must
// move: dresidual read (M·N·dx bytes), rowscale read (4·M), a dropout mask read (M·N bytes, or
// M·⌈N/8⌉ bits), and dh written (M·N·dx bytes) as dresidual_in, which the bench asks for
// whenever row scale or dropout is on (a training step needs dh for the residual branch); the
// gate's z read and dz written (2·M·N·b); a parallel norm's dy1 read (M·N·b) and its γ1 read,
// dγ1 (and dβ1) written (2·N·w, LayerNorm 3·N·w).
// --forward --fused times the forward's options (docs/FORWARD.md) with what each must move: the
// residual read and h written (M·N·b each; h whenever residual, row scale or dropout is on: the
// backward reads it), rowscale read (4·M), the keep-mask written (M·N bytes or M·⌈N/8⌉), the
// gate's z read (M·N·b), a parallel norm's y1 written (M·N·b) and γ1 (and β1) read.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "codegen/forward_config.h"
#include "codegen/norm_problem.h"
#include "runtime/backward_call.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "runtime/forward_call.h"
#include "runtime/tuner_timing.h"
#include "tools/bench_overhead.h"
#include "tools/problem_flags.h"
#include "tools/subcommands.h"

namespace normjit::tools {
namespace {

using runtime::driver;

struct Shape {
  NormKind kind;
  DType dtype;
  DType weight;  // F32 or the dtype of x
  int64_t m, n;
};

// A set of fused options: which flags of NormProblem it turns on. "none" is the option-free
// kernel, the baseline of each shape's ratio.
struct FusedSet {
  std::string name;     // as given: "residual", "rowscale+dropout-bits", "all"
  NormProblem options;  // its fused flags (apply_fused_set); each shape fills in the rest
  bool any() const { return codegen::has_fused_options(options); }
  bool dh_out() const { return options.rowscale || options.dropout != DropoutMask::None; }  // dresidual_in requested
  // The library rejects a gated LayerNorm; the sweep's LayerNorm shapes skip such a set.
  bool applies_to(NormKind kind) const { return options.gate == Gate::None || kind == NormKind::RMSNorm; }
};

constexpr double kDropoutP = 0.1;

// "none,residual,zero-centered,rowscale,dropout-bytes,dropout-bits,all,gate,gate-before,parallel";
// items may join options with '+' ("residual+rowscale"). "all" is residual + zero-centered +
// rowscale + dropout-bits (the options of both norms). "none" is put first when the list lacks it
// (every ratio needs it).
std::vector<FusedSet> parse_fused_list(const std::string& text) {
  std::vector<FusedSet> sets;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    FusedSet f;
    f.name = item;
    if (item.empty()) throw std::invalid_argument("--fused: an empty item in '" + text + "'");
    apply_fused_set(item, f.options);  // as the problem flags' --fused parses it
    sets.push_back(f);
  }
  // The option-free set runs first for each shape: every ratio needs it.
  const auto none = std::find_if(sets.begin(), sets.end(), [](const FusedSet& f) { return !f.any(); });
  FusedSet baseline = none == sets.end() ? FusedSet{"none"} : *none;
  if (none != sets.end()) sets.erase(none);
  sets.insert(sets.begin(), baseline);
  return sets;
}

struct Result {
  Shape shape;
  std::string fused;    // the option set ("" without --fused)
  double vs_none = 0;   // pct_copy over the option-free row's (with --fused)
  double us = 0;        // median, plain launches
  double graph_us = 0;  // median per call in graph replays (0: not measured)
  double gbs = 0;
  double pct_copy = 0;
  std::string config;
  int registers = 0;
  int spills = 0;
  int64_t groups = 0;  // row groups launched (blocks, or clusters)
  bool pinned = false;  // a config given by --config or --merge, not the engine's choice
  double partial_pct = 0;  // backward: dγ/dβ partial rows written and read back, % of min_bytes
};

const std::vector<int64_t> kSweepN = {256,   512,   1024,  2048,  4096,   5120,   7168,   8192,    12288, 14336,
                                      16384, 32768, 65536, 131072, 262144, 1048576, 1000, 4095, 5003};

double min_bytes(const Shape& s, bool forward) {
  const double b = codegen::dtype_size(s.dtype), w = codegen::dtype_size(s.weight);
  const double mn = double(s.m) * double(s.n);
  if (forward)
    return s.kind == NormKind::LayerNorm ? 2 * mn * b + 8.0 * s.m + 2.0 * s.n * w : 2 * mn * b + 4.0 * s.m + s.n * w;
  return s.kind == NormKind::LayerNorm ? 3 * mn * b + 8.0 * s.m + 3.0 * s.n * w
                                       : 3 * mn * b + 4.0 * s.m + 2.0 * s.n * w;
}

// What the fused options add to the minimum bytes (x, dy, dx, dresidual, dresidual_in, z, dz and
// dy1 share a dtype).
double fused_bytes(const Shape& s, const FusedSet& f) {
  const double dxb = codegen::dtype_size(s.dtype), mn = double(s.m) * double(s.n);
  const double w = codegen::dtype_size(s.weight);
  const NormProblem& o = f.options;
  double bytes = 0;
  if (o.residual) bytes += mn * dxb;                                       // dresidual read
  if (o.rowscale) bytes += 4.0 * s.m;                                      // rowscale read
  bytes += double(s.m) * double(codegen::dropout_mask_row_bytes(o.dropout, s.n));  // the mask read
  if (f.dh_out()) bytes += mn * dxb;                                       // dresidual_in written
  if (o.gate != Gate::None) bytes += 2 * mn * dxb;                         // z read, dz written
  if (o.parallel)  // dy1 read; γ1 read, dγ1 (and dβ1) written
    bytes += mn * dxb + (s.kind == NormKind::LayerNorm ? 3.0 : 2.0) * s.n * w;
  if (o.recompute_from_output && s.kind == NormKind::LayerNorm)  // y replaces x; β read, the mean not
    bytes += s.n * w - 4.0 * s.m;
  return bytes;
}

// The same for the forward (h, the mask and y1 are written; z, residual, γ1 and β1 read).
double forward_fused_bytes(const Shape& s, const FusedSet& f) {
  const double b = codegen::dtype_size(s.dtype), mn = double(s.m) * double(s.n);
  const double w = codegen::dtype_size(s.weight);
  const NormProblem& o = f.options;
  double bytes = 0;
  if (o.residual) bytes += mn * b;                                         // residual read
  if (o.residual || f.dh_out()) bytes += mn * b;                           // h written
  if (o.rowscale) bytes += 4.0 * s.m;                                      // rowscale read
  bytes += double(s.m) * double(codegen::dropout_mask_row_bytes(o.dropout, s.n));  // the mask written
  if (o.gate != Gate::None) bytes += mn * b;                               // z read
  if (o.parallel) bytes += mn * b + (s.kind == NormKind::LayerNorm ? 2.0 : 1.0) * s.n * w;  // y1; γ1, β1
  return bytes;
}

using runtime::DeviceBuffer;
using runtime::median;
using runtime::random_bytes;

const char* short_kind(NormKind k) { return k == NormKind::LayerNorm ? "layernorm" : "rmsnorm"; }

void write_json(const std::string& path, const std::string& device, bool forward, double copy_gbs,
                const std::vector<Result>& rows) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << "{\n  \"device\": \"" << device << "\",\n  \"normjit\": \"" << version_string() << "\",\n  \"pass\": \"" << (forward ? "forward" : "backward")
    << "\",\n  \"copy_gbs\": "
    << copy_gbs << ",\n  \"rows\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Result& r = rows[i];
    f << "    {\"kind\": \"" << short_kind(r.shape.kind) << "\", \"dtype\": \"" << codegen::dtype_name(r.shape.dtype)
      << "\", \"weight_dtype\": \"" << codegen::dtype_name(r.shape.weight) << "\", \"m\": " << r.shape.m
      << ", \"n\": " << r.shape.n << ", \"us\": " << r.us << ", \"graph_us\": " << r.graph_us
      << ", \"gbs\": " << r.gbs << ", \"pct_copy\": " << r.pct_copy << ", \"config\": \"" << r.config
      << "\", \"registers\": " << r.registers << ", \"spill_bytes\": " << r.spills
      << ", \"row_groups\": " << r.groups << ", \"partial_pct\": " << r.partial_pct;
    if (!r.fused.empty()) f << ", \"fused\": \"" << r.fused << "\", \"pct_of_none\": " << r.vs_none;
    if (r.pinned) f << ", \"pinned\": true";
    f << "}"
      << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  f << "  ]\n}\n";
}

}  // namespace

int run_bench(std::vector<std::string> args) {
  if (take_flag(args, "--help")) {
    std::printf(
        "usage: normjit bench [options]\n"
        "  --quick              bf16, fp32 weights, a few N (a minute or less)\n"
        "  --kinds LIST         layernorm,rmsnorm (default both)\n"
        "  --dtypes LIST        bf16,fp16,fp32 (default all)\n"
        "  --weights LIST       fp32,same (default both)\n"
        "  --n LIST             hidden sizes (default: the speed sweep, 256 .. 1048576 and odd N)\n"
        "  --m LIST             rows (default: M = elements / N)\n"
        "  --elements E         M·N per shape when --m is not given (default 67108864)\n"
        "  --latency            also M = 1, 37, 199 at N = 4096, 8192 (bf16, fp32 weights)\n"
        "  --graph              also time CUDA-graph replays (takes launch gaps out)\n"
        "  --reps R             timed repetitions per shape (default 20)\n"
        "  --fused LIST         also time each shape with these fused option sets (docs/FUSED.md):\n"
        "                       none,residual,zero-centered,rowscale,dropout-bytes,dropout-bits,all,\n"
        "                       gate,gate-before,parallel,recompute\n"
        "                       (+ joins options; all = residual+zero-centered+rowscale+dropout-bits;\n"
        "                       masks keep 90%%; dh is written too with rowscale or dropout; gate and\n"
        "                       gate-before: silu(z) after or before the norm, RMSNorm shapes only;\n"
        "                       parallel: a second norm of x, its own dy1 and weights; not with a\n"
        "                       gate); recompute: x̂ from the output y and β (y read instead of x,\n"
        "                       no mean); adds the columns fused and vs none (%%copy over the option-free\n"
        "                       row's)\n"
        "  --json FILE          write {device, copy_gbs, rows: [...]} for scripts\n"
        "  --overhead           only the host's cost per call on a cache hit, against bare driver launches\n"
        "  --forward            time the forward (y, mean, rstd) instead of the backward (docs/FORWARD.md);\n"
        "                       with --fused: the forward's options (not recompute); not with --merge\n"
        "  --merge LIST         also time each shape's config with these merges (e.g. 1,2,4,8: blocks of an\n"
        "                       sm_90 cluster adding dγ/dβ before one partial row; 1 = unmerged), pinned\n"
        "                       in place of the chosen config where that config can merge\n"
        "  --config CONFIG      also time each shape with this launch config (as `tune --list` prints\n"
        "                       one; repeatable), pinned in an engine of its own at the shape's own M,\n"
        "                       where it fits the shape (tune times a config at its M bucket's top)\n");
    return kExitOk;
  }
  const bool quick = take_flag(args, "--quick");
  const bool graph = take_flag(args, "--graph");
  const bool latency = take_flag(args, "--latency");
  const bool overhead = take_flag(args, "--overhead");
  const bool forward = take_flag(args, "--forward");
  const std::string json = take_option(args, "--json");
  const std::string fused_text = take_option(args, "--fused");
  std::string kinds = take_option(args, "--kinds"), dtypes = take_option(args, "--dtypes"),
              weights = take_option(args, "--weights"), ns = take_option(args, "--n"), ms = take_option(args, "--m");
  const std::string elements_text = take_option(args, "--elements"), reps_text = take_option(args, "--reps");
  const std::string merge_text = take_option(args, "--merge");
  const std::vector<int64_t> merges = merge_text.empty() ? std::vector<int64_t>{} : parse_integer_list("--merge", merge_text, 1);
  // --config: parsed here so a typo fails before any GPU work (bad usage, exit 2).
  std::vector<codegen::LaunchConfig> given_configs;
  for (std::string text; !(text = take_option(args, "--config")).empty();)
    given_configs.push_back(codegen::parse_described_config(text));
  if (!args.empty()) throw std::invalid_argument("unexpected argument '" + args.front() + "'");
  const int64_t elements = elements_text.empty() ? int64_t{1} << 26 : std::stoll(elements_text);
  const int reps = reps_text.empty() ? 20 : std::stoi(reps_text);
  const bool fused_mode = !fused_text.empty();
  if (forward && !merges.empty()) throw std::invalid_argument("--forward takes no --merge (the forward merges nothing)");
  const std::vector<FusedSet> fused_sets =
      fused_mode ? parse_fused_list(fused_text) : std::vector<FusedSet>{FusedSet{}};
  if (forward && std::any_of(fused_sets.begin(), fused_sets.end(),
                             [](const FusedSet& f) { return f.options.recompute_from_output; }))
    throw std::invalid_argument("--forward --fused: recompute is the backward's choice (the forward writes y either way)");
  if (quick) {
    if (dtypes.empty()) dtypes = "bf16";
    if (weights.empty()) weights = "fp32";
    if (ns.empty()) ns = "1024,4096,8192,32768,262144";
  }
  if (kinds.empty()) kinds = "layernorm,rmsnorm";
  if (dtypes.empty()) dtypes = "bf16,fp16,fp32";
  if (weights.empty()) weights = "fp32,same";

  std::vector<Shape> shapes;
  std::stringstream kind_list(kinds), dtype_list(dtypes);
  std::vector<NormKind> kind_values;
  for (std::string k; std::getline(kind_list, k, ',');)
    kind_values.push_back(k == "rmsnorm" || k == "rms" ? NormKind::RMSNorm : NormKind::LayerNorm);
  std::vector<DType> dtype_values;
  for (std::string d; std::getline(dtype_list, d, ',');) dtype_values.push_back(parse_dtype(d));
  const std::vector<int64_t> n_values = ns.empty() ? kSweepN : parse_integer_list("--n", ns, 1);
  for (DType dtype : dtype_values) {
    std::stringstream weight_list(weights);
    for (std::string w; std::getline(weight_list, w, ',');) {
      const DType weight = w == "same" ? dtype : parse_dtype(w);
      if (w == "same" && dtype == DType::F32 && weights.find("fp32") != std::string::npos) continue;
      for (NormKind kind : kind_values)
        for (int64_t n : n_values) {
          if (ms.empty()) {
            shapes.push_back({kind, dtype, weight, std::max<int64_t>(1, elements / n), n});
          } else {
            for (int64_t m : parse_integer_list("--m", ms, 0)) shapes.push_back({kind, dtype, weight, m, n});
          }
        }
    }
  }
  if (latency)
    for (NormKind kind : kind_values)
      for (int64_t n : {4096, 8192})
        for (int64_t m : {1, 37, 199}) shapes.push_back({kind, DType::BF16, DType::F32, m, n});

  std::string why;
  if (!runtime::cuda_available(&why)) {
    std::fprintf(stderr, "normjit bench needs a GPU: %s\n", why.c_str());
    return kExitNoGpu;
  }
  const auto& d = driver();
  CUdevice dev;
  CUcontext ctx;
  NJ_CU(d.cuDeviceGet(&dev, 0), "bench: device 0");
  NJ_CU(d.cuDevicePrimaryCtxRetain(&ctx, dev), "bench: context");
  NJ_CU(d.cuCtxSetCurrent(ctx), "bench: context");
  char name[256] = {};
  d.cuDeviceGetName(name, sizeof name, dev);
  CUstream stream;
  NJ_CU(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "bench: stream");

  if (overhead) {
    Engine engine;
    std::printf("normjit %s bench --overhead on %s\n", version_string(), name);
    run_overhead(engine, ctx, stream);
    d.cuStreamDestroy(stream);
    return kExitOk;
  }

  int64_t max_elements = 0, max_m = 0, max_n = 0;
  for (const Shape& s : shapes) {
    max_elements = std::max(max_elements, s.m * s.n);
    max_m = std::max(max_m, s.m);
    max_n = std::max(max_n, s.n);
  }
  const std::string what = "bench";
  DeviceBuffer x(max_elements * 4, what), dy(max_elements * 4, what), dx(max_elements * 4, what);
  DeviceBuffer mean(max_m * 4, what), rstd(max_m * 4, what), weight(max_n * 4, what), dweight(max_n * 4, what),
      dbias(max_n * 4, what);
  runtime::EventTimer timer(what);

  // The ceiling: a device-to-device copy, counting bytes read and written.
  std::vector<double> copy_us;
  const size_t copy_bytes = static_cast<size_t>(max_elements) * 4;
  for (int r = 0; r < reps + 3; ++r) {
    const double us = timer.microseconds(stream, [&] {
      NJ_CU(d.cuMemcpyDtoDAsync(dx.ptr(), x.ptr(), copy_bytes, stream), "bench: copy");
    });
    if (r >= 3) copy_us.push_back(us);
  }
  const double copy_gbs = 2.0 * copy_bytes / median(copy_us) / 1e3;
  std::printf("normjit %s bench (%s) on %s: device copy %.0f GB/s (read+write, %zu MB, median of %d)\n",
              version_string(), forward ? "forward" : "backward", name, copy_gbs, copy_bytes >> 20, reps);
  {
    // Which of the heuristic's rule sets this device takes (codegen::memory_rich).
    const double rate = Engine::Impl::query_limits(ctx).memory_bytes_per_sm_cycle;
    std::printf("heuristic: %.1f bytes of peak memory bandwidth an SM cycle: %s\n", rate,
                codegen::memory_rich(rate) ? "memory-rich rules"
                : rate > 0                 ? "the H100's rules"
                                           : "not reported, the H100's rules");
  }

  {  // statistics and weights: plausible values, not zeros
    auto stats = random_bytes(DType::F32, static_cast<size_t>(max_m), 7);
    auto* f = reinterpret_cast<float*>(stats.data());
    for (int64_t i = 0; i < max_m; ++i) f[i] = 0.1f * f[i];
    mean.upload(stats, what);
    for (int64_t i = 0; i < max_m; ++i) f[i] = 1.0f + std::fabs(f[i]);
    rstd.upload(stats, what);
  }

  // The fused options' inputs, only with --fused: dresidual (random, in x's dtype, as dx),
  // dresidual_in (written), rowscale in [0.5, 2), and keep-masks drawn with p = 0.1; with a gate
  // z (random, x's dtype) and dz, with parallel norms dy1 (random, dy's dtype), γ1 (random) and
  // dγ1, dβ1. The gate's and parallel norms' buffers only where a set asks for them: each
  // [M, N] one is as large as x.
  DeviceBuffer dresidual, dresidual_in, rowscale, mask_bytes, mask_bits, z, dz, dy1, weight1, dweight1, dbias1;
  const bool any_gate = std::any_of(fused_sets.begin(), fused_sets.end(),
                                    [](const FusedSet& f) { return f.options.gate != Gate::None; });
  const bool any_parallel =
      std::any_of(fused_sets.begin(), fused_sets.end(), [](const FusedSet& f) { return f.options.parallel; });
  if (any_gate) {
    z = DeviceBuffer(max_elements * 4, what);
    dz = DeviceBuffer(max_elements * 4, what);
  }
  if (any_parallel) {
    dy1 = DeviceBuffer(max_elements * 4, what);
    weight1 = DeviceBuffer(max_n * 4, what);
    dweight1 = DeviceBuffer(max_n * 4, what);
    dbias1 = DeviceBuffer(max_n * 4, what);
  }
  if (fused_mode) {
    dresidual = DeviceBuffer(max_elements * 4, what);
    dresidual_in = DeviceBuffer(max_elements * 4, what);
    rowscale = DeviceBuffer(max_m * 4, what);
    mask_bytes = DeviceBuffer(max_elements, what);
    const int64_t bits_bytes = max_elements / 8 + max_m + 16;  // M·⌈N/8⌉ <= M·N/8 + M
    mask_bits = DeviceBuffer(bits_bytes, what);
    auto scales = random_bytes(DType::F32, static_cast<size_t>(max_m), 5);
    auto* f = reinterpret_cast<float*>(scales.data());
    for (int64_t i = 0; i < max_m; ++i) f[i] = 0.5f + std::fmod(std::fabs(f[i]), 1.5f);
    rowscale.upload(scales, what);
    std::mt19937 rng(6);
    std::bernoulli_distribution keep(1.0 - kDropoutP);
    std::uniform_int_distribution<int> kept_value(1, 255);
    std::vector<char> bytes(static_cast<size_t>(max_elements));
    for (char& c : bytes) c = keep(rng) ? static_cast<char>(kept_value(rng)) : 0;
    mask_bytes.upload(bytes, what);
    bytes.assign(static_cast<size_t>(bits_bytes), 0);
    for (char& c : bytes) {
      unsigned v = 0;
      for (int j = 0; j < 8; ++j) v |= (keep(rng) ? 1u : 0u) << j;
      c = static_cast<char>(v);
    }
    mask_bits.upload(bytes, what);
  }

  if (any_gate && std::find(kind_values.begin(), kind_values.end(), NormKind::LayerNorm) != kind_values.end())
    std::printf("gated sets: RMSNorm shapes only (a gated LayerNorm is not a problem the library takes)\n");
  Engine engine;
  std::vector<Result> results;
  DType uploaded = DType::Default, uploaded_weight = DType::Default;
  std::printf("\n%-9s %-5s %-6s %8s %8s %10s %10s %9s %7s  %-50s %5s %6s %6s %6s", "kind", "dtype", "weight", "M",
              "N", "us", "graph us", "GB/s", "%copy", "launch config", "regs", "spills", "groups", "part%");
  if (fused_mode) std::printf("  %-22s %7s", "fused", "vs none");
  std::printf("\n");
  for (const Shape& s : shapes) {
    if (s.dtype != uploaded) {  // fresh random x and dy for each dtype
      x.fill_random(s.dtype, static_cast<size_t>(max_elements), 1, what);
      dy.fill_random(s.dtype, static_cast<size_t>(max_elements), 2, what);
      if (fused_mode) dresidual.fill_random(s.dtype, static_cast<size_t>(max_elements), 4, what);
      if (any_gate) z.fill_random(s.dtype, static_cast<size_t>(max_elements), 8, what);
      if (any_parallel) dy1.fill_random(s.dtype, static_cast<size_t>(max_elements), 9, what);
      uploaded = s.dtype;
    }
    if (s.weight != uploaded_weight) {
      auto ws = random_bytes(s.weight, static_cast<size_t>(max_n), 3);
      weight.upload(ws, what);
      if (any_parallel) weight1.upload(random_bytes(s.weight, static_cast<size_t>(max_n), 10), what);
      uploaded_weight = s.weight;
    }
    double none_pct = 0;  // the option-free row's %copy for this shape
    for (const FusedSet& fs : fused_sets) {
      if (!fs.applies_to(s.kind)) continue;
      NormProblem problem = fs.options;
      problem.kind = s.kind;
      problem.n = s.n;
      problem.x_dtype = s.dtype;
      problem.weight_dtype = s.weight;
      problem.has_bias = s.kind == NormKind::LayerNorm;
      BackwardArgs a;
      a.m = s.m;
      a.x = x.get();
      a.dy = dy.get();
      a.mean = s.kind == NormKind::LayerNorm ? reinterpret_cast<const float*>(mean.get()) : nullptr;
      a.rstd = reinterpret_cast<const float*>(rstd.get());
      a.weight = weight.get();
      a.dx = dx.get();
      a.dweight = dweight.get();
      a.dbias = problem.has_bias ? dbias.get() : nullptr;
      if (fs.options.residual) a.dresidual = dresidual.get();
      if (fs.options.rowscale) a.rowscale = reinterpret_cast<const float*>(rowscale.get());
      if (fs.options.dropout != DropoutMask::None) {
        a.dropout_mask = fs.options.dropout == DropoutMask::Bytes ? mask_bytes.get() : mask_bits.get();
        a.dropout_p = kDropoutP;
      }
      if (fs.dh_out()) a.dresidual_in = dresidual_in.get();
      if (fs.options.gate != Gate::None) a.z = z.get(), a.dz = dz.get();
      if (fs.options.parallel) {
        a.dy1 = dy1.get();
        a.weight1 = weight1.get();
        a.dweight1 = dweight1.get();
        a.dbias1 = problem.has_bias ? dbias1.get() : nullptr;
      }
      if (fs.options.recompute_from_output) {  // x's random values stand for y, γ's for β: the bytes are what counts
        a.y = a.x;
        a.x = nullptr;
        a.mean = nullptr;
        a.bias = problem.has_bias ? weight.get() : nullptr;
      }
      // --forward: y over dx's buffer, the statistics over mean and rstd (nothing reads them here).
      ForwardArgs fa;
      fa.m = s.m;
      fa.x = x.get();
      fa.weight = weight.get();
      fa.bias = problem.has_bias ? weight.get() : nullptr;
      fa.y = dx.get();
      fa.mean = s.kind == NormKind::LayerNorm ? reinterpret_cast<float*>(mean.get()) : nullptr;
      fa.rstd = reinterpret_cast<float*>(rstd.get());
      if (fs.options.residual) fa.residual = dresidual.get();
      if (fs.options.residual || fs.dh_out()) fa.residual_out = dresidual_in.get();
      if (fs.options.rowscale) fa.rowscale = reinterpret_cast<const float*>(rowscale.get());
      if (fs.options.dropout != DropoutMask::None) {
        fa.dropout_mask = fs.options.dropout == DropoutMask::Bytes ? mask_bytes.get() : mask_bits.get();
        fa.dropout_p = kDropoutP;
        fa.dropout_seed = 1;
      }
      if (fs.options.gate != Gate::None) fa.z = z.get();
      if (fs.options.parallel) {
        fa.weight1 = weight1.get();
        fa.bias1 = problem.has_bias ? weight1.get() : nullptr;
        fa.y1 = dy1.get();
      }
      auto call = [&](Engine& engine) {
        if (forward)
          engine.forward(problem, fa, stream);
        else
          engine.backward(problem, a, stream);
      };
      // Times one engine's launch of this shape (its chosen, or pinned, config) and prints a row.
      // pinned: the engine runs a config given by --config or --merge, not its own choice.
      auto measure = [&](Engine& engine, bool pinned) {
        const size_t ws_bytes = forward ? 0 : engine.workspace_size(problem, s.m);
        DeviceBuffer workspace(ws_bytes, what);
        a.workspace = workspace.get();
        a.workspace_bytes = ws_bytes;

        for (int r = 0; r < 3; ++r) call(engine);  // compile, load, warm
        NJ_CU(d.cuStreamSynchronize(stream), "bench: warm-up");
        std::vector<double> times;
        for (int r = 0; r < reps; ++r) times.push_back(timer.microseconds(stream, [&] { call(engine); }));
        Result res{s};
        res.us = median(times);
        if (graph) {
          constexpr int kCallsPerGraph = 20;
          runtime::CapturedLaunch calls(
              stream, [&] { for (int c = 0; c < kCallsPerGraph; ++c) call(engine); }, what);
          calls.replay(stream);  // warm-up
          std::vector<double> graph_times;
          for (int r = 0; r < std::max(5, reps / 4); ++r)
            graph_times.push_back(timer.microseconds(stream, [&] { calls.replay(stream); }) / kCallsPerGraph);
          res.graph_us = median(graph_times);
        }
        const double best_us = res.graph_us > 0 ? std::min(res.us, res.graph_us) : res.us;
        res.gbs = (min_bytes(s, forward) + (forward ? forward_fused_bytes(s, fs) : fused_bytes(s, fs))) / best_us / 1e3;
        res.pct_copy = 100.0 * res.gbs / copy_gbs;
        if (fused_mode) {
          res.fused = fs.name;
          if (!fs.any() && none_pct == 0) none_pct = res.pct_copy;
          res.vs_none = none_pct > 0 ? res.pct_copy / none_pct : 0;
        }
        // The problem as the engine ran it: alignment lowered to what these rows allow (odd N).
        // The kernel the calls above ran: the tuned one for this M where the database has it.
        const NormProblem ran =
            forward ? runtime::check_forward_call(problem, fa).problem : runtime::check_backward_call(problem, a).problem;
        const LoadedKernel& k = forward ? engine.impl().forward_kernel_for(ctx, ran, s.m) : engine.impl().kernel_for(ctx, ran, s.m);
        const char* entry = forward ? codegen::KernelSource::kForwardEntry : codegen::KernelSource::kBackwardEntry;
        res.config = codegen::describe(k.config);
        res.groups = runtime::row_groups(k.config, k.limits, s.m, k.resident_groups);
        // Issue 3 asks the partial rows of dγ/dβ (written, then read by the reduction) to stay
        // within 5% of the minimum bytes. None where one row group writes dγ/dβ itself, or for a
        // grid cluster (its workspace holds only the row sums' meeting place).
        if (!forward && !k.config.grid && !runtime::writes_gradients_directly(k.config, res.groups))
          res.partial_pct = 100.0 * 2 * double(runtime::partial_bytes(ran, res.groups)) / min_bytes(s, false);
        for (const auto& r : k.compiled->resources)
          if (r.function == entry) {
            res.registers = r.registers;
            res.spills = r.spill_stores + r.spill_loads;
          }
        if (res.registers == 0) {  // no ptxas report in the log: ask the loaded kernel
          const CUfunction f = forward ? k.forward : k.backward;
          d.cuFuncGetAttribute(&res.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
          res.spills = Engine::Impl::local_memory_bytes(f, res.config);
        }
        std::printf("%-9s %-5s %-6s %8lld %8lld %10.2f %10s %9.0f %6.1f%%  %-50s %5d %6d %6lld %5.1f%%",
                    short_kind(s.kind), codegen::dtype_name(s.dtype), codegen::dtype_name(s.weight),
                    static_cast<long long>(s.m), static_cast<long long>(s.n), res.us,
                    res.graph_us > 0 ? std::to_string(res.graph_us).substr(0, 6).c_str() : "-", res.gbs, res.pct_copy,
                    res.config.c_str(), res.registers, res.spills, static_cast<long long>(res.groups), res.partial_pct);
        if (fused_mode) std::printf("  %-22s %7.3f", res.fused.c_str(), res.vs_none);
        res.pinned = pinned;
        std::printf(pinned ? "  pinned\n" : "\n");
        std::fflush(stdout);
        results.push_back(res);
      };
      measure(engine, false);
      if (given_configs.empty() && merges.empty()) continue;
      // --config, --merge: other configs of this shape, each pinned in an engine of its own.
      const codegen::Pass pass = forward ? codegen::Pass::Forward : codegen::Pass::Backward;
      const NormProblem resolved =
          forward ? runtime::check_forward_call(problem, fa).problem : runtime::check_backward_call(problem, a).problem;
      const LoadedKernel& chosen =
          forward ? engine.impl().forward_kernel_for(ctx, resolved, s.m) : engine.impl().kernel_for(ctx, resolved, s.m);
      auto measure_pinned = [&](const codegen::LaunchConfig& config) {
        Config pinned_config = engine.config();
        pinned_config.tune_mode = TuneMode::Cached;
        Engine pinned(pinned_config);
        pinned.impl().pin_config(chosen.limits, resolved, s.m, config, pass);
        measure(pinned, true);
      };
      for (const codegen::LaunchConfig& config : given_configs) {
        try {
          codegen::check_config(resolved, config, pass);
          measure_pinned(config);
        } catch (const std::exception& e) {  // does not fit the shape, or cannot be loaded: say so, go on
          std::fprintf(stderr, "normjit bench: %s n=%lld m=%lld: --config %s: %s\n", short_kind(s.kind),
                       static_cast<long long>(s.n), static_cast<long long>(s.m), codegen::describe(config).c_str(),
                       e.what());
        }
      }
      for (const int64_t merge : merges) {
        codegen::LaunchConfig variant = chosen.config;
        if (merge == variant.merge) continue;
        if (merge > codegen::merge_for_few_rows(resolved, variant, chosen.limits.sm, s.m)) continue;
        variant.merge = static_cast<int>(merge);
        measure_pinned(variant);
      }
    }
  }
  const CacheStats stats = engine.cache_stats();
  std::printf("\nkernels: %llu compiled by NVRTC in this run, %llu read from the disk cache (%s)\n",
              static_cast<unsigned long long>(stats.compiles), static_cast<unsigned long long>(stats.disk_hits),
              engine.config().disk_cache ? engine.config().cache_dir.c_str() : "disk cache off");
  if (!json.empty()) write_json(json, name, forward, copy_gbs, results);
  d.cuStreamDestroy(stream);
  return kExitOk;
}

}  // namespace normjit::tools
