// LayerNorm / RMSNorm backward: one row per group of kThreadsPerRow threads.
//
//   x̂  = (x − mean)·rstd                 RMSNorm: x̂ = x·rstd
//   g  = dy·γ                            no γ:    g = dy
//   dx = rstd·(g − mean_N(g) − x̂·mean_N(g·x̂))   RMSNorm: without the mean_N(g) term
//   dγ = Σ_rows dy·x̂        dβ = Σ_rows dy
//
// Memory plan. A persistent grid of G row groups: group g takes rows g, g+G, ...
// (kRowsPerBlock rows at a time). A row group is one block, or on sm_90 a cluster of kCluster
// blocks that each hold one slice of the row and swap their partial row sums through
// distributed shared memory. The row is read once into registers (kRowInRegisters) or, for
// rows too long for that, streamed twice: sums first, then dx (the second read mostly hits
// L2). dγ and dβ are summed per row group in fp32 and written as one partial row per group
// into the workspace; nj_reduce_partials then adds the groups' rows in group order, so the
// result is the same bits whatever the timing. No floating-point atomics anywhere.
namespace nj {
using namespace cfg;

// Field order and 8-byte fields match runtime/launch_params.h.
struct BackwardParams {
  i64 m;
  const TX* x;
  i64 x_stride;
  const TDY* dy;
  i64 dy_stride;
  const float* mean;   // LayerNorm only
  const float* rstd;
  const TW* weight;    // when kHasWeight
  TDX* dx;
  i64 dx_stride;
  float* partial;      // [kHasWeight + kHasBias][groups][kN]: dγ rows, then dβ rows;
                       // null when the launch is a single row group, which writes dγ/dβ itself
  i64 groups;          // row groups (partial rows) of the whole backward
  i64 first_group;     // the first of them this launch's grid holds (row_group)
  TW* dweight;
  TW* dbias;
// fused:begin
  FusedParams fused;   // the fused options' pointers (templates/fused_ops.cuh)
// fused:end
};

constexpr int kRowsPerBlock = kThreads / kThreadsPerRow;

// Phased rows (kPhased): rows aligned to less than 16 bytes but in phase, so that row r of x, dy
// and dx starts φ(r) = r·x_stride mod kVec elements past a 16-byte boundary. A thread's slots
// are the row's aligned 16-byte chunks: the slot at column c of the row's span (kN + kVec − 1
// columns) holds row column c − φ. Each row group takes rows of one phase (the host launches a
// multiple of kVec groups, or one group a row), so a thread's slots hold the same columns in all
// its rows: its γ and its dγ/dβ sums stay per slot as for aligned rows, and only a row's first
// and last chunk, which begin or end in its neighbours, are read and written element by element
// (templates/common.cuh, load_phased_slot). So these rows do the work of aligned ones, where
// realigning every slot costs selects and split stores (bench/NOTES.md entries 34, 47).
constexpr i64 kRowSpan = kPhased ? kN + kVec - 1 : kN;  // columns of the row's slots
constexpr int kSlotAlign = kPhased ? 16 : kAlign;      // bytes a slot's loads are aligned to
static_assert(!kPhased || (kVec * sizeof(TX) == 16 && sizeof(TDY) == sizeof(TX) && sizeof(TDX) == sizeof(TX) &&
                           kRowsPerBlock == 1 && kMerge == 1 && kRowInRegisters && !kStaged && !kGridCluster &&
                           kN >= kVec),
              "phased rows: 16-byte slots of x, dy and dx, one row a block held in registers, rows of a chunk at "
              "least, so that each tensor's last chunk is the last row's alone (codegen checks)");
constexpr i64 kSlots = (kRowSpan + kVec - 1) / kVec;                          // vector slots per row
constexpr i64 kSlotsPerBlock = (kSlots + kCluster - 1) / kCluster;            // a block's slice
constexpr i64 kSliceCols = kSlotsPerBlock * kVec;  // columns of a block's slice (the last may have fewer)
constexpr int kIters = (int)((kSlotsPerBlock + kThreadsPerRow - 1) / kThreadsPerRow);
static_assert(kCluster == 1 || kRowsPerBlock == 1, "a cluster shares one row at a time");
constexpr bool kAccumulate = kHasWeight || kHasBias;
constexpr float kInvN = 1.0f / (float)kN;

// The butterfly where a block of 16-bit rows is the whole row (templates/common.cuh says why).
constexpr bool kButterfly = kCluster == 1 && sizeof(TX) == 2;
typedef RowReducer<kThreadsPerRow, kRowsPerBlock, kButterfly> Reducer;

// Paired rows (kPairedRows): a block or cluster holding one row in registers takes its rows two
// at a time, r and r + step (the rows it would take one after the other, in the same order).
// The two rows' sums meet in one block reduction and one cluster meeting (a float4), each slot's
// γ is read once for both, and the column sums take both rows' terms in one shared-memory round
// trip, added in row order: the bits of every output are those of the same config unpaired over
// the same row groups (a launch of as many groups: pairs' registers may leave fewer resident).
// Each thread holds both rows: twice the registers of one, as with kPrefetch.
constexpr int kRowsAtOnce = kPairedRows ? 2 : 1;
template <int K>
struct RowSumsOf {
  typedef float2 type;
};
template <>
struct RowSumsOf<2> {
  typedef float4 type;
};
typedef RowSumsOf<kRowsAtOnce>::type RowSums;  // the turn's rows' Σg and Σg·x̂
typedef RowReducer<kThreadsPerRow, kRowsPerBlock, kButterfly, RowSums> TurnReducer;
__device__ __forceinline__ float2 pack_row_sums(const float2 (&s)[1]) { return s[0]; }
__device__ __forceinline__ float4 pack_row_sums(const float2 (&s)[2]) {
  return make_float4(s[0].x, s[0].y, s[1].x, s[1].y);
}
__device__ __forceinline__ void unpack_row_sums(float2 v, float2 (&s)[1]) { s[0] = v; }
__device__ __forceinline__ void unpack_row_sums(float4 v, float2 (&s)[2]) {
  s[0] = make_float2(v.x, v.y);
  s[1] = make_float2(v.z, v.w);
}

__device__ __forceinline__ float normalized(float x, float mean, float rstd) {
  if constexpr (kLayerNorm) return (x - mean) * rstd;
  else return x * rstd;
}
__device__ __forceinline__ float input_grad(float g, float xhat, float rstd, float mean_g, float mean_gx) {
  if constexpr (kLayerNorm) return rstd * (g - mean_g - xhat * mean_gx);
  else return rstd * (g - xhat * mean_gx);
}

// Row groups write one partial row of dγ/dβ each: a worker, or kMerge workers whose sums meet
// in distributed shared memory first (store_merged_sums). A backward of p.groups row groups is
// one launch, or several in turn that hold a share of them each (the engine's sm_margin leaves
// SMs to other work): which rows a group sums, and so the bits of dγ/dβ, depend on p.groups
// only, never on the grid.
// (Both counts are below 2^32, a few per SM: in 32 bits the row arithmetic knows their high
// words are zero, and registers stay as they were with gridDim.)
__device__ __forceinline__ i64 row_groups(const BackwardParams& p) { return (unsigned)p.groups; }
__device__ __forceinline__ i64 row_group(const BackwardParams& p) {
  return (unsigned)p.first_group + blockIdx.x / (kCluster * kMerge);
}
// Row workers take rows w, w + workers, ...: a block each, or a cluster sharing each row; the
// kMerge workers of group g are g·kMerge + 0 .. kMerge − 1.
__device__ __forceinline__ i64 row_workers(const BackwardParams& p) { return row_groups(p) * kMerge; }
__device__ __forceinline__ i64 row_worker(const BackwardParams& p) {
  return row_group(p) * kMerge + blockIdx.x / kCluster % kMerge;
}
__device__ __forceinline__ float* bias_partials(const BackwardParams& p) {
  return p.partial + (kHasWeight ? row_groups(p) * kN : 0);
}

// First column of a thread's i-th slot in its block's slice (of the row's span), or kRowSpan
// when it has none there (kN but for phased rows, whose span reaches past kN).
__device__ __forceinline__ i64 slot_column(int i, int lane, unsigned rank) {
  const i64 local = (i64)i * kThreadsPerRow + lane;
  if (kSlotsPerBlock % kThreadsPerRow != 0 && local >= kSlotsPerBlock) return kRowSpan;
  const i64 col = (rank * kSlotsPerBlock + local) * kVec;
  return col < kRowSpan ? col : kRowSpan;  // kRowSpan is kN but for phased rows
}

// The phase of the thread's rows (φ above; 0 but for phased rows): that of its row group's
// first row, which all its rows share. The low bits of the product are those of the low words'.
__device__ __forceinline__ unsigned row_phase(const BackwardParams& p) {
  if constexpr (kPhased) return ((unsigned)(row_worker(p) * kRowsPerBlock) * (unsigned)p.x_stride) & (kVec - 1);
  else return 0;
}

// Rows aligned to less than 16 bytes land shifted in their stage (below). Such staged rows
// are read from the stage element by element, and their slots interleave so that each access
// of a warp covers neighbouring columns.
constexpr bool kShifted = kAlign < 16;
constexpr bool kInterleaved = kStaged && kShifted;

// Interleaved: element j of a thread's slot i is column lane + interleaved_at(i, j) of its
// block's slice (i and j are unrolled, so this is a constant offset from the lane).
__device__ __forceinline__ constexpr int interleaved_at(int i, int j) { return (i * kVec + j) * kThreadsPerRow; }

// Column of element j of a thread's slot i, or kN when it has none there. A slot is kVec
// neighbouring columns (one vector access) or, interleaved, every kThreadsPerRow-th column:
// then a warp's shared-memory reads hit distinct banks and its dx stores are coalesced.
__device__ __forceinline__ i64 element_column(int i, int j, int lane, unsigned rank) {
  if constexpr (kInterleaved) {
    const i64 at = (i64)interleaved_at(i, j) + lane;  // within the block's slice
    if (at >= kSliceCols) return kN;
    const i64 col = (i64)rank * kSliceCols + at;
    return col < kN ? col : kN;
  } else {
    const i64 col = slot_column(i, lane, rank);
    return col + j < kN ? col + j : kN;
  }
}

// Bytes every partial row is aligned to: the workspace is 16-byte aligned (the engine checks a
// caller's; its own allocations are), and rows are kN floats apart.
constexpr int kPartialAlign = kN % 4 == 0 ? 16 : kN % 2 == 0 ? 8 : 4;

// One row group's dγ (or dβ) value for a column: into the group's fp32 partial row or, when
// the launch is a single row group (p.partial null), converted as the gradient itself.
__device__ __forceinline__ void put_group_sum(float* partial_row, TW* gradient, i64 col, float v) {
  if (partial_row) partial_row[col] = v;
  else gradient[col] = from_f32<TW>(v);
}
// A grid cluster is the launch's only row group: it writes dγ/dβ itself (p.partial holds its
// row sums instead, below).
__device__ __forceinline__ float* weight_partial_row(const BackwardParams& p) {
  return p.partial && !kGridCluster ? p.partial + row_group(p) * kN : nullptr;
}
__device__ __forceinline__ float* bias_partial_row(const BackwardParams& p) {
  return p.partial && !kGridCluster ? bias_partials(p) + row_group(p) * kN : nullptr;
}

// fused:begin
// The params as the second of parallel norms sees them (kParallel): its dγ1/dβ1 where the
// first writes dγ/dβ, and its partial rows after the first norm's (the host reduces them into
// dγ1/dβ1 with a second launch of nj_reduce_partials).
__device__ __forceinline__ BackwardParams second_norm_params(const BackwardParams& p) {
  BackwardParams q = p;
  q.dweight = p.fused.dweight1;
  q.dbias = p.fused.dbias1;
  if (p.partial && !kGridCluster) q.partial = p.partial + (i64)(kHasWeight + kHasBias) * row_groups(p) * kN;
  return q;
}

// A slot's x̂, recovered from the forward's output (kRecompute, templates/fused_ops.cuh): y as
// read where x would be, γ as stored_weight_to_gamma gives it (1 without γ); `valid`: the row
// exists. The slot's columns: col + j (col: its first, kN for none) or, interleaved staged rows,
// element_column(i, j, lane, rank). Elements past N, and a row that does not exist, come out 0.
// Where γ = 0: x̂ of the given x (normalised with the row's mean and rstd), or 0 without x
// (unrecoverable: that column's dγ and dx are made NaN elsewhere). No division by zero.
__device__ __forceinline__ i64 recover_column(i64 col, int i, int j, int lane, unsigned rank) {
  if constexpr (kInterleaved) return element_column(i, j, lane, rank);
  else return col + j < kN ? col + j : kN;
}
// β of the slot at those columns (0 without β and past N).
__device__ __forceinline__ void slot_beta(const BackwardParams& p, i64 col, int i, int lane, unsigned rank,
                                          float (&beta)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) beta[j] = 0.f;
  if constexpr (kHasBias) {
    if constexpr (kInterleaved) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const i64 c = recover_column(col, i, j, lane, rank);
        if (c < kN) beta[j] = to_f32(p.fused.bias[c]);
      }
    } else if (col < kN) {
      load_slot<TW, kVec, kAlign, kN>(p.fused.bias, col, beta);
    }
  }
}
__device__ __forceinline__ void recover_slot(const BackwardParams& p, bool valid, i64 row, i64 col, int i, int lane,
                                             unsigned rank, const float (&y)[kVec], const float (&gamma)[kVec],
                                             float mean, float rstd, float (&xhat)[kVec],
                                             const float (*read_beta)[kVec] = nullptr) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) xhat[j] = 0.f;
  if (!valid) return;
  float beta[kVec];
  if (read_beta) {  // β read already (RowTopWeights)
#pragma unroll
    for (int j = 0; j < kVec; ++j) beta[j] = (*read_beta)[j];
  } else {
    slot_beta(p, col, i, lane, rank, beta);
  }
  bool zero = false;  // a γ = 0 in the slot (or past N, where γ reads as 0)
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const bool z = kHasWeight && gamma[j] == 0.f;
    // __fdividef: within 2 ulp, without the IEEE division's slow path (|γ| < 2^126 always).
    xhat[j] = kHasWeight ? __fdividef(y[j] - beta[j], z ? 1.f : gamma[j]) : y[j] - beta[j];
    zero |= z;
  }
  if constexpr (kHasWeight) {
    if (zero) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const i64 c = recover_column(col, i, j, lane, rank);
        if (gamma[j] == 0.f || c >= kN)
          xhat[j] = c >= kN                ? 0.f
                    : p.fused.fallback_x ? normalized(to_f32(p.fused.fallback_x[row * p.fused.fallback_x_stride + c]),
                                                      mean, rstd)
                                         : 0.f;
      }
    }
  }
}

