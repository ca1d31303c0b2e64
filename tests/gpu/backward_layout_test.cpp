// Memory layouts other than contiguous, 16-byte aligned rows: padded rows (stride > N, a
// different stride per tensor) and base pointers that are only element-aligned.
#include <gtest/gtest.h>

#include <cstdio>
#include <exception>
#include <vector>

#include "support/device_run.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "runtime/engine_impl.h"
#include "support/gpu.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

// Not NaN in any of the three dtypes (fp32 ≈ 1.5e16, fp16 = 203.25, bf16 ≈ 1.5e16): an
// element left at this value is wrong, and a gap element still holding it was not written.
constexpr unsigned char kGapPattern = 0x5A;

struct LayoutProblem {
  NormKind kind;
  DType x, weight;
  Affine affine;
};

constexpr LayoutProblem kProblems[] = {
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias},
    {NormKind::LayerNorm, DType::F16, DType::F16, Affine::None},
    {NormKind::RMSNorm, DType::F32, DType::F32, Affine::WeightOnly},
    {NormKind::RMSNorm, DType::BF16, DType::BF16, Affine::WeightOnly},
};

struct Shape {
  int64_t m, n;
};

// Every gap element (column ≥ N of each row, the last row's included) still holds `byte`.
::testing::AssertionResult gaps_hold(const HostTensor& dx, unsigned char byte) {
  for (int64_t r = 0; r < dx.rows(); ++r)
    for (int64_t c = dx.cols(); c < dx.stride(); ++c) {
      const unsigned char* bytes = dx.slot_bytes(r * dx.stride() + c);
      for (int b = 0; b < dx.element_bytes(); ++b)
        if (bytes[b] != byte) {
          char value[8];
          std::snprintf(value, sizeof value, "0x%02x", bytes[b]);
          return ::testing::AssertionFailure()
                 << "dx[" << r << ", " << c << "] lies in the gap after row " << r << " (N=" << dx.cols()
                 << ", stride " << dx.stride() << ") and was overwritten: byte " << b << " is " << value;
        }
    }
  return ::testing::AssertionSuccess();
}

// One backward over rows of `strides`, dx's gaps filled with kGapPattern first: the gradients
// against the reference, and every gap left as it was.
::testing::AssertionResult padded_rows_match(Engine& engine, CUstream stream, const NormProblem& problem, int64_t m,
                                             const RowStrides& strides) {
  const NormInputs inputs = make_inputs(problem, m, fresh_seed(), strides);
  RunOptions options;
  options.dx_fill = kGapPattern;
  Gradients out;
  try {
    out = run_backward_on_gpu(engine, inputs, stream, options);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << describe_case(inputs) << " threw: " << e.what();
  }
  const ::testing::AssertionResult match = gradients_match(inputs, out, reference_backward(inputs));
  if (!match) return match;
  ::testing::AssertionResult gaps = gaps_hold(out.dx, kGapPattern);
  if (!gaps) gaps << " (" << describe_case(inputs) << ")";
  return gaps;
}

class BackwardStridedRows : public GpuTest {};

TEST_F(BackwardStridedRows, PaddedRowsAreReadAndWrittenAtTheirStrideAndGapsAreLeftUntouched) {
  Engine& engine = shared_engine();
  // x and dy gaps hold NaN (make_inputs), so a kernel reading them is caught too.
  const Shape shapes[] = {{37, 1000}, {199, 33}, {64, 4096}, {3, 131072}};
  for (const LayoutProblem& lp : kProblems)
    for (const Shape& shape : shapes) {
      const int64_t n = shape.n;
      const RowStrides stride_sets[] = {
          {n + 3, n + 64, n + 1},  // a different stride for each tensor
          {n + 64, n + 3, n + 64},
          {n, n + 8, n + 3},       // contiguous x next to padded dy and dx
      };
      const NormProblem problem = make_problem(lp.kind, n, lp.x, lp.weight, lp.affine);
      for (const RowStrides& strides : stride_sets) {
        EXPECT_TRUE(padded_rows_match(engine, stream(), problem, shape.m, strides));
      }
    }
}

class BackwardMisalignedPointers : public GpuTest {};

