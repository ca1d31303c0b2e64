// normjit building blocks shared by every kernel family: storage types and their
// conversions to fp32, vector loads and stores that never assume more alignment than the
// problem guarantees, and row reductions. No CUDA headers: NVRTC compiles this alone.
namespace nj {

typedef long long i64;

struct f16 { unsigned short bits; };
struct bf16 { unsigned short bits; };

// ---- programmatic dependent launch (sm_90+) ---------------------------------------------------
// A kernel launched as a dependent of the one before it (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_
// STREAM_SERIALIZATION) may start once every block of that one has let it or exited, and waits
// for that grid's completion and its writes only where it calls wait_for_prerequisite_grid. On
// older devices, or launched plainly, both are nothing.
__device__ __forceinline__ void let_dependent_grid_start() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_prerequisite_grid() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// ---- conversions: all arithmetic happens in fp32 --------------------------------------------
__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(f16 v) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
  return f;
}
__device__ __forceinline__ float to_f32(bf16 v) { return __uint_as_float(((unsigned)v.bits) << 16); }

template <class T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ f16 from_f32<f16>(float v) {
  f16 r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(v));
  return r;
}
template <> __device__ __forceinline__ bf16 from_f32<bf16>(float v) {
  bf16 r;
#if __CUDA_ARCH__ >= 800
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(v));
#else
  // Round to nearest even by integer arithmetic; keep NaN a (quiet) NaN.
  unsigned u = __float_as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    r.bits = (unsigned short)((u >> 16) | 0x40u);
  } else {
    u += 0x7fffu + ((u >> 16) & 1u);
    r.bits = (unsigned short)(u >> 16);
  }
#endif
  return r;
}

// A piece of a row as loaded (a 16-, 8-, 4- or 2-byte word) widened to fp32, element by element.
// bf16 is widened a 32-bit word at a time: the pair's high element is the word with its low
// half cleared (one LOP3) and the low one the word shifted up (one shift). Widened one 16-bit
// element at a time, ptxas pulled the high half down (PRMT) to shift it back up, often with a
// move between: 2-3 instructions where 1 does (SASS, LN bf16 32768, both passes of the row).
// Same bits; the H200 timed it within 1% (bench/NOTES.md entry 46): those kernels are not bound there.
template <class Raw, class T, int kPer>
__device__ __forceinline__ void widen_piece(const Raw&, const T (&e)[kPer], float* out) {
#pragma unroll
  for (int j = 0; j < kPer; ++j) out[j] = to_f32(e[j]);
}
// In the forward's kernels with a pre-norm sum (the generated source defines
// NJ_OPAQUE_BF16_WIDENING) the same two instructions as inline PTX, which NVVM cannot look
// through, as it cannot through fp16's conversions below: with the shift and the mask in C++,
// LayerNorm's rows of four 16-byte slots a thread (bf16 10240-16384 with the residual) spilled
// 16-92 bytes where fp16's spilled none (NVRTC's report), and took 1.03-1.27x fp16's time;
// with it, none: 1.01-1.25x (bench/NOTES.md entry 80; dropout bits alone 0.95-0.96x at
// 12288-14336). The option-free forward's cubins did not change with it (22 shapes); the
// backward's LN 4096 spilled 8 bytes with it: only the forward's pre-norm sums take it.
#ifndef NJ_OPAQUE_BF16_WIDENING
#define NJ_OPAQUE_BF16_WIDENING 0
#endif
__device__ __forceinline__ void widen_pair(unsigned w, bf16, float* out) {
#if NJ_OPAQUE_BF16_WIDENING
  asm("{ shl.b32 %0, %2, 16;\n\t and.b32 %1, %2, 0xffff0000; }" : "=f"(out[0]), "=f"(out[1]) : "r"(w));
#else
  out[0] = __uint_as_float(w << 16);
  out[1] = __uint_as_float(w & 0xffff0000u);
#endif
}
// fp16 likewise a 32-bit word at a time, each half converted where it sits in the register.
// Element by element the halves were cut out of the piece with 64-bit shifts: SASS of the
// forward's LN fp16 1000 had 24 SHF.R.U64, 32 SHF.R.U32.HI and 18 PRMT beside its 96
// HADD2.F32 conversions (1192 instructions; bf16's 1128), and now 1128. bench --graph, fp32 γ,
// two rounds (bench/results/2026-12-02-h200-forward-clusters-of-16/, call 8): forward LN 1000
// 87.9 → 76.2 µs (bf16's time), 4096 1.03-1.04x, RMS 1000 0.985-0.99x, the rest and the
// backward at 4096 / 16384 1.00-1.02x.
__device__ __forceinline__ void widen_pair(unsigned w, f16, float* out) {
  asm("{ .reg .f16 lo, hi;\n\t mov.b32 {lo, hi}, %2;\n\t cvt.f32.f16 %0, lo;\n\t cvt.f32.f16 %1, hi; }"
      : "=f"(out[0]), "=f"(out[1])
      : "r"(w));
}
// Pieces of 16-bit elements (bf16, f16), a 32-bit word at a time.
template <class T>
__device__ __forceinline__ void widen_piece(const uint4& w, const T (&)[8], float* out) {
  widen_pair(w.x, T{}, out);
  widen_pair(w.y, T{}, out + 2);
  widen_pair(w.z, T{}, out + 4);
  widen_pair(w.w, T{}, out + 6);
}
template <class T>
__device__ __forceinline__ void widen_piece(const uint2& w, const T (&)[4], float* out) {
  widen_pair(w.x, T{}, out);
  widen_pair(w.y, T{}, out + 2);
}
template <class T>
__device__ __forceinline__ void widen_piece(const unsigned& w, const T (&)[2], float* out) { widen_pair(w, T{}, out); }

