// The forward (docs/FORWARD.md) on the GPU against the float64 reference: y, and the saved
// statistics themselves (mean, rstd), for LayerNorm and RMSNorm, every x dtype, fp32 and
// same-dtype weights, every affine form and zero-centred γ, padded rows, M from 1 to 4096 and N
// from 1 to 262144, so every kernel family runs (several rows a block, a warp a row, a row a
// block in registers, streamed rows). Outputs are poisoned with NaN before each run; fresh
// random inputs per case (seed printed). Then a round trip: the statistics the forward saved,
// fed to the backward, give what the backward's float64 reference gives from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "codegen/forward_config.h"
#include "codegen/norm_problem.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "runtime/forward_call.h"
#include "support/compare.h"
#include "support/device_run.h"
#include "support/gpu.h"
#include "support/norm_inputs.h"
#include "support/phased_forward_block.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/scratch_cache.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

struct ForwardCase {
  NormProblem problem;  // LayerNorm or RMSNorm, weight dtype, affine form, zero-centred γ
  int64_t m = 0;
  int64_t x_stride = 0, y_stride = 0;  // 0: N
  double offset_in_spreads = 0;         // each row of x moved by this many of its standard deviations
};

std::string describe(const ForwardCase& c, uint64_t seed) {
  return codegen::describe_forward(c.problem) + " M=" + std::to_string(c.m) +
         " x_stride=" + std::to_string(c.x_stride ? c.x_stride : c.problem.n) +
         " y_stride=" + std::to_string(c.y_stride ? c.y_stride : c.problem.n) + " seed=" + std::to_string(seed) +
         " (replay: NORMJIT_TEST_SEED=" + std::to_string(seed) + ")";
}

// The problem the engine will compile for a case: DeviceBuffer addresses are 256-byte aligned,
// so only the strides lower the alignment. The probe's addresses are 1 TiB apart, so that no
// two tensors share a byte (the call rejects outputs that do); y is x itself where their
// strides agree, the in-place alias the call allows.
NormProblem checked_problem(const ForwardCase& c) {
  auto address = [](uintptr_t slot) { return reinterpret_cast<void*>(slot << 40); };
  ForwardArgs a;
  a.m = c.m;
  a.x = address(1);
  a.x_stride = c.x_stride;
  a.y = address(1);
  a.y_stride = c.y_stride ? c.y_stride : c.problem.n;
  if (a.y_stride != (c.x_stride ? c.x_stride : c.problem.n)) a.y = address(2);
  a.weight = c.problem.has_weight ? address(3) : nullptr;
  a.bias = c.problem.has_bias ? address(4) : nullptr;
  return runtime::check_forward_call(c.problem, a).problem;
}

// Compiles and loads every case's kernel from a pool of threads before any is timed or run.
void prepare_in_parallel(Engine& engine, const std::vector<ForwardCase>& cases) {
  std::vector<NormProblem> problems;
  for (const ForwardCase& c : cases) problems.push_back(checked_problem(c));
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&] {
      GpuContext::get()->make_current();
      for (size_t i = next++; i < problems.size(); i = next++) {
        try {
          engine.prepare_forward(problems[i]);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(codegen::describe_forward(problems[i]) + ": " + e.what());
        }
      }
    });
  for (std::thread& t : pool) t.join();
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

struct ForwardOutputs {
  HostTensor y;
  std::vector<float> mean, rstd;
};

// Runs one case with y, mean and rstd poisoned (NaN) first; inputs from make_inputs (fresh
// random x with NaN in the gaps between rows, γ), plus β drawn here.
ForwardOutputs run_forward(Engine& engine, const ForwardCase& c, const NormInputs& in, const HostTensor& bias,
                           CUstream stream) {
  const NormProblem& p = c.problem;
  const int64_t n = p.n, y_stride = c.y_stride ? c.y_stride : n;
  const bool layer_norm = p.kind == NormKind::LayerNorm;
  DeviceBuffer x(in.x.size_bytes()), weight(in.weight.size_bytes()), beta(bias.size_bytes());
  x.upload(in.x.data(), in.x.size_bytes());
  if (p.has_weight) weight.upload(in.weight.data(), in.weight.size_bytes());
  if (p.has_bias) beta.upload(bias.data(), bias.size_bytes());
  ForwardOutputs out;
  out.y = HostTensor(p.x_dtype, c.m, n, y_stride);
  DeviceBuffer y(out.y.size_bytes()), mean(layer_norm ? c.m * sizeof(float) : 0), rstd(c.m * sizeof(float));
  y.poison();
  mean.poison();
  rstd.poison();
  ForwardArgs a;
  a.m = c.m;
  a.x = x.ptr();
  a.x_stride = in.x.stride();
  a.weight = p.has_weight ? weight.ptr() : nullptr;
  a.bias = p.has_bias ? beta.ptr() : nullptr;
  a.y = y.ptr();
  a.y_stride = y_stride;
  a.mean = layer_norm ? static_cast<float*>(mean.ptr()) : nullptr;
  a.rstd = static_cast<float*>(rstd.ptr());
  a.eps = kNormEps;
  engine.forward(p, a, stream);
  NJ_CU(runtime::driver().cuStreamSynchronize(stream), std::string("synchronizing after the forward"));
  y.download(out.y.data(), out.y.size_bytes());
  out.rstd.resize(static_cast<size_t>(c.m));
  rstd.download(out.rstd.data(), out.rstd.size() * sizeof(float));
  if (layer_norm) {
    out.mean.resize(static_cast<size_t>(c.m));
    mean.download(out.mean.data(), out.mean.size() * sizeof(float));
  }
  return out;
}

