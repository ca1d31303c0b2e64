// dx may be written in any of the three dtypes whatever x's is, and dy may come in another
// dtype than x (an fp32 loss gradient into a bf16 network, say). The kernels compute in fp32,
// so the tolerance is that of the dtype written (fp32 dx: 1e-5).
#include <gtest/gtest.h>

#include "support/device_run.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

struct DtypeMix {
  DType x, dy, dx, weight;
};

constexpr DtypeMix kMixes[] = {
    {DType::BF16, DType::BF16, DType::F32, DType::F32},   // bf16 activations, fp32 dx
    {DType::F32, DType::F32, DType::BF16, DType::F32},    // fp32 activations, bf16 dx
    {DType::F16, DType::F16, DType::BF16, DType::F16},    // fp16 in, bf16 out
    {DType::F16, DType::F16, DType::F32, DType::F16},     // fp16 in, fp32 out
    {DType::BF16, DType::F32, DType::BF16, DType::BF16},  // fp32 dy into bf16 x
};

struct Shape {
  int64_t m, n;
};

// Row-in-registers and streamed kernels, single and many rows, aligned and ragged N.
constexpr Shape kShapes[] = {{1, 33}, {37, 1000}, {199, 4096}, {4096, 1024}, {1, 65536}, {5, 262144}};

class BackwardMixedDtypes : public GpuTest {};

TEST_F(BackwardMixedDtypes, DxAndDyInOtherDtypesThanXMatchReference) {
  Engine& engine = shared_engine();
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    const Affine affine = kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly;
    for (const DtypeMix& mix : kMixes)
      for (const Shape& shape : kShapes) {
        NormProblem problem = make_problem(kind, shape.n, mix.x, mix.weight, affine, mix.dx);
        problem.dy_dtype = mix.dy;
        EXPECT_TRUE(backward_matches_reference(engine, make_inputs(problem, shape.m, fresh_seed()), stream()));
      }
  }
}

}  // namespace
}  // namespace normjit::test
