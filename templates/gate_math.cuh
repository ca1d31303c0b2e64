// The gate of a gated RMSNorm (Mamba-2), shared by the backward's and the forward's fused code
// so that both compute silu(z) to the same bits: the backward's x·silu(z) is then exactly the
// value the forward normalised. σ is the logistic function, silu(z) = z·σ(z).
namespace nj {

// With the SFU's approximate 2^x and reciprocal (ex2.approx, rcp.approx): 4 instructions where
// expf and an IEEE division took about 20 an element, the gated RMSNorm at 8192 being
// issue-bound at 68 an element (bench/NOTES.md entry 44). Relative error about 2^-22 for |z| of
// a few, growing as |z|·2^-24 with the rounding of z·log2(e); the limits stay exact: e^-z
// overflows to ∞ below z ≈ −88, whose reciprocal is +0, and underflows to 0 above 88, giving 1.
// 2^x flushes subnormal results to 0 (.ftz), as __expf's does not at the cost of a compare and
// two predicated multiplies an element (the gated row's SASS, bench/NOTES.md entry 63): 1 + a
// subnormal is 1 either way, so σ keeps its bits.
__device__ __forceinline__ float sigmoid(float z) {
  float e, s;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(z * -1.4426950408889634f));
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(s) : "f"(1.f + e));
  return s;
}
__device__ __forceinline__ float silu(float z) { return z * sigmoid(z); }
// d silu/dz. For z below about −88, σ(z) is 0 and so is this (never 0·∞: 1 + z·1 is finite).
__device__ __forceinline__ float silu_grad(float z) {
  const float s = sigmoid(z);
  return s * (1.f + z * (1.f - s));
}

}  // namespace nj
