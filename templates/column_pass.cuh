// The column pass (kColumnPass lanes): few rows whose x and dy fit in L2, without partial rows.
//
//   nj_row_sums:       s_r = (Σ_N g, Σ_N g·x̂) for every row r            g = dy·γ
//   nj_norm_backward:  dx = rstd·(g − s_r.x/N − x̂·s_r.y/N)              (RMSNorm: no s_r.x term)
//                      dγ = Σ_r dy·x̂        dβ = Σ_r dy
//
// Memory plan. The rows pass gives each row group a block (or cluster) and one fp32 partial row
// of dγ/dβ, which a second launch reduces: at M = 199 and N = 8192 those rows are more bytes
// than x, dy and dx together, and the reduction waits on all of them. Here the first kernel
// only reduces rows (kThreadsPerRow threads a row, its slots' loads issued kSumBatch at a time)
// into m float2 at p.partial. The second owns columns: a block holds kColumnSlots vector slots
// of every row, with kColumnPass lanes down the rows each, so it reads x and dy a second time
// (from L2, where the first kernel just left them: the heuristic and the search space take this
// family only for rows that fit there), writes dx, and sums its columns' dγ/dβ itself, lane by
// lane in row order and then the lanes in order: the same bits for the same m, whatever the
// timing, and no reduction launch.
//
// On sm_90 the second kernel is a programmatic dependent launch: the first lets it start as soon
// as the first may itself run, so its blocks load their first rows of x and dy while the row
// sums are still being made, and wait for them (griddepcontrol.wait: the first grid complete,
// its writes visible) only before reading the sums. dx, which may be x or dy itself, is written
// after that wait.
namespace nj {

constexpr int kSumBatch = 4;                              // slots of a row whose loads fly together
constexpr int kColumnSlots = kThreads / kColumnPass;       // vector slots (of every row) a block owns
constexpr int kColumnBatch = 4;                           // rows whose loads fly together
static_assert(kThreads % kColumnPass == 0, "the lanes down the rows divide the block");

// The rows' sums (Σ g, Σ g·x̂) in the workspace: the first kernel writes them, the second reads them.
__device__ __forceinline__ float2* row_sums(const BackwardParams& p) { return reinterpret_cast<float2*>(p.partial); }

template <int kUnused>
__device__ void backward_columns(const BackwardParams& p) {
  __shared__ float lane_sums[kAccumulate ? 2 : 1][kColumnPass][kColumnSlots * kVec];
  const int slot_in_block = threadIdx.x % kColumnSlots, lane = threadIdx.x / kColumnSlots;
  const i64 col = ((i64)blockIdx.x * kColumnSlots + slot_in_block) * kVec;
  float dw[kVec], db[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) dw[j] = db[j] = 0.f;

  if (col < kN) {
    float w[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) w[j] = 1.f;
    if constexpr (kHasWeight) load_slot<TW, kVec, kAlign, kN>(p.weight, col, w);
    // Rows lane, lane + kColumnPass, ...: kColumnBatch of them loaded before any is worked, since
    // dx's stores may alias nothing the compiler knows of and would otherwise order every load.
    for (i64 first = lane; first < p.m; first += (i64)kColumnPass * kColumnBatch) {
      PackedSlot<TX, kVec, kAlign, kN> x[kColumnBatch];  // as stored: half the registers of 16-bit rows
      PackedSlot<TDY, kVec, kAlign, kN> dy[kColumnBatch];
      float2 sums[kColumnBatch];
      float mean[kColumnBatch], rstd[kColumnBatch];
#pragma unroll
      for (int b = 0; b < kColumnBatch; ++b) {
        const i64 row = first + (i64)b * kColumnPass;
        if (row < p.m) {
          x[b].load(p.x + row * p.x_stride, col);
          dy[b].load(p.dy + row * p.dy_stride, col);
          rstd[b] = p.rstd[row];
          mean[b] = kLayerNorm ? p.mean[row] : 0.f;
        }
      }
      wait_for_prerequisite_grid();  // returns at once after the first time
#pragma unroll
      for (int b = 0; b < kColumnBatch; ++b) {
        const i64 row = first + (i64)b * kColumnPass;
        if (row < p.m) sums[b] = row_sums(p)[row];
      }
#pragma unroll
      for (int b = 0; b < kColumnBatch; ++b) {
        const i64 row = first + (i64)b * kColumnPass;
        if (row >= p.m) break;
        const float mean_g = sums[b].x * kInvN, mean_gx = sums[b].y * kInvN;
        float xs[kVec], dys[kVec], out[kVec];
        x[b].unpack(xs);
        dy[b].unpack(dys);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const float xhat = normalized(xs[j], mean[b], rstd[b]);
          out[j] = input_grad(dys[j] * w[j], xhat, rstd[b], mean_g, mean_gx);
          dw[j] += dys[j] * xhat;
          db[j] += dys[j];
        }
        store_slot<TDX, kVec, kAlign, kN>(p.dx + row * p.dx_stride, col, out);
      }
    }
  }

