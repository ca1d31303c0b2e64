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

// How the fused options' inputs (docs/FUSED.md) are drawn, for problems that have them.
struct FusedSpec {
  double dropout_p = 0.1;       // the forward's drop probability; the mask keeps 1 − p of the elements
  bool dresidual_in = true;     // ask for dh too (only with rowscale or dropout)
  int64_t dresidual_stride = 0; // elements; 0: N
  int64_t z_stride = 0;         // gate: z's row stride in elements; 0: N
  int64_t dz_stride = 0;        // gate: dz's row stride in elements; 0: N
  int64_t dy1_stride = 0;       // parallel: dy1's row stride in elements; 0: N
  bool recompute_with_x = false;  // recompute: pass x (and mean) as the γ = 0 fallback, or NULL
  int64_t y_stride = 0;         // recompute: y's row stride in elements; 0: N
};

// The fused options' inputs, present when the problem has the option.
struct FusedInputs {
  HostTensor dresidual;                  // [m, n] in dx's dtype (problem.residual); gaps NaN
  std::vector<float> rowscale;           // [m] (problem.rowscale)
  std::vector<unsigned char> keep_mask;  // m rows of keep_mask_stride bytes (problem.dropout)
  int64_t keep_mask_stride = 0;          // bytes: a mask row plus a few garbage bytes
  double dropout_p = 0;
  bool dresidual_in = false;             // dh is asked for (rowscale or dropout)
  HostTensor z;                          // [m, n] in x's dtype (problem.gate); gaps NaN
  int64_t dz_stride = 0;                 // the stride dz is written with (problem.gate)
  HostTensor dy1;                        // [m, n] in dy's dtype (problem.parallel); gaps NaN
  HostTensor weight1;                    // [1, n] γ1 in the weight dtype (parallel with has_weight)
  HostTensor y;                          // [m, n] in x's dtype (problem.recompute_from_output); gaps NaN
  HostTensor bias;                       // [1, n] β in the weight dtype (recompute with has_bias)
  bool x_given = true;                   // recompute: x (and mean) passed as the γ = 0 fallback

  // Whether the mask keeps (row, col): a nonzero byte, or bit col % 8 of byte col / 8.
  bool kept(DropoutMask form, int64_t row, int64_t col) const;
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
  FusedInputs fused;        // the fused options' inputs (γ is stored as γ − 1 when zero-centred)

  int64_t n() const { return problem.n; }
};

// Random inputs for `problem` over m rows:
//   x[r, :] = offset_r + scale_r · N(0,1), scale_r log-uniform in [1/8, 8], offset_r ~ scale_r·N(0,1)
//   dy[r, :] = scale'_r · N(0,1), scale'_r log-uniform in [1/4, 4];   γ = 1 + N(0,1)/4
// so rows differ in scale and rstd, which a kernel mixing up rows would show. Fused options:
//   dresidual[r, :] = scale''_r · N(0,1) (log-uniform in [1/4, 4]); rowscale_r log-uniform in
//   [1/2, 2]; the mask keeps each element with probability 1 − p (kept bytes are random nonzero
//   values); zero-centred γ is stored as N(0,1)/4; the gate's z[r, :] = offset + scale·N(0,1)
//   with offset ~ N(0,1) and scale log-uniform in [1/2, 4], so silu(z) meets both of its
//   regimes (≈ 0 and ≈ z). Gated before the norm, the saved rstd is that of x·silu(z).
//   Parallel norms: dy1 is drawn as dy (its own row scales), γ1 as γ.
//   Recompute from the output: β = N(0,1)/2 and y from compute_forward_output.
NormInputs make_inputs(const NormProblem& problem, int64_t m, uint64_t seed, RowStrides strides = {},
                       const FusedSpec& fused = {});

// The forward's statistics of `rows` contiguous rows of n doubles, in double: mean (0 for
// RMSNorm) and rstd = 1/sqrt(mean((x − mean)²) + kNormEps).
void row_statistics(NormKind kind, const double* rows, int64_t m, int64_t n, std::vector<double>* mean,
                    std::vector<double>* rstd);

// Recomputes mean and rstd (in double, from the stored x — gated by the stored z when the
// gate comes before the norm — then rounded to fp32), as the forward would have saved them. make_inputs calls it; tests that edit x may call it again.
void compute_saved_stats(NormInputs& inputs);

// Recompute from the output: y = x̂·γ + β (no β: 0; no γ: 1; zero-centred: the stored value
// + 1), x̂ = (x − mean)·rstd of the stored x with its statistics in double, computed in double and
// rounded to x's dtype, as the forward would have kept it. make_inputs calls it; tests that edit
// x, γ or β may call it again.
void compute_forward_output(NormInputs& inputs);

// "LayerNorm x=bf16 dy=bf16 dx=f32 weight=f32 WeightAndBias N=1000 M=37 strides x=1003 dy=1000
//  dx=1064 seed=0x1234 (replay: NORMJIT_TEST_SEED=0x1234)"
std::string describe_case(const NormInputs& inputs);

}  // namespace normjit::test
