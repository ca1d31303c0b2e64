// LayerNorm / RMSNorm backward: one row per group of kThreadsPerRow threads.
//
//   x̂  = (x − mean)·rstd                 RMSNorm: x̂ = x·rstd
//   g  = dy·γ                            no γ:    g = dy
//   dx = rstd·(g − mean_N(g) − x̂·mean_N(g·x̂))   RMSNorm: without the mean_N(g) term
//   dγ = Σ_rows dy·x̂        dβ = Σ_rows dy
//
// Memory plan. A persistent grid: block b takes rows b, b+G, ... (kRowsPerBlock rows at a
// time). The row is read once into registers (kRowInRegisters) or, for rows too long for
// registers, streamed twice: sums first, then dx (the second read mostly hits L2). dγ and dβ
// are summed per block in fp32 and written as one partial row per block into the workspace;
// nj_reduce_partials then adds the blocks' rows in block order, so the result is the same bits
// whatever the timing. No floating-point atomics anywhere.
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
  float* partial;      // [kHasWeight + kHasBias][gridDim.x][kN]: dγ rows, then dβ rows
};

constexpr int kRowsPerBlock = kThreads / kThreadsPerRow;
constexpr i64 kSlots = (kN + kVec - 1) / kVec;  // vector slots per row
constexpr int kIters = (int)((kSlots + kThreadsPerRow - 1) / kThreadsPerRow);
constexpr bool kAccumulate = kHasWeight || kHasBias;
constexpr float kInvN = 1.0f / (float)kN;

typedef RowReducer<kThreadsPerRow, kRowsPerBlock> Reducer;

__device__ __forceinline__ float normalized(float x, float mean, float rstd) {
  if constexpr (kLayerNorm) return (x - mean) * rstd;
  else return x * rstd;
}
__device__ __forceinline__ float input_grad(float g, float xhat, float rstd, float mean_g, float mean_gx) {
  if constexpr (kLayerNorm) return rstd * (g - mean_g - xhat * mean_gx);
  else return rstd * (g - xhat * mean_gx);
}

__device__ __forceinline__ float* bias_partials(const BackwardParams& p) {
  return p.partial + (kHasWeight ? (i64)gridDim.x * kN : 0);
}

// ---- rows held in registers ------------------------------------------------------------------
template <int kUnused = 0>
__device__ __forceinline__ void backward_rows_in_registers(const BackwardParams& p) {
  __shared__ float2 reduce_buffer[2][kRowsPerBlock][Reducer::kWarps];
  Reducer reducer{reduce_buffer, 0};
  const int row_in_block = threadIdx.x / kThreadsPerRow;
  const int lane = threadIdx.x % kThreadsPerRow;

  float dw[kIters][kVec], db[kIters][kVec];
#pragma unroll
  for (int i = 0; i < kIters; ++i)
#pragma unroll
    for (int j = 0; j < kVec; ++j) dw[i][j] = db[i][j] = 0.f;

  for (i64 base = (i64)blockIdx.x * kRowsPerBlock; base < p.m; base += (i64)gridDim.x * kRowsPerBlock) {
    const i64 row = base + row_in_block;
    const bool valid = row < p.m;  // every thread takes part in the row reduction's barriers
    float mean = 0.f, rstd = 0.f;
    float xh[kIters][kVec], g[kIters][kVec];
    if (valid) {
      rstd = p.rstd[row];
      if constexpr (kLayerNorm) mean = p.mean[row];
    }
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      const i64 col = ((i64)i * kThreadsPerRow + lane) * kVec;
      if (valid && col < kN) {
        load_slot<TX, kVec, kAlign, kN>(p.x + row * p.x_stride, col, xh[i]);
        load_slot<TDY, kVec, kAlign, kN>(p.dy + row * p.dy_stride, col, g[i]);
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j) xh[i][j] = g[i][j] = 0.f;
      }
    }
    float2 sums = make_float2(0.f, 0.f);