// Every element of y's gaps (columns N .. stride − 1) still holds the poison.
::testing::AssertionResult gaps_untouched(const HostTensor& y) {
  for (int64_t r = 0; r < y.rows(); ++r)
    for (int64_t c = y.cols(); c < y.stride(); ++c) {
      const unsigned char* bytes = y.slot_bytes(r * y.stride() + c);
      for (int b = 0; b < y.element_bytes(); ++b)
        if (bytes[b] != kPoisonByte)
          return ::testing::AssertionFailure() << "y[" << r << ", " << c << "], in the gap after row " << r
                                               << ", was written";
    }
  return ::testing::AssertionSuccess();
}

// Adds `spreads` of each row's standard deviation to every element of the row (rounded to x's
// dtype): rows whose mean is far from zero against their spread, where Σx² − (Σx)²/N loses
// everything to cancellation and only a two-pass or shifted sum keeps the variance.
void move_rows_off_zero(HostTensor& x, double spreads) {
  for (int64_t r = 0; r < x.rows(); ++r) {
    double sum = 0, squares = 0;
    for (int64_t c = 0; c < x.cols(); ++c) sum += x.get(r, c);
    const double mean = sum / static_cast<double>(x.cols());
    for (int64_t c = 0; c < x.cols(); ++c) squares += (x.get(r, c) - mean) * (x.get(r, c) - mean);
    const double offset = spreads * std::sqrt(squares / static_cast<double>(x.cols()));
    for (int64_t c = 0; c < x.cols(); ++c) x.set(r, c, x.get(r, c) + offset);
  }
}

// Checks one case: y against the reference (dx's tolerances: fp32 1e-5, 16-bit 1e-2), mean and
// rstd per row within 1e-5 (mean relative to the row's RMS, where it cancels to ≈ 0).
// Returns the inputs with the statistics the GPU saved, for the round trip.
void check_case(Engine& engine, const ForwardCase& c, CUstream stream, NormInputs* saved = nullptr) {
  const NormProblem& p = c.problem;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(describe(c, seed));
  NormInputs in = make_inputs(p, c.m, seed, RowStrides{c.x_stride, 0, 0});
  if (c.offset_in_spreads != 0) move_rows_off_zero(in.x, c.offset_in_spreads);
  HostTensor bias;
  if (p.has_bias) {
    bias = HostTensor(with_concrete_dtypes(p).weight_dtype, 1, p.n);
    Rng rng(seed, 777);
    for (int64_t col = 0; col < p.n; ++col) bias.set(0, col, 0.5 * rng.normal());
  }
  ForwardOutputs out;
  ASSERT_NO_THROW(out = run_forward(engine, c, in, bias, stream));
  const std::vector<double> x = widened(in.x);
  const std::vector<double> weight = p.has_weight ? widened(in.weight) : std::vector<double>();
  const std::vector<double> beta = p.has_bias ? widened(bias) : std::vector<double>();
  const ForwardReference ref = reference_forward(p.kind, c.m, p.n, x.data(), p.has_weight ? weight.data() : nullptr,
                                                 p.has_bias ? beta.data() : nullptr, p.zero_centered_weight, kNormEps);
  // A row far from zero: y's error follows the rounding of its mean, ~|mean|/σ ulps of x̂.
  const double y_tolerance = std::max(dx_tolerance(p.x_dtype), 1e-6 * c.offset_in_spreads);
  const TensorCheck y = check_tensor("y", out.y, ref.y, ref.y_term_norm, y_tolerance);
  EXPECT_TRUE(y.ok()) << y;
  EXPECT_TRUE(gaps_untouched(out.y));
  std::vector<double> rms(static_cast<size_t>(c.m)), rstd_floor(static_cast<size_t>(c.m), 0.0);
  for (int64_t r = 0; r < c.m; ++r) {
    double squares = 0;
    for (int64_t col = 0; col < p.n; ++col) squares += x[r * p.n + col] * x[r * p.n + col];
    rms[r] = std::sqrt(squares / p.n);
  }
  EXPECT_TRUE(statistics_match("rstd", out.rstd, ref.rstd, rstd_floor, 1e-5));
  if (p.kind == NormKind::LayerNorm) EXPECT_TRUE(statistics_match("mean", out.mean, ref.mean, rms, 1e-5));
  if (saved) {
    in.rstd = out.rstd;
    in.mean = out.mean;
    *saved = std::move(in);
  }
}