// ---- vector memory access --------------------------------------------------------------------
template <int BYTES> struct RawVec;
template <> struct RawVec<16> { typedef uint4 type; };
template <> struct RawVec<8> { typedef uint2 type; };
template <> struct RawVec<4> { typedef unsigned int type; };
template <> struct RawVec<2> { typedef unsigned short type; };

// VEC elements of T at p, as pieces of min(ALIGN, VEC*sizeof(T)) bytes (never less than one
// element, to which every pointer is aligned): p is known to be aligned to that much, no more.
template <class T, int VEC, int ALIGN>
struct VecAccess {
  static constexpr int kBytes = VEC * (int)sizeof(T);
  static constexpr int kAligned = kBytes < ALIGN ? kBytes : ALIGN;
  static constexpr int kPiece = kAligned > (int)sizeof(T) ? kAligned : (int)sizeof(T);
  static constexpr int kPer = kPiece / (int)sizeof(T);
  typedef typename RawVec<kPiece>::type Raw;
  union Piece { Raw raw; T e[kPer]; };

  static __device__ __forceinline__ void load(const T* p, float (&out)[VEC]) {
#pragma unroll
    for (int k = 0; k < VEC / kPer; ++k) {
      Piece u;
      u.raw = *reinterpret_cast<const Raw*>(p + k * kPer);
      widen_piece(u.raw, u.e, out + k * kPer);
    }
  }
  static __device__ __forceinline__ void store(T* p, const float (&in)[VEC]) {
#pragma unroll
    for (int k = 0; k < VEC / kPer; ++k) {
      Piece u;
#pragma unroll
      for (int j = 0; j < kPer; ++j) u.e[j] = from_f32<T>(in[k * kPer + j]);
      *reinterpret_cast<Raw*>(p + k * kPer) = u.raw;
    }
  }
};

// ---- slots less aligned than their vectors ---------------------------------------------------
// Rows of odd length in a 16-bit type start 2 bytes off a 16-byte boundary, differently row by
// row. An 8- or 16-byte slot at such an address is read as the two aligned chunks around it, its
// bytes picked out with selects (two vector loads instead of one access per element), and
// written as the largest aligned pieces that cover exactly its bytes (never a neighbour's).
// Only in kernels whose launch config asks for it (x's slots wider than the rows' alignment: the
// generated source defines NJ_REALIGNED_SLOTS); elsewhere less aligned slots (a weight wider
// than x) load in pieces.
#ifndef NJ_REALIGNED_SLOTS
#define NJ_REALIGNED_SLOTS 0
#endif
template <class T, int VEC, int ALIGN>
constexpr bool kRealigns = NJ_REALIGNED_SLOTS && ALIGN < VEC * (int)sizeof(T) &&
                           (VEC * (int)sizeof(T) == 8 || VEC * (int)sizeof(T) == 16);

template <class T, int VEC>
struct Realigned {
  static constexpr int kBytes = VEC * (int)sizeof(T);
  static constexpr int kWords = kBytes / 4;
  typedef typename RawVec<kBytes>::type Raw;
  union Words { Raw raw; unsigned w[kWords]; };

  // The two aligned chunks around the slot at p, and its offset into the first. The chunk after
  // must lie within the same tensor. Loads only: the select comes later (select), so that a
  // row's loads all go out before any of them is waited for.
  static __device__ __forceinline__ void load_chunks(const T* p, Raw& lo, Raw& hi, unsigned& shift) {
    shift = (unsigned)(unsigned long long)p & (kBytes - 1);  // the same for every slot of a row
    const Raw* chunk = reinterpret_cast<const Raw*>(reinterpret_cast<const unsigned char*>(p) - shift);
    lo = chunk[0];
    hi = chunk[1];
  }
  // The slot's bytes, [shift, shift + kBytes) of lo:hi.
  static __device__ __forceinline__ Raw select(Raw lo, Raw hi, unsigned shift) {
    Words l, h;
    l.raw = lo;
    h.raw = hi;
    unsigned w[2 * kWords];
#pragma unroll
    for (int i = 0; i < kWords; ++i) {
      w[i] = l.w[i];
      w[kWords + i] = h.w[i];
    }
    // Whole words first (by halving steps), then the half word of a 2-byte shift.
    const unsigned q = shift / 4;
#pragma unroll
    for (int step = kWords / 2; step >= 1; step /= 2)
#pragma unroll
      for (int j = 0; j + step < 2 * kWords; ++j) w[j] = (q & step) ? w[j + step] : w[j];
    Words out;
    const unsigned halves = (shift & 2) ? 0x5432u : 0x3210u;
#pragma unroll
    for (int i = 0; i < kWords; ++i) out.w[i] = sizeof(T) == 2 ? __byte_perm(w[i], w[i + 1], halves) : w[i];
    return out.raw;
  }
  static __device__ __forceinline__ Raw load(const T* p) {
    Raw lo, hi;
    unsigned shift;
    load_chunks(p, lo, hi, shift);
    return select(lo, hi, shift);
  }

  static __device__ __forceinline__ void store(T* p, Raw v) {
    const unsigned shift = (unsigned)(unsigned long long)p & (kBytes - 1);
    Words in;
    in.raw = v;
    store_at<0>(reinterpret_cast<unsigned char*>(p) - shift, shift, in.w);
  }