#pragma unroll
    for (int i = 0; i < kIters; ++i) {
      // γ is re-read for every row (from L1/L2): registers are worth more to the row itself.
      float w[kVec];
#pragma unroll
      for (int j = 0; j < kVec; ++j) w[j] = 1.f;
      if constexpr (kHasWeight) {
        const i64 col = ((i64)i * kThreadsPerRow + lane) * kVec;
        if (col < kN) load_slot<TW, kVec, kAlign, kN>(p.weight, col, w);
      }
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float xhat = normalized(xh[i][j], mean, rstd);
        const float dy = g[i][j];
        if constexpr (kHasWeight) dw[i][j] += dy * xhat;
        if constexpr (kHasBias) db[i][j] += dy;
        const float gw = dy * w[j];
        xh[i][j] = xhat;
        g[i][j] = gw;
        sums.x += gw;
        sums.y += gw * xhat;
      }
    }
    sums = reducer.sum(sums, row_in_block, lane);
    const float mean_g = sums.x * kInvN, mean_gx = sums.y * kInvN;
    if (valid) {
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const i64 col = ((i64)i * kThreadsPerRow + lane) * kVec;
        if (col < kN) {
          float out[kVec];
#pragma unroll
          for (int j = 0; j < kVec; ++j) out[j] = input_grad(g[i][j], xh[i][j], rstd, mean_g, mean_gx);
          store_slot<TDX, kVec, kAlign, kN>(p.dx + row * p.dx_stride, col, out);
        }
      }
    }
  }

  if constexpr (kAccumulate) {
    // One partial row per block. Several rows per block meet in shared memory first, added in
    // row_in_block order.
    float* dw_out = p.partial + (i64)blockIdx.x * kN;
    float* db_out = bias_partials(p) + (i64)blockIdx.x * kN;
    if constexpr (kRowsPerBlock == 1) {
#pragma unroll
      for (int i = 0; i < kIters; ++i) {
        const i64 col = ((i64)i * kThreadsPerRow + lane) * kVec;
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          if (col + j < kN) {
            if constexpr (kHasWeight) dw_out[col + j] = dw[i][j];
            if constexpr (kHasBias) db_out[col + j] = db[i][j];
          }
      }
    } else {
      __shared__ float merged[kRowsPerBlock > 1 ? kN : 1];
      auto merge_and_store = [&](float (&acc)[kIters][kVec], float* out) {
        for (int r = 0; r < kRowsPerBlock; ++r) {
          if (row_in_block == r) {
#pragma unroll
            for (int i = 0; i < kIters; ++i) {
              const i64 col = ((i64)i * kThreadsPerRow + lane) * kVec;
#pragma unroll
              for (int j = 0; j < kVec; ++j)
                if (col + j < kN) merged[col + j] = (r == 0 ? 0.f : merged[col + j]) + acc[i][j];
            }
          }
          __syncthreads();
        }
        for (i64 c = threadIdx.x; c < kN; c += kThreads) out[c] = merged[c];
        __syncthreads();
      };
      if constexpr (kHasWeight) merge_and_store(dw, dw_out);
      if constexpr (kHasBias) merge_and_store(db, db_out);
    }
  }
}

// ---- rows streamed twice (too long for registers) --------------------------------------------
// A template only so that it is compiled for the configs that use it.
template <int kRows = kRowsPerBlock>
__device__ __forceinline__ void backward_rows_streamed(const BackwardParams& p) {
  static_assert(kRows == 1, "streamed rows take a whole block each");
  typedef RowReducer<kThreads, kRows> BlockReducer;
  __shared__ float2 reduce_buffer[2][kRows][BlockReducer::kWarps];
  BlockReducer reducer{reduce_buffer, 0};
  const int lane = threadIdx.x;
  float* dw_out = p.partial + (i64)blockIdx.x * kN;
  float* db_out = bias_partials(p) + (i64)blockIdx.x * kN;

  for (i64 row = blockIdx.x; row < p.m; row += gridDim.x) {
    const bool first = row == blockIdx.x;  // the block's partial row starts from its first row
    const float rstd = p.rstd[row];
    const float mean = kLayerNorm ? p.mean[row] : 0.f;
    const TX* x_row = p.x + row * p.x_stride;
    const TDY* dy_row = p.dy + row * p.dy_stride;

    float2 sums = make_float2(0.f, 0.f);
#pragma unroll 2
    for (i64 s = lane; s < kSlots; s += kThreads) {
      const i64 col = s * kVec;
      float x[kVec], dy[kVec], w[kVec];
      load_slot<TX, kVec, kAlign, kN>(x_row, col, x);
      load_slot<TDY, kVec, kAlign, kN>(dy_row, col, dy);
      if constexpr (kHasWeight) load_slot<TW, kVec, kAlign, kN>(p.weight, col, w);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float xhat = normalized(x[j], mean, rstd);
        const float gw = kHasWeight ? dy[j] * w[j] : dy[j];
        sums.x += gw;
        sums.y += gw * xhat;
      }
    }
    sums = reducer.sum(sums, 0, lane);
    const float mean_g = sums.x * kInvN, mean_gx = sums.y * kInvN;

#pragma unroll 2
    for (i64 s = lane; s < kSlots; s += kThreads) {
      const i64 col = s * kVec;
      float x[kVec], dy[kVec], w[kVec], out[kVec];
      load_slot<TX, kVec, kAlign, kN>(x_row, col, x);
      load_slot<TDY, kVec, kAlign, kN>(dy_row, col, dy);
      if constexpr (kHasWeight) load_slot<TW, kVec, kAlign, kN>(p.weight, col, w);
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float xhat = normalized(x[j], mean, rstd);
        const float gw = kHasWeight ? dy[j] * w[j] : dy[j];
        out[j] = input_grad(gw, xhat, rstd, mean_g, mean_gx);
        // The block owns its partial row and each column always falls to the same thread.
        if (col + j < kN) {
          if constexpr (kHasWeight) dw_out[col + j] = (first ? 0.f : dw_out[col + j]) + dy[j] * xhat;
          if constexpr (kHasBias) db_out[col + j] = (first ? 0.f : db_out[col + j]) + dy[j];
        }
      }
      store_slot<TDX, kVec, kAlign, kN>(p.dx + row * p.dx_stride, col, out);
    }
  }
}

}  // namespace nj

extern "C" __global__ void __launch_bounds__(nj::cfg::kThreads) nj_norm_backward(const nj::BackwardParams p) {
  if constexpr (nj::cfg::kRowInRegisters) nj::backward_rows_in_registers<>(p);
  else nj::backward_rows_streamed<>(p);
}
