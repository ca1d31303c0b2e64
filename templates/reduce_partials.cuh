// dγ = Σ_blocks partial_dγ[block],  dβ = Σ_blocks partial_dβ[block]: the second, small step
// of the deterministic parameter gradients. Each thread block owns 32 columns; its 8 lanes
// down the partial rows add fixed, interleaved subsets of the blocks, then lane 0 adds the 8
// subtotals in order. The order depends only on `groups`, never on timing. groups == 0 (m = 0)
// writes zeros: the sum over no rows.
namespace nj {

constexpr int kReduceColumns = 32;
constexpr int kReduceLanes = 8;

__device__ __forceinline__ void reduce_partial_rows(const float* partial, i64 groups, TW* out) {
  __shared__ float subtotal[kReduceLanes][kReduceColumns + 1];
  const i64 col = (i64)blockIdx.x * kReduceColumns + threadIdx.x;
  float sum = 0.f;
  if (col < kN)
    for (i64 g = threadIdx.y; g < groups; g += kReduceLanes) sum += partial[g * kN + col];
  subtotal[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && col < kN) {
    float total = subtotal[0][threadIdx.x];
#pragma unroll
    for (int l = 1; l < kReduceLanes; ++l) total += subtotal[l][threadIdx.x];
    out[col] = from_f32<TW>(total);
  }
  __syncthreads();
}

}  // namespace nj

extern "C" __global__ void __launch_bounds__(nj::kReduceColumns * nj::kReduceLanes)
nj_reduce_partials(const float* partial, nj::i64 groups, nj::cfg::TW* dweight, nj::cfg::TW* dbias) {
  using namespace nj;
  if constexpr (cfg::kHasWeight) reduce_partial_rows(partial, groups, dweight);
  if constexpr (cfg::kHasBias) reduce_partial_rows(partial + (cfg::kHasWeight ? groups * cfg::kN : 0), groups, dbias);
}