// The matrix: every (N, kind, x dtype) once, with M, the weight dtype, the affine form,
// zero-centred γ and padded rows cycling over the cases, M·N kept to 4M elements.
std::vector<ForwardCase> matrix() {
  const int64_t ns[] = {1, 33, 320, 1000, 4096, 8192, 24576, 65536, 262144};
  const int64_t ms[] = {1, 37, 199, 4096};
  const Affine affines[] = {Affine::WeightAndBias, Affine::WeightOnly, Affine::None, Affine::BiasOnly};
  std::vector<ForwardCase> cases;
  int i = 0;
  for (int64_t n : ns)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DType x : {DType::BF16, DType::F16, DType::F32}) {
        ForwardCase c;
        Affine affine = affines[i % 4];
        if (kind == NormKind::RMSNorm && affine == Affine::WeightAndBias) affine = Affine::WeightOnly;
        if (kind == NormKind::RMSNorm && affine == Affine::BiasOnly) affine = Affine::None;
        c.problem = make_problem(kind, n, x, i % 2 == 0 ? DType::F32 : x, affine);
        c.problem.zero_centered_weight = c.problem.has_weight && i % 3 == 0;
        int k = i % 4;
        while (k > 0 && ms[k] * n > (int64_t{1} << 22)) --k;
        c.m = ms[k];
        if (i % 3 == 1) {  // padded rows: an odd x stride (lower alignment), a wider y stride
          c.x_stride = n + 3;
          c.y_stride = n + 8;
        }
        cases.push_back(c);
        ++i;
      }
  return cases;
}

class Forward : public GpuTest {};

TEST_F(Forward, MatchesTheFloat64ReferenceIncludingTheStatistics) {
  Engine& engine = shared_engine();
  const std::vector<ForwardCase> cases = matrix();
  prepare_in_parallel(engine, cases);
  for (const ForwardCase& c : cases) check_case(engine, c, stream());
}

TEST_F(Forward, LargeMWithShortAndMediumRows) {
  // M = 4096 with each of the families that hold rows in registers.
  Engine& engine = shared_engine();
  std::vector<ForwardCase> cases;
  for (int64_t n : {1, 33, 1000, 4096}) {
    ForwardCase c;
    c.problem = make_problem(n % 2 ? NormKind::RMSNorm : NormKind::LayerNorm, n, DType::BF16, DType::F32,
                             n % 2 ? Affine::WeightOnly : Affine::WeightAndBias);
    c.m = 4096;
    cases.push_back(c);
  }
  prepare_in_parallel(engine, cases);
  for (const ForwardCase& c : cases) check_case(engine, c, stream());
}

TEST_F(Forward, LongRowsAtManyRows) {
  // The heuristic's configs for many long rows (M in a bucket of twice the SMs or more):
  // streamed 16-bit LayerNorm rows in 512-thread blocks (36864) and in balanced blocks (57344:
  // 896 threads), fp32 clusters of 128 bytes a thread (LN 81920: 4 x 640, RMS 163840: 8 x 640).
  // On a memory-rich device (an H200) RMSNorm's fp32 clusters hold γ in shared memory (131072:
  // 8 x 512, two an SM), fp32 rows past the wide blocks take clusters of 8 of up to 1024
  // threads with γ held (LN 262144: β read every row; RMS 229376: 8 x 896), and LayerNorm's
  // 16-bit warp rows with a part-empty last pass are bound to 64 registers (1000).
  Engine& engine = shared_engine();
  std::vector<ForwardCase> cases;
  const struct { NormKind kind; int64_t n; DType x; } shapes[] = {{NormKind::LayerNorm, 36864, DType::BF16},
                                                                  {NormKind::LayerNorm, 57344, DType::F16},
                                                                  {NormKind::LayerNorm, 81920, DType::F32},
                                                                  {NormKind::RMSNorm, 163840, DType::F32},
                                                                  {NormKind::RMSNorm, 131072, DType::F32},
                                                                  {NormKind::LayerNorm, 262144, DType::F32},
                                                                  {NormKind::RMSNorm, 229376, DType::F32},
                                                                  {NormKind::LayerNorm, 1000, DType::F16}};
  for (const auto& s : shapes) {
    ForwardCase c;
    c.problem = make_problem(s.kind, s.n, s.x, DType::F32,
                             s.kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly);
    c.m = 300;
    cases.push_back(c);
  }
  prepare_in_parallel(engine, cases);
  for (const ForwardCase& c : cases) check_case(engine, c, stream());
}

TEST_F(Forward, LongFp32RowsAtFewRows) {
  // fp32 rows past the wide blocks at 1-40 rows: on a memory-rich device (an H200) clusters of
  // 8 blocks of 1024 threads with γ held, whose last blocks hold part of the row or none of it
  // (LN 167936: 41984 slots of 65536, blocks 6 and 7 empty; RMS 200704: block 7 empty), odd N
  // too (LN 229377: 4-byte slots); the streamed clusters at the rows between (RMS 24 rows,
  // LN 212992 at 40).
  Engine& engine = shared_engine();
  const struct { NormKind kind; int64_t n, m; } shapes[] = {
      {NormKind::LayerNorm, 167936, 1}, {NormKind::RMSNorm, 200704, 7},  {NormKind::LayerNorm, 212992, 17},
      {NormKind::RMSNorm, 225280, 24},  {NormKind::LayerNorm, 245760, 40}, {NormKind::RMSNorm, 262144, 16},
      {NormKind::LayerNorm, 212992, 40},  {NormKind::LayerNorm, 229377, 3}};
  std::vector<ForwardCase> cases;
  for (const auto& s : shapes) {
    ForwardCase c;
    c.problem = make_problem(s.kind, s.n, DType::F32, DType::F32,
                             s.kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly);
    c.m = s.m;
    cases.push_back(c);
  }
  prepare_in_parallel(engine, cases);
  for (const ForwardCase& c : cases) check_case(engine, c, stream());
}