// Packed rows (kPackedRows) keep the recovered x̂ of a slot in place of y for the dx pass,
// rounded to y's type, with NaN where the column is unrecoverable (so dx is NaN there from the
// formula): that pass then reads neither β nor γ a second time for it, and divides nothing.
// The rounding is y's own (x̂ = (y − β)/γ is no more exact than y); fp16 keeps finite values
// finite (|x̂| ≤ √N for a true x̂: larger ones come from γ ≈ 0 and were imprecise already).
// `w`: the slot's γ (stored_weight_to_gamma), `col`: its first column (kN for none).
template <class T>
__device__ __forceinline__ float finite_stays_finite(float v, T) { return v; }
__device__ __forceinline__ float finite_stays_finite(float v, f16) {
  return fabsf(v) > 65504.f && fabsf(v) != __int_as_float(0x7f800000) ? copysignf(65504.f, v) : v;
}
template <class Packed>
__device__ __forceinline__ void hold_recovered_slot(const BackwardParams& p, i64 col, const float (&w)[kVec],
                                                    const float (&xhat)[kVec], Packed& held) {
  float v[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    v[j] = xhat[j];
    if constexpr (kHasWeight)
      if (w[j] == 0.f && col + j < kN && !p.fused.fallback_x) v[j] = unrecoverable_value();
    v[j] = finite_stays_finite(v[j], TX{});
  }
  held.pack(v);
}

// An unrecoverable column's dγ (or its partial sums): NaN, for the thread's columns.
__device__ __forceinline__ void poison_unrecoverable_dgamma(const BackwardParams& p, float (&dw)[kIters][kVec],
                                                            int lane, unsigned rank) {
  if constexpr (kRecompute && kHasWeight) {
    if (p.fused.fallback_x) return;
#pragma unroll
    for (int i = 0; i < kIters; ++i)
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        if (unrecoverable_column(p, element_column(i, j, lane, rank))) dw[i][j] = unrecoverable_value();
  }
}

// fused:end
// kMerge > 1: the kMerge blocks of a cluster each worked their own rows, and each has put its
// sums of columns [first, first + count) at the same place of `local` (its shared memory).
// Block r adds, for its share of those columns, the blocks' values in rank order (the same
// bits whatever the timing) and writes them as the cluster's partial row: kMerge times fewer
// partial rows to write and to reduce, which at few rows outweigh x, dy and dx together.
__device__ __forceinline__ void store_merged_sums(const float* local, i64 first, i64 count, float* partial_row,
                                                  TW* gradient) {
  cluster_barrier();  // every block's values are in place
  const i64 share = (count + kMerge - 1) / kMerge;
  const i64 begin = (i64)cluster_rank() * share;
  const i64 end = begin + share < count ? begin + share : count;
  for (i64 c = begin + threadIdx.x; c < end; c += kThreads) {
    float v[kMerge];  // every block's value in flight at once, then added in rank order
#pragma unroll
    for (unsigned r = 0; r < kMerge; ++r) v[r] = load_from_block(local + c, r);
    float sum = v[0];
#pragma unroll
    for (unsigned r = 1; r < kMerge; ++r) sum += v[r];
    put_group_sum(partial_row, gradient, first + c, sum);
  }
  cluster_barrier();  // no block refills `local`, or leaves, while another still reads it
}

// Columns of dγ (or dβ) that meet at a time when merged blocks each hold one row's worth in
// registers: at most 32 KB of shared memory however long the row (8192 columns, the longest
// few-rows rows the heuristic merges, in one pass: each pass costs two cluster barriers).
constexpr i64 kMergeColumns = kN < 8192 ? kN : 8192;

// The thread's slots of its merged row group's dγ or dβ: kMergeColumns at a time through
// shared memory (one row per block: each column has one owner).
__device__ __forceinline__ void write_merged_sum(const float (&acc)[kIters][kVec], float* partial_row, TW* gradient,
                                                 int lane, unsigned rank) {
  __shared__ float local[kMergeColumns];
  for (i64 first = 0; first < kN; first += kMergeColumns) {
#pragma unroll
    for (int i = 0; i < kIters; ++i)
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const i64 col = element_column(i, j, lane, rank);
        if (col < kN && col >= first && col < first + kMergeColumns) local[col - first] = acc[i][j];
      }
    store_merged_sums(local, first, kN - first < kMergeColumns ? kN - first : kMergeColumns, partial_row, gradient);
  }
}

// The thread's slots of its row group's dγ/dβ (one row per block: each column has one owner).
__device__ __forceinline__ void write_group_sums(const BackwardParams& p, const float (&dw)[kIters][kVec],
                                                 const float (&db)[kIters][kVec], int lane, unsigned rank) {
  if constexpr (kMerge > 1) {
    if constexpr (kHasWeight) write_merged_sum(dw, weight_partial_row(p), p.dweight, lane, rank);
    if constexpr (kHasBias) write_merged_sum(db, bias_partial_row(p), p.dbias, lane, rank);
    return;
  }
  float* dw_out = weight_partial_row(p);
  float* db_out = bias_partial_row(p);
  if constexpr (kPhased) {
    // The slot's elements at the row columns they hold (phased_element), one at a time.
    const unsigned phase = row_phase(p);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const i64 col = slot_column(i, lane, rank);
      if (col >= kRowSpan) continue;
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        if (phased_element<kVec, kN>(col - phase, j)) {
          if constexpr (kHasWeight) put_group_sum(dw_out, p.dweight, col - phase + j, dw[i][j]);
          if constexpr (kHasBias) put_group_sum(db_out, p.dbias, col - phase + j, db[i][j]);
        }
    }
    return;
  }
  if constexpr (!kInterleaved) {
    // Into partial rows, a slot's kVec neighbouring columns go out as vector stores: scalar
    // stores at a lane stride of kVec floats cost kVec times the L2 write transactions.
    if (p.partial && !kGridCluster) {
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const i64 col = slot_column(i, lane, rank);
        if (col < kN) {
          if constexpr (kHasWeight) store_slot<float, kVec, kPartialAlign, kN>(dw_out, col, dw[i]);
          if constexpr (kHasBias) store_slot<float, kVec, kPartialAlign, kN>(db_out, col, db[i]);
        }
      }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < kIters; ++i)
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const i64 col = element_column(i, j, lane, rank);
      if (col < kN) {
        if constexpr (kHasWeight) put_group_sum(dw_out, p.dweight, col, dw[i][j]);
        if constexpr (kHasBias) put_group_sum(db_out, p.dbias, col, db[i][j]);
      }
    }
}