 private:
  // The widest aligned piece at byte b that ends by `end`.
  static __device__ constexpr int piece_bytes(int b, int end) {
    int size = kBytes;
    while (size > 2 && (b % size != 0 || b + size > end)) size /= 2;
    return size;
  }
  // Four bytes of the value from its byte O on (O even; past its end: don't care).
  template <int O>
  static __device__ __forceinline__ unsigned word(const unsigned (&w)[kWords]) {
    if constexpr (O % 4 == 0) return w[O / 4];
    else if constexpr (O / 4 + 1 < kWords) return __byte_perm(w[O / 4], w[O / 4 + 1], 0x5432);
    else return w[O / 4] >> 16;
  }
  template <int S>
  static __device__ __forceinline__ void store_at(unsigned char* chunk, unsigned shift, const unsigned (&w)[kWords]) {
    if constexpr (S < kBytes) {
      if (shift == S) store_pieces<S, S>(chunk, w);
      else store_at<S + (int)sizeof(T)>(chunk, shift, w);
    }
  }
  // The value's bytes land at bytes [S, S + kBytes) from chunk; [B, S + kBytes) are left.
  template <int S, int B>
  static __device__ __forceinline__ void store_pieces(unsigned char* chunk, const unsigned (&w)[kWords]) {
    if constexpr (B < S + kBytes) {
      constexpr int size = piece_bytes(B, S + kBytes);
      constexpr int o = B - S;
      if constexpr (size == 2) *reinterpret_cast<unsigned short*>(chunk + B) = (unsigned short)word<o>(w);
      else if constexpr (size == 4) *reinterpret_cast<unsigned*>(chunk + B) = word<o>(w);
      else if constexpr (size == 8) *reinterpret_cast<uint2*>(chunk + B) = uint2{word<o>(w), word<o + 4>(w)};
      else *reinterpret_cast<uint4*>(chunk + B) = uint4{word<o>(w), word<o + 4>(w), word<o + 8>(w), word<o + 12>(w)};
      store_pieces<S, B + size>(chunk, w);
    }
  }
};

// The access a slot is stored in registers as: whole when it is realigned, else as loaded.
template <class T, int VEC, int ALIGN>
using SlotAccess = VecAccess<T, VEC, kRealigns<T, VEC, ALIGN> ? 16 : ALIGN>;

// A slot is VEC consecutive elements of a row starting at col; the row's last slot may be
// partial (N not a multiple of VEC): elements past N read as 0 and are never written. A
// realigned load also reads the aligned chunk after the slot, so the row's last whole slot
// that would reach past the row is read element by element too.
template <class T, int VEC, int ALIGN>
constexpr int kVectorReach = kRealigns<T, VEC, ALIGN> ? 2 * VEC : VEC;  // elements a vector load reads
// The row's last slot where it is partial (col + VEC > N), element by element from `at`, its
// first element.
template <class T, int VEC, i64 N>
__device__ __forceinline__ void load_partial_slot(const T* at, i64 col, float (&out)[VEC]) {
#pragma unroll
  for (int j = 0; j < VEC; ++j) out[j] = col + j < N ? to_f32(at[j]) : 0.f;
}
template <class T, int VEC, int ALIGN, i64 N>
__device__ __forceinline__ void load_slot(const T* row, i64 col, float (&out)[VEC]) {
  if (col + kVectorReach<T, VEC, ALIGN> <= N) {
    if constexpr (kRealigns<T, VEC, ALIGN>) {
      typename SlotAccess<T, VEC, ALIGN>::Piece u;
      u.raw = Realigned<T, VEC>::load(row + col);
      widen_piece(u.raw, u.e, out);
    } else {
      VecAccess<T, VEC, ALIGN>::load(row + col, out);
    }
  } else {
    load_partial_slot<T, VEC, N>(row + col, col, out);
  }
}
// A word of global memory loaded only where `on` holds (a predicated load: no branch), else
// left as it was.
__device__ __forceinline__ void load_word_if(unsigned short& v, const void* p, bool on) {
  asm("{\n .reg .pred q;\n setp.ne.b32 q, %2, 0;\n @q ld.global.u16 %0, [%1];\n}" : "+h"(v) : "l"(p), "r"((int)on));
}
__device__ __forceinline__ void load_word_if(unsigned& v, const void* p, bool on) {
  asm("{\n .reg .pred q;\n setp.ne.b32 q, %2, 0;\n @q ld.global.u32 %0, [%1];\n}" : "+r"(v) : "l"(p), "r"((int)on));
}
__device__ __forceinline__ void load_word_if(uint2& v, const void* p, bool on) {
  asm("{\n .reg .pred q;\n setp.ne.b32 q, %3, 0;\n @q ld.global.v2.u32 {%0, %1}, [%2];\n}"
      : "+r"(v.x), "+r"(v.y) : "l"(p), "r"((int)on));
}
__device__ __forceinline__ void load_word_if(uint4& v, const void* p, bool on) {
  asm("{\n .reg .pred q;\n setp.ne.b32 q, %5, 0;\n @q ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n}"
      : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w) : "l"(p), "r"((int)on));
}

