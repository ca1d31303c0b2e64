// LayerNorm / RMSNorm forward: one row per group of kThreadsPerRow threads.
//
//   mean = Σx / N                      RMSNorm: no mean
//   var  = Σ(x − mean)² / N            (biased, as torch)       RMSNorm: var = Σx² / N
//   rstd = 1 / sqrt(var + eps)
//   y    = (x − mean)·rstd·γ + β       RMSNorm: y = x·rstd·γ      no γ: γ = 1; no β: β = 0
//
// γ is stored as γ − 1 when kZeroCenteredWeight (the kernel uses stored + 1). mean and rstd
// are written as fp32, one per row, exactly as the backward reads them (either pointer may be
// null: not saved). eps is an argument, so one kernel serves every eps. All sums are fp32.
//
// Fused options (docs/FORWARD.md; codegen keeps the lines between fused:begin and fused:end
// only when one is on, with templates/gate_math.cuh and philox.cuh):
//   h  = dropout(x, p)·rowscale[row] + residual    dropout: x·keep/(1 − p), keep from philox.cuh
//   y  = norm(h)·γ + β      gate after the norm: y·silu(z); before it: norm(h·silu(z))·γ (RMSNorm)
//   y1 = norm(h)·γ1 + β1    parallel: a second output of the same statistics
// h is rounded to x's dtype as it is formed and then held and normalised as x is: it is the
// backward's x (written out to residual_out when asked), so the backward recomputes x̂ from
// exactly the values the forward normalised. The gate before the norm holds z next to h and
// multiplies by silu(z) (in fp32, not rounded) wherever h is used, as the backward does.
//
// Memory plan. A persistent grid: block b takes rows b·R, b·R + G·R, ... (R rows a block).
//   - A cluster a row (kCluster > 1, sm_90, rows too long for one block's registers): the
//     cluster's blocks hold the row in registers together and exchange their statistics
//     through distributed shared memory (ClusterExchange): x is read once at every N up to
//     kCluster blocks' worth.
//   - Rows in registers (kRowInRegisters): the row is read once into registers; each thread
//     takes the exact moments (count, mean, M2) of its own elements, one reduction merges them
//     into the row's (Moments: no cancellation, one meeting of the row's threads), then y is
//     written from the registers. Several rows a block (a warp or less per row) meet through
//     shuffles only; a row per block meets in shared memory (RowReducer, MomentsReducer).
//   - Streamed rows (too long for registers): one block a row (on sm_90 a cluster's blocks,
//     exchanging their statistics as above, where rows are fewer than the SMs), the row read
//     twice. Pass 1: each thread keeps the moments of its own slots (count, mean, M2;
//     each batch of slots merged in by Chan's formula), then one block reduction of the
//     moments. Pass 2 reads x again (mostly from L2) and writes y. Both passes keep
//     kStreamBatch loads a thread in flight.
namespace nj {
using namespace cfg;

// Field order and 8-byte fields match runtime/launch_params.h (ForwardParams).
struct ForwardParams {
  i64 m;
  const TX* x;
  i64 x_stride;
  const TW* weight;  // when kHasWeight
  const TW* bias;    // when kHasBias
  TY* y;             // in the problem's dy dtype (y is what the backward's dy is the gradient of)
  i64 y_stride;
  float* mean;       // LayerNorm, or null: not saved
  float* rstd;       // or null: not saved
  double eps;
// fused:begin
  const TX* residual;       // kResidual
  i64 residual_stride;
  TX* residual_out;         // h, or null: not written
  i64 residual_out_stride;
  const float* rowscale;    // kRowScale: fp32, one per row
  unsigned char* keep;      // kDropoutMask: the keep-mask written, or null
  i64 keep_stride;          // bytes between mask rows
  double keep_scale;        // 1/(1 − p)
  unsigned long long seed;  // the draws' key
  unsigned long long offset;
  i64 drop_below;           // p·2^32 rounded down: an element whose draw is below it is dropped
  const TX* z;              // kGate
  i64 z_stride;
  const TW* weight1;        // kParallel: γ1, β1 and y1
  const TW* bias1;
  TY* y1;
  i64 y1_stride;
// fused:end
};

constexpr int kRowsPerBlock = kThreads / kThreadsPerRow;
// Phased rows (kPhased): 16-bit rows aligned to less than 16 bytes but in phase, so that row r
// of x and of y starts φ(r) = r·x_stride mod kVec elements past a 16-byte boundary (the engine
// checks both strides alike). A thread's slots are the row's aligned 16-byte chunks: the slot at
// column c of the row's span (kN + kVec − 1 columns) holds row column c − φ. Every chunk but x's
// last is read whole, a row's first and last (which begin or end in its neighbours) then masked,
// and those two are written element by element (templates/common.cuh, PackedSlot::load_phased_whole,
// store_phased_slot). So odd rows are read as aligned ones are, where realigning every slot
// costs selects and split stores (bench/NOTES.md entries 47, 51).
// γ and β sit at the columns a slot holds, which move with the phase: read element by element,
// a warp's scalar loads from L1 span 8 lines each (LN bf16 5003 with fp32 γ and β: 1.7x slower
// than rows of an element a thread). The host plans a multiple of kVec row groups, or one a row
// (runtime::row_groups), so a block's rows share a phase and kSharedWeights holds the block's γ
// and β in shared memory at it once. An engine with an SM margin launches fewer blocks than it
// planned (runtime::groups_per_launch, not rounded to kVec: that would take more SMs than the
// margin leaves), and then a block's rows have several phases: a row of another phase than the
// block's reads γ and β element by element, a uniform branch a row.
constexpr i64 kRowSpan = kPhased ? kN + kVec - 1 : kN;  // columns of the row's slots
static_assert(!kPhased || (kVec * sizeof(TX) == 16 && sizeof(TY) == sizeof(TX) && kRowsPerBlock == 1 &&
                           kRowInRegisters && kN >= kVec),
              "phased rows: 16-byte slots of x and y, one row a block (or cluster) held in registers, rows of a "
              "chunk at least, so that x's last chunk is the last row's alone (codegen checks)");
constexpr i64 kSlots = (kRowSpan + kVec - 1) / kVec;  // vector slots per row
// The threads sharing a row: a cluster's blocks together when kCluster > 1 (sm_90), each
// holding every kCluster-th stretch of kThreadsPerRow slots in registers.
constexpr int kRowThreads = kThreadsPerRow * kCluster;
constexpr int kIters = (int)((kSlots + kRowThreads - 1) / kRowThreads);
constexpr float kInvN = 1.0f / (float)kN;
// Whether the forward's stores (y, y1, h) fold store_slot's element path at whole slots: where
// the rows are not prefetched. Folded (session 48, for the backward's dx), the prefetching blocks
// ran 0.69-0.87x of their time (LN and RMS 5120-7168, RMS 12288-14336); unfolded, LayerNorm's
// warp rows of 1000 ran 0.91x (bench/NOTES.md entries 68-69).
constexpr bool kFoldWholeSlotStores = !kPrefetch;

// The butterfly where the block is the whole row, but not for LayerNorm's two sums a row
// (templates/common.cuh says why).
typedef RowReducer<kThreadsPerRow, kRowsPerBlock, kCluster == 1 && !kLayerNorm> Reducer;
// x is held as loaded (16-bit elements two a register) and converted where it is used: the
// registers a thread needs for its bytes of x are the same in every dtype.
typedef PackedSlot<TX, kVec, kPhased ? 16 : kAlign, kN> Packed;

// The block's rank in its cluster (0 without one), and the grid's row groups: a cluster (or a
// block) each, group g taking rows g, g + groups, ...
__device__ __forceinline__ unsigned block_rank() { return kCluster > 1 ? cluster_rank_below<kCluster>() : 0; }
__device__ __forceinline__ i64 row_group() { return (i64)blockIdx.x / kCluster; }
__device__ __forceinline__ i64 row_groups() { return (i64)gridDim.x / kCluster; }

// The phase of a row (φ above; 0 but for phased rows). The low bits of the product are those of
// the low words'.
__device__ __forceinline__ unsigned row_phase(const ForwardParams& p, i64 row) {
  if constexpr (kPhased) return ((unsigned)row * (unsigned)p.x_stride) & (kVec - 1);
  else return 0;
}
// Elements of the row among `cols` columns of its span from span column `col` (>= 0), at phase
// φ: the row's elements are span columns φ .. φ + kN − 1 (unphased rows: 0 .. kN − 1, counted
// as they always were, so that their kernels' code is unchanged).
__device__ __forceinline__ int span_element_count(int col, int cols, unsigned phase) {
  if constexpr (!kPhased) {
    const int left = (int)kN - col;
    return left <= 0 ? 0 : left < cols ? left : cols;
  }
  const int lo = col > (int)phase ? col : (int)phase;
  const int hi = col + cols < (int)phase + (int)kN ? col + cols : (int)phase + (int)kN;
  return hi > lo ? hi - lo : 0;
}

// ---- LayerNorm statistics in one reduction -----------------------------------------------------
// Moments of some of a row's elements: count, mean, and M2 = Σ(x − mean)². Chan et al. merge
// two disjoint sets exactly:
//   n = na + nb,  mean = (na·ma + nb·mb) / n,  M2 = M2a + M2b + (mb − ma)²·na·nb / n
// so a row's mean and variance need one reduction of these triples, not a sum for the mean and
// then another for Σ(x − mean)²: one meeting of the row's threads instead of two. Each thread's
// own triple is exact (a two-pass over its registers), so nothing cancels.
struct Moments {
  float n, mean, m2;
};
// `lo` must be the same operand on every thread that computes this merge (the lower lane or
// warp): then all of them get the same bits, whatever the compiler contracts into FMAs.
// APPROX: the reciprocal of n by one MUFU op (~1 ulp; n is an exact small integer) instead of
// the IEEE sequence. Streamed rows take it: their 1024 threads wait on the merges' chain (LN
// bf16 N = 65536: 140.8 → 130.7 µs). Rows held in registers keep the IEEE one: there the
// approximate one took registers (LN bf16 N = 1000: 79 → 88, 3 → 2 blocks an SM; N = 3000
// spilled; bench/NOTES.md entry 30).
template <bool APPROX = false>
__device__ __forceinline__ Moments merge_moments(const Moments& lo, const Moments& hi) {
  const float n = lo.n + hi.n;
  const float inv = n > 0.f ? (APPROX ? __fdividef(1.f, n) : __frcp_rn(n)) : 0.f;  // two empty sets: stays empty
  const float d = hi.mean - lo.mean;
  return Moments{n, (lo.n * lo.mean + hi.n * hi.mean) * inv, lo.m2 + hi.m2 + d * d * (lo.n * hi.n) * inv};
}

// Moments over aligned groups of WIDTH lanes (butterfly; every lane ends with the same bits,
// empty moments included: lanes past the data hold {0, 0, 0}).
template <int WIDTH, bool APPROX = false>
__device__ __forceinline__ Moments group_moments(Moments v, int lane) {
#pragma unroll
  for (int offset = WIDTH / 2; offset > 0; offset /= 2) {
    const Moments other{__shfl_xor_sync(0xffffffffu, v.n, offset), __shfl_xor_sync(0xffffffffu, v.mean, offset),
                        __shfl_xor_sync(0xffffffffu, v.m2, offset)};
    v = (lane & offset) ? merge_moments<APPROX>(other, v) : merge_moments<APPROX>(v, other);
  }
  return v;
}

// The row's moments over its THREADS_PER_ROW (> 32) threads, ROWS rows a block: a butterfly
// in each warp, one meeting in shared memory (double-buffered as RowReducer), then in every
// warp lane w takes warp w's moments and a butterfly over the warps (log2 of them deep: merged
// one after another, 32 warps' merges made 1024-thread rows 20% slower) gives every thread
// the same bits (butterfly_lanes: templates/common.cuh).

template <int THREADS_PER_ROW, int ROWS, bool APPROX = false>
struct MomentsReducer {
  static_assert(THREADS_PER_ROW > 32 && THREADS_PER_ROW % 32 == 0, "rows of a warp or less meet by shuffles");
  static constexpr int kWarps = THREADS_PER_ROW / 32;
  static constexpr int kWarpsPow2 = butterfly_lanes(kWarps);
  Moments (*buffer)[ROWS][kWarps];
  int parity;