// Row sums of the whole row: within a cluster, each block posts its sums to every block
// (ClusterPost) and every block adds them in rank order, so all blocks hold the same bits.
// Posting against a cluster barrier then reads of the other blocks' shared memory (bench
// --graph, M·N = 64 Mi, bench/NOTES.md entry 39): LN bf16 65536 176 → 164 µs, 262144 256 →
// 215; RMS bf16 262144 241 → 183; LN fp32 65536 320 → 291. kPosted = false keeps the barrier
// and reads: parallel norms' register clusters, which spill already and spilled more posting
// (RMS bf16 262144 with parallel norms 423 → 460 µs).
// kMailboxBlocks: a grid cluster meets in global memory instead (GridSums).
// T: float2, or float4 for two rows' sums at once (paired rows).
template <bool kPosted = true, int kMailboxBlocks = kGridCluster ? 1 : kCluster, class T = float2>
struct ClusterSums {
  ClusterPost<T, kMailboxBlocks> post;
  // Every thread calls it before the first row (a cluster barrier).
  __device__ __forceinline__ void start() {
    if constexpr (kPosted && kMailboxBlocks > 1) post.start();
  }
  __device__ __forceinline__ T sum(T block_sum, unsigned rank) {
    if constexpr (kMailboxBlocks == 1) {
      return block_sum;
    } else if constexpr (kPosted) {
      const T* all = post.exchange(block_sum, rank);
      T total = all[0];
#pragma unroll
      for (int r = 1; r < kMailboxBlocks; ++r) add_to(total, all[r]);
      return total;
    } else {
      // Two slots in turn, so one cluster barrier a row: a block cannot write slot b again
      // before every block has passed the next barrier, i.e. finished reading b.
      __shared__ T slots[2];
      const int b = post.meetings++ & 1;
      if (threadIdx.x == 0) slots[b] = block_sum;
      cluster_barrier_publish(threadIdx.x == 0);
      T total = load_from_block(&slots[b], 0);
#pragma unroll
      for (unsigned r = 1; r < kMailboxBlocks; ++r) add_to(total, load_from_block(&slots[b], r));
      return total;
    }
  }
};

// Row sums of the whole row when the cluster is the grid (kGridCluster, sm_80+): the launch is
// one cooperative cluster of kCluster blocks, each owning a column slice of every row, and they
// meet in global memory. p.partial is the meeting place: a ring of kGridRing slots, each
// [kCluster] float2 block sums, then kGridRing arrival counters that the host zeroes before
// the launch (runtime/launch_plan.h: grid_sums_bytes). A block posts each row's sums without
// waiting, and writes a row's dx kGridDefer rows later; it waits once per kGridBatch rows, for
// all of them at once, so the meeting's round trips through L2 are paid once a batch and its
// latency hides behind the rows worked meanwhile. The ring is long enough that no slot is
// counted or rewritten early: a block posts row j only after a wait that covered row
// j − D − B, so every block had posted it and read every row up to j − 2D − 2B. Every block
// adds the kCluster sums in the same order (a warp's strided sums, then a butterfly), so all
// hold the same bits.
constexpr int kGridDefer = kGridCluster ? kStages - 2 : 0;  // rows between a row's sums and its dx
constexpr int kGridBatch = kGridDefer + 1;                   // rows per wait
constexpr int kGridRing = 2 * (kGridDefer + kGridBatch) + 2;

struct GridSums {
  float2* sums;       // [kGridRing][kCluster]
  unsigned* arrived;  // [kGridRing]: block arrivals at the rows of each slot
  unsigned rank;
  float2* totals;     // shared [kGridBatch]: the batch's row sums, for the whole block

  // Row number k of the launch (0, 1, ...): its block sum, by thread 0 (the block's sum is
  // the same in every thread).
  __device__ __forceinline__ void post(i64 k, float2 block_sum) {
    if (threadIdx.x != 0) return;
    const int slot = (int)(k % kGridRing);
    sums[slot * kCluster + rank] = block_sum;
    // Release: the sum is visible to whoever sees the arrival.
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(arrived + slot) : "memory");
  }

  // Rows k .. k + count − 1 (k a multiple of kGridBatch): waits until every block has posted
  // them, then adds each row's sums (a warp a row) into totals[0 .. count).
  __device__ __forceinline__ void wait(i64 k, int count) {
    if (threadIdx.x == 0)
      for (int r = 0; r < count; ++r) {
        const int slot = (int)((k + r) % kGridRing);
        const unsigned all = (unsigned)((k + r) / kGridRing + 1) * kCluster;
        unsigned seen;
        do {
          asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(arrived + slot) : "memory");
        } while (seen < all);
      }
    __syncthreads();
    const int lane = (int)threadIdx.x % 32;
    for (int r = (int)threadIdx.x / 32; r < count; r += kThreads / 32) {
      const float2* row_sums = sums + (int)((k + r) % kGridRing) * kCluster;
      // Every load first (one round trip to L2), then the additions in a fixed order.
      constexpr int kPerLane = (kCluster + 31) / 32;
      float2 v[kPerLane];
#pragma unroll
      for (int i = 0; i < kPerLane; ++i) {
        const int b = i * 32 + lane;
        v[i] = make_float2(0.f, 0.f);
        if (b < kCluster)
          asm volatile("ld.global.cg.v2.f32 {%0, %1}, [%2];" : "=f"(v[i].x), "=f"(v[i].y) : "l"(row_sums + b));
      }
#pragma unroll
      for (int i = 1; i < kPerLane; ++i) add_to(v[0], v[i]);
      v[0] = group_sum<32>(v[0]);
      if (lane == 0) totals[r] = v[0];
    }
    __syncthreads();
  }
};

// ---- dγ/dβ sums of a thread's columns --------------------------------------------------------
// A thread works the same columns of every row it takes (one row per block or cluster, or rows
// of the same width), so it sums dγ (and dβ) of its columns by itself over its rows: in
// registers, or with kSharedSums in a region of its block's shared memory that only it
// touches. Shared sums cost a shared-memory round trip per slot and row, but free kIters·kVec
// registers per sum, which the row itself then uses: more of it held per thread, more bytes in
// flight per SM. The additions are the same and in the same order, so the bits are the same;
// no barrier is needed, as each thread reads back only what it wrote.
typedef SlotPieces<kVec, kThreadsPerRow> SumPieces;  // templates/common.cuh: the layout of the regions
// Floats of one sum's region: every slot a thread of the block may hold.
constexpr i64 kSharedSumFloats = kSharedSums || kSharedWeights ? (i64)kIters * kVec * kThreadsPerRow : 0;
static_assert(!kSharedSums || kRowsPerBlock == 1, "shared sums: one row per block, so each column has one owner");

struct SlotSums {
  float reg[kIters][kVec];  // without kSharedSums
  float* shared;            // with: this sum's region, kSharedSumFloats floats

  // Starts at zero; with kSharedSums the sum lives at `region`, which `next` then points past.
  __device__ __forceinline__ void start(float*& next) {
    if constexpr (kSharedSums) {
      shared = next;
      next += kSharedSumFloats;
      float zero[kVec];
#pragma unroll
      for (int j = 0; j < kVec; ++j) zero[j] = 0.f;
#pragma unroll
      for (int i = 0; i < kIters; ++i) SumPieces::store(shared, i, threadIdx.x % kThreadsPerRow, zero);
    } else {
#pragma unroll
      for (int i = 0; i < kIters; ++i)
#pragma unroll
        for (int j = 0; j < kVec; ++j) reg[i][j] = 0.f;
    }
  }
  __device__ __forceinline__ void add(int i, const float (&v)[kVec]) {
    if constexpr (kSharedSums) {
      SumPieces::add(shared, i, threadIdx.x % kThreadsPerRow, v);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) reg[i][j] += v[j];
    }
  }
  // Slot i's sum read, to be added to in registers and written back (paired rows: one round
  // trip for both rows, the terms added in row order as add would).
  __device__ __forceinline__ void read(int i, float (&out)[kVec]) const {
    if constexpr (kSharedSums) {
      SumPieces::load(shared, i, threadIdx.x % kThreadsPerRow, out);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) out[j] = reg[i][j];
    }
  }
  __device__ __forceinline__ void write(int i, const float (&v)[kVec]) {
    if constexpr (kSharedSums) {
      SumPieces::store(shared, i, threadIdx.x % kThreadsPerRow, v);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) reg[i][j] = v[j];
    }
  }
  // The thread's sums, slot by slot (after its last row).
  __device__ __forceinline__ void get(float (&out)[kIters][kVec]) const {
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if constexpr (kSharedSums) {
        SumPieces::load(shared, i, threadIdx.x % kThreadsPerRow, out[i]);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) out[i][j] = reg[i][j];
      }
    }
  }
};

// A thread's column sums, dγ and dβ (with parallel norms also the second norm's), those the
// problem has, each from zero, with shared sums in consecutive regions from `region` on.
struct ColumnSums {
  SlotSums dw, db;
// fused:begin
  SlotSums dw1, db1;  // the second norm's (kParallel)
// fused:end

  __device__ __forceinline__ void start(float* region) {
    if constexpr (kHasWeight) dw.start(region);
    if constexpr (kHasBias) db.start(region);
// fused:begin
    if constexpr (kParallel && kHasWeight) dw1.start(region);
    if constexpr (kParallel && kHasBias) db1.start(region);
// fused:end
  }
  // Slot i's terms of one row: dy·x̂ for dγ, dy for dβ.
  __device__ __forceinline__ void add(int i, const float (&dy_xhat)[kVec], const float (&dy)[kVec]) {
    if constexpr (kHasWeight) dw.add(i, dy_xhat);
    if constexpr (kHasBias) db.add(i, dy);
  }
  // Slot i's dγ and dβ sums read into registers and written back (SlotSums::read, write); a sum
  // the problem lacks reads as zeros (added to, never written).
  __device__ __forceinline__ void read(int i, float (&dw_out)[kVec], float (&db_out)[kVec]) const {
#pragma unroll
    for (int j = 0; j < kVec; ++j) dw_out[j] = db_out[j] = 0.f;
    if constexpr (kHasWeight) dw.read(i, dw_out);
    if constexpr (kHasBias) db.read(i, db_out);
  }
  __device__ __forceinline__ void write(int i, const float (&dw_in)[kVec], const float (&db_in)[kVec]) {
    if constexpr (kHasWeight) dw.write(i, dw_in);
    if constexpr (kHasBias) db.write(i, db_in);
  }
  __device__ __forceinline__ void get(float (&dw_out)[kIters][kVec], float (&db_out)[kIters][kVec]) const {
    if constexpr (kHasWeight) dw.get(dw_out);
    if constexpr (kHasBias) db.get(db_out);
  }
// fused:begin
  // The second norm's (kParallel): dy1·x̂ and dy1.
  __device__ __forceinline__ void add_second(int i, const float (&dy1_xhat)[kVec], const float (&dy1)[kVec]) {
    if constexpr (kHasWeight) dw1.add(i, dy1_xhat);
    if constexpr (kHasBias) db1.add(i, dy1);
  }
  __device__ __forceinline__ void get_second(float (&dw_out)[kIters][kVec], float (&db_out)[kIters][kVec]) const {
    if constexpr (kHasWeight) dw1.get(dw_out);
    if constexpr (kHasBias) db1.get(db_out);
  }
// fused:end
};

// ---- rows held in registers ------------------------------------------------------------------
// With kPackedRows (codegen::packs_rows: shared sums, 16-bit rows) rows are held as stored
// (half the registers of fp32) and widened slot by slot when worked, twice a row: x̂ and
// g = dy·γ are recomputed for dx instead of kept, and γ is read again (from L1), as is β for x̂
// recovered from y. What an option of the problem brings to a row as it is loaded, where it is
// row-sized (the gate's input, a second norm's gradient), is held packed beside x and dy, so no
// row is read twice. A thread then holds 32 elements of x and dy in 32 registers, so two blocks
// of 512 threads per SM keep 64 KB of the rows in flight.

