// The inputs of one backward case, exactly as the kernels will read them: x and dy rounded to
// their dtypes, the forward's saved statistics (computed from the stored x, kept in fp32), and γ.
// Every case draws fresh random values from its own seed, printed with any failure.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "normjit/norm_problem.hpp"
#include "support/host_tensor.h"

namespace normjit::test {

// The forward's epsilon: rstd = 1/sqrt(var + eps) (LayerNorm), 1/sqrt(mean(x²) + eps) (RMSNorm).
constexpr double kNormEps = 1e-5;

// Row strides in elements; 0 means contiguous (N).
struct RowStrides {
  int64_t x = 0;
  int64_t dy = 0;
  int64_t dx = 0;
};

struct NormInputs {
  NormProblem problem;      // every dtype concrete (see with_concrete_dtypes)
  int64_t m = 0;
  uint64_t seed = 0;
  HostTensor x;             // [m, n]; gap elements between rows are NaN, so reading them shows
  HostTensor dy;            // [m, n]; same
  HostTensor weight;        // [1, n] in the weight dtype, when problem.has_weight
  std::vector<float> mean;  // [m], LayerNorm only
  std::vector<float> rstd;  // [m]
  int64_t dx_stride = 0;    // the stride dx is written with (never 0 here)

  int64_t n() const { return problem.n; }
};

// Random inputs for `problem` over m rows:
//   x[r, :] = offset_r + scale_r · N(0,1), scale_r log-uniform in [1/8, 8], offset_r ~ scale_r·N(0,1)
//   dy[r, :] = scale'_r · N(0,1), scale'_r log-uniform in [1/4, 4];   γ = 1 + N(0,1)/4
// so rows differ in scale and rstd, which a kernel mixing up rows would show.
NormInputs make_inputs(const NormProblem& problem, int64_t m, uint64_t seed, RowStrides strides = {});

// Recomputes mean and rstd (in double, from the stored x, then rounded to fp32), as the
// forward would have saved them. make_inputs calls it; tests that edit x may call it again.
void compute_saved_stats(NormInputs& inputs);

// "LayerNorm x=bf16 dy=bf16 dx=f32 weight=f32 WeightAndBias N=1000 M=37 strides x=1003 dy=1000
//  dx=1064 seed=0x1234 (replay: NORMJIT_TEST_SEED=0x1234)"
std::string describe_case(const NormInputs& inputs);

}  // namespace normjit::test