TEST_F(BackwardMisalignedPointers, ElementAlignedPointersAndOddStridesGiveCorrectResults) {
  Engine& engine = shared_engine();
  // Every base pointer one element past a 256-byte boundary (+4 bytes for fp32, +2 for
  // fp16/bf16): no 8- or 16-byte vector fits, in any row.
  RunOptions misaligned;
  misaligned.misalign_elements = 1;
  // 2561, 3001 and 3301: 16-bit rows held an element a thread a pass whose loads go without
  // branches (one block of 192 or 224 threads; rows past M read row 0 and drop it).
  const Shape shapes[] = {{1, 1024}, {37, 1000}, {16, 4096}, {64, 5003}, {199, 33}, {5, 12289}, {3, 131072},
                          {7, 2561}, {37, 3001}, {199, 3301}};
  for (const LayoutProblem& lp : kProblems)
    for (const Shape& shape : shapes) {
      const int64_t n = shape.n;
      const NormProblem problem = make_problem(lp.kind, n, lp.x, lp.weight, lp.affine);
      // Contiguous rows, then odd strides, which misalign every other row on their own.
      for (const RowStrides& strides : {RowStrides{}, RowStrides{n + 1, n + 3, n + 5}}) {
        const NormInputs inputs = make_inputs(problem, shape.m, fresh_seed(), strides);
        EXPECT_TRUE(backward_matches_reference(engine, inputs, stream(), misaligned));
      }
    }
  // Aligned bases with odd strides alone: only rows after the first are misaligned.
  for (const LayoutProblem& lp : kProblems) {
    const int64_t n = 4096;
    const NormProblem problem = make_problem(lp.kind, n, lp.x, lp.weight, lp.affine);
    const NormInputs inputs = make_inputs(problem, 37, fresh_seed(), RowStrides{n + 1, n + 1, n + 1});
    EXPECT_TRUE(backward_matches_reference(engine, inputs, stream()));
  }
}

// Rows in phase but aligned to less than 16 bytes (odd N from contiguous tensors, or padded rows
// whose strides agree modulo 16 bytes): phased kernels read each row as the aligned chunks that
// cover it, its first and last chunk shared with the rows around it. Against the reference, the
// gaps between padded rows untouched (nothing but the row's own elements written), at M of one
// row to many rows of every phase and row groups of any count; the heuristic's config is
// checked to be phased where the rows are held a row a block.
class BackwardPhasedRows : public GpuTest {};