// One row's slice as a thread holds it: its slots of x and dy, widened to fp32 (or packed, as
// stored), and the row's statistics. Rows past the end read as zeros (their threads still
// join the barriers).
struct RowSlice {
  float x[kPackedRows ? 1 : kIters][kVec];
  float dy[kPackedRows ? 1 : kIters][kVec];
  PackedSlot<TX, kVec, kSlotAlign, kN> x_packed[kPackedRows ? kIters : 1];
  PackedSlot<TDY, kVec, kSlotAlign, kN> dy_packed[kPackedRows ? kIters : 1];
// fused:begin
  PackedSlot<TX, kVec, kAlign, kN> z_packed[kHoldsGate ? kIters : 1];  // the gate's input (kHoldsGate)
  PackedSlot<TDY, kVec, kAlign, kN> dy1_packed[kHoldsSecondDy ? kIters : 1];  // the second norm's dy1
// fused:end
  float mean, rstd;
};

// A packed slot of global memory (zero bits where not `inside`): predicated where N leaves no
// partial slot (PackedSlot::load_if). Rows loaded ahead keep load()'s branch: predicated, LN bf16
// 12288's prefetching blocks of 768 threads spilled and ran 24% slower; so do rows held with the
// gate's z (RMS bf16 16384 with a gate: 4 bytes spilled, 5% slower; session 48).
constexpr bool kPredicatedPackedLoads = !kPrefetch
// fused:begin
                                        && !kHoldsGate
// fused:end
    ;
template <class Slot, class T>
__device__ __forceinline__ void load_packed_slot(Slot& slot, const T* row, i64 col, bool inside) {
  if constexpr (kPredicatedPackedLoads) slot.load_if(row, col, inside);
  else slot.load(row, inside ? col : kN);
}

__device__ __forceinline__ void load_row_slice(const BackwardParams& p, i64 row, int lane, unsigned rank,
                                               RowSlice& r) {
  const bool valid = row < p.m;
  r.mean = 0.f;
  r.rstd = 0.f;
  if (valid) {
    r.rstd = p.rstd[row];
    if constexpr (kLayerNorm) r.mean = p.mean[row];
  }
  // Slots past the row's end, or of a row past M, read as 0. 16-bit rows load them under a
  // predicate, not a branch each (load_slot_if says why), each at a constant offset from the
  // thread's first (slot_column clamps the column, which would cost every slot an address of
  // its own). fp32 rows keep the branch: predicated, fp32 rows of 12288-262144 measured 3-9%
  // slower (bench/NOTES.md entry 48). There the row's addresses are held once where written
  // inside each slot's branch NVVM would compute them again (a 64-bit multiply a slot); but not
  // for rows held in slots of several elements, where the held pointers cost LN fp32 12288 (168
  // registers) a spill.
  constexpr bool kPredicatedLoads = sizeof(TX) == 2 && sizeof(TDY) == 2;
  constexpr bool kRowPointersHeld = kPackedRows || kVec == 1;
  const TX* x_row = p.x + row * p.x_stride;
  const TDY* dy_row = p.dy + row * p.dy_stride;
  if constexpr (kPhased) {
    // The row's chunks from the boundary φ elements before it (slot_column counts the span).
    const unsigned phase = row_phase(p);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const i64 col = slot_column(i, lane, rank);
      const bool on = valid && col < kRowSpan;
      if constexpr (kPackedRows && kPrefetch) {
        // Loaded ahead: whole chunks, made the row where worked (complete_phased_row).
        r.x_packed[i].load_phased_chunk(x_row - phase + col, col - phase, on, row == p.m - 1);
        r.dy_packed[i].load_phased_chunk(dy_row - phase + col, col - phase, on, row == p.m - 1);
      } else if constexpr (kPackedRows) {
        r.x_packed[i].load_phased(x_row - phase + col, col - phase, on);
        r.dy_packed[i].load_phased(dy_row - phase + col, col - phase, on);
      } else {
        load_phased_slot<TX, kVec, kN>(x_row - phase + col, col - phase, on, r.x[i]);
        load_phased_slot<TDY, kVec, kN>(dy_row - phase + col, col - phase, on, r.dy[i]);
      }
    }
    return;
  }
  const i64 first_col = ((i64)rank * kSlotsPerBlock + lane) * kVec;
#pragma unroll
  for (int i = 0; i < kIters; ++i) {
    const i64 col = slot_column(i, lane, rank);
    const bool inside = valid && col < kN;
    if constexpr (kPackedRows) {
      // Out of range: zero bits, which every dtype reads as 0.
      load_packed_slot(r.x_packed[i], x_row, col, inside);
      load_packed_slot(r.dy_packed[i], dy_row, col, inside);
// fused:begin
      if constexpr (kHoldsGate) load_packed_slot(r.z_packed[i], p.fused.z + row * p.fused.z_stride, col, inside);
      if constexpr (kHoldsSecondDy) load_packed_slot(r.dy1_packed[i], p.fused.dy1 + row * p.fused.dy1_stride, col, inside);
// fused:end
      continue;
    } else if constexpr (kPredicatedLoads) {
      const i64 at = first_col + (i64)i * kThreadsPerRow * kVec;  // col where inside
      load_slot_if<TX, kVec, kAlign, kN>(x_row + at, col, inside, r.x[i]);
      load_slot_if<TDY, kVec, kAlign, kN>(dy_row + at, col, inside, r.dy[i]);
    } else if (inside) {
      load_slot<TX, kVec, kAlign, kN>(kRowPointersHeld ? x_row : p.x + row * p.x_stride, col, r.x[i]);
      load_slot<TDY, kVec, kAlign, kN>(kRowPointersHeld ? dy_row : p.dy + row * p.dy_stride, col, r.dy[i]);
    } else {
#pragma unroll
      for (int j = 0; j < kVec; ++j) r.x[i][j] = r.dy[i][j] = 0.f;
    }
// fused:begin
    if (inside) gate_inputs(p.fused, row, col, r.x[i], r.dy[i]);
// fused:end
  }
}

// A prefetching block's packed phased row as the row (PackedSlot::complete_phased: the tensors'
// last chunks element by element, the neighbours' elements zeroed), where it is first worked:
// zeroed where loaded, the selects would wait for the next row's loads there (the forward's
// prefetching phased blocks, so, lost in tuning; bench/results/2026-11-29-h200-backward-whole-
// chunks/call2).
__device__ __forceinline__ void complete_phased_row(const BackwardParams& p, i64 row, int lane, unsigned rank,
                                                    RowSlice& r) {
  if constexpr (kPhased && kPackedRows && kPrefetch) {
    const unsigned phase = row_phase(p);
    const TX* x_row = p.x + row * p.x_stride;
    const TDY* dy_row = p.dy + row * p.dy_stride;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const i64 col = slot_column(i, lane, rank);
      const bool on = row < p.m && col < kRowSpan;
      r.x_packed[i].complete_phased(x_row - phase + col, col - phase, on, row == p.m - 1);
      r.dy_packed[i].complete_phased(dy_row - phase + col, col - phase, on, row == p.m - 1);
    }
  }
}

// fused:begin
// The second norm's slot i of a row the thread holds (kParallel): its dy1 from the packed row
// (kHoldsSecondDy) or read, and g1 (templates/fused_ops.cuh, second_norm_slot).
__device__ __forceinline__ void row_second_norm_slot(const FusedParams& f, const RowSlice& r, int i, bool present,
                                                     i64 row, i64 col, float (&dy1)[kVec], float (&g1)[kVec]) {
  if constexpr (kHoldsSecondDy) held_second_norm_slot(f, r.dy1_packed[i], present, col, dy1, g1);
  else second_norm_slot(f, present, row, col, dy1, g1);
}
// fused:end

// γ of the thread's slot i as stored (1 without γ, or past N), from memory.
__device__ __forceinline__ void stored_slot_gamma(const BackwardParams& p, int i, int lane, unsigned rank,
                                                  float (&w)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) w[j] = 1.f;
  if constexpr (kHasWeight) {
    const i64 col = slot_column(i, lane, rank);
    if constexpr (kPhased) {
      // The columns the slot holds in the thread's rows, element by element (1 outside the row).
      const i64 first = col - row_phase(p);
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        if (col < kRowSpan && phased_element<kVec, kN>(first, j)) w[j] = to_f32(p.weight[first + j]);
    } else if (col < kN) {
      load_slot<TW, kVec, kAlign, kN>(p.weight, col, w);
    }
  }
}

// A staged row's slice of x and dy in shared memory (the stages, below): each tensor's
// slice as 16-byte pieces, the thread that reads slot k copying its pieces.
template <class T>
struct StagePlan {
  static constexpr int kPiecesPerSlot = kVec * (int)sizeof(T) > 16 ? kVec * (int)sizeof(T) / 16 : 1;
  static constexpr i64 kBytes = (kSliceCols * (i64)sizeof(T) + (kShifted ? 16 : 0) + 15) / 16 * 16;
  static constexpr i64 kPieces = kBytes / 16;
  static constexpr i64 kPiecesPerPass = (i64)kThreadsPerRow * kPiecesPerSlot;
  static constexpr int kPasses = (int)((kPieces + kPiecesPerPass - 1) / kPiecesPerPass);
};
// Matches dynamic_shared_bytes in codegen/launch_config.cpp.
constexpr i64 kStageXBytes = StagePlan<TX>::kBytes;
constexpr i64 kStageBytes = kStageXBytes + StagePlan<TDY>::kBytes;

// Whether a thread may read stage pieces another copied (rows aligned to less than 16 bytes, or
// slots of x or dy not whole 16-byte pieces): staged rows then take a barrier a row (below),
// and rows are not copied ahead (kSharedPrefetch).
constexpr bool kStageBarrier = kShifted || kVec * sizeof(TX) % 16 != 0 || kVec * sizeof(TDY) % 16 != 0;

// ---- rows in registers prefetched through shared memory (kSharedPrefetch) ---------------------
// The next kSharedPrefetch rows of a row group are copied into as many stages (cp.async) while
// the row held in registers is worked, and each row is read from its stage into registers once.
// So memory is busy through the row's reductions, cluster meeting and dx stores, without the
// second copy of the row in registers that kPrefetch needs (a 16-bit row of 16 elements a thread
// is 16 registers more, which blocks of 1024 threads, or two of 512 an SM, do not have). A
// thread reads only the pieces it copied itself (rows aligned to 16 bytes, slots of 16 bytes of
// x and dy), so the stages need no barrier; it copies the next row into a stage only after the
// row's first pass has used every value it read there.
constexpr int kStageCount = kStaged ? kStages : kSharedPrefetch;
static_assert(kSharedPrefetch == 0 || (kRowInRegisters && !kStaged && !kPrefetch && kRowsPerBlock == 1 && !kPhased &&
                                       !kShifted && !kStageBarrier && !kGridCluster),
              "shared prefetch: one aligned row a block (or cluster) in registers, 16-byte slots of x and dy");

struct RowStages {
  int next;          // the stage of the next row to read
  float mean, rstd;  // that row's statistics, loaded a row ahead

  // Stage s: the kSharedPrefetch stages are the start of the block's dynamic shared memory.
  static __device__ __forceinline__ unsigned char* stage(int s) {
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    return dynamic_shared + s * kStageBytes;
  }

