// The backward is deterministic: dγ and dβ are summed as per-block partial rows, added in
// block order, never with atomics; so the same inputs give the same bits on every run, with
// either workspace, and from a freshly built engine (its own compilation of the kernels).
#include <gtest/gtest.h>

#include "support/device_run.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

constexpr int kRepeats = 5;

struct DeterminismCase {
  NormKind kind;
  DType x, weight;
  Affine affine;
  int64_t m, n;
};

constexpr DeterminismCase kCases[] = {
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 4096, 1024},  // many rows per block
    {NormKind::LayerNorm, DType::F16, DType::F16, Affine::WeightAndBias, 199, 5120},
    {NormKind::RMSNorm, DType::F32, DType::F32, Affine::WeightOnly, 4096, 4096},
    {NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 37, 262144},  // a staged cluster of 16
    // Few rows: a block per row, each writing its partial row of dγ/dβ as vector stores, which
    // the reduction adds in group order (merged blocks: backward_merge_test.cpp).
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 37, 4096},
    {NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 199, 8192},
};

class BackwardDeterminism : public GpuTest {};

TEST_F(BackwardDeterminism, RepeatedRunsAndAFreshEngineGiveIdenticalBits) {
  Engine& engine = shared_engine();
  Config fresh_config;
  fresh_config.disk_cache = false;  // compiles its kernels anew
  Engine fresh_engine(fresh_config);

  for (const DeterminismCase& dc : kCases) {
    const NormInputs inputs = make_inputs(make_problem(dc.kind, dc.n, dc.x, dc.weight, dc.affine), dc.m, fresh_seed());
    Gradients first;
    ASSERT_NO_THROW(first = run_backward_on_gpu(engine, inputs, stream())) << describe_case(inputs);
    ASSERT_TRUE(gradients_match(inputs, first, reference_backward(inputs)));
    for (int run = 1; run < kRepeats; ++run) {
      RunOptions options;
      options.caller_workspace = run % 2 == 1;
      Gradients again;
      ASSERT_NO_THROW(again = run_backward_on_gpu(engine, inputs, stream(), options)) << describe_case(inputs);
      EXPECT_TRUE(same_bits(first, again)) << "run " << run + 1 << " of " << describe_case(inputs);
    }
    Gradients from_fresh_engine;
    ASSERT_NO_THROW(from_fresh_engine = run_backward_on_gpu(fresh_engine, inputs, stream())) << describe_case(inputs);
    EXPECT_TRUE(same_bits(first, from_fresh_engine)) << "fresh engine, " << describe_case(inputs);
  }
}

}  // namespace
}  // namespace normjit::test