  if constexpr (kAccumulate) {
    // The lanes' sums meet in shared memory; each column is then added over the lanes in order.
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      lane_sums[0][lane][slot_in_block * kVec + j] = kHasWeight ? dw[j] : db[j];
      if constexpr (kHasWeight && kHasBias) lane_sums[1][lane][slot_in_block * kVec + j] = db[j];
    }
    __syncthreads();
    constexpr int kGradients = (kHasWeight ? 1 : 0) + (kHasBias ? 1 : 0);
    constexpr int kColumns = kColumnSlots * kVec;
    for (int e = threadIdx.x; e < kGradients * kColumns; e += kThreads) {
      const int gradient = e / kColumns, at = e % kColumns;
      const i64 c = (i64)blockIdx.x * kColumns + at;
      if (c >= kN) continue;
      float total = lane_sums[gradient][0][at];
#pragma unroll 8
      for (int l = 1; l < kColumnPass; ++l) total += lane_sums[gradient][l][at];
      TW* out = kHasWeight && gradient == 0 ? p.dweight : p.dbias;
      out[c] = from_f32<TW>(total);
    }
  }
}

}  // namespace nj

// Grid: ceil(m / kRowsPerBlock) blocks of kThreads. Writes every row's (Σ g, Σ g·x̂) to p.partial.
extern "C" __global__ void __launch_bounds__(nj::cfg::kThreads)
nj_row_sums(const nj::BackwardParams p) {
  using namespace nj;
  // Itself a dependent launch of the stream's previous kernel: wait for it before letting the
  // column blocks start, as they read x and dy before they wait for this grid.
  wait_for_prerequisite_grid();
  let_dependent_grid_start();
  __shared__ float2 reduce_buffer[2][kRowsPerBlock][Reducer::kWarps];
  Reducer reducer{reduce_buffer, 0};
  const int row_in_block = threadIdx.x / kThreadsPerRow, lane = threadIdx.x % kThreadsPerRow;
  const i64 row = (i64)blockIdx.x * kRowsPerBlock + row_in_block;
  float2 sums = make_float2(0.f, 0.f);
  if (row < p.m) {
    const float rstd = p.rstd[row];
    const float mean = kLayerNorm ? p.mean[row] : 0.f;
    const TX* x_row = p.x + row * p.x_stride;
    const TDY* dy_row = p.dy + row * p.dy_stride;
    for (i64 first = lane; first < kSlots; first += (i64)kThreadsPerRow * kSumBatch) {
      float x[kSumBatch][kVec], dy[kSumBatch][kVec], w[kSumBatch][kVec];
#pragma unroll
      for (int b = 0; b < kSumBatch; ++b) {
        const i64 col = (first + (i64)b * kThreadsPerRow) * kVec;
#pragma unroll
        for (int j = 0; j < kVec; ++j) x[b][j] = dy[b][j] = 0.f, w[b][j] = 1.f;
        if (col < kN) {
          load_slot<TX, kVec, kAlign, kN>(x_row, col, x[b]);
          load_slot<TDY, kVec, kAlign, kN>(dy_row, col, dy[b]);
          if constexpr (kHasWeight) load_slot<TW, kVec, kAlign, kN>(p.weight, col, w[b]);
        }
      }
#pragma unroll
      for (int b = 0; b < kSumBatch; ++b)
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const float g = dy[b][j] * w[b][j];
          sums.x += g;
          sums.y += g * normalized(x[b][j], mean, rstd);
        }
    }
  }
  sums = reducer.sum(sums, row_in_block, lane);  // every thread takes part in the barriers
  if (row < p.m && lane == 0) row_sums(p)[row] = sums;
}
