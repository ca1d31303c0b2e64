// A phased forward block (templates/norm_forward.cuh, kPhased) for the tests that pin one: the
// NVRTC spill check and the GPU check against the reference run the same shapes.
#pragma once
#include <algorithm>
#include <cstdint>

#include "codegen/integer_math.h"
#include "codegen/launch_config.h"

namespace normjit::test {

// 16-bit rows of n elements: about two 16-byte slots a thread of the span (n + 7) over `cluster`
// blocks (the slots halved, rounded down, then up to warps: LN 4095 takes 256 threads, one of
// them three slots), 64 registers a thread; with γ and β held, blocks of fewer than 512 threads
// one an SM, as the aligned rows' memory-rich rule has them.
inline codegen::LaunchConfig phased_forward_block(int64_t n, int cluster, bool prefetch, bool held) {
  codegen::LaunchConfig c;
  c.vec = 8;
  c.cluster = cluster;
  const int64_t lanes = codegen::ceil_div(n + 7, int64_t{8}) / (int64_t{2} * cluster);
  c.threads = c.threads_per_row = static_cast<int>(std::max<int64_t>(64, codegen::round_up(lanes, 32)));
  c.min_blocks_per_sm = held && c.threads < 512 ? 1 : std::max(1, 65536 / (c.threads * 64));
  c.prefetch = prefetch;
  c.shared_weights = held;
  c.phased = true;
  return c;
}

}  // namespace normjit::test