  __device__ __forceinline__ Moments reduce(Moments v, int row_in_block, int lane_in_row) {
    const int lane = lane_in_row & 31;
    v = group_moments<32, APPROX>(v, lane);
    if (lane == 0) buffer[parity][row_in_block][lane_in_row >> 5] = v;
    __syncthreads();
    Moments w{0.f, 0.f, 0.f};  // each group of kWarpsPow2 lanes merges all the warps alike
    if ((lane & (kWarpsPow2 - 1)) < kWarps) w = buffer[parity][row_in_block][lane & (kWarpsPow2 - 1)];
    parity ^= 1;
    return group_moments<kWarpsPow2, APPROX>(w, lane);
  }
};

// First column of a thread's i-th slot of the row's span, or kRowSpan when it has none (kN but
// for phased rows).
__device__ __forceinline__ i64 forward_slot_column(int i, int lane) {
  const i64 s = (i64)i * kRowThreads + lane;
  return s < kSlots ? s * kVec : kRowSpan;
}

// A thread's Σx over its slots (elements outside the row read as 0), and its Σ(x − c)² over the
// elements it holds of the row (those outside it left out): the two passes of every way
// LayerNorm's statistics are formed below.
__device__ __forceinline__ float slots_sum(const Packed (&packed)[kIters]) {
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    float x[kVec];
    packed[i].unpack(x);
#pragma unroll
    for (int j = 0; j < kVec; ++j) sum += x[j];
  }
  return sum;
}
__device__ __forceinline__ float slots_squares_about(const Packed (&packed)[kIters], int lane, float c,
                                                    unsigned phase) {
  float squares = 0.f;
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    const i64 col = forward_slot_column(i, lane);
    float x[kVec];
    packed[i].unpack(x);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const bool in_row = kPhased ? phased_element<kVec, kN>(col - phase, j) : col + j < kN;
      const float d = in_row ? x[j] - c : 0.f;
      squares += d * d;
    }
  }
  return squares;
}

// ---- LayerNorm statistics of rows of many warps, in one meeting ------------------------------
// Chan's merges (above) cost an IEEE reciprocal a step, log2(threads) of them one after another:
// rows of more than 8 warps ran twice as long with them as with two meetings (entry 19). Here
// the warps need no merges: each warp sums its elements, S_w (shuffles), takes its own mean
// K_w = S_w / n_w as a shift and sums Q_w = Σ(x − K_w)² (shuffles again), then the row meets
// once. With mean = ΣS_w / N, exactly for any shift K_w:
//   M2 = Σ_w  Q_w + (K_w − mean)·(2·D_w + n_w·(K_w − mean)),   D_w = S_w − n_w·K_w
// (D_w is the rounding of K_w; Q_w is about a mean of 32·slots elements, so nothing large
// cancels). n_w, the row's elements in warp w's slots, follows from N. After the meeting lane
// l of every warp takes warp l's pair and two butterflies give every thread the same bits.