// load_slot of the slot at `at` (column col of its row) that exists only where `inside` holds
// (else it reads as 0), its whole vectors loaded under a predicate instead of a branch.
// Branched around, each slot's load and its conversion sat in a branch of their own, and ptxas
// issued them one slot after another, each waiting for its load (16-bit rows held in one block
// of 96 or 160 threads: 18% of copy at LN bf16 1505; bench/NOTES.md entry 48). Realigned slots
// keep load_slot's branch.
template <class T, int VEC, int ALIGN, i64 N>
__device__ __forceinline__ void load_slot_if(const T* at, i64 col, bool inside, float (&out)[VEC]) {
  if constexpr (kRealigns<T, VEC, ALIGN>) {
#pragma unroll
    for (int j = 0; j < VEC; ++j) out[j] = 0.f;
    if (inside) load_slot<T, VEC, ALIGN, N>(at - col, col, out);
  } else {
    typedef VecAccess<T, VEC, ALIGN> Access;
    const bool whole = inside && col + VEC <= N;
#pragma unroll
    for (int k = 0; k < VEC / Access::kPer; ++k) {
      typename Access::Piece u;
      u.raw = typename Access::Raw{};
      load_word_if(u.raw, at + k * Access::kPer, whole);
      widen_piece(u.raw, u.e, out + k * Access::kPer);
    }
    if constexpr (N % VEC != 0) {
      if (inside && !whole) load_partial_slot<T, VEC, N>(at, col, out);
    }
  }
}
// `col` is a slot's column, a multiple of VEC (or N, past the row: nothing is stored). Where N is
// one too, a slot is whole just where it starts inside the row, the test its callers have made:
// the element-by-element path is then never taken, and its branch folds away (LN bf16 32768's
// row ran a compare and a branch a slot on it; session 48). Not for fp32: LN fp32 65536's
// spilling clusters of eight then ran 5% slower. Nor for the forward's prefetching blocks' stores
// (norm_forward.cuh kFoldWholeSlotStores says why).
template <class T, int VEC, int ALIGN, i64 N, bool FOLD = true>
__device__ __forceinline__ void store_slot(T* row, i64 col, const float (&in)[VEC]) {
  constexpr bool kWholeOrAbsent = FOLD && N % VEC == 0 && sizeof(T) == 2;
  if (kWholeOrAbsent ? col < N : col + VEC <= N) {
    if constexpr (kRealigns<T, VEC, ALIGN>) {
      typename SlotAccess<T, VEC, ALIGN>::Piece u;
#pragma unroll
      for (int j = 0; j < VEC; ++j) u.e[j] = from_f32<T>(in[j]);
      Realigned<T, VEC>::store(row + col, u.raw);
    } else {
      VecAccess<T, VEC, ALIGN>::store(row + col, in);
    }
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      if (col + j < N) row[col + j] = from_f32<T>(in[j]);
  }
}

// ---- phased slots ----------------------------------------------------------------------------
// A row in phase (NormProblem::rows_in_phase) that starts φ elements past a 16-byte boundary is
// read as the aligned 16-byte chunks that cover it: `chunk` is one of them, its elements at row
// columns first .. first + VEC − 1 (first = the chunk's column in the row's span − φ: below 0
// in the row's first chunk, which begins in the row before; past N − VEC in its last). Whole
// chunks of the row load and store as one aligned vector; the first and last chunks are stored
// element by element, only their own row's elements, so nothing outside the tensors is written.
// They load element by element too (load_phased), or whole with their neighbours' elements
// zeroed after (PackedSlot::load_phased_whole, load_phased_chunk: a 16-byte chunk holding a
// byte of a tensor lies inside it, but its last chunk). Elements outside the row read as 0.
// `on`: the chunk exists (its row does, and the thread has the slot).
template <int VEC, i64 N>
__device__ __forceinline__ bool phased_whole(i64 first, bool on) {
  return on && first >= 0 && first + VEC <= N;
}
template <int VEC, i64 N>
__device__ __forceinline__ bool phased_element(i64 first, int j) {
  return first + j >= 0 && first + j < N;
}
template <class T, int VEC, i64 N>
__device__ __forceinline__ void load_phased_slot(const T* chunk, i64 first, bool on, float (&out)[VEC]) {
  typedef VecAccess<T, VEC, 16> Access;
  static_assert(Access::kPer == VEC, "phased slots are one 16-byte chunk");
  const bool whole = phased_whole<VEC, N>(first, on);
  typename Access::Piece u;
  u.raw = typename Access::Raw{};
  load_word_if(u.raw, chunk, whole);  // predicated: no branch a slot (load_slot_if says why)
  widen_piece(u.raw, u.e, out);
  if (on && !whole) {
#pragma unroll
    for (int j = 0; j < VEC; ++j) out[j] = phased_element<VEC, N>(first, j) ? to_f32(chunk[j]) : 0.f;
  }
}
template <class T, int VEC, i64 N>
__device__ __forceinline__ void store_phased_slot(T* chunk, i64 first, const float (&in)[VEC]) {
  if (phased_whole<VEC, N>(first, true)) {
    // One 16-byte store, in PTX: through VecAccess NVVM wrote the chunk as four 4-byte pieces
    // (it shares the conversions with the element-by-element path below).
    typename VecAccess<T, VEC, 16>::Piece u;
#pragma unroll
    for (int j = 0; j < VEC; ++j) u.e[j] = from_f32<T>(in[j]);
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(chunk), "r"(u.raw.x), "r"(u.raw.y), "r"(u.raw.z),
                 "r"(u.raw.w)
                 : "memory");
  } else {
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      if (phased_element<VEC, N>(first, j)) chunk[j] = from_f32<T>(in[j]);
  }
}

