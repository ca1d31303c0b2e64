// The gate of a gated RMSNorm (Mamba-2), shared by the backward's and the forward's fused code
// so that both compute silu(z) to the same bits: the backward's x·silu(z) is then exactly the
// value the forward normalised. σ is the logistic function, silu(z) = z·σ(z).
namespace nj {

__device__ __forceinline__ float sigmoid(float z) { return 1.f / (1.f + expf(-z)); }
__device__ __forceinline__ float silu(float z) { return z * sigmoid(z); }
// d silu/dz. For z below about −88, σ(z) is 0 and so is this (never 0·∞: 1 + z·1 is finite).
__device__ __forceinline__ float silu_grad(float z) {
  const float s = sigmoid(z);
  return s * (1.f + z * (1.f - s));
}

}  // namespace nj