TEST_F(BackwardPhasedRows, RowsInPhaseMatchTheReferenceAndLeaveTheGapsUntouched) {
  NJ_REQUIRE_GPU();
  Engine& engine = shared_engine();
  const CUcontext ctx = GpuContext::get()->context();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  const LayoutProblem problems[] = {
      {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias},
      {NormKind::LayerNorm, DType::F16, DType::F16, Affine::None},
      {NormKind::LayerNorm, DType::BF16, DType::BF16, Affine::BiasOnly},
      {NormKind::RMSNorm, DType::BF16, DType::BF16, Affine::WeightOnly},
      {NormKind::RMSNorm, DType::F16, DType::F32, Affine::WeightOnly},
  };
  // Phased on an H200 at 5003 and 8191 (many rows: halves) and at 16383 and 30001
  // (M of one row to many: the twin's cluster); the others under the rules of their own
  // alignment, in the same layouts. 13001 and 14001 at 1024 rows or more: phased from their
  // twin's config before the rule that copies aligned rows ahead there (twin_launch_config),
  // whose copies phased rows cannot take. 1537-4607 at many rows: RMSNorm's phased blocks of a
  // slot a thread prefetching (1537, 2001) and of two slots (3001, 4095), LayerNorm's rows of an
  // element at 4607 (short_rows_in_phase_config); RMSNorm's phased block at 999 too (from 960).
  // 745 at many rows: a warp a row of elements (rows aligned to 2 bytes: LayerNorm's to 768,
  // RMSNorm's to 1023 but in phase at 960-1017); 1281, whose twin's paired cluster is not phased;
  // 1021 (RMSNorm a warp a row, LayerNorm blocks of 64) and 1901 (LayerNorm prefetching blocks).
  const Shape shapes[] = {{7, 4095},    {257, 5003},  {301, 8191},  {37, 9},      {1, 16383},
                          {7, 16383},   {199, 16383}, {2048, 16383}, {16, 30001}, {301, 30001},
                          {1024, 13001}, {1100, 14001}, {301, 1537}, {263, 2001}, {301, 3001},
                          {257, 4095},  {301, 4607},  {301, 745},   {263, 999},  {301, 1281},
                          {301, 1021},  {263, 1901}};
  for (const LayoutProblem& lp : problems)
    for (const Shape& shape : shapes) {
      const int64_t n = shape.n;
      const NormProblem problem = make_problem(lp.kind, n, lp.x, lp.weight, lp.affine);
      // Contiguous; padded alike modulo 8 elements; padded to an even stride (4-byte rows).
      for (const RowStrides& strides : {RowStrides{}, RowStrides{n + 8, n + 16, n + 24}, RowStrides{n + 1, n + 1, n + 9}}) {
        EXPECT_TRUE(padded_rows_match(engine, stream(), problem, shape.m, strides));
      }
      // The engine's config for the contiguous rows (the engine finds them in phase from the
      // pointers): phased where the heuristic phases rows in phase (codegen::LaunchConfig::phased).
      NormProblem in_phase = problem;
      in_phase.alignment = 2;
      in_phase.rows_in_phase = true;
      const NormProblem resolved = codegen::resolve_problem(in_phase);
      const codegen::LaunchConfig expected =
          codegen::choose_launch_config(resolved, limits.sm, limits.sm_count, shape.m, limits.memory_bytes_per_sm_cycle);
      const codegen::LaunchConfig config = engine.impl().kernel_for(ctx, resolved, shape.m).config;
      EXPECT_EQ(config.phased, expected.phased) << codegen::describe(resolved) << " " << codegen::describe(config);
      // The rules must reach some rows: long odd rows at many rows are phased, in a cluster of
      // two halves (8191) or the twin's cluster (30001), with γ or β on a memory-rich sm_90
      // (unweighted fp16 LayerNorm's twin at 30008 is a staged cluster).
      const bool rich_sm90 = limits.sm >= 90 && codegen::memory_rich(limits.memory_bytes_per_sm_cycle);
      if ((n == 30001 || n == 8191) && shape.m == 301 && lp.affine != Affine::None && rich_sm90)
        EXPECT_TRUE(config.phased) << "long odd rows at many rows: " << codegen::describe(resolved) << " " << codegen::describe(config);
      if (lp.kind == NormKind::RMSNorm && n >= 999 && n <= 4095 && n != 1021 && shape.m > 256 && rich_sm90)
        EXPECT_TRUE(config.phased) << "short odd RMSNorm rows at many rows: " << codegen::describe(config);
      if (n == 745 && shape.m > 256 && lp.affine != Affine::None && rich_sm90)
        EXPECT_EQ(config.threads_per_row, 32) << "odd rows of 513-768 at many rows: " << codegen::describe(config);
      if (lp.kind == NormKind::RMSNorm && n == 1021 && shape.m > 256 && rich_sm90)
        EXPECT_EQ(config.threads_per_row, 32) << "RMSNorm's odd rows of 1018-1023 at many rows: " << codegen::describe(config);
    }
}

// Just past the longest rows a cluster holds (262144 columns), rows in phase at many rows: until
// session 57 the heuristic gave them halves of 8224 threads on a memory-rich device and threw.
TEST_F(BackwardPhasedRows, RowsInPhaseJustPastTheLongestClusterRowsRun) {
  NJ_REQUIRE_GPU();
  Engine& engine = shared_engine();
  for (const LayoutProblem& lp : {LayoutProblem{NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias},
                                  LayoutProblem{NormKind::RMSNorm, DType::F16, DType::F16, Affine::WeightOnly}}) {
    const NormProblem problem = make_problem(lp.kind, 262145, lp.x, lp.weight, lp.affine);
    EXPECT_TRUE(backward_matches_reference(engine, make_inputs(problem, 257, fresh_seed()), stream()));
  }
}

}  // namespace
}  // namespace normjit::test