// Elements of the row in warp w's slots: in each pass its 32 lanes' slots are contiguous.
__device__ __forceinline__ float warp_element_count(int w, unsigned phase) {
  int n = 0;
#pragma unroll
  for (int i = 0; i < kIters; ++i) n += span_element_count((i * kRowThreads + 32 * w) * kVec, 32 * kVec, phase);
  return (float)n;
}
__device__ __forceinline__ float warp_shift(float sum, float n) { return n > 0.f ? __fdividef(sum, n) : 0.f; }

// Elements of the row in the slots of the cluster's block `rank` (the whole row without a
// cluster): in each pass its kThreadsPerRow slots are contiguous.
__device__ __forceinline__ float block_element_count(unsigned rank, unsigned phase) {
  int n = 0;
#pragma unroll
  for (int i = 0; i < kIters; ++i)
    n += span_element_count((i * kRowThreads + (int)rank * kThreadsPerRow) * kVec, kThreadsPerRow * kVec, phase);
  return (float)n;
}

// Σ(x − c)² over a set of n elements from its Q = Σ(x − k)² about its shift k and its sum s:
// Q + (k − c)·(2·D + n·(k − c)), D = s − n·k (exact for any c; above).
__device__ __forceinline__ float squares_about(float c, float s, float q, float n, float k) {
  const float d = k - c;
  return q + d * fmaf(fmaf(-n, k, s), 2.f, n * d);
}

// {mean, M2} of the row (one block a row of THREADS_PER_ROW > 32 threads, or a cluster's
// blocks a row); the warps meet in the RowReducer's double buffer. In a cluster each block
// then takes its own mean as a shift in the same way, and the blocks meet once, in the
// exchange (ClusterExchange::shifted_moments).
template <class Reducer_, class Exchange_>
__device__ __forceinline__ float2 warp_shifted_moments(Reducer_& r, Exchange_& exchange, const Packed (&packed)[kIters],
                                                      int row_in_block, int lane_in_block, unsigned phase) {
  constexpr int kWarps = Reducer_::kWarps;
  constexpr int kWarpsPow2 = butterfly_lanes(kWarps);
  const unsigned rank = block_rank();
  const int lane = lane_in_block & 31, warp = lane_in_block >> 5;
  const int first_warp = (int)rank * kWarps;  // the row's warps in the blocks of lower rank
  const float sum = group_sum<32>(slots_sum(packed));
  const float shift = warp_shift(sum, warp_element_count(first_warp + warp, phase));
  const float squares =
      group_sum<32>(slots_squares_about(packed, (int)rank * kThreadsPerRow + lane_in_block, shift, phase));
  if (lane == 0) r.buffer[r.parity][row_in_block][warp] = make_float2(sum, squares);
  __syncthreads();
  const int w = lane & (kWarpsPow2 - 1);
  const float2 mine = w < kWarps ? r.buffer[r.parity][row_in_block][w] : make_float2(0.f, 0.f);
  r.parity ^= 1;
  const float n = w < kWarps ? warp_element_count(first_warp + w, phase) : 0.f;
  if constexpr (kCluster == 1) {
    const float mean = group_sum<kWarpsPow2>(mine.x) * kInvN;
    return make_float2(mean, group_sum<kWarpsPow2>(squares_about(mean, mine.x, mine.y, n, warp_shift(mine.x, n))));
  } else {
    const float block_sum = group_sum<kWarpsPow2>(mine.x);
    const float block_shift = warp_shift(block_sum, block_element_count(rank, phase));
    const float squares_about_block = squares_about(block_shift, mine.x, mine.y, n, warp_shift(mine.x, n));
    return exchange.shifted_moments(block_sum, group_sum<kWarpsPow2>(squares_about_block), phase);
  }
}

// ---- LayerNorm statistics of phased rows: Σx and Σx² in one meeting ---------------------------
// mean = Σx / N and var = Σx² / N − mean²: one meeting on two sums, as RMSNorm's on Σx² alone,
// and no pass over the registers between meetings. Phased rows (one block a row, a barrier a
// meeting, threads that wait there with nothing in flight) ran 1.13-1.38x faster this way than with
// the mean then Σ(x − mean)² or with warp-shifted moments, and then gained from prefetching
// (bench/NOTES.md entry 56); unphased rows measured alike or slower, and keep the ways above.
// The difference cancels as the mean grows against the spread: var's error is Σx²'s rounding
// times 1 + mean² / var. So where mean² > kSumsSpreads² · var the row meets again on
// Σ(x − mean)², as two meetings do (exact: nothing cancels), which bounds that factor by
// 1 + kSumsSpreads². The reduced sums have the same bits in every thread of the row (butterflies
// or one order), so the whole block takes the same branch at the barrier.
template <class Reducer_>
__device__ __forceinline__ float2 sums_of_powers_moments(Reducer_& r, const Packed (&packed)[kIters], int lane,
                                                         int lane_in_block, unsigned phase) {
  static_assert(kRowsPerBlock == 1 && kCluster == 1, "a branch the whole block takes: one row a block");
  constexpr float kSumsSpreads = 2.f;  // here, not at namespace scope: PTX would carry it as a global
  float2 sums = make_float2(0.f, 0.f);  // elements outside the row read as 0: they add nothing
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    float x[kVec];
    packed[i].unpack(x);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      sums.x += x[j];
      sums.y += x[j] * x[j];
    }
  }
  sums = r.sum(sums, 0, lane_in_block);
  const float mean = sums.x * kInvN;
  const float var = sums.y * kInvN - mean * mean;
  if (!(mean * mean > kSumsSpreads * kSumsSpreads * var)) return make_float2(mean, var);
  const float2 squares = make_float2(slots_squares_about(packed, lane, mean, phase), 0.f);
  return make_float2(mean, r.sum(squares, 0, lane_in_block).x * kInvN);
}

// γ and β of a slot (1 and 0 without them), γ + 1 when stored zero-centred.
__device__ __forceinline__ void affine_slot(const TW* weight, const TW* bias, i64 col, float (&w)[kVec],
                                            float (&b)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    w[j] = 1.f;
    b[j] = 0.f;
  }
  if constexpr (kHasWeight) {
    load_slot<TW, kVec, kAlign, kN>(weight, col, w);
    if constexpr (kZeroCenteredWeight) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) w[j] += 1.f;
    }
  }
  if constexpr (kHasBias) load_slot<TW, kVec, kAlign, kN>(bias, col, b);
}
// The same for a phased slot whose first element is row column `first`: element by element, as
// its columns move with the row's phase (a warp's loads are neighbours in L1).
__device__ __forceinline__ void phased_affine_slot(const TW* weight, const TW* bias, i64 first, float (&w)[kVec],
                                                   float (&b)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    w[j] = 1.f;
    b[j] = 0.f;
    if (phased_element<kVec, kN>(first, j)) {
      if constexpr (kHasWeight) w[j] = to_f32(weight[first + j]) + (kZeroCenteredWeight ? 1.f : 0.f);
      if constexpr (kHasBias) b[j] = to_f32(bias[first + j]);
    }
  }
}
// γ and β of the slot at column col of the row's span, the row at phase `phase`, from memory.
__device__ __forceinline__ void span_affine_slot(const ForwardParams& p, i64 col, unsigned phase, float (&w)[kVec],
                                                 float (&b)[kVec]) {
  if constexpr (kPhased)
    phased_affine_slot(p.weight, p.bias, col - phase, w, b);
  else
    affine_slot(p.weight, p.bias, col, w, b);
}

