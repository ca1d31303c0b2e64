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
// Memory plan. A persistent grid: block b takes rows b·R, b·R + G·R, ... (R rows a block).
//   - Rows in registers (kRowInRegisters): the row is read once into registers; the mean is
//     reduced first, then Σ(x − mean)² from the registers (exact two-pass, no cancellation),
//     then y is written from them. Several rows a block (a warp or less per row) meet through
//     shuffles only; a row per block meets in shared memory (RowReducer).
//   - Streamed rows (too long for registers): one block a row, the row read twice. Pass 1:
//     each thread keeps Welford statistics of its own slots (count, mean, M2; each slot merged
//     in with Chan's formula); the block then adds n·mean to get the row's mean, and
//     M2 + n·(mean_t − mean)² to get its M2 (Chan's merge, written as two plain sums so the
//     deterministic RowReducer does it). Pass 2 reads x again (mostly from L2) and writes y.
namespace nj {
using namespace cfg;

// Field order and 8-byte fields match runtime/launch_params.h (ForwardParams).
struct ForwardParams {
  i64 m;
  const TX* x;
  i64 x_stride;
  const TW* weight;  // when kHasWeight
  const TW* bias;    // when kHasBias
  TX* y;             // y is stored in x's dtype
  i64 y_stride;
  float* mean;       // LayerNorm, or null: not saved
  float* rstd;       // or null: not saved
  double eps;
};

constexpr int kRowsPerBlock = kThreads / kThreadsPerRow;
constexpr i64 kSlots = (kN + kVec - 1) / kVec;  // vector slots per row
constexpr int kIters = (int)((kSlots + kThreadsPerRow - 1) / kThreadsPerRow);
constexpr float kInvN = 1.0f / (float)kN;

typedef RowReducer<kThreadsPerRow, kRowsPerBlock> Reducer;

// First column of a thread's i-th slot of the row, or kN when it has none.
__device__ __forceinline__ i64 forward_slot_column(int i, int lane) {
  const i64 s = (i64)i * kThreadsPerRow + lane;
  return s < kSlots ? s * kVec : kN;
}

// γ and β of a slot (1 and 0 without them), γ + 1 when stored zero-centred.
__device__ __forceinline__ void affine_slot(const ForwardParams& p, i64 col, float (&w)[kVec], float (&b)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    w[j] = 1.f;
    b[j] = 0.f;
  }
  if constexpr (kHasWeight) {
    load_slot<TW, kVec, kAlign, kN>(p.weight, col, w);
    if constexpr (kZeroCenteredWeight) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) w[j] += 1.f;
    }
  }
  if constexpr (kHasBias) load_slot<TW, kVec, kAlign, kN>(p.bias, col, b);
}

// y of one slot from x, the row's statistics, γ and β.
__device__ __forceinline__ void output_slot(const ForwardParams& p, i64 row, i64 col, const float (&x)[kVec],
                                            float mean, float rstd) {
  float w[kVec], b[kVec], y[kVec];
  affine_slot(p, col, w, b);
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const float xhat = kLayerNorm ? (x[j] - mean) * rstd : x[j] * rstd;
    y[j] = xhat * w[j] + b[j];
  }
  store_slot<TX, kVec, kAlign, kN>(p.y + row * p.y_stride, col, y);
}

__device__ __forceinline__ void save_statistics(const ForwardParams& p, i64 row, float mean, float rstd) {
  if constexpr (kLayerNorm) {
    if (p.mean) p.mean[row] = mean;
  }
  if (p.rstd) p.rstd[row] = rstd;
}

// ---- rows held in registers ------------------------------------------------------------------
template <int kUnused = 0>
__device__ __forceinline__ void forward_rows_in_registers(const ForwardParams& p) {
  __shared__ float2 reduce_buffer[2][kRowsPerBlock][Reducer::kWarps];
  Reducer reducer{reduce_buffer, 0};
  const int row_in_block = threadIdx.x / kThreadsPerRow;
  const int lane = threadIdx.x % kThreadsPerRow;
  const float eps = (float)p.eps;
  const i64 step = (i64)gridDim.x * kRowsPerBlock;
  for (i64 base = (i64)blockIdx.x * kRowsPerBlock; base < p.m; base += step) {
    const i64 row = base + row_in_block;
    const bool valid = row < p.m;  // every thread takes part in the reductions' barriers
    float x[kIters][kVec];
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const i64 col = forward_slot_column(i, lane);
      if (valid && col < kN) {
        load_slot<TX, kVec, kAlign, kN>(p.x + row * p.x_stride, col, x[i]);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) x[i][j] = 0.f;
      }
    }
    // Elements past N read as 0: they add nothing to Σx or Σx², but must be left out of Σ(x − mean)².
    float2 sums = make_float2(0.f, 0.f);