  __device__ __forceinline__ void load_statistics(const BackwardParams& p, i64 row) {
    mean = rstd = 0.f;
    if (row < p.m) {
      rstd = p.rstd[row];
      if constexpr (kLayerNorm) mean = p.mean[row];
    }
  }
  // The group's first kSharedPrefetch rows, from `first` on, a copy group each.
  __device__ __forceinline__ void start(const BackwardParams& p, i64 first, i64 step, int lane, unsigned rank) {
    next = 0;
#pragma unroll
    for (int s = 0; s < kSharedPrefetch; ++s) {
      copy_row(p, first + s * step, s, lane, rank);
      cp_async_commit();
    }
    load_statistics(p, first);
  }
  // Row `row` (the oldest copy group) into registers as load_row_slice would load it.
  __device__ __forceinline__ void take(const BackwardParams& p, i64 row, i64 step, int lane, unsigned rank,
                                       RowSlice& r) {
    cp_async_wait<(kSharedPrefetch > 0 ? kSharedPrefetch - 1 : 0)>();
    const bool valid = row < p.m;
    const unsigned char* here = stage(next);
    // Indexed by the row's columns, as the slots are.
    const TX* x_row = reinterpret_cast<const TX*>(here) - (i64)rank * kSliceCols;
    const TDY* dy_row = reinterpret_cast<const TDY*>(here + kStageXBytes) - (i64)rank * kSliceCols;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const i64 col = slot_column(i, lane, rank);
      const bool inside = valid && col < kN;
      if constexpr (kPackedRows) {
        r.x_packed[i].load(x_row, inside ? col : kN);  // out of range: zero bits
        r.dy_packed[i].load(dy_row, inside ? col : kN);
      } else if (inside) {
        load_slot<TX, kVec, 16, kN>(x_row, col, r.x[i]);
        load_slot<TDY, kVec, 16, kN>(dy_row, col, r.dy[i]);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) r.x[i][j] = r.dy[i][j] = 0.f;
      }
    }
    r.mean = mean;
    r.rstd = rstd;
    load_statistics(p, row + step);
  }
  // Row `row`'s slots of the thread into stage s: whole 16-byte pieces (the rows are aligned
  // and N a multiple of kVec), each where the thread reads it. One address a tensor, and the
  // slots at constant offsets from it (slot_column's clamp would give each an address of its own).
  static __device__ __forceinline__ void copy_row(const BackwardParams& p, i64 row, int s, int lane, unsigned rank) {
    if (row >= p.m) return;
    const i64 first = ((i64)rank * kSlotsPerBlock + lane) * kVec;  // the thread's first column
    const TX* x_at = p.x + row * p.x_stride + first;
    const TDY* dy_at = p.dy + row * p.dy_stride + first;
    unsigned char* const here = stage(s) + lane * (kVec * (int)sizeof(TX));
    unsigned char* const dy_here = stage(s) + kStageXBytes + lane * (kVec * (int)sizeof(TDY));
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      constexpr int kStride = kThreadsPerRow * kVec;  // columns between a thread's slots
      if (first + (i64)i * kStride >= kN) break;      // (columns past the slice: the next block's)
      if (kSlotsPerBlock % kThreadsPerRow != 0 && i * kThreadsPerRow + lane >= kSlotsPerBlock) break;
#pragma unroll
      for (int k = 0; k < StagePlan<TX>::kPiecesPerSlot; ++k)
        cp_async_16(here + i * kStride * (int)sizeof(TX) + 16 * k, x_at + i * kStride + k * (16 / (int)sizeof(TX)));
#pragma unroll
      for (int k = 0; k < StagePlan<TDY>::kPiecesPerSlot; ++k)
        cp_async_16(dy_here + i * kStride * (int)sizeof(TDY) + 16 * k,
                    dy_at + i * kStride + k * (16 / (int)sizeof(TDY)));
    }
  }
  // Row `row` into the stage just read (its values used), as the newest copy group.
  __device__ __forceinline__ void refill(const BackwardParams& p, i64 row, int lane, unsigned rank) {
    copy_row(p, row, next, lane, rank);
    cp_async_commit();
    next = next + 1 == kSharedPrefetch ? 0 : next + 1;
  }
};

// With kSharedWeights the thread's γ sits in the block's dynamic shared memory (at its start,
// or after the stages of staged rows), laid out as shared sums are (SumPieces),
// written once by the thread that reads it:
// from L1 a slot's fp32 γ (32 bytes) is two loads half of whose sectors go unused, twice a
// row. L1 keeps one copy for all of an SM's blocks of the same columns, shared memory one a
// block: codegen::with_shared_weights says where it pays (bench/NOTES.md entries 29 and 33).
constexpr i64 kSharedWeightBytes = kSharedWeights ? kSharedSumFloats * (i64)sizeof(float) : 0;
constexpr i64 kSharedWeightOffset = kStageCount * kStageBytes;
static_assert(!kSharedWeights || !kInterleaved, "interleaved staged slots read γ element by element");
// The block's dynamic shared memory, in order: the stages (of staged rows or kSharedPrefetch), γ
// held there, the shared sums (codegen/launch_config.cpp, dynamic_shared_bytes, counts the same).
__device__ __forceinline__ float* shared_sums_base(unsigned char* dynamic_shared) {
  return reinterpret_cast<float*>(dynamic_shared + kSharedWeightOffset + kSharedWeightBytes);
}
__device__ __forceinline__ void hold_weights(const BackwardParams& p, unsigned char* dynamic_shared, int lane,
                                             unsigned rank) {
  if constexpr (kSharedWeights) {
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      float w[kVec];
      stored_slot_gamma(p, i, lane, rank, w);
      SumPieces::store(reinterpret_cast<float*>(dynamic_shared + kSharedWeightOffset), i, threadIdx.x % kThreadsPerRow, w);
    }
  }
}

// γ of the thread's slot i as hold_weights put it in shared memory.
__device__ __forceinline__ void held_slot_gamma(int i, float (&w)[kVec]) {
  extern __shared__ __align__(16) unsigned char dynamic_shared[];
  SumPieces::load(reinterpret_cast<const float*>(dynamic_shared + kSharedWeightOffset), i, threadIdx.x % kThreadsPerRow, w);
}

// γ of the thread's slot i, as the math uses it (1 without γ). Re-read for every row (from
// shared memory with kSharedWeights, else L1/L2): registers are worth more to the row itself.
__device__ __forceinline__ void slot_gamma(const BackwardParams& p, int i, int lane, unsigned rank, float (&w)[kVec]) {
  if constexpr (kSharedWeights) held_slot_gamma(i, w);
  else stored_slot_gamma(p, i, lane, rank, w);
// fused:begin
  stored_weight_to_gamma(w);
// fused:end
}

// fused:begin
// Recompute's γ and β of the thread's slots, read at the top of each row instead of at each
// slot's turn (kEarlyWeights: rows held in registers as fp32). Left to itself ptxas can issue
// them and the slot's y inside the slot's branch just before their use, so that a row makes one
// trip to memory per slot (LN bf16 4095: 75% long-scoreboard stalls, bench/NOTES.md entry 70);
// the __syncwarp keeps them above the first slot's math. Elsewhere the schedule it leaves is
// the slower one (entry 71): a config's choice.
struct RowTopWeights {
  float gamma[kEarlyWeights ? kIters : 1][kVec], beta[kEarlyWeights ? kIters : 1][kVec];
  __device__ __forceinline__ void read(const BackwardParams& p, int lane, unsigned rank) {
    if constexpr (kEarlyWeights) {
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        slot_gamma(p, i, lane, rank, gamma[i]);
        slot_beta(p, slot_column(i, lane, rank), i, lane, rank, beta[i]);
      }
      __syncwarp();
    }
  }
};
static_assert(!kEarlyWeights || (kRecompute && kRowInRegisters && !kStaged && !kPackedRows),
              "early weights: recompute rows held in registers as fp32 (check_launch_config)");
// fused:end

