// dγ = Σ_groups partial_dγ[group],  dβ = Σ_groups partial_dβ[group]: the second, small step
// of the deterministic parameter gradients. Each thread block owns 32 columns of one gradient
// (blockIdx.y: dγ, then dβ); its lanes down the partial rows add fixed, interleaved subsets of
// the groups, then lane 0 adds the lanes' subtotals in order. The order depends only on
// `groups`, never on timing. groups == 0 (m = 0) writes zeros: the sum over no rows.
//
// Memory plan: the partial rows were just written (mostly still in L2); each lane has
// groups / kReduceLanes of them to read, so their loads are issued kReduceBatch at a time, and
// their latencies overlap instead of adding up (at few rows this step is latency, not bytes).
// Once read, the partial rows are dead: each block drops its 128-byte lines of them from L2
// (`discard.global.L2`, sm_80+) so the dirty lines are never written back to DRAM, which
// would otherwise cost their bytes a second time when later traffic evicts them. Only from
// kDiscardMinGroups rows on: on the H200, 131-261 rows gained 1-7%, 33-66 nothing, and 8-16
// (the clusters of 16 at N = 131072-262144) lost 1-2.4% (bench/NOTES.md, entry 58).
namespace nj {

constexpr int kReduceColumns = 32;
constexpr int kReduceLanes = 16;
constexpr int kReduceBatch = 8;
constexpr int kDiscardMinGroups = 64;

// Drops from L2 the lines of this block's 32 columns of every partial row, after all of its
// threads have read them (call after a barrier that follows the reads). Only whole 128-byte
// lines within the block's own columns: a line shared with another block's columns (N not a
// multiple of 32, or a workspace not aligned to 128 bytes) stays, as the other may not have
// read it yet.
__device__ __forceinline__ void discard_read_lines(const float* partial, i64 groups) {
#if __CUDA_ARCH__ >= 800
  const i64 first = (i64)blockIdx.x * kReduceColumns;
  if (groups < kDiscardMinGroups || first + kReduceColumns > kN) return;
  for (i64 g = threadIdx.y * kReduceColumns + threadIdx.x; g < groups; g += kReduceColumns * kReduceLanes) {
    const float* line = partial + g * kN + first;
    if ((reinterpret_cast<unsigned long long>(line) & 127) == 0)
      asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
  }
#endif
}

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
  discard_read_lines(partial, groups);
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