// A slot as it is stored: VEC elements of T, not yet converted to fp32, so a 16-bit slot takes
// half the registers. For loads kept in flight well before they are used. Elements past N
// are zero bits (0 in every dtype).
template <class T, int VEC, int ALIGN, i64 N, bool REALIGNED = kRealigns<T, VEC, ALIGN>>
struct PackedSlot {
  typedef VecAccess<T, VEC, ALIGN> Access;
  typename Access::Piece piece[VEC / Access::kPer];

  __device__ __forceinline__ void load(const T* row, i64 col) {
    if (col + VEC <= N) {
#pragma unroll
      for (int k = 0; k < VEC / Access::kPer; ++k)
        piece[k].raw = *reinterpret_cast<const typename Access::Raw*>(row + col + k * Access::kPer);
    } else {
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        T v = {};
        if (col + j < N) v = row[col + j];
        piece[j / Access::kPer].e[j % Access::kPer] = v;
      }
    }
  }
  // load() of a slot of global memory that exists only where `inside` holds (else zero bits),
  // its whole vectors loaded under a predicate (load_slot_if says why). Where N is a multiple of
  // VEC every slot is whole or absent, and the element-by-element path that load() branches
  // around for each slot and tensor is left out: LN bf16 32768's row loop ran 24 of its 407
  // instructions a warp on those branches (session 48, Nsight Compute).
  __device__ __forceinline__ void load_if(const T* row, i64 col, bool inside) {
    if constexpr (N % VEC != 0) {
      load(row, inside ? col : N);
    } else {
#pragma unroll
      for (int k = 0; k < VEC / Access::kPer; ++k) {
        piece[k].raw = typename Access::Raw{};
        load_word_if(piece[k].raw, row + col + k * Access::kPer, inside);
      }
    }
  }
  // A phased slot (load_phased_slot): one piece where ALIGN is 16, as phased kernels have it;
  // their code is compiled beside other forms too, which load it element by element.
  __device__ __forceinline__ void load_phased(const T* chunk, i64 first, bool on) {
    const bool whole = Access::kPer == VEC && phased_whole<VEC, N>(first, on);
#pragma unroll
    for (int k = 0; k < VEC / Access::kPer; ++k) piece[k].raw = typename Access::Raw{};
    if constexpr (Access::kPer == VEC) load_word_if(piece[0].raw, chunk, whole);
    if (on && !whole) {
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        T v = {};
        if (phased_element<VEC, N>(first, j)) v = chunk[j];
        piece[j / Access::kPer].e[j % Access::kPer] = v;
      }
    }
  }
  // A phased slot loaded as its whole chunk under a predicate, what lies outside the row zeroed,
  // wherever the chunk lies inside its tensor: every chunk but the tensor's last (a row's first
  // chunk begins in the row before, its last ends in the row after or in the padding, and row 0
  // has phase 0). So no slot loads in a branch of its own but the last row's (`last_row`) last,
  // which load_phased reads element by element.
  __device__ __forceinline__ void load_phased_whole(const T* chunk, i64 first, bool on, bool last_row) {
    static_assert(Access::kPer == VEC, "phased slots are one 16-byte chunk");
    if (on && last_row && first + VEC > N) {
      load_phased(chunk, first, true);
      return;
    }
    piece[0].raw = {};
    load_word_if(piece[0].raw, chunk, on);
    zero_outside_row(first);
  }
  // The same in two steps, for a row loaded ahead of its use (a prefetching block's next row):
  // the select that zeroes an element, or a branch a slot (its paths meet in register moves),
  // waits for the load where it stands, so the next row's loads would hold up this row's work.
  // load_phased_chunk issues the load alone (not the tensor's last chunk); complete_phased,
  // where the row is first worked, reads that chunk element by element and zeroes the rest.
  __device__ __forceinline__ void load_phased_chunk(const T* chunk, i64 first, bool on, bool last_row) {
    static_assert(Access::kPer == VEC, "phased slots are one 16-byte chunk");
    piece[0].raw = {};
    load_word_if(piece[0].raw, chunk, on && !(last_row && first + VEC > N));
  }
  __device__ __forceinline__ void complete_phased(const T* chunk, i64 first, bool on, bool last_row) {
    if (on && last_row && first + VEC > N) load_phased(chunk, first, true);
    else zero_outside_row(first);
  }
  __device__ __forceinline__ void zero_outside_row(i64 first) {
#pragma unroll
    for (int j = 0; j < VEC; ++j)
      if (!phased_element<VEC, N>(first, j)) piece[0].e[j] = T{};
  }
  __device__ __forceinline__ void unpack(float (&out)[VEC]) const {
#pragma unroll
    for (int k = 0; k < VEC / Access::kPer; ++k) widen_piece(piece[k].raw, piece[k].e, out + k * Access::kPer);
  }
  // The inverse: values rounded to T, as a store would write them.
  __device__ __forceinline__ void pack(const float (&in)[VEC]) {
#pragma unroll
    for (int k = 0; k < VEC / Access::kPer; ++k)
#pragma unroll
      for (int j = 0; j < Access::kPer; ++j) piece[k].e[j] = from_f32<T>(in[k * Access::kPer + j]);
  }
};