TEST_F(Forward, RowsOfFewElementsAThreadFillTheSmOrFallBackWithoutSpilling) {
  // Rows of at most 8 elements a thread a pass (codegen::unfilled_forward_config): 16-bit rows
  // aligned to 2 bytes (an odd x stride) in blocks bounded to fill the SM, which ptxas holds
  // in 32 registers at some N (LN 3001, 4095) and not at others (LN 1025: the engine loads the
  // block at 64 registers a thread instead); fp32 rows of 768 and 1024 threads, two blocks an
  // SM. Each against the reference, and the loaded kernel takes no local memory.
  Engine& engine = shared_engine();
  const struct { NormKind kind; int64_t n; DType x; } shapes[] = {
      {NormKind::LayerNorm, 1025, DType::BF16}, {NormKind::LayerNorm, 3001, DType::BF16},
      {NormKind::LayerNorm, 4095, DType::F16},  {NormKind::RMSNorm, 2049, DType::BF16},
      {NormKind::LayerNorm, 6001, DType::F32},  {NormKind::RMSNorm, 8191, DType::F32}};
  std::vector<ForwardCase> cases;
  for (const auto& s : shapes) {
    ForwardCase c;
    c.problem = make_problem(s.kind, s.n, s.x, DType::F32,
                             s.kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly);
    c.m = 199;
    if (s.x != DType::F32) c.x_stride = s.n + 1;  // rows aligned to 2 bytes
    cases.push_back(c);
  }
  prepare_in_parallel(engine, cases);
  int filled = 0, unfilled = 0;
  for (const ForwardCase& c : cases) {
    check_case(engine, c, stream());
    const NormProblem p = checked_problem(c);
    const LoadedKernel& k = engine.impl().forward_kernel_for(GpuContext::get()->context(), p, c.m);
    const codegen::LaunchConfig heuristic = codegen::choose_forward_config(p, 90, c.m);
    const std::optional<codegen::LaunchConfig> fallback = codegen::unfilled_forward_config(p, heuristic);
    ASSERT_TRUE(fallback.has_value()) << codegen::describe_forward(p) << " " << codegen::describe(heuristic);
    if (k.config == heuristic)
      ++filled;
    else if (k.config == *fallback)
      ++unfilled;
    else
      ADD_FAILURE() << codegen::describe_forward(p) << " loaded " << codegen::describe(k.config);
    EXPECT_EQ(Engine::Impl::local_memory_bytes(k.forward, "the loaded kernel"), 0)
        << codegen::describe_forward(p) << " " << codegen::describe(k.config);
  }
  EXPECT_GT(filled, 0);
  EXPECT_GT(unfilled, 0);
}

TEST_F(Forward, LayerNormStatisticsHoldForRowsFarFromZero) {
  // Rows moved 64 standard deviations off zero: rstd within 1e-5 of the float64 reference in
  // every way the LayerNorm forward meets (a naive Σx² − (Σx)²/N would be ~1e-4 off in fp32): Chan's
  // merges in warp rows (1000) and in blocks of up to 256 threads (fp32 4096), the mean then
  // Σ(x − mean)² in blocks of 288-512 (bf16 4095, 16384), warp-shifted moments beyond 512
  // (fp32 8191, 12289; bf16 24577), streamed rows (bf16 36864, 50000; fp32 200000; at 64 rows
  // by clusters of 2), and warp- then block-shifted moments in register clusters
  // on sm_90 (bf16 65536: 2 x 1024; 65000: the second block's last pass part empty; 65001:
  // rows aligned to 2 bytes; fp32 98304: 8 x 768; fp32 40000: 8 x 320).
  Engine& engine = shared_engine();
  const struct { int64_t n; DType x; } shapes[] = {
      {1000, DType::BF16},  {4096, DType::F32},   {4095, DType::BF16},  {16384, DType::BF16}, {8191, DType::F32},
      {12289, DType::F32},  {24577, DType::BF16}, {36864, DType::BF16}, {50000, DType::BF16}, {200000, DType::F32},
      {65536, DType::BF16}, {65000, DType::BF16}, {65001, DType::BF16}, {98304, DType::F32},  {40000, DType::F32}};
  std::vector<ForwardCase> cases;
  for (const auto& s : shapes) {
    ForwardCase c;
    c.problem = make_problem(NormKind::LayerNorm, s.n, s.x, DType::F32, Affine::WeightAndBias);
    c.m = 64;
    c.offset_in_spreads = 64;
    cases.push_back(c);
  }
  prepare_in_parallel(engine, cases);
  for (const ForwardCase& c : cases) check_case(engine, c, stream());
}