template <int kUnused = 0>
__device__ __forceinline__ void backward_rows_in_registers(const BackwardParams& p) {
  __shared__ RowSums reduce_buffer[2][kRowsPerBlock][TurnReducer::kWarps];
  TurnReducer reducer{reduce_buffer, 0};
  ClusterSums<
// fused:begin
      !kParallel &&
// fused:end
          true,
      kGridCluster ? 1 : kCluster, RowSums>
      cluster{{0}};
  const int row_in_block = threadIdx.x / kThreadsPerRow;
  const int lane = threadIdx.x % kThreadsPerRow;
  // The rank bounded for ptxas (cluster_rank_below) where that measured faster: blocks without
  // shared sums (fp32 65536: LN 354 → 322 us, RMS 349 → 314; 16384: 302 → 288; with a
  // residual or x̂ recomputed 4-9%). With shared sums fp32 LN 131072 and 262144 ran 9-11%
  // slower bounded, and LayerNorm's parallel norms 7% (fp32 65536); the rest alike
  // (bench/NOTES.md entry 38).
  constexpr bool kRankBounded = !kSharedSums
// fused:begin
                                && !kParallel
// fused:end
      ;
  const unsigned rank = kCluster == 1 ? 0 : kRankBounded ? cluster_rank_below<kCluster>() : cluster_rank();

  extern __shared__ __align__(16) unsigned char dynamic_shared[];  // the stages ahead, γ, the sums (each if held)
  hold_weights(p, dynamic_shared, lane, rank);
  cluster.start();
  ColumnSums column_sums;
  column_sums.start(shared_sums_base(dynamic_shared));

  // With kPrefetch the next row's loads are issued before this row's reductions and barriers,
  // so memory stays busy while the row sums travel; without, each row is loaded when its turn
  // comes. Paired rows (kRowsAtOnce = 2) take a turn's two rows together (kPairedRows above).
  const i64 step = row_workers(p) * kRowsPerBlock;
  RowSlice cur[kRowsAtOnce];
  if constexpr (kPrefetch) load_row_slice(p, row_worker(p) * kRowsPerBlock + row_in_block, lane, rank, cur[0]);
  RowStages ahead;  // kSharedPrefetch: the rows copied ahead
  if constexpr (kSharedPrefetch > 0) ahead.start(p, row_worker(p), step, lane, rank);
  for (i64 base = row_worker(p) * kRowsPerBlock; base < p.m; base += kRowsAtOnce * step) {
    const i64 row = base + row_in_block;  // the turn's rows: row + k·step, k < kRowsAtOnce
    const bool valid = row < p.m;          // every thread takes part in the row reduction's barriers
    if constexpr (kSharedPrefetch > 0) ahead.take(p, row, step, lane, rank, cur[0]);
    else if constexpr (!kPrefetch)
#pragma unroll
      for (int k = 0; k < kRowsAtOnce; ++k) load_row_slice(p, row + k * step, lane, rank, cur[k]);
    RowSlice next;
    if constexpr (kPrefetch) load_row_slice(p, row + step, lane, rank, next);
// fused:begin
    RowTopWeights top;
    top.read(p, lane, rank);
// fused:end
#pragma unroll
    for (int k = 0; k < kRowsAtOnce; ++k) complete_phased_row(p, row + k * step, lane, rank, cur[k]);
    float2 sums[kRowsAtOnce];  // each row's Σg and Σg·x̂ over the thread's slots
#pragma unroll
    for (int k = 0; k < kRowsAtOnce; ++k) sums[k] = make_float2(0.f, 0.f);
    // Each row's statistics taken before the passes change the rows they sit beside: read from
    // the row inside them, NVVM kept every slot's column alive to the dx pass (RMS fp32 50001 in
    // 416-thread clusters of 8: 232 bytes spilled against 36).
    float row_mean[kRowsAtOnce], row_rstd[kRowsAtOnce];
#pragma unroll
    for (int k = 0; k < kRowsAtOnce; ++k) row_mean[k] = cur[k].mean, row_rstd[k] = cur[k].rstd;
// fused:begin
    float held_g[kHoldsSecondDy ? kRowsAtOnce : 1][kHoldsSecondDy ? kIters : 1][kVec];  // pass 1's g, for dx
// fused:end
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      float w[kVec];
      float dw_sum[kVec], db_sum[kVec];  // paired rows: the slot's column sums, read once for both
      if constexpr (kRowsAtOnce > 1) column_sums.read(i, dw_sum, db_sum);
#pragma unroll
      for (int k = 0; k < kRowsAtOnce; ++k) {
        const i64 row_k = row + k * step;
        const bool valid_k = k == 0 ? valid : row_k < p.m;
        // The slot's x and dy, which this pass turns into x̂ and g = dy·γ for the dx pass (in
        // place unless packed: then that pass recomputes them).
        float x_wide[kVec], dy_wide[kVec];
        if constexpr (kPackedRows) {
          cur[k].x_packed[i].unpack(x_wide);
          cur[k].dy_packed[i].unpack(dy_wide);
// fused:begin
          if constexpr (kHoldsGate) {
            float z[kVec];  // zeros past the row's end and for rows past M: silu(0)·0 = 0
            cur[k].z_packed[i].unpack(z);
            apply_gate(z, x_wide, dy_wide);
          }
// fused:end
        }
        float (&xh)[kVec] = kPackedRows ? x_wide : cur[k].x[kPackedRows ? 0 : i];
        float (&g)[kVec] = kPackedRows ? dy_wide : cur[k].dy[kPackedRows ? 0 : i];
// fused:begin
        if constexpr (kEarlyWeights) {
#pragma unroll
          for (int j = 0; j < kVec; ++j) w[j] = top.gamma[i][j];
        } else
// fused:end
        if (k == 0) slot_gamma(p, i, lane, rank, w);  // once for the turn's rows
// fused:begin
        float dy1[kVec], g1[kVec];
        row_second_norm_slot(p.fused, cur[k], i, valid_k, row_k, slot_column(i, lane, rank), dy1, g1);
        if constexpr (kRecompute) {
          // xh holds y: the loop below with x̂ recovered from it (an unrecoverable column's x̂ is
          // 0 here, its dγ made NaN after the last row).
          float xhat[kVec], dwi[kVec];
          recover_slot(p, valid_k, row_k, slot_column(i, lane, rank), i, lane, rank, xh, w, row_mean[k],
                       row_rstd[k], xhat, kEarlyWeights ? &top.beta[i] : nullptr);
          if constexpr (kPackedRows) hold_recovered_slot(p, slot_column(i, lane, rank), w, xhat, cur[k].x_packed[i]);
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            const float dy = g[j];
            dwi[j] = dy * xhat[j];
            const float gw = dy * w[j];
            xh[j] = xhat[j];
            sums[k].x += gw;
            sums[k].y += gw * xhat[j];
          }
          column_sums.add(i, dwi, g);
#pragma unroll
          for (int j = 0; j < kVec; ++j) g[j] *= w[j];
          continue;
        }
// fused:end
        float dwi[kVec];
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const float xhat = normalized(xh[j], row_mean[k], row_rstd[k]);
          dwi[j] = g[j] * xhat;
          xh[j] = xhat;
        }
        // g is still dy here.
        if constexpr (kRowsAtOnce > 1) {
#pragma unroll
          for (int j = 0; j < kVec; ++j) {
            dw_sum[j] += dwi[j];
            db_sum[j] += g[j];
          }
        } else {
          column_sums.add(i, dwi, g);
        }
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const float xhat = xh[j];
          const float gw = g[j] * w[j];
          g[j] = gw;
// fused:begin
          if constexpr (kParallel) {
            // The row sums of g + g1, the gradient both norms send x̂, taken once.
            g[j] += g1[j];
            sums[k].x += g[j];
            sums[k].y += g[j] * xhat;
            dwi[j] = dy1[j] * xhat;
            if constexpr (kHoldsSecondDy) held_g[kHoldsSecondDy ? k : 0][kHoldsSecondDy ? i : 0][j] = g[j];
            continue;
          }
// fused:end
          sums[k].x += gw;
          sums[k].y += gw * xhat;
        }
// fused:begin
        if constexpr (kParallel) column_sums.add_second(i, dwi, dy1);
// fused:end
      }
      if constexpr (kRowsAtOnce > 1) column_sums.write(i, dw_sum, db_sum);
    }
    if constexpr (kSharedPrefetch > 0) ahead.refill(p, row + kSharedPrefetch * step, lane, rank);
    float2 totals[kRowsAtOnce];  // the turn's rows' sums over the whole row
    unpack_row_sums(cluster.sum(reducer.sum(pack_row_sums(sums), row_in_block, lane), rank), totals);
    float mean_g[kRowsAtOnce], mean_gx[kRowsAtOnce];
#pragma unroll
    for (int k = 0; k < kRowsAtOnce; ++k) {
      mean_g[k] = totals[k].x * kInvN;
      mean_gx[k] = totals[k].y * kInvN;
    }
    if (valid) {
      // Once a row, as in load_row_slice (an array of the turn's rows' pointers cost RMS fp32
      // 131072 with the gate 96 more bytes of spill loads).
      TDX* const dx_row = p.dx + row * p.dx_stride;
// fused:begin
      FusedSlotInputs ahead[kFusedReadAhead][kRowsAtOnce];  // read before the dx stores they precede
// fused:end
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const i64 col = slot_column(i, lane, rank);
// fused:begin
        if (kReadsFusedAhead && i % kFusedReadAhead == 0) {
#pragma unroll
          for (int a = 0; a < kFusedReadAhead; ++a) {
            const i64 col_a = slot_column(i + a, lane, rank);
            if (i + a >= kIters || col_a >= kRowSpan) continue;
#pragma unroll
            for (int k = 0; k < kRowsAtOnce; ++k)
              if (k == 0 || row + k * step < p.m) ahead[a][k] = read_fused_slot(p, row + k * step, col_a);
          }
        }
// fused:end
        if (col < kRowSpan) {
          float w[kVec];
          if constexpr (kPackedRows) slot_gamma(p, i, lane, rank, w);  // once for the turn's rows
#pragma unroll
          for (int k = 0; k < kRowsAtOnce; ++k) {
            const i64 row_k = row + k * step;
            if (k > 0 && row_k >= p.m) continue;  // the first row is checked above
            const float rstd = row_rstd[k];
            TDX* const dx_row_k = k == 0 ? dx_row : p.dx + row_k * p.dx_stride;
            float x_wide[kVec], g_wide[kVec];
// fused:begin
            GateHold held_gate;  // packed rows' z, x, dy and γ as held, for dz (kHoldsGate)
// fused:end
            if constexpr (kPackedRows) {
              // x̂ and g again, as pass 1 made them.
              cur[k].x_packed[i].unpack(x_wide);
// fused:begin
              if constexpr (kHoldsSecondDy) {
                // g = dy·γ + dy1·γ1 as pass 1 held it.
#pragma unroll
                for (int j = 0; j < kVec; ++j) g_wide[j] = held_g[kHoldsSecondDy ? k : 0][kHoldsSecondDy ? i : 0][j];
              } else
// fused:end
              {
                cur[k].dy_packed[i].unpack(g_wide);
// fused:begin
                if constexpr (kHoldsGate) hold_and_apply_gate(cur[k].z_packed[i], w, x_wide, g_wide, held_gate);
// fused:end
              }
// fused:begin
              if constexpr (kRecompute) {
                // x_wide is x̂ as pass 1 held it (hold_recovered_slot).
              } else
// fused:end
              {
#pragma unroll
                for (int j = 0; j < kVec; ++j) x_wide[j] = normalized(x_wide[j], row_mean[k], rstd);
              }
// fused:begin
              if constexpr (kHoldsSecondDy) {
                // pass 1's g has γ and γ1 in it.
              } else
// fused:end
              {
#pragma unroll
                for (int j = 0; j < kVec; ++j) g_wide[j] *= w[j];
              }
            }
            const float (&xh)[kVec] = kPackedRows ? x_wide : cur[k].x[kPackedRows ? 0 : i];
            const float (&g)[kVec] = kPackedRows ? g_wide : cur[k].dy[kPackedRows ? 0 : i];
            float out[kVec];
#pragma unroll
            for (int j = 0; j < kVec; ++j) out[j] = input_grad(g[j], xh[j], rstd, mean_g[k], mean_gx[k]);
// fused:begin
            // Packed rows hold pass 1's x̂, NaN where unrecoverable (hold_recovered_slot); rows
            // held as fp32 keep its 0 there, so fused_input_grad finds those columns from γ.
            if constexpr (kReadsFusedAhead)
              fused_input_grad<kPackedRows>(p, row_k, col, xh, out, ahead[i % kFusedReadAhead][k], held_gate);
            else
              fused_input_grad<kPackedRows>(p, row_k, col, xh, out, held_gate);
// fused:end
            if constexpr (kPhased) {
              const unsigned phase = row_phase(p);
              store_phased_slot<TDX, kVec, kN>(dx_row_k - phase + col, col - phase, out);
            } else {
              store_slot<TDX, kVec, kAlign, kN>(dx_row_k, col, out);
            }
          }
        }
      }
    }
    if constexpr (kPrefetch) cur[0] = next;
  }
  if constexpr (kSharedPrefetch > 0) cp_async_wait<0>();  // the groups past the last row are empty

  if constexpr (kAccumulate) {
    // One partial row per row group (each block of a cluster writes its slice); a launch of a
    // single row group writes dγ/dβ themselves and needs no reduction. Several rows per block
    // meet in shared memory first, added in row_in_block order.
    float dw_sum[kIters][kVec], db_sum[kIters][kVec];
    column_sums.get(dw_sum, db_sum);
// fused:begin
    poison_unrecoverable_dgamma(p, dw_sum, lane, rank);
    float dw1_sum[kIters][kVec], db1_sum[kIters][kVec];
    if constexpr (kParallel) column_sums.get_second(dw1_sum, db1_sum);
// fused:end
    if constexpr (kRowsPerBlock == 1) {
      write_group_sums(p, dw_sum, db_sum, lane, rank);
// fused:begin
      if constexpr (kParallel) write_group_sums(second_norm_params(p), dw1_sum, db1_sum, lane, rank);
// fused:end
    } else {
      __shared__ float merged[kRowsPerBlock > 1 ? kN : 1];
      auto merge_and_store = [&](float (&acc)[kIters][kVec], float* out, TW* gradient) {
        for (int r = 0; r < kRowsPerBlock; ++r) {
          if (row_in_block == r) {
#pragma unroll
            for (int i = 0; i < kIters; ++i) {
              const i64 col = slot_column(i, lane, rank);
#pragma unroll
              for (int j = 0; j < kVec; ++j)
                if (col + j < kN) merged[col + j] = (r == 0 ? 0.f : merged[col + j]) + acc[i][j];
            }
          }
          __syncthreads();
        }
        if constexpr (kMerge > 1) {
          store_merged_sums(merged, 0, kN, out, gradient);
        } else {
          for (i64 c = threadIdx.x; c < kN; c += kThreads) put_group_sum(out, gradient, c, merged[c]);
          __syncthreads();
        }
      };
      if constexpr (kHasWeight) merge_and_store(dw_sum, weight_partial_row(p), p.dweight);
      if constexpr (kHasBias) merge_and_store(db_sum, bias_partial_row(p), p.dbias);
// fused:begin
      if constexpr (kParallel) {
        const BackwardParams second = second_norm_params(p);
        if constexpr (kHasWeight) merge_and_store(dw1_sum, weight_partial_row(second), second.dweight);
        if constexpr (kHasBias) merge_and_store(db1_sum, bias_partial_row(second), second.dbias);
      }
// fused:end
    }
  }
  // No block may leave while another of its cluster may still read its shared memory.
  if constexpr (kCluster > 1) cluster_barrier();
}