// fused:begin
// ---- fused options -----------------------------------------------------------------------------
constexpr bool kPreNormSum = kResidual || kRowScale || kDropoutMask != 0;  // h is formed from x
constexpr int kGateAfterNorm = 1, kGateBeforeNorm = 2;
constexpr bool kHoldsGate = kGate == kGateBeforeNorm;  // z held next to h

// Bit j set when column col + j of the row is kept (philox.cuh; slots start at multiples of kVec).
__device__ __forceinline__ unsigned slot_keep_bits(const ForwardParams& p, i64 row, i64 col) {
  return keep_bits<kVec, kVec % 4 == 0>(p.seed, p.offset, (unsigned long long)row, col, (unsigned)p.drop_below);
}

// One Philox draw gives four columns' draws. A thread whose slots are narrower than four columns
// drew them for itself and used one or two, and drew the eight of a bit-packed mask's byte again
// to write it: element rows of odd 16-bit N ran 16x the option-free row's time with dropout
// (session 55). Where a warp's lanes hold consecutive slots (rows of whole warps, kWarpDraws),
// the warp draws the next 32 groups of four columns of its slots, one a lane, and hands each lane
// its words by shuffles (4 / kVec slots a draw), and a mask byte's bits are gathered from the
// lanes that hold them.
constexpr bool kWarpDraws = kDropoutMask != 0 && kVec < 4 && kThreadsPerRow % 32 == 0 && !kPhased;

// keep[i]: the keep bits of the thread's slot i of `row` (bit j: column col_i + j) where
// kWarpDraws; with a bit-packed mask, bits 8-15 of a slot that starts a byte of the mask hold
// that byte. Every thread of the warp calls it (its shuffles), past the row's end too.
__device__ __forceinline__ void row_keep_bits(const ForwardParams& p, i64 row, int lane, unsigned (&keep)[kIters]) {
  if constexpr (kWarpDraws) {
    constexpr unsigned kWarp = 0xffffffffu;
    constexpr int kGroups = 8 * kVec;       // groups of four columns a warp's slots span
    constexpr int kBatch = 32 / kGroups;    // slots a lane draws for at once
    const int l = lane % 32;                // lane - l: the warp's first lane (rows of whole warps)
    const unsigned drop_below = (unsigned)p.drop_below;
#pragma unroll
    for (int i0 = 0; i0 < kIters; i0 += kBatch) {
      const i64 warp_col = ((i64)(i0 + l / kGroups) * kRowThreads + (lane - l)) * kVec;  // a multiple of 32
      const Philox4 d = dropout_draws(p.seed, p.offset, (unsigned long long)row,
                                      (unsigned long long)(warp_col / 4 + l % kGroups));
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (i0 + b >= kIters) break;
        const int src = b * kGroups + l * kVec / 4;
        const unsigned w0 = __shfl_sync(kWarp, d.w[0], src), w1 = __shfl_sync(kWarp, d.w[1], src);
        const unsigned w2 = __shfl_sync(kWarp, d.w[2], src), w3 = __shfl_sync(kWarp, d.w[3], src);
        unsigned bits = 0;
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const int word = (l * kVec + j) % 4;
          const unsigned draw = word == 0 ? w0 : word == 1 ? w1 : word == 2 ? w2 : w3;
          bits |= kept_bit(draw, drop_below) << j;
        }
        keep[i0 + b] = bits;
      }
    }
    if constexpr (kDropoutMask == 2) {
      // A byte's bits, from the lanes that hold them: in slots of one element, bits l .. l + 7
      // of the warp's vote (a ballot); in slots of two, the next three lanes' by shuffles (their
      // ballots measured 0.92-0.93x at 2050, the vote 1.04-1.45x in slots of one; session 55).
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        unsigned byte = keep[i];
        if constexpr (kVec == 1) {
          byte = __ballot_sync(kWarp, keep[i] & 1u) >> l;
        } else {
#pragma unroll
          for (int k = 1; k < 8 / kVec; ++k) byte |= __shfl_down_sync(kWarp, keep[i], k) << (k * kVec);
        }
        keep[i] |= (byte & 0xffu) << 8;
      }
    }
  }
}

// Replaces a slot of x as loaded by h = dropout(x)·rowscale + residual, rounded to x's dtype
// (elements past N stay 0). A dropped element is x·0, so a NaN stays NaN, as in torch's dropout.
// Each step is one fp32 operation rounded to nearest (no product fused into the sum), so h
// has one exact definition that a host reference reproduces bit for bit. Returns the slot's
// keep bits (0 without dropout), which the mask is written from: a Philox draw costs ~100
// integer operations per four elements, which made the forward with dropout compute-bound
// when it was drawn twice.
// kDrawn: `keep` holds the slot's keep bits as row_keep_bits drew them (else they are drawn here).
template <bool kDrawn = false>
__device__ __forceinline__ unsigned form_pre_norm_sum(const ForwardParams& p, i64 row, i64 col, Packed& held,
                                                      unsigned keep = 0) {
  float h[kVec];
  held.unpack(h);
  if constexpr (kDropoutMask != 0) {
    if constexpr (!kDrawn) keep = slot_keep_bits(p, row, col);
    const float scale = (float)p.keep_scale;
#pragma unroll
    for (int j = 0; j < kVec; ++j) h[j] = __fmul_rn(h[j], (keep >> j) & 1u ? scale : 0.f);
  }
  if constexpr (kRowScale) {
    const float s = p.rowscale[row];
#pragma unroll
    for (int j = 0; j < kVec; ++j) h[j] = __fmul_rn(h[j], s);
  }
  if constexpr (kResidual) {
    float r[kVec];
    load_slot<TX, kVec, kAlign, kN>(p.residual + row * p.residual_stride, col, r);
#pragma unroll
    for (int j = 0; j < kVec; ++j) h[j] = __fadd_rn(h[j], r[j]);
  }
  held.pack(h);
  return kDropoutMask != 0 ? keep : 0u;
}

// The gate before the norm: the norm's input is h·silu(z), in fp32.
__device__ __forceinline__ void gate_held_slot(const Packed& z, float (&x)[kVec]) {
  float zf[kVec];
  z.unpack(zf);
#pragma unroll
  for (int j = 0; j < kVec; ++j) x[j] *= silu(zf[j]);
}

// The gate after the norm: y·silu(z), z read as y is written.
__device__ __forceinline__ void gate_after_norm(const ForwardParams& p, i64 row, i64 col, float (&y)[kVec]) {
  float z[kVec];
  load_slot<TX, kVec, kAlign, kN>(p.z + row * p.z_stride, col, z);
#pragma unroll
  for (int j = 0; j < kVec; ++j) y[j] *= silu(z[j]);
}

// Parallel norms: y1 = x̂·γ1 + β1 from the same x̂.
__device__ __forceinline__ void second_output_slot(const ForwardParams& p, i64 row, i64 col, const float (&xhat)[kVec]) {
  float w[kVec], b[kVec], y[kVec];
  affine_slot(p.weight1, p.bias1, col, w, b);
#pragma unroll
  for (int j = 0; j < kVec; ++j) y[j] = xhat[j] * w[j] + b[j];
  store_slot<TY, kVec, kAlign, kN, kFoldWholeSlotStores>(p.y1 + row * p.y1_stride, col, y);
}