// Realigned: the two aligned chunks as loaded and the slot's offset into them, picked out when
// unpacked (a select right after the load would wait for it there).
template <class T, int VEC, int ALIGN, i64 N>
struct PackedSlot<T, VEC, ALIGN, N, true> {
  typedef Realigned<T, VEC> Chunks;
  typedef typename SlotAccess<T, VEC, ALIGN>::Piece Piece;
  typename Chunks::Raw lo, hi;
  unsigned shift;

  __device__ __forceinline__ void load(const T* row, i64 col) {
    if (col + kVectorReach<T, VEC, ALIGN> <= N) {
      Chunks::load_chunks(row + col, lo, hi, shift);
    } else {
      Piece u;
#pragma unroll
      for (int j = 0; j < VEC; ++j) {
        T v = {};
        if (col + j < N) v = row[col + j];
        u.e[j] = v;
      }
      lo = hi = u.raw;
      shift = 0;
    }
  }
  __device__ __forceinline__ void load_if(const T* row, i64 col, bool inside) { load(row, inside ? col : N); }
  // The generic form's phased load, element by element: phased kernels never realign (their
  // slots are aligned chunks), but their code is compiled beside this form's.
  __device__ __forceinline__ void load_phased(const T* chunk, i64 first, bool on) {
    Piece u;
#pragma unroll
    for (int j = 0; j < VEC; ++j) {
      T v = {};
      if (on && phased_element<VEC, N>(first, j)) v = chunk[j];
      u.e[j] = v;
    }
    lo = hi = u.raw;
    shift = 0;
  }
  __device__ __forceinline__ void load_phased_whole(const T* chunk, i64 first, bool on, bool) {
    load_phased(chunk, first, on);
  }
  __device__ __forceinline__ void load_phased_chunk(const T* chunk, i64 first, bool on, bool) {
    load_phased(chunk, first, on);
  }
  __device__ __forceinline__ void complete_phased(const T*, i64, bool, bool) {}  // load_phased made it
  __device__ __forceinline__ void unpack(float (&out)[VEC]) const {
    Piece u;
    u.raw = Chunks::select(lo, hi, shift);
    widen_piece(u.raw, u.e, out);
  }
  __device__ __forceinline__ void pack(const float (&in)[VEC]) {
    Piece u;
#pragma unroll
    for (int j = 0; j < VEC; ++j) u.e[j] = from_f32<T>(in[j]);
    lo = hi = u.raw;
    shift = 0;
  }
};

// A run of P floats read or written as one access (16 bytes at P = 4): the piece in which
// per-thread regions of shared memory are laid out, a warp's pieces neighbours, so that its
// accesses have no bank conflicts (the backward's shared sums and weights, the forward's
// held γ and β).
template <int P>
struct alignas(4 * P) FloatPiece {
  float v[P];
};

// A region of shared memory in which each of THREADS threads keeps its slots of VEC floats,
// laid out [slot][piece][thread] in pieces of up to 4 floats: a warp's pieces are neighbours,
// so its accesses have no bank conflicts and 16-byte pieces take 4 wavefronts a warp. A thread
// reads back only what it wrote, so no barrier is needed. A region of K slots a thread takes
// K · VEC · THREADS floats.
template <int VEC, int THREADS>
struct SlotPieces {
  // kFloats: floats per shared-memory access (an enum: no data symbol in the module).
  enum : int { kFloats = VEC < 4 ? VEC : 4, kPerSlot = VEC / kFloats };
  typedef FloatPiece<kFloats> Piece;

  // The float where piece q of slot i of thread t starts.
  __device__ static __forceinline__ i64 at(int i, int q, int t) {
    return ((i64)(i * kPerSlot + q) * THREADS + t) * kFloats;
  }
  // Slot i of thread t, read or written a piece at a time.
  __device__ static __forceinline__ void load(const float* region, int i, int t, float (&v)[VEC]) {
#pragma unroll
    for (int q = 0; q < kPerSlot; ++q) {
      const Piece s = *reinterpret_cast<const Piece*>(region + at(i, q, t));
#pragma unroll
      for (int k = 0; k < kFloats; ++k) v[q * kFloats + k] = s.v[k];
    }
  }
  __device__ static __forceinline__ void store(float* region, int i, int t, const float (&v)[VEC]) {
#pragma unroll
    for (int q = 0; q < kPerSlot; ++q) {
      Piece s;
#pragma unroll
      for (int k = 0; k < kFloats; ++k) s.v[k] = v[q * kFloats + k];
      *reinterpret_cast<Piece*>(region + at(i, q, t)) = s;
    }
  }
  // Slot i of thread t += v, a piece at a time (each piece read, added to and written back).
  __device__ static __forceinline__ void add(float* region, int i, int t, const float (&v)[VEC]) {
#pragma unroll
    for (int q = 0; q < kPerSlot; ++q) {
      Piece& piece = *reinterpret_cast<Piece*>(region + at(i, q, t));
      Piece s = piece;
#pragma unroll
      for (int k = 0; k < kFloats; ++k) s.v[k] += v[q * kFloats + k];
      piece = s;
    }
  }
};

// threadIdx.x in a block of THREADS threads, with that bound told to the compiler, which does not
// know blockDim: without it a bound such as `lane + offset < N` is tested for every element of
// an unrolled row, though only the last offsets can reach N (LN bf16 5003's staged rows: a
// compare, two zeroings and two predicated conversions per element and pass; entry 47).
template <int THREADS>
__device__ __forceinline__ int block_thread() {
  const unsigned t = threadIdx.x;
  __builtin_assume(t < (unsigned)THREADS);
  return (int)t;
}