TEST_F(Forward, InPlaceOverwritesXWithY) {
  Engine& engine = shared_engine();
  for (int64_t n : {1000, 262144}) {
    const NormProblem p = make_problem(NormKind::LayerNorm, n, DType::BF16, DType::F32, Affine::WeightAndBias);
    const int64_t m = 37;
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(codegen::describe_forward(p) + " in place, seed=" + std::to_string(seed));
    const NormInputs in = make_inputs(p, m, seed);
    DeviceBuffer xy(in.x.size_bytes()), weight(in.weight.size_bytes()), bias(in.weight.size_bytes()),
        rstd(m * sizeof(float));
    xy.upload(in.x.data(), in.x.size_bytes());
    weight.upload(in.weight.data(), in.weight.size_bytes());
    HostTensor beta(DType::F32, 1, n);
    for (int64_t col = 0; col < n; ++col) beta.set(0, col, 0.01 * (col % 7));
    bias.upload(beta.data(), beta.size_bytes());
    ForwardArgs a;
    a.m = m;
    a.x = a.y = xy.ptr();
    a.weight = weight.ptr();
    a.bias = bias.ptr();
    a.rstd = static_cast<float*>(rstd.ptr());
    a.eps = kNormEps;
    ASSERT_NO_THROW(engine.layer_norm_forward(p, a, stream()));
    synchronize();
    HostTensor y(p.x_dtype, m, n);
    xy.download(y.data(), y.size_bytes());
    const std::vector<double> x = widened(in.x), w = widened(in.weight), b = widened(beta);
    const ForwardReference ref =
        reference_forward(p.kind, m, n, x.data(), w.data(), b.data(), false, kNormEps);
    const TensorCheck check = check_tensor("y", y, ref.y, ref.y_term_norm, dx_tolerance(p.x_dtype));
    EXPECT_TRUE(check.ok()) << check;
  }
}

// The statistics the forward saved, fed to the backward on the GPU, against the backward's
// float64 reference computed from those same statistics.
TEST_F(Forward, SavedStatisticsDriveTheBackward) {
  Engine& engine = shared_engine();
  struct Trip { NormKind kind; int64_t m, n; DType x; Affine affine; };
  const Trip trips[] = {{NormKind::LayerNorm, 199, 1000, DType::BF16, Affine::WeightAndBias},
                        {NormKind::RMSNorm, 37, 4096, DType::F16, Affine::WeightOnly},
                        {NormKind::LayerNorm, 4, 65536, DType::F32, Affine::WeightOnly},
                        {NormKind::RMSNorm, 3, 262144, DType::BF16, Affine::None}};
  for (const Trip& t : trips) {
    ForwardCase c;
    c.problem = make_problem(t.kind, t.n, t.x, DType::F32, t.affine);
    c.m = t.m;
    NormInputs in;
    ASSERT_NO_FATAL_FAILURE(check_case(engine, c, stream(), &in));
    EXPECT_TRUE(backward_matches_reference(engine, in, stream()));
  }
}

// The tuner's forward candidates (codegen::forward_search_space: clusters of 2-8 blocks for
// either kind on sm_90, streamed rows in blocks of 256 to 1024 threads, other block sizes and
// vector widths), each pinned in an
// engine's tuning database and checked against the reference; then on-miss tuning of a forward.
class ForwardTuning : public ScratchCacheGpuTest {};

TEST_F(ForwardTuning, EveryCandidateMatchesTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  struct Shape { NormKind kind; int64_t n; DType x; int64_t m; };
  const Shape shapes[] = {{NormKind::LayerNorm, 65536, DType::BF16, 37}, {NormKind::RMSNorm, 262144, DType::F32, 5},
                          {NormKind::LayerNorm, 4096, DType::F16, 199}, {NormKind::RMSNorm, 1000, DType::BF16, 64},
                          {NormKind::LayerNorm, 12288, DType::BF16, 301},   // rows a block, prefetching
                          {NormKind::LayerNorm, 262144, DType::BF16, 9},    // rows streamed by clusters
                          {NormKind::LayerNorm, 36864, DType::BF16, 301},   // streamed, 256-1024 threads
                          {NormKind::LayerNorm, 1001, DType::BF16, 61},     // rows at every 2-byte shift
                          {NormKind::LayerNorm, 1001, DType::F32, 61}};     // and every 4-byte one
  int tried = 0;
  for (const Shape& s : shapes) {
    ForwardCase c;
    c.problem = make_problem(s.kind, s.n, s.x, DType::F32,
                             s.kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly);
    c.m = s.m;
    const NormProblem resolved = checked_problem(c);
    for (const codegen::LaunchConfig& config : codegen::forward_search_space(resolved, limits.sm, s.m)) {
      SCOPED_TRACE(codegen::describe(config));
      Engine engine(this->config(TuneMode::Cached));
      engine.impl().pin_config(limits, resolved, s.m, config, codegen::Pass::Forward);
      EXPECT_EQ(engine.impl().forward_kernel_for(ctx, resolved, s.m).config, config);
      check_case(engine, c, stream());
      ++tried;
    }
  }
  std::printf("%d forward candidates checked\n", tried);
}