// What the forward writes besides y of a slot of h (col < N): h itself and the keep-mask (from
// `keep`, the slot's bits), each when asked for. A bit-packed mask's byte is written whole by
// the slot where it starts: with slots of 8 elements that is every slot's own bits; narrower
// slots draw the byte's other elements again (every draw is a function of its indices alone).
// Bits past N are 0.
__device__ __forceinline__ void write_pre_norm_outputs(const ForwardParams& p, i64 row, i64 col, const float (&h)[kVec],
                                                       unsigned keep) {
  if constexpr (kPreNormSum) {
    if (p.residual_out) store_slot<TX, kVec, kAlign, kN, kFoldWholeSlotStores>(p.residual_out + row * p.residual_out_stride, col, h);
  }
  if constexpr (kDropoutMask != 0) {
    if (!p.keep) return;
    unsigned char* mask = p.keep + row * p.keep_stride;
    if constexpr (kDropoutMask == 1) {
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        if (col + j < kN) mask[col + j] = (unsigned char)((keep >> j) & 1u);
    } else if (col % 8 == 0) {
      if constexpr (kWarpDraws)
        keep >>= 8;  // the byte, gathered by row_keep_bits
      else if constexpr (kVec != 8)
        keep = keep_bits<8, kVec % 4 == 0>(p.seed, p.offset, (unsigned long long)row, col, (unsigned)p.drop_below);
      if (kN - col < 8) keep &= (1u << (kN - col)) - 1u;
      mask[col >> 3] = (unsigned char)keep;
    }
  }
}
// fused:end

// ---- γ and β held in shared memory (kSharedWeights) ---------------------------------------------
// From L1 an 8-element slot's fp32 γ is two 16-byte loads 32 bytes apart: a warp's load spans
// 1 KB, 8 L1 wavefronts where a contiguous one takes 4, and β the same, every row, after the
// row's meetings. With kSharedWeights a persistent block writes its threads' γ and β once
// into its dynamic shared memory, [γ, β][slot][piece][thread], 16-byte pieces a warp's
// neighbours, and reads them there every row (4 wavefronts a piece). No barrier: each thread
// reads back only what it wrote. Where γ and β would not both fit (long LayerNorm rows: 32768
// columns a block), γ alone is held and β still read every row (kHeldBias false).
// codegen::forward_dynamic_shared_bytes counts the same.
static_assert(!kSharedWeights || kRowsPerBlock == 1, "held weights: one row per block, one owner a column");
typedef SlotPieces<kVec, kThreadsPerRow> WeightPieces;  // templates/common.cuh

// The region of held array `array` (γ, then β): kIters slots a thread.
__device__ __forceinline__ float* held_weights_region(int array) {
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  return reinterpret_cast<float*>(dynamic_shared) + (i64)array * kIters * kVec * kThreadsPerRow;
}

// γ and β of the thread's slots, as affine_slot gives them (phased rows: at phase `phase`), into
// shared memory (once a block).
__device__ __forceinline__ void hold_weights(const ForwardParams& p, int lane, unsigned phase) {
  if constexpr (kSharedWeights) {
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const i64 col = forward_slot_column(i, lane);
      if (col < kRowSpan) {
        float w[kVec], b[kVec];
        span_affine_slot(p, col, phase, w, b);
        if constexpr (kHasWeight) WeightPieces::store(held_weights_region(0), i, threadIdx.x, w);
        if constexpr (kHeldBias) WeightPieces::store(held_weights_region(kHasWeight ? 1 : 0), i, threadIdx.x, b);
      }
    }
  }
}

// γ and β of the thread's slot i (at column col) as hold_weights put them (1 and 0 without
// them); β from memory where γ alone is held (kHeldBias false: both did not fit).
static_assert(!kSharedWeights || !kHasBias || kHeldBias || !kPhased, "phased rows hold β beside γ");
__device__ __forceinline__ void held_affine(const ForwardParams& p, int i, i64 col, float (&w)[kVec],
                                            float (&b)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    w[j] = 1.f;
    b[j] = 0.f;
  }
  if constexpr (kHasWeight) WeightPieces::load(held_weights_region(0), i, threadIdx.x, w);
  if constexpr (kHeldBias)
    WeightPieces::load(held_weights_region(kHasWeight ? 1 : 0), i, threadIdx.x, b);
  else if constexpr (kHasBias)
    load_slot<TW, kVec, kAlign, kN>(p.bias, col, b);
}

// y of the thread's slot i (rows in registers; 0 for streamed rows, which hold no weights) at
// column col of the row's span (phase: the row's φ) from x, the row's statistics, γ and β (held:
// in shared memory at this row's phase). y_row is the row's start, computed once a row by the
// caller: inside each slot's bounds branch NVVM would multiply row · stride again.
__device__ __forceinline__ void output_slot(const ForwardParams& p, i64 row, TY* y_row, int i, i64 col, unsigned phase,
                                            bool held, const float (&x)[kVec], float mean, float rstd) {
  float w[kVec], b[kVec], xhat[kVec], y[kVec];
  if (kSharedWeights && held)
    held_affine(p, i, col, w, b);
  else
    span_affine_slot(p, col, phase, w, b);
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    xhat[j] = kLayerNorm ? (x[j] - mean) * rstd : x[j] * rstd;
    y[j] = xhat[j] * w[j] + b[j];
  }
// fused:begin
  if constexpr (kGate == kGateAfterNorm) gate_after_norm(p, row, col, y);
  if constexpr (kParallel) second_output_slot(p, row, col, xhat);
// fused:end
  if constexpr (kPhased)
    store_phased_slot<TY, kVec, kN>(y_row - phase + col, col - phase, y);
  else
    store_slot<TY, kVec, kAlign, kN, kFoldWholeSlotStores>(y_row, col, y);
}

__device__ __forceinline__ void save_statistics(const ForwardParams& p, i64 row, float mean, float rstd) {
  if constexpr (kLayerNorm) {
    if (p.mean) p.mean[row] = mean;
  }
  if (p.rstd) p.rstd[row] = rstd;
}

// ---- a row shared by a cluster's blocks (sm_90) --------------------------------------------------
// Each block's statistics of its part of the row go to its shared memory; after one cluster
// barrier every thread reads all kCluster of them (distributed shared memory) and merges them
// in rank order, so every thread of every block gets the same bits. Double-buffered: a block
// can write row k + 1's before a slower one has read row k's, never row k + 2's (it cannot
// pass the barrier of row k + 1 before the slower one reaches it, after its reads of row k).
struct ClusterExchange {
  int parity;

  __device__ __forceinline__ float4* slot() {
    __shared__ float4 buffer[2];
    return &buffer[parity];
  }
  __device__ __forceinline__ float4 share(float4 v) {
    float4* mine = slot();
    if (threadIdx.x == 0) *mine = v;
    cluster_barrier_publish(threadIdx.x == 0);
    parity ^= 1;
    return v;
  }
  __device__ __forceinline__ Moments moments(const Moments& block) {
    float4* mine = slot();
    share(make_float4(block.n, block.mean, block.m2, 0.f));
    float4 v = load_from_block(mine, 0);
    Moments total{v.x, v.y, v.z};
#pragma unroll
    for (unsigned r = 1; r < (unsigned)kCluster; ++r) {
      v = load_from_block(mine, r);
      total = merge_moments(total, Moments{v.x, v.y, v.z});
    }
    return total;
  }
  // The row's {mean, M2} from each block's Σx and its Σ(x − K_b)² about its own mean K_b
  // (warp_shifted_moments): one meeting, no merges.
  __device__ __forceinline__ float2 shifted_moments(float block_sum, float block_squares, unsigned phase) {
    float4* mine = slot();
    share(make_float4(block_sum, block_squares, 0.f, 0.f));
    float2 v[kCluster];
    float total = 0.f;
#pragma unroll
    for (unsigned r = 0; r < (unsigned)kCluster; ++r) {
      const float4 b = load_from_block(mine, r);
      v[r] = make_float2(b.x, b.y);
      total += b.x;
    }
    const float mean = total * kInvN;
    float m2 = 0.f;
#pragma unroll
    for (unsigned r = 0; r < (unsigned)kCluster; ++r) {
      const float n = block_element_count(r, phase);
      m2 += squares_about(mean, v[r].x, v[r].y, n, warp_shift(v[r].x, n));
    }
    return make_float2(mean, m2);
  }
  __device__ __forceinline__ float sum(float block) {
    float4* mine = slot();
    share(make_float4(block, 0.f, 0.f, 0.f));
    float total = load_from_block(mine, 0).x;
#pragma unroll
    for (unsigned r = 1; r < (unsigned)kCluster; ++r) total += load_from_block(mine, r).x;
    return total;
  }
};