// ---- reductions ------------------------------------------------------------------------------
// One butterfly step: each component adds the value of the lane `offset` away.
__device__ __forceinline__ void add_from_lane(float& v, int offset) { v += __shfl_xor_sync(0xffffffffu, v, offset); }
__device__ __forceinline__ void add_from_lane(float2& v, int offset) {
  add_from_lane(v.x, offset);
  add_from_lane(v.y, offset);
}
__device__ __forceinline__ void add_from_lane(float4& v, int offset) {
  add_from_lane(v.x, offset);
  add_from_lane(v.y, offset);
  add_from_lane(v.z, offset);
  add_from_lane(v.w, offset);
}
// Butterfly sum over aligned groups of WIDTH lanes, of a float, a float2 (a row's Σg and Σg·x̂)
// or a float4 (two rows' at once, LaunchConfig::paired_rows: each component adds as a float
// alone would, so paired rows keep the bits of one row at a time). Every lane ends with the same
// bits (each step adds the same two values on both partners), which keeps the kernels
// deterministic.
template <int WIDTH, class V>
__device__ __forceinline__ V group_sum(V v) {
#pragma unroll
  for (int offset = WIDTH / 2; offset > 0; offset /= 2) add_from_lane(v, offset);
  return v;
}
__device__ __forceinline__ void add_to(float2& total, const float2& v) {
  total.x += v.x;
  total.y += v.y;
}
__device__ __forceinline__ void add_to(float4& total, const float4& v) {
  total.x += v.x;
  total.y += v.y;
  total.z += v.z;
  total.w += v.w;
}

// The lanes a butterfly over `warps` values takes: the next power of two, 2 to 32.
__host__ __device__ constexpr int butterfly_lanes(int warps) {
  return warps <= 2 ? 2 : warps <= 4 ? 4 : warps <= 8 ? 8 : warps <= 16 ? 16 : 32;
}

// Sum of v over the THREADS_PER_ROW threads that share a row, for ROWS rows per block.
// Rows wider than a warp meet in shared memory; the buffer is double so one barrier per row
// suffices (a warp cannot reach buffer b again before every warp has left it). Every thread
// adds the same values in the same order, so all hold the same bits. Two ways to add the
// warps' sums there (bench/NOTES.md entry 44, on the H200):
// - BUTTERFLY: in every warp lane w takes warp w's sum, then log2(warps) shuffles: one shared
//   load a thread instead of one a warp, the fewest instructions. Against one after another:
//   faster where a block of 16-bit rows is the whole row (backward LN bf16 8192 1.03-1.04x,
//   12288 1.03-1.05x; the forward's RMSNorm 5120 1.07-1.10x, its blocks 1.00-1.02x in median);
//   slower where a cluster's blocks meet next (0.95-0.98x: a longer path before the cluster's
//   barrier), in the backward's fp32 LayerNorm blocks (2048, 5003: 0.95x) and the forward's
//   320-thread LayerNorm blocks (64 → 72 registers, 0.90x).
// - else every thread reads the warps' sums one after another. (Reading them two to a 16-byte
//   load and adding them as a tree was no faster, and spilled in 1024-thread fp32 clusters.)
// T: float2, or float4 for two rows' sums at once.
template <int THREADS_PER_ROW, int ROWS, bool BUTTERFLY = false, class T = float2>
struct RowReducer {
  static constexpr int kWarps = THREADS_PER_ROW > 32 ? THREADS_PER_ROW / 32 : 1;
  static constexpr int kWarpsPow2 = butterfly_lanes(kWarps);
  T (*buffer)[ROWS][kWarps];
  int parity;

  __device__ __forceinline__ T sum(T v, int row_in_block, int lane_in_row) {
    if constexpr (THREADS_PER_ROW <= 32) {
      return group_sum<THREADS_PER_ROW>(v);
    } else {
      v = group_sum<32>(v);
      if ((lane_in_row & 31) == 0) buffer[parity][row_in_block][lane_in_row >> 5] = v;
      __syncthreads();
      if constexpr (BUTTERFLY) {
        const int w = lane_in_row & (kWarpsPow2 - 1);  // each group of kWarpsPow2 lanes adds all the warps alike
        const T total = w < kWarps ? buffer[parity][row_in_block][w] : T{};
        parity ^= 1;
        return group_sum<kWarpsPow2>(total);
      } else {
        T total = buffer[parity][row_in_block][0];
#pragma unroll
        for (int w = 1; w < kWarps; ++w) add_to(total, buffer[parity][row_in_block][w]);
        parity ^= 1;
        return total;
      }
    }
  }
};

// ---- asynchronous copies into shared memory (sm_80) -------------------------------------------
__device__ __forceinline__ unsigned shared_address(const void* p) {
  unsigned long long generic = (unsigned long long)p, shared;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(shared) : "l"(generic));
  return (unsigned)shared;
}
// 16 bytes global -> shared without passing through registers; lands by cp_async_wait.
__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(shared_dst)), "l"(global_src)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most `kPending` of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