// ---- rows staged in shared memory ------------------------------------------------------------
// The next row's x and dy are copied into shared memory (cp.async, 16-byte pieces) while this
// row is worked from the other stage. Registers hold only the dγ/dβ accumulators and the slot
// at hand, so more rows are in flight per SM than registers alone allow, and a row too long
// for one block is shared by a cluster, each block staging its slice.
//
// A slice whose address is not 16-byte aligned (odd N in 16-bit types) is copied from the
// aligned address below it and lands shifted by that address mod 16. The pieces cut by the
// slice's ends are copied whole as well: their extra bytes belong to the neighbouring row (or
// row padding) of the same tensor and are never used. Only the tensor's own first and last
// bytes have no neighbour, so there (row 0's head, the last row's tail) the cut piece is
// copied element by element. When every thread copies exactly the pieces it later reads
// (aligned rows, 16-byte slots of both x and dy), the stages need no barrier of their own;
// otherwise one per row (kStageBarrier, above). kStages rows are in flight: kStages − 1 copying
// while one is worked.

__device__ __forceinline__ int stage_shift(const void* slice) {
  return kShifted ? (int)((unsigned long long)slice & 15) : 0;
}

// Starts copying `count` elements from `src` into `stage`, at byte stage_shift(src) onwards.
// Piece k (16 bytes) goes to the thread that reads slot k / kPiecesPerSlot. `tensor_start` /
// `tensor_end`: the slice begins / ends the tensor, so no byte beyond it may be read.
template <class T>
__device__ __forceinline__ void stage_slice(const T* src, i64 count, unsigned char* stage, int lane, bool tensor_start,
                                            bool tensor_end) {
  typedef StagePlan<T> Plan;
  const int shift = stage_shift(src);
  const i64 end = shift + count * (i64)sizeof(T);
  const char* aligned = reinterpret_cast<const char*>(src) - shift;
#pragma unroll
  for (int i = 0; i < Plan::kPasses; ++i)
#pragma unroll
    for (int c = 0; c < Plan::kPiecesPerSlot; ++c) {
      const i64 b = (((i64)i * kThreadsPerRow + lane) * Plan::kPiecesPerSlot + c) * 16;
      if (b >= end) continue;
      if ((b >= shift || !tensor_start) && (b + 16 <= end || !tensor_end)) {
        cp_async_16(stage + b, aligned + b);
      } else {
#pragma unroll
        for (int e = 0; e < 16 / (int)sizeof(T); ++e) {
          const i64 at = b + e * (i64)sizeof(T);
          if (at >= shift && at < end) *reinterpret_cast<T*>(stage + at) = *reinterpret_cast<const T*>(aligned + at);
        }
      }
    }
}

// Slot `local` of the slice as staged; elements past N read as 0 (the stage holds stale bytes there).
template <class T>
__device__ __forceinline__ void read_staged(const unsigned char* stage, int shift, i64 local, i64 col,
                                            float (&out)[kVec]) {
  VecAccess<T, kVec, kShifted ? kAlign : 16>::load(reinterpret_cast<const T*>(stage + shift) + local * kVec, out);
  if (col + kVec > kN) {
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if (col + j >= kN) out[j] = 0.f;
  }
}

template <int kUnused = 0>
__device__ __forceinline__ void backward_rows_staged(const BackwardParams& p) {
  static_assert(kRowsPerBlock == 1, "staged rows take a whole block (or cluster) each");
  static_assert(kStages >= 2, "one stage worked while the next is copied");
  extern __shared__ __align__(16) unsigned char dynamic_shared[];  // the stages, then γ held, then shared sums
  unsigned char* const stages = dynamic_shared;                   // [kStages][kStageBytes]
  __shared__ float2 reduce_buffer[2][1][Reducer::kWarps];
  Reducer reducer{reduce_buffer, 0};
  ClusterSums<> cluster{{0}};
  const int lane = block_thread<kThreads>();
  const unsigned rank = kGridCluster ? blockIdx.x : kCluster > 1 ? cluster_rank() : 0;
  __shared__ float2 grid_totals[kGridBatch];
  GridSums grid{reinterpret_cast<float2*>(p.partial), reinterpret_cast<unsigned*>(p.partial + 2 * kGridRing * kCluster),
                rank, grid_totals};
  const i64 col0 = (i64)rank * kSliceCols;
  const i64 slice_cols = col0 < kN ? (kN - col0 < kSliceCols ? kN - col0 : kSliceCols) : 0;

  auto stage_row = [&](i64 row, unsigned char* stage) {
    if (row >= p.m) return;
    const bool start = row == 0 && col0 == 0, end = row == p.m - 1 && col0 + slice_cols == kN;
    stage_slice(p.x + row * p.x_stride + col0, slice_cols, stage, lane, start, end);
    stage_slice(p.dy + row * p.dy_stride + col0, slice_cols, stage + kStageXBytes, lane, start, end);
  };

  hold_weights(p, stages, lane, rank);
  cluster.start();
  ColumnSums column_sums;
  column_sums.start(shared_sums_base(stages));

  // A staged row as its two passes read it.
  struct StagedRow {
    i64 row;
    const unsigned char* here;  // its stage
    int x_shift, dy_shift;
    float mean, rstd;
  };
  auto staged_row = [&](i64 row, int stage, float mean, float rstd) {
    return StagedRow{row, stages + stage * kStageBytes, stage_shift(p.x + row * p.x_stride + col0),
                     stage_shift(p.dy + row * p.dy_stride + col0), mean, rstd};
  };
  const TW* weight_lane = kHasWeight ? p.weight + col0 + lane : nullptr;
  const int lane_limit = (int)slice_cols - lane;  // interleaved: element at offset `at` exists if at < this
// fused:begin
  // The second norm's dy1 and g1 = dy1·γ1 of slot i of a row (kParallel), laid out as `slot`
  // lays the row's elements; read from memory, not staged.
  auto second_slot = [&](i64 row, int i, float (&dy1)[kVec], float (&g1)[kVec]) {
    if constexpr (kInterleaved) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const int at = interleaved_at(i, j);
        dy1[j] = g1[j] = 0.f;
        if (at < lane_limit) g1[j] = second_norm_element(p.fused, row, col0 + lane + at, dy1[j]);
      }
    } else {
      second_norm_slot(p.fused, true, row, slot_column(i, lane, rank), dy1, g1);
    }
  };
// fused:end
  // Reads slot i of a row from its stage: x̂ and g = dy·γ, and dy itself (0 past the slice).
  auto slot = [&](const StagedRow& r, int i, float (&xhat)[kVec], float (&gw)[kVec], float (&dy)[kVec]) {
    float x[kVec], w[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) w[j] = 1.f;
    if constexpr (kInterleaved) {
      // Element j of slot i is column col0 + lane + at: one base per tensor, constant offsets.
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const int at = interleaved_at(i, j);
        x[j] = dy[j] = 0.f;
        if (at < lane_limit) {
          x[j] = to_f32(reinterpret_cast<const TX*>(r.here + r.x_shift)[lane + at]);
          dy[j] = to_f32(reinterpret_cast<const TDY*>(r.here + kStageXBytes + r.dy_shift)[lane + at]);
          if constexpr (kHasWeight) w[j] = to_f32(weight_lane[at]);
// fused:begin
          gate_input_element(p.fused, r.row, col0 + lane + at, x[j], dy[j]);
// fused:end
        }
      }
    } else {
      const i64 col = slot_column(i, lane, rank);
      const i64 local = (i64)i * kThreadsPerRow + lane;
      read_staged<TX>(r.here, r.x_shift, local, col, x);
      read_staged<TDY>(r.here + kStageXBytes, r.dy_shift, local, col, dy);
      if constexpr (kSharedWeights) held_slot_gamma(i, w);
      else if constexpr (kHasWeight) load_slot<TW, kVec, kAlign, kN>(p.weight, col, w);
// fused:begin
      gate_inputs(p.fused, r.row, col, x, dy);
// fused:end
    }
// fused:begin
    stored_weight_to_gamma(w);
    if constexpr (kRecompute) {
      // x holds y: x̂ recovered from it (an unrecoverable column's dγ is made NaN after the last row).
      recover_slot(p, true, r.row, slot_column(i, lane, rank), i, lane, rank, x, w, r.mean, r.rstd, xhat);
#pragma unroll
      for (int j = 0; j < kVec; ++j) gw[j] = dy[j] * w[j];
      return;
    }
// fused:end
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      xhat[j] = normalized(x[j], r.mean, r.rstd);
      gw[j] = dy[j] * w[j];
    }
// fused:begin
    if constexpr (kParallel) {
      float dy1[kVec], g1[kVec];
      second_slot(r.row, i, dy1, g1);
#pragma unroll
      for (int j = 0; j < kVec; ++j) gw[j] += g1[j];
    }
// fused:end
  };
  // A contiguous slot past the slice is skipped whole; interleaved ones mask each element.
  auto slot_unused = [&](int i) { return !kInterleaved && slot_column(i, lane, rank) >= kN; };

  // Pass 1: dγ/dβ, and the block's share of the row sums.
  auto row_sums = [&](const StagedRow& r) {
    float2 sums = make_float2(0.f, 0.f);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (slot_unused(i)) continue;
      float xhat[kVec], gw[kVec], dy[kVec], dwi[kVec];
      slot(r, i, xhat, gw, dy);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        dwi[j] = dy[j] * xhat[j];
        sums.x += gw[j];
        sums.y += gw[j] * xhat[j];
      }
      column_sums.add(i, dwi, dy);
// fused:begin
      if constexpr (kParallel && kAccumulate) {
        float dy1[kVec], g1[kVec];
        second_slot(r.row, i, dy1, g1);
#pragma unroll
        for (int j = 0; j < kVec; ++j) dwi[j] = dy1[j] * xhat[j];
        column_sums.add_second(i, dwi, dy1);
      }