// ---- the next row copied ahead into shared memory (kSharedPrefetch) ----------------------------
// Where the row's registers leave none for the next row's (kPrefetch: LayerNorm's 1024-thread
// clusters with fp32 γ spilled with it), each thread copies its own 16-byte slots of the next row
// into a stage in shared memory (cp.async) as soon as it has read this row's from there, so the
// copy is in flight through this row's meetings and y's stores. A thread reads back only what it
// copied: no barrier. The stage, [slot][thread] 16-byte pieces (a warp's neighbours, no bank
// conflicts), follows the held weights in the block's dynamic shared memory
// (codegen::forward_dynamic_shared_bytes counts the same).
// The copy into the stage is issued after every read of it has returned: its byte count (16)
// is computed from the values read (take's guard), so the copy waits on their loads.
constexpr i64 kHeldWeightBytes =
    kSharedWeights ? ((kHasWeight ? 1 : 0) + (kHeldBias ? 1 : 0)) * (i64)kIters * kVec * kThreadsPerRow * (i64)sizeof(float)
                   : 0;
static_assert(kSharedPrefetch == 0 ||
                  (kSharedPrefetch == 1 && kRowInRegisters && kRowsPerBlock == 1 && !kPrefetch && !kPhased &&
                   kVec * sizeof(TX) == 16 && kAlign >= 16 && kN % kVec == 0 && sizeof(Packed) == 16),
              "rows copied ahead: one aligned row a block (or cluster) in registers, whole 16-byte slots");

struct RowAhead {
  static __device__ __forceinline__ uint4* piece(int i) {
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    return reinterpret_cast<uint4*>(dynamic_shared + kHeldWeightBytes) + (i64)i * kThreadsPerRow + threadIdx.x;
  }
  // Row `row`'s slots of the thread into the stage, a copy group (empty past the last row).
  // bytes: 16, computed from the last reads of the stage (take).
  static __device__ __forceinline__ void copy(const ForwardParams& p, i64 row, int lane, unsigned bytes) {
    if (row < p.m) {
      const TX* x_row = p.x + row * p.x_stride;
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const i64 col = forward_slot_column(i, lane);
        if (col < kN)
          asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared_address(piece(i))),
                       "l"(x_row + col), "r"(bytes)
                       : "memory");
      }
    }
    cp_async_commit();
  }
  // Row `row` from the stage into registers as load_forward_row loads it (zeros outside the
  // row); returns 16 computed from every word read, for the copy that overwrites the stage.
  static __device__ __forceinline__ unsigned take(const ForwardParams& p, i64 row, int lane, Packed (&packed)[kIters]) {
    cp_async_wait<0>();
    unsigned seen = 0;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      uint4 v = make_uint4(0, 0, 0, 0);
      if (row < p.m && forward_slot_column(i, lane) < kN) v = *piece(i);
      seen |= v.x | v.y | v.z | v.w;
      packed[i] = *reinterpret_cast<const Packed*>(&v);
    }
    unsigned bytes;  // min(seen | 16, 16): 16, which the compilers cannot know without the loads
    asm("{\n\t.reg .b32 t;\n\tor.b32 t, %1, 16;\n\tmin.u32 %0, t, 16;\n\t}" : "=r"(bytes) : "r"(seen));
    return bytes;
  }
};

// ---- rows held in registers ------------------------------------------------------------------
// A thread's slots of x of one row (zeros outside the row, and for rows past M). A phased row's
// chunks are loaded whole (PackedSlot::load_phased_whole) but x's last one, which may end past x;
// a prefetching block's hold their neighbours' elements until complete_phased_row makes them the
// row (load_phased_chunk says why; the blocks that do not prefetch measured 1-11% slower so).
__device__ __forceinline__ void load_forward_row(const ForwardParams& p, i64 row, int lane, Packed (&packed)[kIters]) {
  const TX* x_row = p.x + row * p.x_stride;  // once a row (output_slot says why)
  if constexpr (kPhased) {
    const unsigned phase = row_phase(p, row);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const i64 col = forward_slot_column(i, lane);
      const bool on = row < p.m && col < kRowSpan;
      if constexpr (kPrefetch) packed[i].load_phased_chunk(x_row - phase + col, col - phase, on, row == p.m - 1);
      else packed[i].load_phased_whole(x_row - phase + col, col - phase, on, row == p.m - 1);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    const i64 col = forward_slot_column(i, lane);
    if (row < p.m && col < kN)
      packed[i].load(x_row, col);
    else
      packed[i] = Packed{};
  }
}

// A prefetching block's phased row as the row (PackedSlot::complete_phased), where the row is
// first worked, not where it is loaded (load_phased_chunk says why).
__device__ __forceinline__ void complete_phased_row(const ForwardParams& p, i64 row, int lane, unsigned phase,
                                                    Packed (&packed)[kIters]) {
  if constexpr (kPhased && kPrefetch) {
    const TX* x_row = p.x + row * p.x_stride;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const i64 col = forward_slot_column(i, lane);
      packed[i].complete_phased(x_row - phase + col, col - phase, row < p.m && col < kRowSpan, row == p.m - 1);
    }
  }
}

