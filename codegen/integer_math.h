// Integer helpers the launch heuristics share (codegen/launch_config.cpp, forward_config.cpp,
// search_space.cpp), on LLVM's MathExtras. Counts here are positive: rows, slots, threads.
#pragma once
#include <algorithm>
#include <cstdint>

#include "llvm/Support/MathExtras.h"

namespace normjit::codegen {

inline int64_t ceil_div(int64_t a, int64_t b) { return static_cast<int64_t>(llvm::divideCeil(a, b)); }
inline int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
// The smallest power of two at least v; 1 for v <= 1 (an empty bucket is a bucket of one).
inline int next_pow2(int64_t v) {
  return v <= 1 ? 1 : static_cast<int>(llvm::PowerOf2Ceil(static_cast<uint64_t>(v)));
}
inline bool is_pow2(int64_t v) { return v > 0 && llvm::isPowerOf2_64(static_cast<uint64_t>(v)); }
// Threads, in whole warps, that hold `slots` at `per_thread` slots each.
inline int64_t warp_threads(int64_t slots, int64_t per_thread) { return round_up(ceil_div(slots, per_thread), 32); }
// The threads of a block holding per_block_slots, iters a thread: whole warps, two at least.
inline int row_block_threads(int64_t per_block_slots, int64_t iters) {
  return static_cast<int>(std::max<int64_t>(warp_threads(per_block_slots, iters), 64));
}

}  // namespace normjit::codegen
