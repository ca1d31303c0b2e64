// Kernels launched as programmatic dependents of the stream's previous kernel (sm_90: every
// backward and forward kernel but the grid cluster's) must still see everything that kernel
// wrote. Here a forward, a backward of its output and a backward of that backward's dx run
// back to back on one stream with no host wait between them, over poisoned outputs: a kernel
// that read its inputs before the previous one finished would read poison (NaN) or stale
// values. Each step is then checked against the float64 reference of the inputs it was given —
// the previous step's outputs as downloaded at the end. Every family that launches more than
// one kernel runs: rows with a reduction, clusters, and the column pass (whose second kernel
// starts before the first finishes).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/norm_problem.h"
#include "runtime/cuda_driver.h"
#include "support/compare.h"
#include "support/gpu.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

class DependentLaunches : public ::testing::Test {
 protected:
  void SetUp() override { NJ_REQUIRE_GPU(); }
};

// One backward's device outputs, poisoned.
struct DeviceGradients {
  DeviceBuffer dx, dweight, dbias;
  DeviceGradients(const NormProblem& p, int64_t m)
      : dx(m * p.n * dtype_bytes(p.x_dtype)),
        dweight(p.has_weight ? p.n * dtype_bytes(p.weight_dtype) : 0),
        dbias(p.has_bias ? p.n * dtype_bytes(p.weight_dtype) : 0) {
    poison();
  }
  void poison() {
    dx.poison();
    dweight.poison();
    dbias.poison();
  }
  Gradients download(const NormProblem& p, int64_t m) const {
    Gradients g;
    g.dx = HostTensor(p.x_dtype, m, p.n);
    dx.download(g.dx.data(), g.dx.size_bytes());
    if (p.has_weight) {
      g.dweight = HostTensor(p.weight_dtype, 1, p.n);
      dweight.download(g.dweight.data(), g.dweight.size_bytes());
    }
    if (p.has_bias) {
      g.dbias = HostTensor(p.weight_dtype, 1, p.n);
      dbias.download(g.dbias.data(), g.dbias.size_bytes());
    }
    return g;
  }
};

BackwardArgs backward_args(const NormProblem& p, int64_t m, const DeviceBuffer& x, const DeviceBuffer& dy,
                           const DeviceBuffer& mean, const DeviceBuffer& rstd, const DeviceBuffer& weight,
                           const DeviceGradients& out) {
  BackwardArgs a;
  a.m = m;
  a.x = x.ptr();
  a.dy = dy.ptr();
  a.mean = p.kind == NormKind::LayerNorm ? static_cast<const float*>(mean.ptr()) : nullptr;
  a.rstd = static_cast<const float*>(rstd.ptr());
  a.weight = p.has_weight ? weight.ptr() : nullptr;
  a.dx = out.dx.ptr();
  a.dweight = p.has_weight ? out.dweight.ptr() : nullptr;
  a.dbias = p.has_bias ? out.dbias.ptr() : nullptr;
  return a;
}

void check_chain(const NormProblem& problem, int64_t m) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(codegen::describe(problem) + " M=" + std::to_string(m) + " seed=" + std::to_string(seed) +
               " (replay: NORMJIT_TEST_SEED=" + std::to_string(seed) + ")");
  NormInputs in = make_inputs(problem, m, seed);
  const NormProblem& p = in.problem;
  const bool layer_norm = p.kind == NormKind::LayerNorm;
  DeviceBuffer x(in.x.size_bytes()), weight(in.weight.size_bytes()), bias;
  x.upload(in.x.data(), in.x.size_bytes());
  if (p.has_weight) weight.upload(in.weight.data(), in.weight.size_bytes());
  HostTensor beta;
  if (p.has_bias) {
    beta = HostTensor(p.weight_dtype, 1, p.n);
    Rng rng(seed, 99);
    for (int64_t col = 0; col < p.n; ++col) beta.set(0, col, 0.5 * rng.normal());
    bias = DeviceBuffer(beta.size_bytes());
    bias.upload(beta.data(), beta.size_bytes());
  }
  DeviceBuffer y(in.x.size_bytes()), mean(layer_norm ? m * sizeof(float) : 0), rstd(m * sizeof(float));
  y.poison();
  mean.poison();
  rstd.poison();
  DeviceGradients first(p, m), second(p, m);

  Engine& engine = shared_engine();
  CudaStream stream;
  ForwardArgs f;
  f.m = m;
  f.x = x.ptr();
  f.weight = p.has_weight ? weight.ptr() : nullptr;
  f.bias = p.has_bias ? bias.ptr() : nullptr;
  f.y = y.ptr();
  f.mean = layer_norm ? static_cast<float*>(mean.ptr()) : nullptr;
  f.rstd = static_cast<float*>(rstd.ptr());
  f.eps = kNormEps;
  // Compile and load all three first, so the chain below is launches only.
  ASSERT_NO_THROW(engine.forward(p, f, stream.get()));
  ASSERT_NO_THROW(engine.backward(p, backward_args(p, m, x, y, mean, rstd, weight, first), stream.get()));
  stream.synchronize();
  y.poison();
  mean.poison();
  rstd.poison();
  first.poison();
  NJ_CU(runtime::driver().cuCtxSynchronize(), std::string("test: waiting for the poison"));

  ASSERT_NO_THROW(engine.forward(p, f, stream.get()));
  ASSERT_NO_THROW(engine.backward(p, backward_args(p, m, x, y, mean, rstd, weight, first), stream.get()));
  ASSERT_NO_THROW(engine.backward(p, backward_args(p, m, x, first.dx, mean, rstd, weight, second), stream.get()));
  stream.synchronize();

  // The first backward's inputs: x, and the forward's y (as dy), mean and rstd.
  y.download(in.dy.data(), in.dy.size_bytes());
  rstd.download(in.rstd.data(), in.rstd.size() * sizeof(float));
  if (layer_norm) mean.download(in.mean.data(), in.mean.size() * sizeof(float));
  const Gradients g1 = first.download(p, m);
  EXPECT_TRUE(gradients_match(in, g1, reference_backward(in))) << "the backward of the forward's output";
  // The second's: the first's dx as dy.
  in.dy = g1.dx;
  EXPECT_TRUE(gradients_match(in, second.download(p, m), reference_backward(in)))
      << "the backward of the first backward's dx";
}

TEST_F(DependentLaunches, EachKernelSeesWhatThePreviousOneWrote) {
  struct Shape {
    NormKind kind;
    int64_t n, m;
    DType x, weight;
  };
  const Shape shapes[] = {
      {NormKind::LayerNorm, 8192, 4096, DType::BF16, DType::F32},  // rows, then the reduction
      {NormKind::RMSNorm, 1024, 8192, DType::BF16, DType::BF16},   // several rows a block
      {NormKind::LayerNorm, 8192, 37, DType::BF16, DType::F32},    // the column pass
      {NormKind::RMSNorm, 16384, 199, DType::F16, DType::F32},     // the column pass, 64 lanes
      {NormKind::LayerNorm, 65536, 64, DType::BF16, DType::F32},   // clusters
      {NormKind::LayerNorm, 4095, 1000, DType::F32, DType::F32},   // odd N
  };
  for (const Shape& s : shapes) {
    const Affine affine = s.kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly;
    check_chain(make_problem(s.kind, s.n, s.x, s.weight, affine), s.m);
  }
}

}  // namespace
}  // namespace normjit::test