template <int kUnused = 0>
__device__ __forceinline__ void forward_rows_in_registers(const ForwardParams& p) {
  __shared__ float2 reduce_buffer[2][kRowsPerBlock][Reducer::kWarps];
  Reducer reducer{reduce_buffer, 0};
  // LayerNorm's moments in one reduction (see Moments) where that measured faster than the
  // mean and then Σ(x − mean)² (bench/NOTES.md, entry 19): rows of 2 to 8 warps meet once
  // instead of twice (bf16 N = 4096-8192: 88%); warp rows with several slots a lane save a
  // second pass over their registers (bf16 N = 1000: 91.5% against 81.6%). Not with one slot
  // a lane (bf16 N = 256: 86.5% against 91.7%), nor with more warps (bf16 N = 16384: 62%
  // against 70.5%; fp32 N = 12288: 80% against 95%; 16 or 20 warps at N = 4095, 5003 took
  // twice as long), nor across a cluster (its blocks spilled 56-80 bytes and ran slower than
  // rows streamed twice; tuned again, 11-26% slower than two meetings at fp32 N = 65536 and
  // bf16 N = 8192, 6% faster at bf16 N = 65536 but still behind streaming: NOTES entry 30).
  constexpr bool kOneReduction =
      kLayerNorm && kCluster == 1 && (kThreadsPerRow > 32 ? kThreadsPerRow <= 256 : kIters > 1);
  // Rows of more than 512 threads (blocks one or two an SM) meet once too, by warp-shifted
  // moments (warp_shifted_moments: shuffles, then one meeting, no merges): bench --graph, fp32
  // γ, M·N = 64 Mi, against two meetings (bench/NOTES.md, entry 36): LN fp32 12289 225 → 207
  // us, 16385 266 → 238, 24577 268 → 245, 12288 196 → 189, bf16 24577 168 → 156; 16384 fp32
  // 194 → 198. In blocks of 288-512 threads they won or lost by N (bf16 4095 4% faster, 6001
  // 19% slower). Clusters meet once the same way, each block shifting by its own mean (one
  // cluster barrier a row instead of two): fp32 LN 40960-163840 8-19% faster (entry 38).
  constexpr bool kWarpMoments = kLayerNorm && (kCluster > 1 || kThreadsPerRow > 512);
  // Phased rows of one block: Σx and Σx² (sums_of_powers_moments), before both ways above.
  constexpr bool kSumsOfPowers = kLayerNorm && kPhased && kCluster == 1;
  typedef MomentsReducer<(kThreadsPerRow > 32 ? kThreadsPerRow : 64), kRowsPerBlock> Moments_;
  __shared__ Moments moments_buffer[kOneReduction ? 2 : 1][kRowsPerBlock][Moments_::kWarps];
  Moments_ moments{moments_buffer, 0};
  const int thread = block_thread<kThreads>();
  const int row_in_block = thread / kThreadsPerRow;
  const int lane_in_block = thread % kThreadsPerRow;
  // With a cluster a row: the block's rank in it, the thread's lane among the row's threads,
  // and the clusters (row groups) of the grid.
  const int lane = (int)block_rank() * kThreadsPerRow + lane_in_block;
  const i64 group = row_group(), groups = row_groups();
  ClusterExchange exchange{0};
  const float eps = (float)p.eps;
  const i64 step = groups * kRowsPerBlock;
  // With kPrefetch (option-free rows only) the next row's x is loaded before this row's
  // reductions and barriers, so its loads are in flight while the threads wait there.
  Packed next[kIters];  // unused (and not allocated) without kPrefetch
  if constexpr (kPrefetch) load_forward_row(p, group * kRowsPerBlock + row_in_block, lane, next);
  // With kSharedPrefetch the first row is copied ahead too (RowAhead).
  if constexpr (kSharedPrefetch > 0) RowAhead::copy(p, group * kRowsPerBlock + row_in_block, lane, 16u);
  // The phase of the block's first row, at which it holds γ and β (all its rows' but under an SM
  // margin: above).
  const unsigned held_phase = row_phase(p, group * kRowsPerBlock);
  hold_weights(p, lane, held_phase);
  for (i64 base = group * kRowsPerBlock; base < p.m; base += step) {
    const i64 row = base + row_in_block;
    const bool valid = row < p.m;  // every thread takes part in the reductions' barriers
    const unsigned phase = row_phase(p, row);
    Packed packed[kIters];
// fused:begin
    Packed gate_z[kHoldsGate ? kIters : 1];
    unsigned keep[kIters];  // each slot's keep bits, for the mask (kDropoutMask)
// fused:end
    if constexpr (kPrefetch) {
#pragma unroll
      for (int i = 0; i < kIters; ++i) packed[i] = next[i];
      load_forward_row(p, row + step, lane, next);
    } else if constexpr (kSharedPrefetch > 0) {
      RowAhead::copy(p, row + step, lane, RowAhead::take(p, row, lane, packed));
    } else {
      load_forward_row(p, row, lane, packed);
    }
    complete_phased_row(p, row, lane, phase, packed);
// fused:begin
    row_keep_bits(p, row, lane, keep);  // every thread (the warp's shuffles), with kWarpDraws
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const i64 col = forward_slot_column(i, lane);
      if (valid && col < kN) {
        if constexpr (kPreNormSum) {
          const unsigned bits = form_pre_norm_sum<kWarpDraws>(p, row, col, packed[i], keep[i]);
          if constexpr (kDropoutMask != 0) keep[i] = bits;
        }
        if constexpr (kHoldsGate) gate_z[i].load(p.z + row * p.z_stride, col);
      } else if constexpr (kHoldsGate) {
        gate_z[i] = Packed{};  // zeros
      }
    }
// fused:end
    // Elements outside the row read as 0: they add nothing to Σx or Σx², but must be left out
    // of the thread's count and of its Σ(x − mean)².
    float mean = 0.f, var;
    if constexpr (kSumsOfPowers) {
      const float2 mv = sums_of_powers_moments(reducer, packed, lane, lane_in_block, phase);
      mean = mv.x;
      var = mv.y;
    } else if constexpr (kWarpMoments) {
      const float2 mm = warp_shifted_moments(reducer, exchange, packed, row_in_block, lane_in_block, phase);
      mean = mm.x;
      var = mm.y * kInvN;
    } else if constexpr (kOneReduction) {
      float count = 0.f;
#pragma unroll
      for (int i = 0; i < kIters; ++i) count += (float)span_element_count((int)forward_slot_column(i, lane), kVec, phase);
      const float sum = slots_sum(packed);
      Moments own{count, count > 0.f ? sum / count : 0.f, 0.f};
      own.m2 = slots_squares_about(packed, lane, own.mean, phase);
      Moments row_moments;
      if constexpr (kThreadsPerRow > 32)
        row_moments = moments.reduce(own, row_in_block, lane_in_block);
      else
        row_moments = group_moments<kThreadsPerRow>(own, lane_in_block);
      mean = row_moments.mean;
      var = row_moments.m2 * kInvN;
    } else if constexpr (kLayerNorm) {  // one block (clusters: kWarpMoments): the mean, then Σ(x − mean)²
      mean = reducer.sum(make_float2(slots_sum(packed), 0.f), row_in_block, lane_in_block).x * kInvN;
      const float2 squares = make_float2(slots_squares_about(packed, lane, mean, phase), 0.f);
      var = reducer.sum(squares, row_in_block, lane_in_block).x * kInvN;
    } else {
      float2 sums = make_float2(0.f, 0.f);
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        float x[kVec];
        packed[i].unpack(x);
// fused:begin
        if constexpr (kHoldsGate) gate_held_slot(gate_z[i], x);
// fused:end
#pragma unroll
        for (int j = 0; j < kVec; ++j) sums.x += x[j] * x[j];
      }
      float squares = reducer.sum(sums, row_in_block, lane_in_block).x;
      if constexpr (kCluster > 1) squares = exchange.sum(squares);
      var = squares * kInvN;
    }
    const float rstd = rsqrtf(var + eps);
    if (valid) {
      if (lane == 0) save_statistics(p, row, mean, rstd);
      TY* const y_row = p.y + row * p.y_stride;
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const i64 col = forward_slot_column(i, lane);
        if (col < kRowSpan) {
          float x[kVec];
          packed[i].unpack(x);
// fused:begin
          write_pre_norm_outputs(p, row, col, x, keep[kDropoutMask != 0 ? i : 0]);
          if constexpr (kHoldsGate) gate_held_slot(gate_z[i], x);
// fused:end
          output_slot(p, row, y_row, i, col, phase, !kPhased || phase == held_phase, x, mean, rstd);
        }
      }
    }
  }
  if constexpr (kSharedPrefetch > 0) cp_async_wait<0>();  // the copy groups past the last row are empty
  // A block's shared memory must outlive the other blocks' last reads of it.
  if constexpr (kCluster > 1) cluster_barrier();
}

// ---- rows streamed twice (too long for registers) --------------------------------------------
// Each thread takes slots lane, lane + T, lane + 2T, ... (T: the row's threads, kThreads times
// kCluster) in batches of kStreamBatch: a batch's loads are all issued before any is used, so
// each thread keeps that many 16-byte loads in flight (one at a time leaves the memory system
// idle between a load and its use).
//
// With kCluster > 1 (sm_90) a cluster's blocks stream one row together and exchange their
// statistics as the registers family's clusters do: rows fewer than the SMs keep every SM
// streaming (codegen's heuristic), and kCluster times fewer rows wait in L2 for the second pass.
constexpr i64 kStreamStride = (i64)kThreads * kCluster;  // slots between a thread's