// The memory-rich rules' forward configs (codegen::choose_forward_config at an H200's 18.4
// bytes an SM cycle: 16-bit rows at two 16-byte slots a thread, the next row prefetched; fp32
// clusters at 128 bytes a thread; 16-bit clusters prefetching the next row, or holding γ; rows
// between those streamed by two 512-thread blocks an SM or clusters of two), pinned so that any
// GPU runs them, at many rows (a bucket past two rows an SM) against the reference.
TEST_F(ForwardTuning, MemoryRichPrefetchingRowsMatchTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  if (limits.sm < 90) GTEST_SKIP() << "the memory-rich rules are for sm_90; this device is sm_" << limits.sm;
  constexpr int64_t m = 301;  // bucket 512: many rows on a device of up to 256 SMs
  const std::pair<DType, int64_t> shapes[] = {{DType::BF16, 5120}, {DType::F16, 6144}, {DType::BF16, 8192},
                                              {DType::F16, 12288}, {DType::BF16, 16384}, {DType::F32, 49152},
                                              {DType::F32, 65536}, {DType::F32, 131072}, {DType::BF16, 65536},
                                              {DType::F16, 131072}, {DType::F16, 57344}, {DType::BF16, 98304}};
  int tried = 0;
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (const auto& [x, n] : shapes) {
      ForwardCase c;
      c.problem = make_problem(kind, n, x, n % 3 ? DType::F32 : x,
                               kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly);
      c.m = m;
      const NormProblem resolved = checked_problem(c);
      const codegen::LaunchConfig config = codegen::choose_forward_config(resolved, limits.sm, m, 132, 18.4);
      SCOPED_TRACE(codegen::describe_forward(resolved) + " " + codegen::describe(config));
      ASSERT_FALSE(config == codegen::choose_forward_config(resolved, limits.sm, m, 132)) << "not a memory-rich config";
      Engine engine(this->config(TuneMode::Cached));
      engine.impl().pin_config(limits, resolved, m, config, codegen::Pass::Forward);
      EXPECT_EQ(engine.impl().forward_kernel_for(ctx, resolved, m).config, config);
      check_case(engine, c, stream());
      ++tried;
    }
  EXPECT_EQ(tried, 24);
}

// γ and β held in shared memory (shared_weights, a tuner candidate): the memory-rich heuristic's
// blocks with them, pinned, against the reference: γ and β, zero-centred γ, γ or β alone; and
// long LayerNorm rows whose γ and β do not both fit a block's shared memory (γ alone held, β
// read each row: codegen::forward_holds_bias).
TEST_F(ForwardTuning, HeldWeightsMatchTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  constexpr int64_t m = 301;
  struct Shape { NormKind kind; int64_t n; DType x; Affine affine; bool zero_centered; };
  const Shape shapes[] = {{NormKind::LayerNorm, 7168, DType::BF16, Affine::WeightAndBias, true},
                          {NormKind::RMSNorm, 5120, DType::F16, Affine::WeightOnly, false},
                          {NormKind::LayerNorm, 12288, DType::BF16, Affine::BiasOnly, false},
                          {NormKind::LayerNorm, 16384, DType::F16, Affine::WeightOnly, false},
                          {NormKind::LayerNorm, 65536, DType::BF16, Affine::WeightAndBias, false},
                          {NormKind::LayerNorm, 131072, DType::F16, Affine::WeightAndBias, true}};
  int gamma_alone = 0;
  for (const Shape& s : shapes) {
    ForwardCase c;
    c.problem = make_problem(s.kind, s.n, s.x, DType::F32, s.affine);
    c.problem.zero_centered_weight = s.zero_centered;
    c.m = m;
    const NormProblem resolved = checked_problem(c);
    codegen::LaunchConfig config = codegen::choose_forward_config(resolved, limits.sm, m, 132, 18.4);
    config.shared_weights = true;
    SCOPED_TRACE(codegen::describe_forward(resolved) + " " + codegen::describe(config));
    ASSERT_NO_THROW(codegen::check_forward_config(resolved, config));
    if (resolved.has_weight && resolved.has_bias && !codegen::forward_holds_bias(resolved, config)) ++gamma_alone;
    Engine engine(this->config(TuneMode::Cached));
    engine.impl().pin_config(limits, resolved, m, config, codegen::Pass::Forward);
    EXPECT_EQ(engine.impl().forward_kernel_for(ctx, resolved, m).config, config);
    check_case(engine, c, stream());
  }
  EXPECT_EQ(gamma_alone, 2) << "the long rows hold γ alone";
}