// fused:end
    }
    return reducer.sum(sums, 0, lane);
  };
  // Pass 2: dx from the whole row's sums.
  auto write_dx = [&](const StagedRow& r, float2 sums) {
    const i64 row = r.row;
    const float mean_g = sums.x * kInvN, mean_gx = sums.y * kInvN;
    TDX* dx_row = p.dx + row * p.dx_stride;
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      if (slot_unused(i)) continue;
      float xhat[kVec], gw[kVec], dy[kVec], out[kVec];
      slot(r, i, xhat, gw, dy);
#pragma unroll
      for (int j = 0; j < kVec; ++j) out[j] = input_grad(gw[j], xhat[j], r.rstd, mean_g, mean_gx);
      if constexpr (kInterleaved) {
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const int at = interleaved_at(i, j);
// fused:begin
          if (at < lane_limit) fused_input_grad_element(p, row, col0 + lane + at, xhat[j], out[j]);
// fused:end
          if (at < lane_limit) dx_row[col0 + lane + at] = from_f32<TDX>(out[j]);
        }
      } else {
// fused:begin
        fused_input_grad(p, row, slot_column(i, lane, rank), xhat, out);
// fused:end
        store_slot<TDX, kVec, kAlign, kN>(dx_row, slot_column(i, lane, rank), out);
      }
    }
  };

  // Every iteration that works a row commits exactly one copy group (empty past the last
  // row), so "this row's group has landed" is "at most kAhead − 1 (or kAhead, after
  // committing the next) are pending". Stages hold, in order: the kGridDefer rows whose dx
  // waits for the grid's sums, the row worked, and kAhead rows being copied.
  constexpr int kAhead = kStages - 1 - kGridDefer;
  static_assert(kAhead >= 1, "a row is copied while one is worked");
  const i64 step = row_workers(p);
  const i64 first = row_worker(p);
  i64 row = first;
#pragma unroll
  for (int s = 0; s < kAhead; ++s) {
    stage_row(row + s * step, stages + s * kStageBytes);
    cp_async_commit();
  }
  int stage = 0;
  float mean = 0.f, rstd = 0.f;
  if (row < p.m) {
    rstd = p.rstd[row];
    if constexpr (kLayerNorm) mean = p.mean[row];
  }
  for (; row < p.m + kGridDefer * step; row += step) {
    const i64 next = row + step;
    if (kGridDefer == 0 || row < p.m) {
      // The stage freed last iteration: its row's dx is written.
      const int free_stage = (stage + kAhead) % kStages;
      unsigned char* ahead = stages + free_stage * kStageBytes;
      if constexpr (kStageBarrier) {
        cp_async_wait<kAhead - 1>();
        __syncthreads();  // this row's pieces are visible to all, and nobody reads `ahead` any more
        stage_row(row + kAhead * step, ahead);
        cp_async_commit();
      } else {
        stage_row(row + kAhead * step, ahead);
        cp_async_commit();
        cp_async_wait<kAhead>();  // this row's copies have landed; later rows' may still fly
      }
      float next_mean = 0.f, next_rstd = 0.f;
      if (next < p.m) {
        next_rstd = p.rstd[next];
        if constexpr (kLayerNorm) next_mean = p.mean[next];
      }
      const StagedRow r = staged_row(row, stage, mean, rstd);
      const float2 block_sums = row_sums(r);
      if constexpr (kGridCluster) {
        grid.post((row - first) / step, block_sums);
      } else {
        write_dx(r, cluster.sum(block_sums, rank));
      }
      mean = next_mean;
      rstd = next_rstd;
    }
    if constexpr (kGridCluster) {
      // The row posted kGridDefer rows ago: its sums are (most likely) all in by now. The
      // first row of each batch waits for the whole batch.
      const i64 done = row - kGridDefer * step;
      if (done >= first) {
        const float done_rstd = p.rstd[done], done_mean = kLayerNorm ? p.mean[done] : 0.f;
        const i64 k = (done - first) / step;
        if (k % kGridBatch == 0) {
          const i64 rows = (p.m - first + step - 1) / step;
          grid.wait(k, (int)(rows - k < kGridBatch ? rows - k : kGridBatch));
        }
        write_dx(staged_row(done, (stage + kStages - kGridDefer) % kStages, done_mean, done_rstd),
                 grid_totals[k % kGridBatch]);
      }
    }
    stage = stage + 1 == kStages ? 0 : stage + 1;
  }
  cp_async_wait<0>();
  float dw_sum[kIters][kVec], db_sum[kIters][kVec];
  column_sums.get(dw_sum, db_sum);
// fused:begin
  poison_unrecoverable_dgamma(p, dw_sum, lane, rank);
// fused:end
  if constexpr (kAccumulate) write_group_sums(p, dw_sum, db_sum, lane, rank);
// fused:begin
  if constexpr (kAccumulate && kParallel) {
    float dw1_sum[kIters][kVec], db1_sum[kIters][kVec];
    column_sums.get_second(dw1_sum, db1_sum);
    write_group_sums(second_norm_params(p), dw1_sum, db1_sum, lane, rank);
  }
// fused:end
  // No block may leave while another of its cluster may still read its shared memory.
  if constexpr (kCluster > 1 && !kGridCluster) cluster_barrier();
}

// ---- rows streamed twice (too long for registers) --------------------------------------------
// A template only so that it is compiled for the configs that use it.
template <int kRows = kRowsPerBlock>
__device__ __forceinline__ void backward_rows_streamed(const BackwardParams& p) {
  static_assert(kRows == 1 && kCluster == 1, "streamed rows take a whole block each");
  typedef RowReducer<kThreads, kRows> BlockReducer;
  __shared__ float2 reduce_buffer[2][kRows][BlockReducer::kWarps];
  BlockReducer reducer{reduce_buffer, 0};
  const int lane = threadIdx.x;
  const i64 group = row_group(p);
  float* dw_out = p.partial + group * kN;
  float* db_out = bias_partials(p) + group * kN;
// fused:begin
  const BackwardParams second = second_norm_params(p);  // kParallel: the second norm's partial rows
  float* dw1_out = second.partial + group * kN;
  float* db1_out = bias_partials(second) + group * kN;
// fused:end

  for (i64 row = group; row < p.m; row += row_groups(p)) {
    const bool first = row == group;  // the group's partial row starts from its first row
    const float rstd = p.rstd[row];
    const float mean = kLayerNorm ? p.mean[row] : 0.f;
    const TX* x_row = p.x + row * p.x_stride;
    const TDY* dy_row = p.dy + row * p.dy_stride;

    // Reads slot s of the row from memory: x̂, g = dy·γ, and dy itself.
    auto slot = [&](i64 col, float (&xhat)[kVec], float (&gw)[kVec], float (&dy)[kVec]) {
      float x[kVec], w[kVec];
      load_slot<TX, kVec, kAlign, kN>(x_row, col, x);
      load_slot<TDY, kVec, kAlign, kN>(dy_row, col, dy);
      if constexpr (kHasWeight) load_slot<TW, kVec, kAlign, kN>(p.weight, col, w);
// fused:begin
      if constexpr (kHasWeight) stored_weight_to_gamma(w);
      gate_inputs(p.fused, row, col, x, dy);
      if constexpr (kRecompute) {
        // x holds y: x̂ recovered from it (the loop below makes an unrecoverable column's dγ NaN).
        float gamma[kVec];
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          gamma[j] = kHasWeight ? w[j] : 1.f;
          gw[j] = dy[j] * gamma[j];
        }
        recover_slot(p, true, row, col, 0, lane, 0, x, gamma, mean, rstd, xhat);
        return;
      }
// fused:end
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        xhat[j] = normalized(x[j], mean, rstd);
        gw[j] = kHasWeight ? dy[j] * w[j] : dy[j];
      }
// fused:begin
      if constexpr (kParallel) {
        float dy1[kVec], g1[kVec];
        second_norm_slot(p.fused, true, row, col, dy1, g1);
#pragma unroll
        for (int j = 0; j < kVec; ++j) gw[j] += g1[j];
      }
// fused:end
    };

    float2 sums = make_float2(0.f, 0.f);
#pragma unroll 2
    for (i64 s = lane; s < kSlots; s += kThreads) {
      float xhat[kVec], gw[kVec], dy[kVec];
      slot(s * kVec, xhat, gw, dy);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        sums.x += gw[j];
        sums.y += gw[j] * xhat[j];
      }
    }
    sums = reducer.sum(sums, 0, lane);
    const float mean_g = sums.x * kInvN, mean_gx = sums.y * kInvN;

#pragma unroll 2
    for (i64 s = lane; s < kSlots; s += kThreads) {
      const i64 col = s * kVec;
      float xhat[kVec], gw[kVec], dy[kVec], out[kVec];
      slot(col, xhat, gw, dy);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        out[j] = input_grad(gw[j], xhat[j], rstd, mean_g, mean_gx);
        // The block owns its partial row and each column always falls to the same thread.
        if (col + j < kN) {
          if constexpr (kHasWeight) dw_out[col + j] = (first ? 0.f : dw_out[col + j]) + dy[j] * xhat[j];
          if constexpr (kHasBias) db_out[col + j] = (first ? 0.f : db_out[col + j]) + dy[j];
        }
      }
// fused:begin
      if constexpr (kParallel && kAccumulate) {
        float dy1[kVec], g1[kVec];
        second_norm_slot(p.fused, true, row, col, dy1, g1);
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          if (col + j < kN) {
            if constexpr (kHasWeight) dw1_out[col + j] = (first ? 0.f : dw1_out[col + j]) + dy1[j] * xhat[j];
            if constexpr (kHasBias) db1_out[col + j] = (first ? 0.f : db1_out[col + j]) + dy1[j];
          }
      }
      if constexpr (kRecompute && kHasWeight) {
        const unsigned unknown = unrecoverable_slot(p, col);
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          if ((unknown >> j) & 1u) dw_out[col + j] = unrecoverable_value();
      }
// fused:end
// fused:begin
      fused_input_grad(p, row, col, xhat, out);
// fused:end
      store_slot<TDX, kVec, kAlign, kN>(p.dx + row * p.dx_stride, col, out);
    }
  }
}

// The column pass's second kernel (kColumnPass > 0): defined in templates/column_pass.cuh,
// which follows in its sources only.
template <int kUnused>
__device__ void backward_columns(const BackwardParams& p);

}  // namespace nj

extern "C" __global__ void __launch_bounds__(nj::cfg::kThreads, nj::cfg::kMinBlocks)
nj_norm_backward(const nj::BackwardParams p) {
  if constexpr (nj::cfg::kColumnPass > 0) {
    nj::backward_columns<0>(p);  // waits for the row sums itself, after its first loads
  } else {
    nj::wait_for_prerequisite_grid();  // a dependent launch of the stream's previous kernel (sm_90)
    if constexpr (nj::cfg::kStaged) nj::backward_rows_staged<>(p);
    else if constexpr (nj::cfg::kRowInRegisters) nj::backward_rows_in_registers<>(p);
    else nj::backward_rows_streamed<>(p);
  }
}
