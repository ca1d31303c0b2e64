// Fused options of the backward (docs/FUSED.md). codegen puts this file, and the template
// lines between "fused:begin" and "fused:end" markers, into a kernel's source only when its
// problem has an option on; a problem without options gets the same source as before.
//
// Forward of a pre-norm block with every option:
//   h = dropout(x_in, p)·rowscale[row] + residual,   y = norm(h)  (γ stored as γ − 1 when zero-centred)
// The kernel's x is h. With dh = (the norm's backward) + dresidual:
//   dresidual_in = dh                       (the residual branch's gradient, when asked for)
//   dx_in        = dh·rowscale[row]·keep/(1 − p)
// and dx receives dx_in (dh itself when neither row scale nor dropout is on).
//
// Gated RMSNorm (Mamba-2), with σ the logistic function, silu(z) = z·σ(z) and
// silu'(z) = σ(z)·(1 + z·(1 − σ(z))):
//   after the norm:  y = x̂·γ·silu(z). The norm's output gradient is dy·silu(z): the kernel
//                    gates dy as it reads it, so dγ and dx are the ordinary ones of that
//                    gradient, and dz = dy·x̂·γ·silu'(z).
//   before the norm: y = rmsnorm(xg)·γ with xg = x·silu(z), and the saved rstd is xg's. The
//                    kernel gates x as it reads it, so x̂ = xg·rstd, dγ = Σ dy·x̂ and the
//                    ordinary backward gives d(xg); then dx = d(xg)·silu(z) and
//                    dz = d(xg)·x·silu'(z).
// The gate acts on the norm's own gradient, before dresidual is added (the kernel's x is h).
//
// Parallel norms of one input: y0 = norm(x; γ0, β0), y1 = norm(x; γ1, β1) share x̂. dx is
// linear in g = dy·γ, so the dx of both is the ordinary dx of g = dy0·γ0 + dy1·γ1: one pair of
// row sums, as for one norm. The second norm adds dy1·γ1 to each element's g, and has its own
// dγ1 = Σ dy1·x̂ and dβ1 = Σ dy1 (zero-centred γ applies to both γs).
//
// Recompute from the output (memory-efficient mode): the forward kept y = x̂·γ + β (RMSNorm, or
// no β: x̂·γ; no γ: x̂ + β) instead of x. The host passes y as the kernel's rows
// (BackwardParams::x), so every family reads, stages and vectorises y exactly where it would x,
// and x̂ = (y − β)/γ is recovered in fp32 as each element is read (γ + 1 when zero-centred); the
// rest of the backward is unchanged (rstd is still the saved one). Where γ = 0, y = β whatever
// x̂ was: there the kernel reads x itself (fallback_x, when the caller gave it) and normalises it
// as usual. Without x such a column is unrecoverable: its x̂ counts as 0 in the row sums (where
// its g·x̂ is 0 anyway, g = dy·γ = 0, so every other column stays exact) and its dx and dγ are
// set to NaN. Never a division by zero.
namespace nj {
using namespace cfg;

// Field order and 8-byte fields match runtime/launch_params.h (its trailing fields).
struct FusedParams {
  const TDX* dresidual;        // kResidual: the residual stream's gradient, added to dh
  i64 dresidual_stride;
  const float* rowscale;       // kRowScale: fp32, one per row
  const unsigned char* keep;   // kDropoutMask: the forward's keep-mask
  i64 keep_stride;             // bytes between rows of the mask
  double keep_scale;           // 1/(1 − p): a run-time value, so p needs no kernel of its own
  TDX* dresidual_in;           // optional: dh, when row scale or dropout is on
  i64 dresidual_in_stride;
  const TX* z;                 // kGate: the gate's input
  i64 z_stride;
  TDX* dz;                     // kGate: z's gradient
  i64 dz_stride;
  const TDY* dy1;              // kParallel: the second norm's output gradient
  i64 dy1_stride;
  const TW* weight1;           // kParallel with kHasWeight: its γ
  TW* dweight1;                // kParallel: its dγ and dβ
  TW* dbias1;
  const TX* fallback_x;        // kRecompute: the forward's input x, or null; read only where γ = 0
  i64 fallback_x_stride;
  const TW* bias;              // kRecompute with kHasBias: β
};

constexpr bool kScalesBranch = kRowScale || kDropoutMask != 0;
constexpr int kGateAfterNorm = 1, kGateBeforeNorm = 2;

// Zero-centred γ (Gemma) stores γ − 1; every product with γ uses the stored value + 1.
__device__ __forceinline__ void stored_weight_to_gamma(float (&w)[kVec]) {
  if constexpr (kZeroCenteredWeight) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) w[j] += 1.f;
  }
}

