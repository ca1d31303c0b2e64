// dγ = Σ_groups partial_dγ[group],  dβ = Σ_groups partial_dβ[group]: the second, small step
// of the deterministic parameter gradients. Each thread block owns kReduceAcross·kReduceVec
// adjacent columns of one gradient (blockIdx.y: dγ, then dβ); its kReduceLanes lanes down the
// partial rows add fixed, interleaved subsets of the groups, then lane 0 adds the lanes'
// subtotals in order. The order depends only on `groups`, never on timing. groups == 0 (m = 0)
// writes zeros: the sum over no rows.
//
// Memory plan: the partial rows were just written (mostly still in L2). A thread reads kReduceVec
// adjacent floats a row (16 bytes where N is a multiple of 4), so a long row takes a quarter of
// the blocks: with few partial rows (the clusters of long rows) the step is bound by how many
// blocks it runs, not by bytes. Each lane has groups / kReduceLanes rows to read, issued
// kReduceBatch at a time so their latencies overlap instead of adding up.
// Once read, the partial rows are dead: each block drops its 128-byte lines of them from L2
// (`discard.global.L2`, sm_80+) so the dirty lines are never written back to DRAM, which
// would otherwise cost their bytes a second time when later traffic evicts them (3-4% of a
// LayerNorm backward's DRAM bytes at 12288-262144: bench/NOTES.md, entry 58).
namespace nj {

constexpr int kReduceBatch = 8;
constexpr int kReduceBlockColumns = cfg::kReduceAcross * cfg::kReduceVec;

// A thread's kReduceVec adjacent floats of one partial row, through the read-only path (__ldg):
// VecAccess's plain loads would do the same bytes, but this path is the one measured.
__device__ __forceinline__ void load_reduce_slice(const float* at, float (&out)[cfg::kReduceVec]) {
  if constexpr (cfg::kReduceVec == 4) {
    const float4 q = __ldg(reinterpret_cast<const float4*>(at));
    out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
  } else {
#pragma unroll
    for (int j = 0; j < cfg::kReduceVec; ++j) out[j] = __ldg(at + j);
  }
}

// Drops from L2 the lines of the block's columns of the rows this lane read, once every thread
// of the block has read them (call after a barrier that follows the reads): the thread whose
// columns start a 128-byte line drops it. Only whole lines within the block's own columns: a
// line shared with another block's columns (N not a multiple of 32, or a workspace not aligned
// to 128 bytes) stays, as the other may not have read it yet. A block's columns are whole lines
// (static_assert), so a line that starts in them and ends by N ends in them too.
__device__ __forceinline__ void discard_read_lines(const float* partial, i64 groups, i64 col) {
#if __CUDA_ARCH__ >= 800
  constexpr int kLineFloats = 32;
  static_assert(kReduceBlockColumns % kLineFloats == 0, "a block's columns are whole 128-byte lines");
  // Partial rows of N not a multiple of 32 start at every alignment: lines start inside them
  // only now and then, which is not worth the loop over the rows in every thread.
  if constexpr (kN % kLineFloats != 0) return;
  if (col % kLineFloats != 0 || col + kLineFloats > kN) return;
  for (i64 g = threadIdx.y; g < groups; g += cfg::kReduceLanes) {
    const float* line = partial + g * kN + col;
    if ((reinterpret_cast<unsigned long long>(line) & 127) == 0)
      asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
  }
#endif
}

__device__ __forceinline__ void reduce_partial_rows(const float* partial, i64 groups, TW* out) {
  // [lane][j][thread across]: each lane's subtotals, column j of each thread's slice
  __shared__ float subtotal[cfg::kReduceLanes][cfg::kReduceVec][cfg::kReduceAcross];
  const i64 col = (i64)blockIdx.x * kReduceBlockColumns + (i64)threadIdx.x * cfg::kReduceVec;
  float sum[cfg::kReduceVec] = {};
  if (col < kN) {  // a slice of 4 lies wholly inside the row: N is then a multiple of 4
    i64 g = threadIdx.y;
    for (; g + (kReduceBatch - 1) * cfg::kReduceLanes < groups; g += kReduceBatch * cfg::kReduceLanes) {
      float v[kReduceBatch][cfg::kReduceVec];
#pragma unroll
      for (int b = 0; b < kReduceBatch; ++b) load_reduce_slice(partial + (g + b * cfg::kReduceLanes) * kN + col, v[b]);
#pragma unroll
      for (int b = 0; b < kReduceBatch; ++b)  // in group order, as one at a time would
#pragma unroll
        for (int j = 0; j < cfg::kReduceVec; ++j) sum[j] += v[b][j];
    }
    for (; g < groups; g += cfg::kReduceLanes) {
      float v[cfg::kReduceVec];
      load_reduce_slice(partial + g * kN + col, v);
#pragma unroll
      for (int j = 0; j < cfg::kReduceVec; ++j) sum[j] += v[j];
    }
  }
#pragma unroll
  for (int j = 0; j < cfg::kReduceVec; ++j) subtotal[threadIdx.y][j][threadIdx.x] = sum[j];
  __syncthreads();
  discard_read_lines(partial, groups, col);
  if (threadIdx.y == 0 && col < kN) {
#pragma unroll
    for (int j = 0; j < cfg::kReduceVec; ++j) {
      float total = subtotal[0][j][threadIdx.x];
#pragma unroll
      for (int l = 1; l < cfg::kReduceLanes; ++l) total += subtotal[l][j][threadIdx.x];
      out[col + j] = from_f32<TW>(total);
    }
  }
}

}  // namespace nj

// Grid: (ceil(N / (kReduceAcross·kReduceVec)), kHasWeight + kHasBias) blocks of kReduceAcross x
// kReduceLanes threads (codegen::reduce_shape).
extern "C" __global__ void __launch_bounds__(nj::cfg::kReduceAcross * nj::cfg::kReduceLanes)
nj_reduce_partials(const float* partial, nj::i64 groups, nj::cfg::TW* dweight, nj::cfg::TW* dbias) {
  using namespace nj;
  // Launched as a dependent of the backward (sm_90): its blocks are placed while the backward's
  // last rows are still in flight, and wait here for the partial rows to be complete.
  wait_for_prerequisite_grid();
  const bool bias = !cfg::kHasWeight || blockIdx.y == 1;
  if (bias) {
    if constexpr (cfg::kHasBias) reduce_partial_rows(partial + (cfg::kHasWeight ? groups * cfg::kN : 0), groups, dbias);
  } else {
    if constexpr (cfg::kHasWeight) reduce_partial_rows(partial, groups, dweight);
  }
}
