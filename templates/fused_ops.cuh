// Fused options of the backward (docs/FUSED.md). codegen puts this file, and the template
// lines between "fused:begin" and "fused:end" markers, into a kernel's source only when its
// problem has an option on; a problem without options gets the same source as before.
//
// Forward of a pre-norm block with every option:
//   h = dropout(x_in, p)·rowscale[row] + residual,   y = norm(h)  (γ stored as γ − 1 when zero-centred)
// The kernel's x is h. With dh = (the norm's backward) + dresidual:
//   dresidual_in = dh                       (the residual branch's gradient, when asked for)
//   dx_in        = dh·rowscale[row]·keep/(1 − p)
// and dx receives dx_in (dh itself when neither row scale nor dropout is on).
namespace nj {
using namespace cfg;

// Field order and 8-byte fields match runtime/launch_params.h (its trailing fields).
struct FusedParams {
  const TDX* dresidual;        // kResidual: the residual stream's gradient, added to dh
  i64 dresidual_stride;
  const float* rowscale;       // kRowScale: fp32, one per row
  const unsigned char* keep;   // kDropoutMask: the forward's keep-mask
  i64 keep_stride;             // bytes between rows of the mask
  double keep_scale;           // 1/(1 − p): a run-time value, so p needs no kernel of its own
  TDX* dresidual_in;           // optional: dh, when row scale or dropout is on
  i64 dresidual_in_stride;
};

constexpr bool kScalesBranch = kRowScale || kDropoutMask != 0;

// Zero-centred γ (Gemma) stores γ − 1; every product with γ uses the stored value + 1.
__device__ __forceinline__ void stored_weight_to_gamma(float (&w)[kVec]) {
  if constexpr (kZeroCenteredWeight) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) w[j] += 1.f;
  }
}

// Whether the forward kept column `col` of `row`: a byte per element (nonzero = kept), or a
// bit per element (bit j of byte k of a row is column 8k + j).
__device__ __forceinline__ bool kept(const FusedParams& f, i64 row, i64 col) {
  const unsigned char* mask = f.keep + row * f.keep_stride;
  if constexpr (kDropoutMask == 1) return mask[col] != 0;
  else return (mask[col >> 3] >> (col & 7)) & 1;
}

// dx_in of one element from dh: the branch's scale (row scale, dropout) applied.
__device__ __forceinline__ float branch_grad(const FusedParams& f, i64 row, i64 col, float dh) {
  float g = dh;
  if constexpr (kRowScale) g *= f.rowscale[row];
  // A product, not a select: a NaN in a dropped element stays NaN, as in dh·mask/(1 − p).
  if constexpr (kDropoutMask != 0) g *= kept(f, row, col) ? (float)f.keep_scale : 0.f;
  return g;
}

// One slot (kVec columns from col; those past N are ignored): `grad` comes in as the norm's
// input gradient and leaves as what dx receives. dresidual is read before dx is written, by
// this thread, so dx may be dresidual itself (in-place accumulation).
__device__ __forceinline__ void fused_input_grad(const FusedParams& f, i64 row, i64 col, float (&grad)[kVec]) {
  if constexpr (kResidual) {
    float dres[kVec];
    load_slot<TDX, kVec, kAlign, kN>(f.dresidual + row * f.dresidual_stride, col, dres);
#pragma unroll
    for (int j = 0; j < kVec; ++j) grad[j] += dres[j];
  }
  if constexpr (kScalesBranch) {
    if (f.dresidual_in) store_slot<TDX, kVec, kAlign, kN>(f.dresidual_in + row * f.dresidual_in_stride, col, grad);
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if (col + j < kN) grad[j] = branch_grad(f, row, col + j, grad[j]);
  }
}

// The same for one element (interleaved staged rows): column col < N.
__device__ __forceinline__ void fused_input_grad_element(const FusedParams& f, i64 row, i64 col, float& grad) {
  if constexpr (kResidual) grad += to_f32(f.dresidual[row * f.dresidual_stride + col]);
  if constexpr (kScalesBranch) {
    if (f.dresidual_in) f.dresidual_in[row * f.dresidual_in_stride + col] = from_f32<TDX>(grad);
    grad = branch_grad(f, row, col, grad);
  }
}

}  // namespace nj