// γ of one column, as stored_weight_to_gamma gives it.
__device__ __forceinline__ float gamma_at(const TW* weight, i64 col) {
  return to_f32(weight[col]) + (kZeroCenteredWeight ? 1.f : 0.f);
}

// Whether the forward kept column `col` of `row`: a byte per element (nonzero = kept), or a
// bit per element (bit j of byte k of a row is column 8k + j).
__device__ __forceinline__ bool kept(const FusedParams& f, i64 row, i64 col) {
  const unsigned char* mask = f.keep + row * f.keep_stride;
  if constexpr (kDropoutMask == 1) return mask[col] != 0;
  else return (mask[col >> 3] >> (col & 7)) & 1;
}

// dx_in of one element from dh: the branch's scale (row scale, dropout) applied, the row's
// scale and the element's keep as read.
__device__ __forceinline__ float scaled_branch_grad(const FusedParams& f, float dh, float rowscale, bool keep) {
  float g = dh;
  if constexpr (kRowScale) g *= rowscale;
  // A product, not a select: a NaN in a dropped element stays NaN, as in dh·mask/(1 − p).
  if constexpr (kDropoutMask != 0) g *= keep ? (float)f.keep_scale : 0.f;
  return g;
}

// The same, read here.
__device__ __forceinline__ float branch_grad(const FusedParams& f, i64 row, i64 col, float dh) {
  float rowscale = 1.f;
  bool keep = true;
  if constexpr (kRowScale) rowscale = f.rowscale[row];
  if constexpr (kDropoutMask != 0) keep = kept(f, row, col);
  return scaled_branch_grad(f, dh, rowscale, keep);
}

// ---- gated RMSNorm ------------------------------------------------------------------------------
// sigmoid, silu, silu_grad: templates/gate_math.cuh.

// A slot of x and dy with its z: the gate scales x before the norm, dy after it.
__device__ __forceinline__ void apply_gate(const float (&z)[kVec], float (&x)[kVec], float (&dy)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    if constexpr (kGate == kGateBeforeNorm) x[j] *= silu(z[j]);
    else dy[j] *= silu(z[j]);
  }
}

// As a slot of x and dy is read (kVec columns from col; rows and columns that exist): z read
// and the gate applied.
__device__ __forceinline__ void gate_inputs(const FusedParams& f, i64 row, i64 col, float (&x)[kVec],
                                            float (&dy)[kVec]) {
  if constexpr (kGate != 0) {
    float z[kVec];
    load_slot<TX, kVec, kAlign, kN>(f.z + row * f.z_stride, col, z);
    apply_gate(z, x, dy);
  }
}