// The next row copied ahead into shared memory (shared_prefetch = 1, a tuner candidate and the
// rule for LayerNorm's long 16-bit clusters with fp32 γ): the memory-rich heuristic's rows in
// registers, not prefetched into registers but copied ahead, pinned, against the reference, at
// more rows than the grid's row groups and at fewer (groups with no row copy nothing): with γ
// held (β read every row, zero-centred γ) and without, one block and clusters of 2-8, RMSNorm's
// clusters of 8 several an SM.
TEST_F(ForwardTuning, RowsCopiedAheadMatchTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  if (limits.sm < 90) GTEST_SKIP() << "rows copied ahead are tried on sm_90; this device is sm_" << limits.sm;
  struct Shape { NormKind kind; int64_t n; DType x; DType weight; Affine affine; bool zero_centered; };
  const Shape shapes[] = {{NormKind::LayerNorm, 65536, DType::BF16, DType::F32, Affine::WeightAndBias, false},
                          {NormKind::LayerNorm, 131072, DType::F16, DType::F32, Affine::WeightAndBias, true},
                          {NormKind::LayerNorm, 262144, DType::BF16, DType::F32, Affine::BiasOnly, false},
                          {NormKind::LayerNorm, 32768, DType::BF16, DType::BF16, Affine::WeightAndBias, false},
                          {NormKind::RMSNorm, 65536, DType::BF16, DType::F32, Affine::WeightOnly, false},
                          {NormKind::RMSNorm, 262144, DType::F16, DType::F16, Affine::WeightOnly, false},
                          {NormKind::RMSNorm, 81920, DType::BF16, DType::F32, Affine::WeightOnly, false}};
  int tried = 0;
  for (const Shape& s : shapes)
    for (int64_t m : {301, 7}) {
      ForwardCase c;
      c.problem = make_problem(s.kind, s.n, s.x, s.weight, s.affine);
      c.problem.zero_centered_weight = s.zero_centered;
      c.m = m;
      const NormProblem resolved = checked_problem(c);
      codegen::LaunchConfig config = codegen::choose_forward_config(resolved, limits.sm, 301, 132, 18.4);
      config.prefetch = false;
      config.shared_prefetch = 1;
      SCOPED_TRACE(codegen::describe_forward(resolved) + " " + codegen::describe(config));
      ASSERT_TRUE(config.row_in_registers);
      ASSERT_NO_THROW(codegen::check_forward_config(resolved, config));
      Engine engine(this->config(TuneMode::Cached));
      engine.impl().pin_config(limits, resolved, m, config, codegen::Pass::Forward);
      EXPECT_EQ(engine.impl().forward_kernel_for(ctx, resolved, m).config, config);
      check_case(engine, c, stream());
      ++tried;
    }
  EXPECT_EQ(tried, 14);
}