#pragma unroll
    for (int i = 0; i < kIters; ++i)
#pragma unroll
      for (int j = 0; j < kVec; ++j) sums.x += kLayerNorm ? x[i][j] : x[i][j] * x[i][j];
    sums = reducer.sum(sums, row_in_block, lane);
    float mean = 0.f, var;
    if constexpr (kLayerNorm) {
      mean = sums.x * kInvN;
      float2 squares = make_float2(0.f, 0.f);
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const i64 col = forward_slot_column(i, lane);
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const float d = col + j < kN ? x[i][j] - mean : 0.f;
          squares.x += d * d;
        }
      }
      var = reducer.sum(squares, row_in_block, lane).x * kInvN;
    } else {
      var = sums.x * kInvN;
    }
    const float rstd = rsqrtf(var + eps);
    if (valid) {
      if (lane == 0) save_statistics(p, row, mean, rstd);
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const i64 col = forward_slot_column(i, lane);
        if (col < kN) output_slot(p, row, col, x[i], mean, rstd);
      }
    }
  }
}

// ---- rows streamed twice (too long for registers) --------------------------------------------
// Welford statistics of some of a row's elements: count, mean, and M2 = Σ(x − mean)².
struct Welford {
  float n, mean, m2;
  // Chan et al.: merges in `count` elements of mean `mean_b` and M2 `m2_b`.
  __device__ __forceinline__ void merge(float count, float mean_b, float m2_b) {
    const float total = n + count;
    const float delta = mean_b - mean;
    const float share = count / total;
    mean += delta * share;
    m2 += m2_b + delta * delta * n * share;
    n = total;
  }
};

template <int kRows = kRowsPerBlock>
__device__ __forceinline__ void forward_rows_streamed(const ForwardParams& p) {
  static_assert(kRows == 1, "streamed rows take a whole block each");
  typedef RowReducer<kThreads, 1> BlockReducer;
  __shared__ float2 reduce_buffer[2][1][BlockReducer::kWarps];
  BlockReducer reducer{reduce_buffer, 0};
  const int lane = threadIdx.x;
  const float eps = (float)p.eps;
  for (i64 row = blockIdx.x; row < p.m; row += gridDim.x) {
    const TX* x_row = p.x + row * p.x_stride;
    float mean = 0.f, var;
    if constexpr (kLayerNorm) {
      Welford w{0.f, 0.f, 0.f};
#pragma unroll 2
      for (i64 s = lane; s < kSlots; s += kThreads) {
        const i64 col = s * kVec;
        float x[kVec];
        load_slot<TX, kVec, kAlign, kN>(x_row, col, x);
        const int count = kN - col < kVec ? (int)(kN - col) : kVec;
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < kVec; ++j) sum += x[j];
        const float slot_mean = sum / (float)count;
        float m2 = 0.f;
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          const float d = j < count ? x[j] - slot_mean : 0.f;
          m2 += d * d;
        }
        w.merge((float)count, slot_mean, m2);
      }
      mean = reducer.sum(make_float2(w.n * w.mean, 0.f), 0, lane).x * kInvN;
      const float d = w.mean - mean;
      var = reducer.sum(make_float2(w.m2 + w.n * d * d, 0.f), 0, lane).x * kInvN;
    } else {
      float2 sums = make_float2(0.f, 0.f);
#pragma unroll 2
      for (i64 s = lane; s < kSlots; s += kThreads) {
        float x[kVec];
        load_slot<TX, kVec, kAlign, kN>(x_row, s * kVec, x);
#pragma unroll
        for (int j = 0; j < kVec; ++j) sums.x += x[j] * x[j];
      }
      var = reducer.sum(sums, 0, lane).x * kInvN;
    }
    const float rstd = rsqrtf(var + eps);
    if (lane == 0) save_statistics(p, row, mean, rstd);
#pragma unroll 2
    for (i64 s = lane; s < kSlots; s += kThreads) {
      float x[kVec];
      load_slot<TX, kVec, kAlign, kN>(x_row, s * kVec, x);
      output_slot(p, row, s * kVec, x, mean, rstd);
    }
  }
}

}  // namespace nj

extern "C" __global__ void __launch_bounds__(nj::cfg::kThreads, nj::cfg::kMinBlocks)
nj_norm_forward(const nj::ForwardParams p) {
  if constexpr (nj::cfg::kRowInRegisters) nj::forward_rows_in_registers<>(p);
  else nj::forward_rows_streamed<>(p);
}