// Packed rows (kPackedRows: shared sums, 16-bit rows) hold z packed beside x and dy, so that
// neither pass reads z again, nor the dz pass x or dy: the slot's raw values, as held, go to
// gate_grads in a HeldGateSlot, with the γ the dx pass has just read where kGateHoldsGamma
// (codegen::gate_holds_gamma: bf16 rows with fp32 γ; dz after the norm takes it; read a third
// time, from L1, it cost each slot two loads and their branch: RMS bf16 16384-65536
// 1.08-1.10x, bench/NOTES.md entry 63). Other γ is read again: held, fp16 rows spilled 12-128
// bytes more (16-bit γ at 12288-131072, fp32 γ at 10240-65536).
// Other rows keep x and dy gated in fp32 and read z (and x or dy, and γ) again: NoHeldGate.
constexpr bool kHoldsGate = kGate != 0 && kPackedRows;
struct NoHeldGate {};
struct HeldGateSlot {
  float z[kVec], x[kVec], dy[kVec];  // as loaded, before the gate
  float gamma[kVec];                 // kGateHoldsGamma: as the math uses it (slot_gamma)
};
template <bool kHeld> struct GateHoldOf { typedef NoHeldGate Type; };
template <> struct GateHoldOf<true> { typedef HeldGateSlot Type; };
typedef typename GateHoldOf<kHoldsGate>::Type GateHold;

// A packed row's slot for the dx pass: z unpacked from z_packed, x, dy and the slot's γ kept in
// held for dz, then the gate applied to x and dy. Nothing without a held gate.
template <class Z>
__device__ __forceinline__ void hold_and_apply_gate(const Z& z_packed, const float (&gamma)[kVec], float (&x)[kVec],
                                                    float (&dy)[kVec], HeldGateSlot& held) {
  z_packed.unpack(held.z);
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    held.x[j] = x[j];
    held.dy[j] = dy[j];
    if constexpr (kGateHoldsGamma) held.gamma[j] = gamma[j];
  }
  apply_gate(held.z, x, dy);
}
template <class Z>
__device__ __forceinline__ void hold_and_apply_gate(const Z&, const float (&)[kVec], float (&)[kVec], float (&)[kVec],
                                                    NoHeldGate&) {}

// The same for one element (interleaved staged rows): column col < N.
__device__ __forceinline__ void gate_input_element(const FusedParams& f, i64 row, i64 col, float& x, float& dy) {
  if constexpr (kGate != 0) {
    const float s = silu(to_f32(f.z[row * f.z_stride + col]));
    if constexpr (kGate == kGateBeforeNorm) x *= s;
    else dy *= s;
  }
}

// dz of one element, and the norm's input gradient `grad` turned into x's: before the norm
// grad is d(xg) and leaves as d(xg)·silu(z); after it, grad is already x's. z and x or dy
// come from gate_slot_inputs; γ is read again (L1).
__device__ __forceinline__ float gate_element_grads(float z, float x, float dy, float gamma, float xhat,
                                                    float& grad) {
  if constexpr (kGate == kGateBeforeNorm) {
    const float dz = grad * x * silu_grad(z);
    grad *= silu(z);
    return dz;
  } else {
    return dy * xhat * gamma * silu_grad(z);
  }
}

// The slot's z, and x before the norm or dy after it, for dz: read again from memory (L1/L2)
// or, held (kHoldsGate), taken from registers.
template <class P>
__device__ __forceinline__ void gate_slot_inputs(const P& p, i64 row, i64 col, const NoHeldGate&, float (&z)[kVec],
                                                 float (&x)[kVec], float (&dy)[kVec]) {
  load_slot<TX, kVec, kAlign, kN>(p.fused.z + row * p.fused.z_stride, col, z);
  if constexpr (kGate == kGateBeforeNorm) load_slot<TX, kVec, kAlign, kN>(p.x + row * p.x_stride, col, x);
  else load_slot<TDY, kVec, kAlign, kN>(p.dy + row * p.dy_stride, col, dy);
}
// γ for dz after the norm: read again, or as held.
template <class P>
__device__ __forceinline__ void gate_slot_gamma(const P& p, i64 col, const NoHeldGate&, float (&w)[kVec]) {
  load_slot<TW, kVec, kAlign, kN>(p.weight, col, w);
  stored_weight_to_gamma(w);
}
template <class P>
__device__ __forceinline__ void gate_slot_gamma(const P& p, i64 col, const HeldGateSlot& held, float (&w)[kVec]) {
  if constexpr (kGateHoldsGamma) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) w[j] = held.gamma[j];
  } else {
    gate_slot_gamma(p, col, NoHeldGate{}, w);
  }
}
template <class P>
__device__ __forceinline__ void gate_slot_inputs(const P&, i64, i64, const HeldGateSlot& held, float (&z)[kVec],
                                                 float (&x)[kVec], float (&dy)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    z[j] = held.z[j];
    if constexpr (kGate == kGateBeforeNorm) x[j] = held.x[j];
    else dy[j] = held.dy[j];
  }
}