// ---- thread-block clusters (sm_90): the blocks of a cluster share one row ------------------
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// The rank in a cluster of kBlocks. The bound is news to ptxas, which reads the rank from a
// special register: without it each slot's bounds are tested at run time. Bounded, the
// forward's LayerNorm bf16 N = 65536 in 1024-thread blocks spills no more (64 bytes before)
// and the backward's fp32 clusters without shared sums run 5-10% faster (bench/NOTES.md
// entry 38).
template <int kBlocks>
__device__ __forceinline__ unsigned cluster_rank_below() {
  const unsigned rank = cluster_rank();
  __builtin_assume(rank < (unsigned)kBlocks);
  return rank;
}
// Every thread of every block of the cluster arrives; release/acquire orders memory.
__device__ __forceinline__ void cluster_barrier() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}
// The same meeting point, but only threads that wrote something for the other blocks pay for
// ordering it (`publisher`): a release by every thread would also wait for all of their
// outstanding global stores (the previous row's dx) to drain.
__device__ __forceinline__ void cluster_barrier_publish(bool publisher) {
  if (publisher) asm volatile("fence.acq_rel.cluster;" ::: "memory");
  asm volatile("barrier.cluster.arrive.relaxed;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}
// The address in the cluster's block `rank` of what `local` is in this block's shared memory.
__device__ __forceinline__ unsigned cluster_address(const void* local, unsigned rank) {
  unsigned long long generic = (unsigned long long)local, shared;
  asm volatile("cvta.to.shared.u64 %0, %1;" : "=l"(shared) : "l"(generic));
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"((unsigned)shared), "r"(rank));
  return remote;
}
// v, as stored at the same shared-memory address in the cluster's block `rank`.
__device__ __forceinline__ float2 load_from_block(const float2* local, unsigned rank) {
  float2 v;
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];"
               : "=f"(v.x), "=f"(v.y) : "r"(cluster_address(local, rank)) : "memory");
  return v;
}
__device__ __forceinline__ float4 load_from_block(const float4* local, unsigned rank) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(cluster_address(local, rank)) : "memory");
  return v;
}
__device__ __forceinline__ float load_from_block(const float* local, unsigned rank) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(cluster_address(local, rank)) : "memory");
  return v;
}

// ---- a value from every block of a cluster, pushed (sm_90) -----------------------------------
// (The backward's clusters meet this way; the forward's did not gain, bench/NOTES.md entry 39,
// and meet at a cluster barrier.) Each block stores its value into every block's shared memory (st.async, which counts the
// bytes against the receiver's mbarrier), and each block waits on its own mbarrier until all
// kBlocks values have landed: one one-way hop between blocks, where a cluster barrier then
// reads of the other blocks' memory take a barrier across every thread of the cluster and a
// round trip. Two mailboxes in turn: a block posts into mailbox b again two meetings later,
// which it reaches only after every block posted the meeting between, i.e. after every block
// finished reading b (each reads its values before it posts again).
template <class T, int kBlocks>
struct ClusterMailboxes {
  T value[2][kBlocks];              // [mailbox][sender's rank]
  unsigned long long landed[2];     // mbarriers: one arrival (the receiver's) plus the bytes
};

template <class T, int kBlocks>
struct ClusterPost {
  unsigned meetings;  // so far: the mailbox is its low bit, the mbarrier's phase the next

  // One per kernel, at a fixed address (no register holds it).
  static __device__ __forceinline__ ClusterMailboxes<T, kBlocks>* mailboxes() {
    __shared__ ClusterMailboxes<T, kBlocks> boxes;
    return &boxes;
  }

  // Every thread of every block calls it once, before the first post: no block may store into
  // another's mailbox before that block's mbarriers exist.
  __device__ __forceinline__ void start() {
    if (threadIdx.x == 0) {
      for (int b = 0; b < 2; ++b)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&mailboxes()->landed[b])) : "memory");
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
  }
  // v: this block's value, the same in threads 0 .. kBlocks − 1 (they post it, one receiver
  // each). Returns, in every thread, the values of blocks 0 .. kBlocks − 1 in rank order, in
  // this block's shared memory until the next-but-one exchange.
  __device__ __forceinline__ const T* exchange(const T& v, unsigned rank);
};

__device__ __forceinline__ void store_to_block_async(unsigned remote, float2 v, unsigned remote_landed) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];"
               ::"r"(remote), "f"(v.x), "f"(v.y), "r"(remote_landed) : "memory");
}
__device__ __forceinline__ void store_to_block_async(unsigned remote, float4 v, unsigned remote_landed) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];"
               ::"r"(remote), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(remote_landed) : "memory");
}

template <class T, int kBlocks>
__device__ __forceinline__ const T* ClusterPost<T, kBlocks>::exchange(const T& v, unsigned rank) {
  const unsigned box = meetings & 1, phase = (meetings >> 1) & 1;
  ++meetings;
  ClusterMailboxes<T, kBlocks>* const boxes = mailboxes();
  unsigned long long* const landed = &boxes->landed[box];
  if (threadIdx.x < (unsigned)kBlocks) {
    if (threadIdx.x == 0)
      // Relaxed: the receiver's own arrival publishes nothing (the values travel with the
      // senders' bytes); released, it waited for this thread's earlier stores, e.g. the last
      // row's dx, and the meetings took 3-5% longer (bench/NOTES.md entry 39).
      asm volatile("mbarrier.arrive.expect_tx.relaxed.cluster.shared::cta.b64 _, [%0], %1;"
                   ::"r"(shared_address(landed)), "n"(kBlocks * (int)sizeof(T)) : "memory");
    const unsigned to = threadIdx.x;
    store_to_block_async(cluster_address(&boxes->value[box][rank], to), v, cluster_address(landed, to));
  }
  unsigned done = 0;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done) : "r"(shared_address(landed)), "r"(phase) : "memory");
  } while (!done);
  return boxes->value[box];
}

}  // namespace nj