// Phased rows (odd 16-bit rows in phase read as aligned 16-byte chunks, each row at its own
// phase), pinned so that any sm_90 GPU runs them, in every way the statistics are formed
// (LayerNorm's blocks on Σx and Σx², and again on Σ(x − mean)² where the mean is more than
// kSumsSpreads = 2 spreads off zero: rows 1.9 and 2.1 spreads off test either side of it, 100
// off the second meeting; LayerNorm's clusters by warp-shifted moments; RMSNorm in a block and
// a cluster; the next row prefetched), γ and β read element by element and held in shared
// memory at the block's phase, at contiguous rows and at rows padded in phase (x and y strides
// alike modulo 8 elements), M from 2 to more rows than the grid has blocks.
TEST_F(ForwardTuning, PhasedRowsMatchTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  struct Shape { NormKind kind; int64_t n; DType x; int cluster; bool prefetch; int64_t m; int pad; };
  const Shape shapes[] = {{NormKind::LayerNorm, 1001, DType::BF16, 1, false, 301, 0},
                          {NormKind::LayerNorm, 4095, DType::F16, 1, false, 37, 8},
                          {NormKind::LayerNorm, 5003, DType::BF16, 1, true, 301, 0},
                          {NormKind::LayerNorm, 12289, DType::BF16, 1, false, 199, 16},
                          {NormKind::LayerNorm, 30001, DType::BF16, 2, false, 61, 0},
                          {NormKind::LayerNorm, 30001, DType::F16, 2, true, 199, 8},
                          {NormKind::RMSNorm, 9, DType::BF16, 1, false, 301, 0},
                          {NormKind::RMSNorm, 5003, DType::F16, 1, false, 2, 8},
                          {NormKind::RMSNorm, 30001, DType::BF16, 2, true, 199, 0}};
  int tried = 0;
  for (const Shape& s : shapes)
    for (double spreads : {0.0, 1.9, 2.1, 100.0})
    for (bool held : {false, true}) {
      if (spreads != 0 && (s.kind == NormKind::RMSNorm || held)) continue;
      if (s.cluster > 1 && limits.sm < 90) continue;
      ForwardCase c;
      c.problem = make_problem(s.kind, s.n, s.x, s.n % 4 == 1 ? DType::F32 : s.x,
                               s.kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly);
      c.m = s.m;
      if (s.pad) {
        c.x_stride = s.n + s.pad;
        c.y_stride = s.n + 2 * s.pad;
      }
      c.offset_in_spreads = spreads;
      const NormProblem resolved = checked_problem(c);
      ASSERT_TRUE(resolved.rows_in_phase && resolved.alignment < 16) << codegen::describe_forward(resolved);
      const codegen::LaunchConfig config = phased_forward_block(s.n, s.cluster, s.prefetch, held);
      if (held && codegen::forward_dynamic_shared_bytes(resolved, config) > codegen::max_stage_bytes(limits.sm)) continue;
      SCOPED_TRACE(codegen::describe_forward(resolved) + " " + codegen::describe(config));
      ASSERT_NO_THROW(codegen::check_forward_config(resolved, config));
      Engine engine(this->config(TuneMode::Cached));
      engine.impl().pin_config(limits, resolved, s.m, config, codegen::Pass::Forward);
      EXPECT_EQ(engine.impl().forward_kernel_for(ctx, resolved, s.m).config, config);
      check_case(engine, c, stream());
      ++tried;
    }
  EXPECT_GE(tried, 16);
  // The H200's rule at bench's rows (phased_forward_rule), pinned at fewer rows: LayerNorm's
  // blocks of four slots without prefetch (7163-10233, session 43) and the prefetching ones
  // either side of them.
  struct RuleShape { int64_t n; DType x; bool prefetch; };
  for (const RuleShape& s : {RuleShape{7001, DType::BF16, true}, RuleShape{8191, DType::BF16, false},
                             RuleShape{10233, DType::F16, false}, RuleShape{11001, DType::BF16, true}}) {
    ForwardCase c;
    c.problem = make_problem(NormKind::LayerNorm, s.n, s.x, DType::F32, Affine::WeightAndBias);
    c.m = 199;
    c.x_stride = s.n + 8;
    c.y_stride = s.n + 16;
    const NormProblem resolved = checked_problem(c);
    const codegen::LaunchConfig config = codegen::choose_forward_config(resolved, 90, 67108864 / s.n, 132, 18.4);
    SCOPED_TRACE(codegen::describe_forward(resolved) + " " + codegen::describe(config));
    ASSERT_TRUE(config.phased && config.shared_weights) << "the memory-rich rule's phased block";
    EXPECT_EQ(config.prefetch, s.prefetch);
    if (codegen::forward_dynamic_shared_bytes(resolved, config) > codegen::max_stage_bytes(limits.sm)) continue;
    Engine engine(this->config(TuneMode::Cached));
    engine.impl().pin_config(limits, resolved, c.m, config, codegen::Pass::Forward);
    check_case(engine, c, stream());
    ++tried;
  }
  EXPECT_GE(tried, 20);
  // Rows out of phase (x and y strides apart) take an unphased kernel, and are right, also in an
  // engine that has just run the phased kernel of their shape in phase (until session 42 the two
  // problems' codes were one: the engine gave the phased kernel to the rows out of phase).
  ForwardCase in_phase;
  in_phase.problem = make_problem(NormKind::LayerNorm, 5003, DType::BF16, DType::F32, Affine::WeightAndBias);
  in_phase.m = 301;
  const NormProblem phased = checked_problem(in_phase);
  Engine engine(this->config(TuneMode::Cached));
  engine.impl().pin_config(limits, phased, in_phase.m, phased_forward_block(5003, 1, true, true), codegen::Pass::Forward);
  check_case(engine, in_phase, stream());
  EXPECT_TRUE(engine.impl().forward_kernel_for(ctx, phased, in_phase.m).config.phased);
  ForwardCase apart = in_phase;
  apart.y_stride = 5004;
  const NormProblem resolved = checked_problem(apart);
  EXPECT_FALSE(resolved.rows_in_phase);
  EXPECT_FALSE(engine.impl().forward_kernel_for(ctx, resolved, apart.m).config.phased);
  check_case(engine, apart, stream());
}

TEST_F(ForwardTuning, OnMissTunesOnceAndTheTunedKernelIsCorrect) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  ForwardCase c;
  c.problem = make_problem(NormKind::LayerNorm, 8192, DType::BF16, DType::F32, Affine::WeightAndBias);
  c.m = 300;  // bucket 512
  const NormProblem resolved = checked_problem(c);
  {
    Engine tuner(config(TuneMode::OnMiss));
    check_case(tuner, c, stream());
    EXPECT_EQ(tuner.impl().tunings.load(), 1u);
    c.m = 511;  // the same bucket: no second tuning
    check_case(tuner, c, stream());
    EXPECT_EQ(tuner.impl().tunings.load(), 1u);
    EXPECT_TRUE(tuner.impl().forward_kernel_for(ctx, resolved, 300).tuned);
  }
  Engine reader(config(TuneMode::Cached));
  c.m = 300;
  check_case(reader, c, stream());
  EXPECT_EQ(reader.impl().tunings.load(), 0u);
  EXPECT_EQ(reader.impl().tuning_hits.load(), 1u);
  EXPECT_TRUE(reader.impl().forward_kernel_for(ctx, resolved, 300).tuned);
  // The backward of the same problem has no entry: forward and backward keys differ.
  EXPECT_FALSE(reader.impl().kernel_for(ctx, codegen::resolve_problem(c.problem), 300).tuned);
}

}  // namespace

}  // namespace normjit::test