// One slot of a row: writes dz and turns grad into x's gradient. P is BackwardParams
// (templates/norm_backward.cuh), which holds x, dy and γ; H is NoHeldGate or HeldGateSlot.
template <class P, class H = NoHeldGate>
__device__ __forceinline__ void gate_grads(const P& p, i64 row, i64 col, const float (&xhat)[kVec],
                                           float (&grad)[kVec], const H& held = H()) {
  if constexpr (kGate != 0) {
    float z[kVec], x[kVec], dy[kVec], w[kVec], dz[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) x[j] = dy[j] = w[j] = 1.f;
    gate_slot_inputs(p, row, col, held, z, x, dy);
    if constexpr (kGate != kGateBeforeNorm && kHasWeight) gate_slot_gamma(p, col, held, w);
#pragma unroll
    for (int j = 0; j < kVec; ++j) dz[j] = gate_element_grads(z[j], x[j], dy[j], w[j], xhat[j], grad[j]);
    store_slot<TDX, kVec, kAlign, kN>(p.fused.dz + row * p.fused.dz_stride, col, dz);
  }
}

template <class P>
__device__ __forceinline__ void gate_grads_element(const P& p, i64 row, i64 col, float xhat, float& grad) {
  if constexpr (kGate != 0) {
    const float z = to_f32(p.fused.z[row * p.fused.z_stride + col]);
    float x = 1.f, dy = 1.f, gamma = 1.f;
    if constexpr (kGate == kGateBeforeNorm) {
      x = to_f32(p.x[row * p.x_stride + col]);
    } else {
      dy = to_f32(p.dy[row * p.dy_stride + col]);
      if constexpr (kHasWeight) gamma = gamma_at(p.weight, col);
    }
    p.fused.dz[row * p.fused.dz_stride + col] = from_f32<TDX>(gate_element_grads(z, x, dy, gamma, xhat, grad));
  }
}

// ---- parallel norms of one input -------------------------------------------------------------
// Packed rows (kPackedRows) load dy1 with x and dy, and pass 1 leaves g = dy·γ + dy1·γ1 in fp32
// for the dx pass in the registers dy and dy1 held packed: the dx pass neither unpacks them nor
// reads γ and γ1 again. Other rows keep g1 added into g in fp32 as they are. RMSNorm rows in one
// block had read dy1 again in the dx pass (held packed, then re-made into g there, it cost more
// registers than the read); with g held, holding won there too (RMS bf16 5120 216 → 160 µs,
// 4096 173 → 154; bench/results/2026-12-01-h200-parallel-held-grad/call1).
constexpr bool kHoldsSecondDy = kParallel && kPackedRows;

// g1 = dy1·γ1 of the second norm's slot from col (< N), its dy1 given.
__device__ __forceinline__ void second_norm_grad(const FusedParams& f, i64 col, const float (&dy1)[kVec],
                                                 float (&g1)[kVec]) {
  float w1[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) w1[j] = 1.f;
  if constexpr (kHasWeight) {
    load_slot<TW, kVec, kAlign, kN>(f.weight1, col, w1);
    stored_weight_to_gamma(w1);
  }
#pragma unroll
  for (int j = 0; j < kVec; ++j) g1[j] = dy1[j] * w1[j];
}

