// The autotuner on the GPU: on-miss tuning picks a config, the backward it then runs matches
// the reference, the result lands in the tuning database, and a second engine (a later
// process, in effect) serves the same shape from the database without tuning.
#include <gtest/gtest.h>

#include <filesystem>

#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "codegen/search_space.h"
#include "runtime/engine_impl.h"
#include "runtime/tuner.h"
#include "support/device_run.h"
#include "support/gpu.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/scratch_cache.h"

namespace normjit::test {
namespace {
namespace fs = std::filesystem;

class Tuning : public ScratchCacheGpuTest {};

TEST_F(Tuning, OnMissTunesOnceThenASecondEngineHitsTheDatabase) {
  NJ_REQUIRE_GPU();
  const NormProblem problem = make_problem(NormKind::LayerNorm, 1024, DType::BF16, DType::F32, Affine::WeightAndBias);
  const NormProblem resolved = codegen::resolve_problem(problem);
  constexpr int64_t kRows = 300;  // bucket 512
  const CUcontext ctx = GpuContext::get()->context();
  {
    Engine tuner(config(TuneMode::OnMiss));
    EXPECT_TRUE(backward_matches_reference(tuner, make_inputs(problem, kRows, fresh_seed()), stream()));
    EXPECT_EQ(tuner.impl().tunings.load(), 1u);
    // The same bucket again: no second tuning, and still correct.
    EXPECT_TRUE(backward_matches_reference(tuner, make_inputs(problem, 511, fresh_seed()), stream()));
    EXPECT_EQ(tuner.impl().tunings.load(), 1u);
    EXPECT_TRUE(tuner.impl().kernel_for(ctx, resolved, kRows).tuned);
  }
  ASSERT_TRUE(fs::exists(cache_dir() / "tuning.toml"));

  Engine reader(config(TuneMode::Cached));
  EXPECT_EQ(reader.impl().tuning.size(), 1u);
  EXPECT_TRUE(backward_matches_reference(reader, make_inputs(problem, kRows, fresh_seed()), stream()));
  EXPECT_EQ(reader.impl().tunings.load(), 0u);
  EXPECT_EQ(reader.impl().tuning_hits.load(), 1u);
  EXPECT_TRUE(reader.impl().kernel_for(ctx, resolved, kRows).tuned);
  // Another bucket has no entry: the heuristic, untuned.
  EXPECT_TRUE(backward_matches_reference(reader, make_inputs(problem, 3, fresh_seed()), stream()));
  EXPECT_FALSE(reader.impl().kernel_for(ctx, resolved, 3).tuned);
  EXPECT_EQ(reader.impl().tunings.load(), 0u);

  Engine off(config(TuneMode::Off));
  EXPECT_TRUE(backward_matches_reference(off, make_inputs(problem, kRows, fresh_seed()), stream()));
  EXPECT_EQ(off.impl().tuning_hits.load(), 0u);
  EXPECT_FALSE(off.impl().kernel_for(ctx, resolved, kRows).tuned);
}

TEST_F(Tuning, TheTunerTimesEveryCandidateAndTheWinnerIsCorrect) {
  NJ_REQUIRE_GPU();
  const NormProblem problem = make_problem(NormKind::RMSNorm, 4096, DType::BF16, DType::F32, Affine::WeightOnly);
  const NormProblem resolved = codegen::resolve_problem(problem);
  Engine engine(config(TuneMode::Off));
  runtime::TuneOptions options;
  options.exhaustive = true;
  options.final_reps = 5;
  const runtime::TuneResult result = runtime::tune(engine.impl(), GpuContext::get()->context(), resolved, 2048, options);
  ASSERT_GT(result.candidates.size(), 1u);
  for (const runtime::CandidateTiming& c : result.candidates) {
    EXPECT_TRUE(c.ok) << codegen::describe(c.config) << ": " << c.error;
    if (c.ok) EXPECT_GT(c.us(), 0.0) << codegen::describe(c.config);
  }
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(GpuContext::get()->context());
  EXPECT_EQ(result.heuristic().config, codegen::choose_launch_config(resolved, limits.sm, limits.sm_count, 2048,
                                                                     limits.memory_bytes_per_sm_cycle));
  for (const runtime::CandidateTiming& c : result.candidates)
    if (c.ok) EXPECT_LE(result.winner().us(), c.us());
  std::printf("tuned %s at M=2048 over %zu candidates: %.2f us (heuristic %.2f us), %.0f ms wall, %.0f ms compiling\n",
              codegen::describe(resolved).c_str(), result.candidates.size(), result.winner().us(),
              result.heuristic().us(), result.wall_ms, result.compile_wall_ms);

  // The winner, run through an engine that reads it from the database, matches the reference.
  Engine reader(config(TuneMode::Cached));
  const runtime::TuningDevice device =
      reader.impl().tuning_device(Engine::Impl::query_limits(GpuContext::get()->context()));
  reader.impl().tuning.put(runtime::make_tuning_key(device, resolved, 2048).text(), result.tuned());
  EXPECT_TRUE(backward_matches_reference(reader, make_inputs(problem, 2000, fresh_seed()), stream()));
  EXPECT_EQ(reader.impl().kernel_for(GpuContext::get()->context(), resolved, 2000).config,
            result.winner().config);
}

// An odd N at align=16 means padded rows: the tuner's own tensors must honour that (a contiguous
// layout faulted with a misaligned address at 2026-11-23, poisoning the context for every later
// shape). Every candidate runs cleanly at either alignment, with every fused input on, and the
// context stays usable.
TEST_F(Tuning, OddRowsAreTunedAtTheAlignmentTheProblemAssumes) {
  NJ_REQUIRE_GPU();
  Engine engine(config(TuneMode::Off));
  runtime::TuneOptions options;
  options.exhaustive = true;
  options.final_reps = 2;
  for (int alignment : {16, 2}) {
    NormProblem problem = make_problem(NormKind::LayerNorm, 4095, DType::BF16, DType::F32, Affine::WeightAndBias);
    problem.alignment = alignment;
    problem.residual = true;
    problem.rowscale = true;
    problem.dropout = DropoutMask::Bits;
    const NormProblem resolved = codegen::resolve_problem(problem);
    const runtime::TuneResult result = runtime::tune(engine.impl(), GpuContext::get()->context(), resolved, 300, options);
    ASSERT_GT(result.candidates.size(), 1u) << codegen::describe(resolved);
    for (const runtime::CandidateTiming& c : result.candidates)
      EXPECT_TRUE(c.ok) << codegen::describe(resolved) << " with " << codegen::describe(c.config) << ": " << c.error;
  }
  EXPECT_TRUE(backward_matches_reference(engine, make_inputs(make_problem(NormKind::RMSNorm, 1000, DType::F32,
                                                                           DType::F32, Affine::WeightOnly),
                                                              7, fresh_seed()),
                                         stream()));
}

// N = 1001: contiguous rows start at every element offset of 16 bytes in turn (every even byte
// in bf16, every fourth in fp32), so their candidates (16- and 8-byte vectors realigned in bf16,
// element-wide ones, staged rows) meet every shift.
TEST_F(Tuning, EveryCandidateOfSmallProblemsMatchesTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  for (const NormProblem& problem :
       {make_problem(NormKind::LayerNorm, 768, DType::F16, DType::F16, Affine::WeightAndBias),
        make_problem(NormKind::LayerNorm, 1001, DType::BF16, DType::F32, Affine::WeightAndBias),
        make_problem(NormKind::LayerNorm, 1001, DType::F32, DType::F32, Affine::WeightAndBias),
        make_problem(NormKind::RMSNorm, 1003, DType::F32, DType::F32, Affine::WeightOnly)}) {
    NormProblem at_rows = problem;
    at_rows.alignment = problem.n % 2 ? codegen::dtype_size(problem.x_dtype) : 16;
    const NormProblem resolved = codegen::resolve_problem(at_rows);
    for (const codegen::LaunchConfig& c : codegen::search_space(resolved, limits.sm)) {
      // One engine per candidate, each told by its database to use that candidate for M <= 64.
      Engine engine(config(TuneMode::Cached));
      engine.impl().pin_config(limits, resolved, 64, c);
      EXPECT_TRUE(backward_matches_reference(engine, make_inputs(problem, 61, fresh_seed()), stream()))
          << codegen::describe(resolved) << " with " << codegen::describe(c);
    }
  }
}

// The memory-rich rules for rows aligned to less than 16 bytes (codegen::choose_launch_config at
// an H200's 18.4 bytes an SM cycle): fp32 rows of an element (16 elements a thread prefetching,
// one block of 16 or 32 a thread, clusters of 8 a thread with shared sums) and 16-bit rows of
// slots of two or four (8 a thread prefetching, one block of 16 or 32), pinned so that any sm_90
// GPU runs them, at many rows, contiguous rows meeting every shift their N gives, against the
// reference.
TEST_F(Tuning, MemoryRichUnalignedRowsMatchTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  if (limits.sm < 90) GTEST_SKIP() << "the memory-rich rules are for sm_90; this device is sm_" << limits.sm;
  constexpr int64_t m = 301;  // bucket 512: many rows on a device of up to 256 SMs
  struct Shape { NormKind kind; int64_t n; DType x; Affine affine; int alignment; };
  const Shape shapes[] = {
      {NormKind::LayerNorm, 6001, DType::F32, Affine::WeightAndBias, 4}, {NormKind::RMSNorm, 7001, DType::F32, Affine::WeightOnly, 4},
      {NormKind::LayerNorm, 12001, DType::F32, Affine::WeightAndBias, 4}, {NormKind::RMSNorm, 12003, DType::F32, Affine::WeightOnly, 4},
      {NormKind::LayerNorm, 9001, DType::F32, Affine::WeightOnly, 4},     {NormKind::RMSNorm, 16383, DType::F32, Affine::None, 4},
      {NormKind::LayerNorm, 20001, DType::F32, Affine::WeightAndBias, 4}, {NormKind::RMSNorm, 30001, DType::F32, Affine::WeightOnly, 4},
      {NormKind::LayerNorm, 50001, DType::F32, Affine::WeightAndBias, 4}, {NormKind::RMSNorm, 50003, DType::F32, Affine::WeightOnly, 4},
      {NormKind::LayerNorm, 40001, DType::F32, Affine::BiasOnly, 4},
      {NormKind::LayerNorm, 12002, DType::F32, Affine::WeightAndBias, 8}, {NormKind::RMSNorm, 30002, DType::F32, Affine::WeightOnly, 8},
      {NormKind::LayerNorm, 6002, DType::BF16, Affine::WeightAndBias, 4}, {NormKind::RMSNorm, 8190, DType::F16, Affine::WeightOnly, 4},
      {NormKind::LayerNorm, 14002, DType::F16, Affine::WeightAndBias, 4}, {NormKind::RMSNorm, 12002, DType::BF16, Affine::WeightOnly, 4},
      {NormKind::RMSNorm, 16002, DType::BF16, Affine::None, 4},           {NormKind::LayerNorm, 10004, DType::BF16, Affine::BiasOnly, 8},
      {NormKind::RMSNorm, 14004, DType::F16, Affine::WeightOnly, 8},
      // Session 37: 16-bit slots of four up to 8192; fp32 slots of two without β past 13312, in
      // the clusters of 32769-40960 and prefetching at 4097-6144.
      {NormKind::LayerNorm, 5004, DType::BF16, Affine::WeightAndBias, 8}, {NormKind::LayerNorm, 7004, DType::F16, Affine::WeightAndBias, 8},
      {NormKind::RMSNorm, 6004, DType::BF16, Affine::WeightOnly, 8},      {NormKind::RMSNorm, 7500, DType::F16, Affine::WeightOnly, 8},
      {NormKind::RMSNorm, 14002, DType::F32, Affine::WeightOnly, 8},      {NormKind::RMSNorm, 16382, DType::F32, Affine::None, 8},
      {NormKind::LayerNorm, 36002, DType::F32, Affine::WeightAndBias, 8}, {NormKind::RMSNorm, 40002, DType::F32, Affine::WeightOnly, 8},
      {NormKind::LayerNorm, 5002, DType::F32, Affine::WeightAndBias, 8},  {NormKind::RMSNorm, 6142, DType::F32, Affine::WeightOnly, 8}};
  for (const Shape& s : shapes) {
    const NormProblem problem = make_problem(s.kind, s.n, s.x, DType::F32, s.affine);
    NormProblem at_rows = problem;
    at_rows.alignment = s.alignment;
    const NormProblem resolved = codegen::resolve_problem(at_rows);
    const codegen::LaunchConfig config = codegen::choose_launch_config(resolved, limits.sm, 132, m, 18.4);
    SCOPED_TRACE(codegen::describe(resolved) + " " + codegen::describe(config));
    ASSERT_FALSE(config == codegen::choose_launch_config(resolved, limits.sm, 132, m)) << "not a memory-rich config";
    Engine engine(this->config(TuneMode::Cached));
    engine.impl().pin_config(limits, resolved, m, config);
    EXPECT_EQ(engine.impl().kernel_for(ctx, resolved, m).config, config);
    EXPECT_TRUE(backward_matches_reference(engine, make_inputs(problem, m, fresh_seed()), stream()));
  }
}

// Phased rows (codegen::LaunchConfig::phased) in blocks and clusters of many shapes, pinned so
// that any sm_90 GPU runs them, against the reference: warps of a power of two and not, one to
// five slots a thread, threads whose last slot lies past the row's span (their slot column must
// read as none: it read as N once, and those threads summed a few of the row's last elements
// again), shared sums and weights or registers, one row a group or many (every phase), rows
// prefetched, and rows aligned to 16 bytes the caller promised less of (every phase 0).
TEST_F(Tuning, PhasedRowsInEveryBlockShapeMatchTheReference) {
  NJ_REQUIRE_GPU();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  if (limits.sm < 90) GTEST_SKIP() << "the clusters need sm_90; this device is sm_" << limits.sm;
  struct Case { NormKind kind; int64_t n; DType x; DType weight; Affine affine; int alignment; const char* config; int64_t m = 4096; };
  const Case cases[] = {
      {NormKind::LayerNorm, 4095, DType::F16, DType::F16, Affine::BiasOnly, 2, "threads=1024 threads_per_row=1024 vec=8 registers phased"},
      {NormKind::LayerNorm, 4095, DType::F16, DType::F16, Affine::BiasOnly, 2, "threads=288 threads_per_row=288 vec=8 registers phased", 7},
      {NormKind::LayerNorm, 4095, DType::F16, DType::F16, Affine::BiasOnly, 2, "threads=128 threads_per_row=128 vec=8 registers phased", 1},
      {NormKind::LayerNorm, 2047, DType::BF16, DType::F32, Affine::WeightAndBias, 2, "threads=256 threads_per_row=256 vec=8 registers phased"},
      {NormKind::LayerNorm, 5003, DType::BF16, DType::F32, Affine::WeightAndBias, 2, "threads=288 threads_per_row=288 vec=8 registers min_blocks=2 shared_sums shared_weights phased"},
      {NormKind::LayerNorm, 4094, DType::F16, DType::F16, Affine::WeightAndBias, 4, "threads=160 threads_per_row=160 vec=8 registers phased"},
      {NormKind::LayerNorm, 4092, DType::BF16, DType::BF16, Affine::WeightOnly, 8, "threads=544 threads_per_row=544 vec=8 registers shared_sums shared_weights phased"},
      {NormKind::LayerNorm, 4096, DType::F16, DType::F16, Affine::BiasOnly, 8, "threads=288 threads_per_row=288 vec=8 registers phased"},
      {NormKind::RMSNorm, 4095, DType::BF16, DType::F32, Affine::WeightOnly, 2, "threads=288 threads_per_row=288 vec=8 registers min_blocks=3 shared_sums shared_weights phased"},
      {NormKind::RMSNorm, 8191, DType::BF16, DType::F32, Affine::WeightOnly, 2, "threads=544 threads_per_row=544 vec=8 registers shared_sums shared_weights phased", 301},
      {NormKind::RMSNorm, 16383, DType::BF16, DType::F32, Affine::WeightOnly, 2, "threads=288 threads_per_row=288 vec=8 registers cluster=4 min_blocks=3 shared_sums shared_weights phased"},
      // The heuristic's halves (one-block twins at 5000 and up): clusters of two, two slots a thread.
      {NormKind::RMSNorm, 6001, DType::BF16, DType::BF16, Affine::WeightOnly, 2, "threads=192 threads_per_row=192 vec=8 registers cluster=2 min_blocks=5 shared_sums shared_weights phased"},
      {NormKind::LayerNorm, 15001, DType::F16, DType::F32, Affine::WeightAndBias, 2, "threads=480 threads_per_row=480 vec=8 registers cluster=2 min_blocks=2 shared_sums shared_weights phased", 301},
      {NormKind::LayerNorm, 30001, DType::F16, DType::F32, Affine::WeightAndBias, 2, "threads=480 threads_per_row=480 vec=8 registers cluster=4 min_blocks=2 shared_sums shared_weights phased", 301},
      {NormKind::RMSNorm, 65537, DType::BF16, DType::BF16, Affine::WeightOnly, 2, "threads=544 threads_per_row=544 vec=8 registers cluster=8 shared_sums shared_weights phased", 37},
      // Prefetching: packed rows (shared sums) made the row where worked, not where loaded
      // (complete_phased_row), a row group of one row or many; and rows held as fp32.
      {NormKind::LayerNorm, 5003, DType::BF16, DType::F32, Affine::WeightAndBias, 2, "threads=320 threads_per_row=320 vec=8 registers cluster=2 prefetch min_blocks=3 shared_sums shared_weights phased"},
      {NormKind::LayerNorm, 5003, DType::BF16, DType::F32, Affine::WeightAndBias, 2, "threads=320 threads_per_row=320 vec=8 registers cluster=2 prefetch min_blocks=3 shared_sums shared_weights phased", 7},
      {NormKind::RMSNorm, 8191, DType::BF16, DType::F32, Affine::WeightOnly, 2, "threads=544 threads_per_row=544 vec=8 registers prefetch shared_sums shared_weights phased", 301},
      {NormKind::LayerNorm, 12289, DType::F16, DType::F16, Affine::WeightAndBias, 2, "threads=800 threads_per_row=800 vec=8 registers prefetch shared_sums shared_weights phased", 37},
      {NormKind::LayerNorm, 5003, DType::F16, DType::F32, Affine::BiasOnly, 2, "threads=640 threads_per_row=640 vec=8 registers prefetch phased", 1001},
  };
  for (const Case& c : cases) {
    NormProblem problem = make_problem(c.kind, c.n, c.x, c.weight, c.affine);
    if (c.n % 8 == 0) problem.alignment = c.alignment;  // aligned rows the caller promises less of
    NormProblem at_rows = problem;
    at_rows.alignment = c.alignment;
    const NormProblem resolved = codegen::resolve_problem(at_rows);
    const codegen::LaunchConfig config = codegen::parse_described_config(c.config);
    SCOPED_TRACE(codegen::describe(resolved) + " " + codegen::describe(config) + ", " + std::to_string(c.m) + " rows");
    Engine engine(this->config(TuneMode::Cached));
    engine.impl().pin_config(limits, resolved, c.m, config);
    // A config the device cannot run (its shared memory) falls back to the heuristic's: a
    // failure of this case, and the cases after it still run.
    if (!(engine.impl().kernel_for(ctx, resolved, c.m).config == config)) {
      ADD_FAILURE() << "the pinned config was not taken (see the warning above)";
      continue;
    }
    EXPECT_TRUE(backward_matches_reference(engine, make_inputs(problem, c.m, fresh_seed()), stream()));
  }
}

}  // namespace
}  // namespace normjit::test