// The k-th slot of a batch that starts at slot s0, or -1 past the row's end.
__device__ __forceinline__ i64 batch_slot(i64 s0, int k) {
  const i64 s = s0 + (i64)k * kStreamStride;
  return s < kSlots ? s : -1;
}

template <int kRows = kRowsPerBlock>
__device__ __forceinline__ void forward_rows_streamed(const ForwardParams& p) {
  static_assert(kRows == 1 && !kPhased, "streamed rows take a whole block each, unphased");
  static_assert(!(kSharedWeights && kRows > 0), "held weights are for rows in registers");  // kRows: dependent
  typedef RowReducer<kThreads, 1> BlockReducer;
  __shared__ float2 reduce_buffer[2][1][BlockReducer::kWarps];
  BlockReducer reducer{reduce_buffer, 0};
  typedef MomentsReducer<kThreads, 1, true> BlockMoments;
  __shared__ Moments moments_buffer[kLayerNorm ? 2 : 1][1][BlockMoments::kWarps];
  BlockMoments moments{moments_buffer, 0};
  const int lane = threadIdx.x;
  const i64 first = (i64)block_rank() * kThreads + lane;  // the thread's first slot of a row
  const i64 group = row_group(), groups = row_groups();
  ClusterExchange exchange{0};
  const float eps = (float)p.eps;
  for (i64 row = group; row < p.m; row += groups) {
    const TX* x_row = p.x + row * p.x_stride;
    // Pass 1: the thread's moments (LayerNorm: each batch's exact moments merged in with
    // Chan's formula) or Σx² (RMSNorm), then one reduction over the block (and the cluster).
    Moments own{0.f, 0.f, 0.f};
    float squares = 0.f;
    for (i64 s0 = first; s0 < kSlots; s0 += kStreamStride * kStreamBatch) {
      Packed packed[kStreamBatch];
// fused:begin
      Packed gate_z[kHoldsGate ? kStreamBatch : 1];
// fused:end
#pragma unroll
      for (int k = 0; k < kStreamBatch; ++k) {
        const i64 s = batch_slot(s0, k);
        packed[k].load(x_row, s >= 0 ? s * kVec : kN);  // past the end: zeros
// fused:begin
        if constexpr (kPreNormSum) {
          if (s >= 0) form_pre_norm_sum(p, row, s * kVec, packed[k]);
        }
        if constexpr (kHoldsGate) gate_z[k].load(p.z + row * p.z_stride, s >= 0 ? s * kVec : kN);
// fused:end
      }
      if constexpr (kLayerNorm) {
        // Each slot's exact moments (a two-pass over its kVec registers), then the batch's in
        // closed form, n = Σ n_s, mean = Σ n_s·mean_s / n, M2 = Σ M2_s + Σ n_s·(mean_s − mean)²,
        // merged into the thread's by one Chan step: the slots do not wait on one another,
        // and a batch costs two reciprocals instead of a merge a slot.
        Moments slot[kStreamBatch];
        float count = 0.f, weighted = 0.f;
#pragma unroll
        for (int k = 0; k < kStreamBatch; ++k) {
          const i64 s = batch_slot(s0, k);
          const int n = s < 0 ? 0 : (kN - s * kVec < kVec ? (int)(kN - s * kVec) : kVec);
          float x[kVec];
          packed[k].unpack(x);
          float sum = 0.f;
#pragma unroll
          for (int j = 0; j < kVec; ++j) sum += x[j];
          slot[k] = Moments{(float)n, n == kVec ? sum * (1.f / kVec) : (n > 0 ? sum / (float)n : 0.f), 0.f};
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            const float d = j < n ? x[j] - slot[k].mean : 0.f;
            slot[k].m2 += d * d;
          }
          count += slot[k].n;
          weighted += slot[k].n * slot[k].mean;
        }
        Moments batch{count, count > 0.f ? __fdividef(weighted, count) : 0.f, 0.f};
#pragma unroll
        for (int k = 0; k < kStreamBatch; ++k) {
          const float d = slot[k].mean - batch.mean;
          batch.m2 += slot[k].m2 + slot[k].n * d * d;
        }
        own = merge_moments<true>(own, batch);
      } else {
#pragma unroll
        for (int k = 0; k < kStreamBatch; ++k) {
          float x[kVec];
          packed[k].unpack(x);
// fused:begin
          if constexpr (kHoldsGate) gate_held_slot(gate_z[k], x);
// fused:end
#pragma unroll
          for (int j = 0; j < kVec; ++j) squares += x[j] * x[j];
        }
      }
    }
    float mean = 0.f, var;
    if constexpr (kLayerNorm) {
      Moments row_moments = moments.reduce(own, 0, lane);
      if constexpr (kCluster > 1) row_moments = exchange.moments(row_moments);
      mean = row_moments.mean;
      var = row_moments.m2 * kInvN;
    } else {
      float total = reducer.sum(make_float2(squares, 0.f), 0, lane).x;
      if constexpr (kCluster > 1) total = exchange.sum(total);
      var = total * kInvN;
    }
    const float rstd = rsqrtf(var + eps);
    if (first == 0) save_statistics(p, row, mean, rstd);
    // Pass 2: x again, y out, from the row's end back: pass 1 left its last lines in L2, and
    // where the rows in flight outgrow L2 (a cluster of two 1024-thread blocks a row of 1M
    // columns: 128 rows' halves, 128 MB of bf16) those are what is still there.
    TY* const y_row = p.y + row * p.y_stride;
    constexpr i64 kBatchStride = kStreamStride * kStreamBatch;
    const i64 last = first < kSlots ? first + (kSlots - 1 - first) / kBatchStride * kBatchStride : first - 1;
    for (i64 s0 = last; s0 >= first; s0 -= kBatchStride) {
      Packed packed[kStreamBatch];
// fused:begin
      Packed gate_z[kHoldsGate ? kStreamBatch : 1];
      unsigned keep[kStreamBatch] = {};
// fused:end
#pragma unroll
      for (int k = 0; k < kStreamBatch; ++k) {
        const i64 s = batch_slot(s0, k);
        if (s >= 0) packed[k].load(x_row, s * kVec);
// fused:begin
        if constexpr (kPreNormSum) {
          if (s >= 0) keep[k] = form_pre_norm_sum(p, row, s * kVec, packed[k]);
        }
        if constexpr (kHoldsGate) {
          if (s >= 0) gate_z[k].load(p.z + row * p.z_stride, s * kVec);
        }
// fused:end
      }
#pragma unroll
      for (int k = 0; k < kStreamBatch; ++k) {
        const i64 s = batch_slot(s0, k);
        if (s < 0) continue;
        float x[kVec];
        packed[k].unpack(x);
// fused:begin
        write_pre_norm_outputs(p, row, s * kVec, x, keep[k]);
        if constexpr (kHoldsGate) gate_held_slot(gate_z[k], x);
// fused:end
        output_slot(p, row, y_row, 0, s * kVec, 0, false, x, mean, rstd);
      }
    }
  }
  // A block's shared memory must outlive the other blocks' last reads of it.
  if constexpr (kCluster > 1) cluster_barrier();
}

}  // namespace nj

extern "C" __global__ void __launch_bounds__(nj::cfg::kThreads, nj::cfg::kMinBlocks)
nj_norm_forward(const nj::ForwardParams p) {
  nj::wait_for_prerequisite_grid();  // a dependent launch of the stream's previous kernel (sm_90)
  if constexpr (nj::cfg::kRowInRegisters) nj::forward_rows_in_registers<>(p);
  else nj::forward_rows_streamed<>(p);
}