// The second norm's slot (kVec columns from col; `present`: the row exists and col < N): its
// dy1, and g1 = dy1·γ1 to add to the first norm's g; zeros where there is no element.
__device__ __forceinline__ void second_norm_slot(const FusedParams& f, bool present, i64 row, i64 col,
                                                 float (&dy1)[kVec], float (&g1)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) dy1[j] = g1[j] = 0.f;
  if constexpr (kParallel) {
    if (!present || col >= kN) return;
    load_slot<TDY, kVec, kAlign, kN>(f.dy1 + row * f.dy1_stride, col, dy1);
    second_norm_grad(f, col, dy1, g1);
  }
}

// The same from the slot's dy1 as a packed row holds it (kHoldsSecondDy).
template <class Packed>
__device__ __forceinline__ void held_second_norm_slot(const FusedParams& f, const Packed& dy1_packed, bool present,
                                                      i64 col, float (&dy1)[kVec], float (&g1)[kVec]) {
#pragma unroll
  for (int j = 0; j < kVec; ++j) dy1[j] = g1[j] = 0.f;
  if (!present || col >= kN) return;
  dy1_packed.unpack(dy1);
  second_norm_grad(f, col, dy1, g1);
}

// The same for one element (interleaved staged rows): column col < N. Returns g1.
__device__ __forceinline__ float second_norm_element(const FusedParams& f, i64 row, i64 col, float& dy1) {
  dy1 = to_f32(f.dy1[row * f.dy1_stride + col]);
  float gamma = 1.f;
  if constexpr (kHasWeight) gamma = gamma_at(f.weight1, col);
  return dy1 * gamma;
}

// ---- recompute from the output ------------------------------------------------------------------
// What an unrecoverable column's dx and dγ are set to (a quiet NaN).
__device__ __forceinline__ float unrecoverable_value() { return __int_as_float(0x7fc00000); }

// Whether column col's x̂ cannot be recovered from y: its γ (the stored value + 1 when
// zero-centred) is 0 and no x was given; false for col >= N, and without γ (x̂ = y − β always
// can). γ is read again from memory (L1/L2). P is BackwardParams (templates/norm_backward.cuh),
// which holds γ.
template <class P>
__device__ __forceinline__ bool unrecoverable_column(const P& p, i64 col) {
  if constexpr (kRecompute && kHasWeight) return col < kN && p.fused.fallback_x == nullptr && gamma_at(p.weight, col) == 0.f;
  else return false;
}

// The same for the slot of kVec columns from col (col < N), from one vector load of γ: bit j is
// set when column col + j is unrecoverable. 0 without kRecompute, without γ, or with x given.
template <class P>
__device__ __forceinline__ unsigned unrecoverable_slot(const P& p, i64 col) {
  unsigned bits = 0;
  if constexpr (kRecompute && kHasWeight) {
    if (p.fused.fallback_x) return 0;
    float w[kVec];
    load_slot<TW, kVec, kAlign, kN>(p.weight, col, w);
    stored_weight_to_gamma(w);
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if (col + j < kN && w[j] == 0.f) bits |= 1u << j;
  }
  return bits;
}

// ---- the norm's input gradient to dx ----------------------------------------------------------
// What a slot's dx takes from memory besides the row (kVec columns from col): dresidual, the
// row's scale and the keep bits. Read apart from their use so that a row's dx loop can read
// several slots' before it stores any dx: dx may be dresidual itself (in-place accumulation), so
// no load after a dx store can be moved ahead of it, and read slot by slot each slot's loads
// waited a full trip to memory. Element rows of odd N (16 slots of one element a thread) ran
// the residual at 26% of copy so (session 55).
struct FusedSlotInputs {
  float dres[kVec];  // kResidual
  float rowscale;
  unsigned keep;     // bit j: column col + j kept (kDropoutMask)
};

