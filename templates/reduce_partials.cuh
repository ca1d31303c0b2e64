// dγ = Σ_groups partial_dγ[group],  dβ = Σ_groups partial_dβ[group]: the second, small step
// of the deterministic parameter gradients. Each thread block owns kReduceAcross·kReduceVec
// adjacent columns of one gradient (blockIdx.y: dγ, then dβ); its lanes down the partial rows
// (blockDim.y: as many as one batch of rows each needs, at most kReduceMaxLanes;
// codegen::ReduceShape::lanes_for) add fixed, interleaved subsets of the groups, then lane 0
// adds the lanes' subtotals in order. The order depends only on `groups`, never on timing.
// groups == 0 (m = 0) writes zeros: the sum over no rows.
//
// Memory plan: the partial rows were just written (mostly still in L2). A thread reads kReduceVec
// adjacent floats a row (16 bytes where N is a multiple of 4), so a long row takes a quarter of
// the blocks: with few partial rows (the clusters of long rows) the step is bound by how many
// blocks it runs, not by bytes. Each lane has groups / lanes rows to read, issued kReduceBatch
// at a time so their latencies overlap instead of adding up: one batch wherever there are at
// most kReduceMaxLanes · kReduceBatch rows.
// Once read, the partial rows are dead: each block drops its 128-byte lines of them from L2
// (`discard.global.L2`, sm_80+) so the dirty lines are never written back to DRAM, which
// would otherwise cost their bytes a second time when later traffic evicts them (3-4% of a
// LayerNorm backward's DRAM bytes at 12288-262144: bench/NOTES.md, entry 58).
namespace nj {

constexpr int kReduceBlockColumns = cfg::kReduceAcross * cfg::kReduceVec;

struct ReduceSlice {
  float v[cfg::kReduceVec];
};

__device__ __forceinline__ ReduceSlice load_reduce_slice(const float* at) {
  ReduceSlice s;
  if constexpr (cfg::kReduceVec == 4) {
    const float4 q = __ldg(reinterpret_cast<const float4*>(at));
    s.v[0] = q.x, s.v[1] = q.y, s.v[2] = q.z, s.v[3] = q.w;
  } else {
#pragma unroll
    for (int j = 0; j < cfg::kReduceVec; ++j) s.v[j] = __ldg(at + j);
  }
  return s;
}

// Drops from L2 the lines of the block's columns of the rows this lane read, once every thread
// of the block has read them (call after a barrier that follows the reads): the thread whose
// columns start a 128-byte line drops it. Only whole lines within the block's own columns: a
// line shared with another block's columns (N not a multiple of 32, or a workspace not aligned
// to 128 bytes) stays, as the other may not have read it yet.
__device__ __forceinline__ void discard_read_lines(const float* partial, i64 groups, i64 col) {
#if __CUDA_ARCH__ >= 800
  constexpr int kLineFloats = 32;
  const i64 block_end = ((i64)blockIdx.x + 1) * kReduceBlockColumns;
  if (col % kLineFloats != 0 || col + kLineFloats > kN || col + kLineFloats > block_end) return;
  for (i64 g = threadIdx.y; g < groups; g += blockDim.y) {
    const float* line = partial + g * kN + col;
    if ((reinterpret_cast<unsigned long long>(line) & 127) == 0)
      asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
  }
#endif
}

__device__ __forceinline__ void reduce_partial_rows(const float* partial, i64 groups, TW* out) {
  // [lane][j][thread across]: each lane's subtotals, column j of each thread's slice
  __shared__ float subtotal[cfg::kReduceMaxLanes][cfg::kReduceVec][cfg::kReduceAcross];
  const i64 lanes = blockDim.y;
  const i64 col = (i64)blockIdx.x * kReduceBlockColumns + (i64)threadIdx.x * cfg::kReduceVec;
  float sum[cfg::kReduceVec] = {};
  if (col < kN) {  // a slice of 4 lies wholly inside the row: N is then a multiple of 4
    // Batches of kReduceBatch rows, the last one part-filled (its loads under a predicate), so
    // a lane's rows take ceil(rows / kReduceBatch) trips to L2, never one trip a row.
    for (i64 g = threadIdx.y; g < groups; g += cfg::kReduceBatch * lanes) {
      ReduceSlice v[cfg::kReduceBatch];
#pragma unroll
      for (int b = 0; b < cfg::kReduceBatch; ++b)
        if (g + b * lanes < groups) v[b] = load_reduce_slice(partial + (g + b * lanes) * kN + col);
#pragma unroll
      for (int b = 0; b < cfg::kReduceBatch; ++b)  // in group order, as one at a time would
        if (g + b * lanes < groups)
#pragma unroll
          for (int j = 0; j < cfg::kReduceVec; ++j) sum[j] += v[b].v[j];
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
      for (int l = 1; l < lanes; ++l) total += subtotal[l][j][threadIdx.x];
      out[col + j] = from_f32<TW>(total);
    }
  }
}

}  // namespace nj

// Grid: (ceil(N / (kReduceAcross·kReduceVec)), kHasWeight + kHasBias) blocks of kReduceAcross x
// lanes threads, lanes <= kReduceMaxLanes (codegen::reduce_shape).
extern "C" __global__ void __launch_bounds__(nj::cfg::kReduceAcross * nj::cfg::kReduceMaxLanes)
nj_reduce_partials(const float* partial, nj::i64 groups, nj::cfg::TW* dweight, nj::cfg::TW* dbias) {
  using namespace nj;
  const bool bias = !cfg::kHasWeight || blockIdx.y == 1;
  if (bias) {
    if constexpr (cfg::kHasBias) reduce_partial_rows(partial + (cfg::kHasWeight ? groups * cfg::kN : 0), groups, dbias);
  } else {
    if constexpr (cfg::kHasWeight) reduce_partial_rows(partial, groups, dweight);
  }
}
