// Plain data that every layer shares: what a backward pass is asked to do.
// No logic here (codegen/norm_problem.h validates, resolves and describes problems).
#pragma once
#include <cstddef>
#include <cstdint>

#include "normjit/normjit.h"

namespace normjit {

enum class NormKind : int { LayerNorm = NJ_LAYERNORM, RMSNorm = NJ_RMSNORM };

// Default means "same as x" wherever a dtype may be left out.
enum class DType : int { Default = NJ_DTYPE_DEFAULT, F32 = NJ_F32, F16 = NJ_F16, BF16 = NJ_BF16 };

// The form of a saved dropout keep-mask (docs/FUSED.md).
enum class DropoutMask : int {
  None = NJ_DROPOUT_NONE,
  Bytes = NJ_DROPOUT_BYTES,  // one byte per element, nonzero = kept
  Bits = NJ_DROPOUT_BITS,    // one bit per element: bit j of byte k of a row is element 8k + j
};

// Where a gated RMSNorm (Mamba-2's RMSNormGated) applies its gate silu(z) (docs/FUSED.md).
enum class Gate : int {
  None = NJ_GATE_NONE,
  AfterNorm = NJ_GATE_AFTER_NORM,    // y = rmsnorm(x)·γ·silu(z)  ("norm before gate")
  BeforeNorm = NJ_GATE_BEFORE_NORM,  // y = rmsnorm(x·silu(z))·γ  ("gate before norm")
};

// One backward problem: everything that changes the generated code.
struct NormProblem {
  NormKind kind = NormKind::LayerNorm;
  int64_t n = 0;                       // hidden size (row length)
  DType x_dtype = DType::F32;          // storage dtype of x
  DType dy_dtype = DType::Default;     // storage dtype of dy (default: x)
  DType dx_dtype = DType::Default;     // storage dtype of dx (default: x)
  DType weight_dtype = DType::Default; // gamma/beta and dgamma/dbeta: fp32 or x's dtype (default: x)
  bool has_weight = true;              // affine: gamma present, dgamma written
  bool has_bias = false;               // LayerNorm only: dbeta written
  int alignment = 16;                  // bytes every row of x, dy, dx is aligned to (power of two, <= 16);
                                       // the engine lowers it to what the actual pointers and strides allow
  bool rows_in_phase = true;           // below 16: row r of x, dy and dx (and of every fused row tensor)
                                       // starts (r·x_stride) elements past a 16-byte boundary, in one
                                       // element size: the bases on a boundary, the strides alike
                                       // modulo 16 bytes (contiguous tensors); the engine clears it
                                       // where the pointers and strides say otherwise
  // Fused options (docs/FUSED.md): each off by default, and a problem with all off compiles to
  // exactly the kernel it did before they existed.
  bool residual = false;               // dresidual (the residual stream's gradient) is added to dh
  bool zero_centered_weight = false;   // γ is stored as γ − 1 (Gemma): the kernel uses γ + 1
  bool rowscale = false;               // the forward scaled x_in by rowscale[row]: dx_in = dh·rowscale
  DropoutMask dropout = DropoutMask::None;  // the forward dropped x_in: dx_in = dh·keep/(1 − p)
  Gate gate = Gate::None;              // RMSNorm only: the gate silu(z); z is read and dz written
  bool parallel = false;               // a second norm of the same x (its own γ1, β1 and dy1): dx of both
  bool recompute_from_output = false;  // x̂ recovered from the forward's output y (and γ, β); x optional
};

// Pointers and shapes of one call. Strides are in elements; 0 means contiguous (n).
struct BackwardArgs {
  int64_t m = 0;
  const void* x = nullptr;
  int64_t x_stride = 0;
  const void* dy = nullptr;
  int64_t dy_stride = 0;
  const float* mean = nullptr;  // LayerNorm only, one per row
  const float* rstd = nullptr;  // one per row
  const void* weight = nullptr; // gamma, when has_weight
  void* dx = nullptr;
  int64_t dx_stride = 0;
  void* dweight = nullptr;      // when has_weight
  void* dbias = nullptr;        // when has_bias (LayerNorm)
  void* workspace = nullptr;    // null: normjit allocates stream-ordered
  size_t workspace_bytes = 0;
  // Fused options (docs/FUSED.md); each pointer is given exactly when its option is on.
  const void* dresidual = nullptr;   // residual: [m, n] in dx's dtype; dx may be this very buffer
  int64_t dresidual_stride = 0;
  const float* rowscale = nullptr;   // rowscale: fp32, one per row
  const void* dropout_mask = nullptr;  // dropout: the keep-mask, bytes or bits per row
  int64_t dropout_mask_stride = 0;   // bytes between mask rows; 0 = n (bytes) or ceil(n/8) (bits)
  double dropout_p = 0;              // dropout: the forward's drop probability, 0 <= p < 1
  void* dresidual_in = nullptr;      // optional with rowscale or dropout: dh, [m, n] in dx's dtype
  int64_t dresidual_in_stride = 0;
  const void* z = nullptr;           // gate: the gate's input, [m, n] in x's dtype
  int64_t z_stride = 0;
  void* dz = nullptr;                // gate: z's gradient, [m, n] in dx's dtype
  int64_t dz_stride = 0;
  // parallel: the second norm y1 = norm(x; γ1, β1), with the problem's has_weight / has_bias.
  const void* dy1 = nullptr;         // its output gradient, [m, n] in dy's dtype
  int64_t dy1_stride = 0;
  const void* weight1 = nullptr;     // γ1, when has_weight
  void* dweight1 = nullptr;          // dγ1, when has_weight
  void* dbias1 = nullptr;            // dβ1, when has_bias
  // recompute_from_output: x̂ = (y − β)/γ from the forward's output instead of x. x is then
  // optional: given, it is read only in columns where γ = 0 (LayerNorm: with mean); without
  // it those columns' dx and dγ are NaN (docs/FUSED.md).
  const void* y = nullptr;           // the forward's output, [m, n] in x's dtype
  int64_t y_stride = 0;
  const void* bias = nullptr;        // β, when has_bias (LayerNorm): y = x̂·γ + β
};

// Pointers and shapes of one forward call (docs/FORWARD.md): y = norm(h)·γ + β, with the
// statistics saved as the backward reads them. γ/β in the problem's weight dtype; y in its
// dy_dtype (y is what the backward's dy is the gradient of; default: x's dtype). Strides are in
// elements; 0 means contiguous (n). The problem's dx_dtype is ignored, and so is
// recompute_from_output (the backward's choice of what to read); every other fused option
// works (docs/FORWARD.md, "Fused options"):
//   h  = dropout(x, p)·rowscale[row] + residual      (x itself when none of the three is on)
//   y  = norm(h)·γ + β     gate after the norm: ·silu(z);  before it: norm(h·silu(z))·γ
//   y1 = norm(h)·γ1 + β1   parallel: a second norm of the same h
// h is rounded to x's dtype before it is normalised and may be written out (residual_out): it
// is the backward's x, so the backward sees exactly the values the forward normalised.
struct ForwardArgs {
  int64_t m = 0;
  const void* x = nullptr;
  int64_t x_stride = 0;
  const void* weight = nullptr;  // γ, when has_weight (stored as γ − 1 when zero_centered_weight)
  const void* bias = nullptr;    // β, when has_bias (LayerNorm)
  void* y = nullptr;             // [m, n] in dy_dtype (default x's); may be x itself (same stride and dtype)
  int64_t y_stride = 0;
  float* mean = nullptr;         // out, LayerNorm only: fp32, one per row; null: not saved
  float* rstd = nullptr;         // out: fp32, one per row; null: not saved
  double eps = 1e-5;             // rstd = 1/sqrt(var + eps); finite and >= 0
  // Fused options; each pointer given only when its option is on.
  const void* residual = nullptr;    // residual: [m, n] in x's dtype, added to the branch
  int64_t residual_stride = 0;
  void* residual_out = nullptr;      // residual, rowscale or dropout, optional: h, [m, n] in x's
  int64_t residual_out_stride = 0;   // dtype (the backward's x); may be residual or x (same stride)
  const float* rowscale = nullptr;   // rowscale: fp32, one per row
  void* dropout_mask = nullptr;      // dropout, optional: the keep-mask written, in the problem's form
  int64_t dropout_mask_stride = 0;   // bytes between mask rows; 0 = n (bytes) or ceil(n/8) (bits)
  double dropout_p = 0;              // dropout: the drop probability, 0 <= p < 1
  uint64_t dropout_seed = 0;         // dropout: element (row, col) is kept by a counter-based hash
  uint64_t dropout_offset = 0;       // of (seed, offset, row, col): the same mask for any launch
  const void* z = nullptr;           // gate: the gate's input, [m, n] in x's dtype
  int64_t z_stride = 0;
  const void* weight1 = nullptr;     // parallel with has_weight: γ1
  const void* bias1 = nullptr;       // parallel with has_bias: β1
  void* y1 = nullptr;                // parallel: the second output, [m, n] in y's dtype
  int64_t y1_stride = 0;
};

}  // namespace normjit
