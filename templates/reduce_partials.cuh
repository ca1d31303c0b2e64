// dγ = Σ_groups partial_dγ[group],  dβ = Σ_groups partial_dβ[group]: the second, small step
// of the deterministic parameter gradients. Each thread block owns 32 columns of one gradient
// (blockIdx.y: dγ, then dβ); its lanes down the partial rows add fixed, interleaved subsets of
// the groups, then lane 0 adds the lanes' subtotals in order. The order depends only on
// `groups`, never on timing. groups == 0 (m = 0) writes zeros: the sum over no rows.
//
// Memory plan: the partial rows were just written (mostly still in L2); each lane has
// groups / kReduceLanes of them to read, so their loads are issued kReduceBatch at a time, and
// their latencies overlap instead of adding up (at few rows this step is latency, not bytes).
namespace nj {

constexpr int kReduceColumns = 32;
constexpr int kReduceLanes = 16;
constexpr int kReduceBatch = 8;

__device__ __forceinline__ void reduce_partial_rows(const float* partial, i64 groups, TW* out) {
  __shared__ float subtotal[kReduceLanes][kReduceColumns + 1];
  const i64 col = (i64)blockIdx.x * kReduceColumns + threadIdx.x;
  float sum = 0.f;
  if (col < kN) {
    i64 g = threadIdx.y;
    for (; g + (kReduceBatch - 1) * kReduceLanes < groups; g += kReduceBatch * kReduceLanes) {
      float v[kReduceBatch];
#pragma unroll
      for (int b = 0; b < kReduceBatch; ++b) v[b] = __ldg(partial + (g + b * kReduceLanes) * kN + col);
#pragma unroll
      for (int b = 0; b < kReduceBatch; ++b) sum += v[b];  // in group order, as one at a time would
    }
    for (; g < groups; g += kReduceLanes) sum += __ldg(partial + g * kN + col);
  }
  subtotal[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && col < kN) {
    float total = subtotal[0][threadIdx.x];
#pragma unroll
    for (int l = 1; l < kReduceLanes; ++l) total += subtotal[l][threadIdx.x];
    out[col] = from_f32<TW>(total);
  }
}

}  // namespace nj

// Grid: (ceil(N / kReduceColumns), kHasWeight + kHasBias) blocks of kReduceColumns x kReduceLanes.
extern "C" __global__ void __launch_bounds__(nj::kReduceColumns * nj::kReduceLanes)
nj_reduce_partials(const float* partial, nj::i64 groups, nj::cfg::TW* dweight, nj::cfg::TW* dbias) {
  using namespace nj;
  const bool bias = !cfg::kHasWeight || blockIdx.y == 1;
  if (bias) {
    if constexpr (cfg::kHasBias) reduce_partial_rows(partial + (cfg::kHasWeight ? groups * cfg::kN : 0), groups, dbias);
  } else {
    if constexpr (cfg::kHasWeight) reduce_partial_rows(partial, groups, dweight);
  }
}