// How many slots a row's dx loop reads ahead of its dx stores (kReadsFusedAhead: where a slot's
// dx reads anything of its own, and slots are narrower than 8 elements): 8 elements' worth, a
// register each. Element rows make two trips to memory instead of 16. Slots of 8 read their own
// just before their use, as before: read at the top of the slot, 16-bit clusters of 32768 with
// the residual spilled 16-72 bytes.
constexpr int kFusedReadAhead = kVec >= 8 ? 1 : 8 / kVec;
constexpr bool kReadsFusedAhead = (kResidual || kScalesBranch) && kFusedReadAhead > 1;

template <class P>
__device__ __forceinline__ FusedSlotInputs read_fused_slot(const P& p, i64 row, i64 col) {
  const FusedParams& f = p.fused;
  FusedSlotInputs in{};
  if constexpr (kResidual) load_slot<TDX, kVec, kAlign, kN>(f.dresidual + row * f.dresidual_stride, col, in.dres);
  if constexpr (kRowScale) in.rowscale = f.rowscale[row];
  if constexpr (kDropoutMask != 0) {
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if (col + j < kN && kept(f, row, col + j)) in.keep |= 1u << j;
  }
  return in;
}

// One slot: `grad` comes in as the norm's input gradient (x̂ is the slot's normalised input)
// and leaves as what dx receives (NaN where kRecompute could not recover x̂), from the slot's
// inputs as read_fused_slot read them. dx may be dresidual itself: read_fused_slot reads it
// before dx is written, by this thread. kXhatMarked: x̂ is NaN in unrecoverable columns already
// (hold_recovered_slot), so grad is too, and γ need not be read again to find them. Otherwise
// γ is read here, not ahead: read ahead, recomputing rows of an element ran 0.79-0.84x
// (RMS bf16 4095, LN fp32 5003; session 55).
template <bool kXhatMarked = false, class P, class H = NoHeldGate>
__device__ __forceinline__ void fused_input_grad(const P& p, i64 row, i64 col, const float (&xhat)[kVec],
                                                 float (&grad)[kVec], const FusedSlotInputs& in,
                                                 const H& held_gate = H()) {
  const FusedParams& f = p.fused;
  if constexpr (kRecompute && kHasWeight && !kXhatMarked) {
    const unsigned unknown = unrecoverable_slot(p, col);
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if ((unknown >> j) & 1u) grad[j] = unrecoverable_value();
  }
  gate_grads(p, row, col, xhat, grad, held_gate);
  if constexpr (kResidual) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) grad[j] += in.dres[j];
  }
  if constexpr (kScalesBranch) {
    if (f.dresidual_in) store_slot<TDX, kVec, kAlign, kN>(f.dresidual_in + row * f.dresidual_in_stride, col, grad);
#pragma unroll
    for (int j = 0; j < kVec; ++j) grad[j] = scaled_branch_grad(f, grad[j], in.rowscale, (in.keep >> j) & 1u);
  }
}

// The same, its inputs read just before.
template <bool kXhatMarked = false, class P, class H = NoHeldGate>
__device__ __forceinline__ void fused_input_grad(const P& p, i64 row, i64 col, const float (&xhat)[kVec],
                                                 float (&grad)[kVec], const H& held_gate = H()) {
  fused_input_grad<kXhatMarked>(p, row, col, xhat, grad, read_fused_slot(p, row, col), held_gate);
}

// The same for one element (interleaved staged rows): column col < N.
template <class P>
__device__ __forceinline__ void fused_input_grad_element(const P& p, i64 row, i64 col, float xhat, float& grad) {
  const FusedParams& f = p.fused;
  if constexpr (kRecompute && kHasWeight)
    if (unrecoverable_column(p, col)) grad = unrecoverable_value();
  gate_grads_element(p, row, col, xhat, grad);
  if constexpr (kResidual) grad += to_f32(f.dresidual[row * f.dresidual_stride + col]);
  if constexpr (kScalesBranch) {
    if (f.dresidual_in) f.dresidual_in[row * f.dresidual_in_stride + col] = from_f32<TDX>(grad);
    grad = branch_grad(f, row, col, grad);
  }
}

}  // namespace nj
