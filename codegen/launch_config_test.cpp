#include "codegen/launch_config.h"

#include <gtest/gtest.h>

#include "codegen/norm_problem.h"

using namespace normjit;
using codegen::choose_launch_config;
using codegen::LaunchConfig;

namespace {
NormProblem problem(int64_t n, DType x, int alignment = 16) {
  NormProblem p;
  p.n = n;
  p.x_dtype = x;
  p.alignment = alignment;
  return codegen::resolve_problem(p);
}
}  // namespace

TEST(LaunchConfig, SixteenByteVectorsWhenAligned) {
  EXPECT_EQ(choose_launch_config(problem(4096, DType::BF16)).vec, 8);
  EXPECT_EQ(choose_launch_config(problem(4096, DType::F32)).vec, 4);
}

TEST(LaunchConfig, NarrowerVectorsWhenRowsAreLessAligned) {
  EXPECT_EQ(choose_launch_config(problem(4096, DType::BF16, 4)).vec, 2);
  EXPECT_EQ(choose_launch_config(problem(4096, DType::BF16, 2)).vec, 1);
  EXPECT_EQ(choose_launch_config(problem(4095, DType::F32, 4)).vec, 1);
}

TEST(LaunchConfig, ShortRowsShareABlock) {
  const LaunchConfig c = choose_launch_config(problem(33, DType::BF16));
  EXPECT_GT(c.rows_per_block(), 1);
  EXPECT_TRUE(c.row_in_registers);
}

TEST(LaunchConfig, MediumRowsAreHeldInRegistersOneRowPerBlock) {
  const LaunchConfig c = choose_launch_config(problem(8192, DType::BF16));
  EXPECT_EQ(c.rows_per_block(), 1);
  EXPECT_TRUE(c.row_in_registers);
}

TEST(LaunchConfig, LongRowsAreStreamed) {
  const LaunchConfig c = choose_launch_config(problem(1048576, DType::F32));
  EXPECT_FALSE(c.row_in_registers);
  EXPECT_EQ(c.rows_per_block(), 1);
}

TEST(LaunchConfig, EveryHeuristicChoicePassesItsOwnCheck) {
  for (DType x : {DType::F32, DType::F16, DType::BF16})
    for (int alignment : {1, 2, 4, 8, 16})
      for (int64_t n = 1; n <= 70000; n = n < 64 ? n + 1 : n * 3 / 2 + 1) {
        if (alignment < codegen::dtype_size(x) / 2) continue;
        const NormProblem p = problem(n, x, alignment);
        EXPECT_NO_THROW(codegen::check_launch_config(p, choose_launch_config(p))) << codegen::describe(p);
      }
}

TEST(LaunchConfig, CheckRejectsImpossibleShapes) {
  const NormProblem p = problem(4096, DType::BF16);
  LaunchConfig c = choose_launch_config(p);
  c.threads = 48;
  EXPECT_THROW(codegen::check_launch_config(p, c), std::invalid_argument);
  c = choose_launch_config(p);
  c.threads_per_row = 3;
  EXPECT_THROW(codegen::check_launch_config(p, c), std::invalid_argument);
  c = choose_launch_config(p);
  c.vec = 16;  // 32 bytes of bf16
  EXPECT_THROW(codegen::check_launch_config(p, c), std::invalid_argument);
  c = choose_launch_config(problem(1048576, DType::BF16));
  c.row_in_registers = true;
  EXPECT_THROW(codegen::check_launch_config(problem(1048576, DType::BF16), c), std::invalid_argument);
}
