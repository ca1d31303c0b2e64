// Numerics at the edges: inputs that stress the formulas rather than the memory layout. Each
// case rewrites rows of random inputs, recomputes the saved statistics as the forward would,
// and checks every output against the float64 reference with the usual tolerances.
//   - constant rows (LayerNorm: variance 0, so rstd = 1/sqrt(eps) and x̂ = 0) and all-zero rows
//     (RMSNorm: the same for the root mean square);
//   - huge values (1e4 with a spread of 1e3, near fp16's limit of 65504 after scaling);
//   - subnormal inputs (fp32 around 1e-39, fp16 around 1e-6): rstd is then 1/sqrt(eps) and
//     every output must stay finite and match. (Their x̂ is tiny either way, so this does not
//     by itself tell a kernel that flushes subnormals to zero from one that keeps them.)
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "support/device_run.h"
#include "support/gpu.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

// Each family of kernel: rows per warp, registers with 8-byte vectors, shifted stages (odd N),
// staged clusters, register clusters for fp32.
constexpr ProblemSpec kProblems[] = {
    {NormKind::LayerNorm, DType::F16, DType::F32, Affine::WeightAndBias, 1024},
    {NormKind::LayerNorm, DType::BF16, DType::F32, Affine::WeightAndBias, 4096},
    {NormKind::LayerNorm, DType::F16, DType::F16, Affine::WeightAndBias, 5003},
    {NormKind::RMSNorm, DType::BF16, DType::F32, Affine::WeightOnly, 65536},
    {NormKind::RMSNorm, DType::F32, DType::F32, Affine::WeightOnly, 65536},
    {NormKind::LayerNorm, DType::F32, DType::F32, Affine::WeightAndBias, 33},
};

struct Edge {
  const char* what;
  // Rewrites x (and dy) of row r, given a normal sample source.
  std::function<void(NormInputs&, int64_t r, const std::function<double()>& normal)> rewrite;
  bool applies(const NormProblem& p) const { return applies_to ? applies_to(p) : true; }
  std::function<bool(const NormProblem&)> applies_to = nullptr;
};

const Edge kEdges[] = {
    {"constant row (LayerNorm) / zero row (RMSNorm)",
     [](NormInputs& in, int64_t r, const std::function<double()>& normal) {
       const double c = in.problem.kind == NormKind::LayerNorm ? 1.5 + normal() : 0.0;
       for (int64_t col = 0; col < in.n(); ++col) in.x.set(r, col, c);
     }},
    {"huge values (1e4 +- 1e3 in x, 1e2 in dy)",
     [](NormInputs& in, int64_t r, const std::function<double()>& normal) {
       for (int64_t col = 0; col < in.n(); ++col) {
         in.x.set(r, col, 1e4 + 1e3 * normal());
         in.dy.set(r, col, 1e2 * normal());
       }
     }},
    {"subnormal x (fp32 ~1e-39, fp16 ~1e-6)",
     [](NormInputs& in, int64_t r, const std::function<double()>& normal) {
       const double scale = in.problem.x_dtype == DType::F32 ? 1e-39 : 1e-6;
       for (int64_t col = 0; col < in.n(); ++col) in.x.set(r, col, scale * normal());
     },
     [](const NormProblem& p) { return p.x_dtype != DType::BF16; }},  // bf16 shares fp32's range
};

class BackwardNumerics : public GpuTest {};

TEST_F(BackwardNumerics, ConstantHugeAndSubnormalRowsMatchTheReference) {
  Engine& engine = shared_engine();
  constexpr int64_t m = 64;
  for (const ProblemSpec& ep : kProblems) {
    const NormProblem problem = ep.problem();
    for (const Edge& edge : kEdges) {
      if (!edge.applies(problem)) continue;
      NormInputs inputs = make_inputs(problem, m, fresh_seed());
      std::mt19937_64 rng(inputs.seed);
      std::normal_distribution<double> dist;
      const std::function<double()> normal = [&] { return dist(rng); };
      // Every other row takes the edge; the rest stay ordinary, so a kernel that mixed rows up
      // would show it.
      for (int64_t r = 0; r < m; r += 2) edge.rewrite(inputs, r, normal);
      compute_saved_stats(inputs);
      EXPECT_TRUE(backward_matches_reference(engine, inputs, stream())) << edge.what;
    }
  }
}

}  // namespace
}  // namespace normjit::test
