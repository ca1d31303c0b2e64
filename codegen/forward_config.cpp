#include "codegen/forward_config.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "codegen/integer_math.h"
#include "codegen/norm_problem.h"
#include "codegen/phased_rows_config.h"
#include "normjit/normjit.hpp"

namespace normjit::codegen {
namespace {

// The fewest threads (a multiple of 32) that stream a row of `slots` in as many batches a
// thread as kForwardStreamThreads do: none of the row's batches runs with most of the block idle
// (N = 57344: 896 threads, two batches each, where 1024 leave an eighth of the second idle).
int balanced_stream_threads(int64_t slots) {
  const int64_t batches = ceil_div(slots, int64_t{kForwardStreamThreads} * kForwardStreamBatch);
  return static_cast<int>(std::max<int64_t>(64, warp_threads(slots, batches * kForwardStreamBatch)));
}

// Blocks of `threads` an SM holds at kForwardRegistersPerThread registers a thread: the bound
// that gives ptxas those registers.
int registers_bound_blocks(int threads) {
  return std::clamp(kRegistersPerSm / (threads * kForwardRegistersPerThread), 1, 32);
}

// Whether many option-free rows of p (the caller's test) on a memory-rich device (an H200) are
// streamed in two 512-thread blocks an SM, or RMSNorm's past 160 KB in clusters of two
// 1024-thread blocks (choose_forward_config's streamed rows), where the rules before gave
// LayerNorm streamed blocks of 640-1024 threads and RMSNorm clusters of blocks of fewer than 1024
// threads (one an SM, which do not prefetch): aligned 16-bit rows of 32769-262143 columns
// (LayerNorm: to 98304). Pass 2 reads x from the row's end back, so the rows in flight may
// outgrow L2 a little. Exhaustive forward tuning, bf16, fp32 / bf16 γ, M·N = 64 Mi
// (bench/results/2026-12-01-h200-long-forward-rows/, call 5), then bench --forward --graph
// against the rules before, bf16 and fp16, fp32 γ, two rounds (call 6):
// - LayerNorm: two blocks of 512 an SM, 57344 1.06x, 81920 1.05-1.07x, 98304 1.08-1.10x (bf16
//   120.1 → 111.2 µs). Past that tuning read it 1.02-1.08x faster, bench 0.86-0.98x at 114688,
//   196608 and 229376 (bf16 229376 132.0 → 153.9): those keep theirs.
// - RMSNorm, rows of up to 160 KB: two blocks of 512 an SM (36864 1.34x, 40960 1.25x, 49152
//   1.13x, 57344 1.02x, 81920 1.19x: bf16 121.1 → 101.9 µs); longer: a cluster of two
//   1024-thread blocks a row, so that half as many rows wait in L2 for pass 2 (98304 1.05-1.06x,
//   114688 1.10x, 163840 1.26x: 129.1 → 102.4, 196608 1.15x, 229376 1.10x). Clusters of 8 of
//   320-448 threads with γ held tuned best at some of these (RMS fp32 γ 81920 103.7 against
//   125.3, 98304 135.2 against 153.5), at others not (16-bit γ): one rule for all.
bool streams_rows_between_powers(const NormProblem& p, int sm, int slot_bytes, bool memory_rich_device) {
  const int64_t most_columns = p.kind == NormKind::LayerNorm ? 98304 : 262143;
  return sm >= 90 && memory_rich_device && dtype_size(p.x_dtype) == 2 && slot_bytes == 16 && p.n > 32768 &&
         p.n <= most_columns;
}

// Whether a row's slots are all whole 16-byte vectors at 16-byte boundaries: rows aligned to 16
// bytes, N a multiple of the vector (what a row copied ahead into shared memory needs: each
// thread copies its slots as 16-byte pieces).
bool whole_aligned_slots(const NormProblem& p, const LaunchConfig& c) {
  return c.vec * dtype_size(p.x_dtype) == 16 && p.alignment >= 16 && p.n % c.vec == 0;
}

// A row held by one block at an element a thread a pass, at most kFewElementSlots a thread.
bool holds_few_elements(const NormProblem& p, const LaunchConfig& c) {
  return c.row_in_registers && c.cluster == 1 && c.vec == 1 && c.threads == c.threads_per_row &&
         ceil_div(p.n, int64_t{c.threads}) <= kFewElementSlots;
}

// A cluster a row (sm_90): how many blocks, of how many threads, and whether at 128 bytes of
// x a thread with registers unbounded (`wide`, one block an SM).
struct ClusterBlocks {
  int cluster;
  int64_t threads;
  bool wide;
  bool quarter = false;  // quarter_slot_clusters' blocks: three an SM at most
  bool held_weights = false;  // γ (and β where both fit) held in shared memory where it fits
};

// RMSNorm's rows between the powers of two (streams_rows_between_powers) whose 16-byte slots a
// cluster of 8 holds at four a thread in whole warps of 192-512 threads (N a multiple of 8192,
// 49152-131072), with γ in shared memory and two or three blocks an SM: a block's meeting hides
// behind another's loads, where the streamed rows read x twice. bench --forward --graph, the
// configs pinned at M = 64 Mi / N (bench --config; bench/results/2026-12-01-h200-forward-
// shared-prefetch/, calls 1-2), bf16 fp32 γ, µs against the streamed rule: 49152 88.9 → 85.8,
// 57344 94.5 → 81.4, 73728 99.7 → 85.7, 81920 102.1 → 82.6 (three an SM; two: 101.0), 90112
// 107.2 → 97.5, 98304 103.6 → 92.1, 106496 100.3 → 91.6, 114688 95.6 → 88.1, 122880 97.3 →
// 88.1; fp16 and 16-bit γ alike (57344 88.3 → 81.1, 81920 93.7 → 82.9, 114688 90.2 → 87.9).
// Not LayerNorm (81920 0.93x, 98304 0.99x: its two sums spill or take the third block's
// registers), nor 147456-163840 (576-640 threads, one an SM: 0.81x), nor 40960 (160 threads:
// 1.01x). 65536 and 131072 keep their 1024-thread clusters (77.3 against 84.5 µs at 65536).
std::optional<ClusterBlocks> quarter_slot_clusters(const NormProblem& p, int64_t slots) {
  constexpr int kSlotsAThread = 4;
  const int64_t per_block = int64_t{kMaxForwardCluster} * kSlotsAThread;
  // Whole 16-byte slots (N a multiple of the vector) and γ to hold, as timed; otherwise the
  // streamed rows, as before.
  const bool whole_slots = p.n == slots * (16 / dtype_size(p.x_dtype));
  if (p.kind != NormKind::RMSNorm || !p.has_weight || !whole_slots || slots % (per_block * 32) != 0)
    return std::nullopt;
  const int64_t threads = slots / per_block;
  if (threads < 192 || threads > 512) return std::nullopt;
  ClusterBlocks b{kMaxForwardCluster, threads, false};
  b.quarter = b.held_weights = true;
  return b;
}

// LayerNorm's columns past which its fp32 rows past the wide blocks take the clusters of 8 at
// four waves of them (long_row_clusters).
constexpr int64_t kLayerNormLongRowsAtFourWavesPast = 229376;

// How fp32 rows past the wide blocks are held on a memory-rich device (register_cluster_blocks'
// rich_long_fp32): not (the streamed clusters of 2-8), in clusters of 8 blocks of the row's
// exact width, or of 1024 threads.
enum class LongRowClusters { None, ExactWidth, Full };

// Clusters of 8 of 1024 threads with γ held by the waves of clusters of 8 that m's bucket makes
// (sms: blocks an SM's worth at once; 16 clusters on an H200). bench --forward --graph, A/B
// against the streamed clusters, two rounds (bench/results/2026-12-02-h200-forward-long-rows/,
// calls 1-4), fp32 167936-262144, 16- and 8-byte slots, LayerNorm's 4-byte ones: one wave
// (m <= 16) RMS 1.08-1.52x, LN 1.28-2.04x at every shape; two waves (17-32 rows) LN 1.02-1.54x,
// RMS 0.89-1.18x (20-28 rows lose up to 11%: streamed); four (33-64 rows) RMS 1.01-1.50x, LN
// 1.01-2.02x past 229376 columns and 0.91-1.33x below (64 rows lose up to 9%: streamed); eight
// or more (128 rows up, against the exact width) 1.00-1.53x.
// RMSNorm's 4-byte slots (fp32 rows aligned to 4 bytes, odd N) keep session 63's rule (from
// bucket 128, the exact width): ptxas spills 300-450 bytes of its 1024-thread blocks at most N
// (233473-262143; 229377, whose last slot is the row's last element, none), and they ran
// 0.65-0.98x at 200003 and 250001 (2.2x at 229377; call 3).
// bucket: m's power of two (ForwardShape::bucket; 0 where m is not known: the many rows' config).
LongRowClusters long_row_clusters(const NormProblem& p, int64_t bucket, int sms, int slot_bytes) {
  if (p.kind == NormKind::RMSNorm && slot_bytes == 4)
    return bucket == 0 || bucket >= 128 ? LongRowClusters::ExactWidth : LongRowClusters::None;
  const int64_t waves = ceil_div(bucket * kMaxForwardCluster, sms);
  bool takes = waves <= 1 || waves >= 8;
  if (!takes && p.kind == NormKind::LayerNorm) takes = waves == 2 || p.n > kLayerNormLongRowsAtFourWavesPast;
  if (!takes && p.kind == NormKind::RMSNorm) takes = waves > 2;
  return takes ? LongRowClusters::Full : LongRowClusters::None;
}

// The fewest blocks that hold the row at the target bytes a thread (more bytes a thread spill
// in 1024-thread blocks: fp32 N = 262144 spills 128-352 bytes), or none where rows of this
// problem are not held by register clusters. rich_rows: many option-free rows on a
// memory-rich device (an H200), whose fp32 rows take 128 bytes a thread.
std::optional<ClusterBlocks> register_cluster_blocks(const NormProblem& p, int sm, int64_t slots, int target_iters,
                                                     int max_iters, int wide_threads, bool rich_rows,
                                                     LongRowClusters long_rows, bool streams_narrow_blocks) {
  const bool layer_norm = p.kind == NormKind::LayerNorm, wide_x = dtype_size(p.x_dtype) == 4;
  // What the rules below hold; on a memory-rich device fp32 rows up to 8 blocks of 1024
  // threads at 128 bytes a thread (N = 262144), past the wide blocks (rich_long_fp32, below).
  const int64_t held_slots =
      int64_t{kMaxForwardCluster} * std::max(int64_t{kMaxForwardRowThreads} * target_iters, int64_t{wide_threads} * max_iters);
  const bool rich_long_fp32 = long_rows != LongRowClusters::None && wide_x && slots > held_slots;
  if (sm < 90 || slots > (rich_long_fp32 ? int64_t{kMaxForwardCluster} * kMaxForwardRowThreads * max_iters : held_slots))
    return std::nullopt;
  // fp32 LayerNorm in blocks of at most 512 threads (tuned: fp32 N = 65536, 8 blocks of 512,
  // 1.17x faster than streaming; bench/NOTES.md, entries 19 and 20).
  const int64_t most_threads = layer_norm && wide_x ? 512 : kMaxForwardRowThreads;
  // The fewest blocks (a power of two, 2 to 8) whose threads hold the row at `iters` slots
  // each within `at_most` threads, or 8; and those threads.
  auto fewest_blocks = [&](int iters, int64_t at_most) {
    ClusterBlocks b{2, 0, false};
    for (;; b.cluster *= 2) {
      b.threads = warp_threads(slots, int64_t{b.cluster} * iters);
      if (b.threads <= at_most || b.cluster == kMaxForwardCluster) return b;
    }
  };
  ClusterBlocks blocks = fewest_blocks(target_iters, most_threads);
  if (blocks.threads > most_threads && max_iters > target_iters) {
    // fp32 rows a cluster of 8 holds only in wider blocks (LayerNorm beyond 65536, RMSNorm
    // beyond 131072): max_iters' 128 bytes a thread in the fewest blocks of at most
    // wide_threads. Exhaustive tuning, then bench --graph, M·N = 64 Mi
    // (bench/results/2026-11-25-h100-{8b1aebb-cliff-tune,986d9d5-refits2}/): LN 81920 327 →
    // 237 us (4 x 640; 24-48 bytes spilled, still the best), 131072 284 → 264 (8 x 512),
    // 163840 318 → 256 (8 x 640; streamed before); RMS 163840 313 → 224, 196608 288 → 242
    // (8 x 768). Streamed beyond (LN 196608, 262144).
    // Only where that takes fewer blocks, or the target's blocks are wider than
    // kWideForwardThreads: in the same 8 blocks, 128 bytes a thread in half the threads lost
    // at LN 86016 (352 against 672 threads: 327 → 345 us), tied at 98304 (384 against 768)
    // and won from 110592 (448 against 864: 301 → 293; -f29be5c-range-check/).
    ClusterBlocks wider = fewest_blocks(max_iters, wide_threads);
    wider.wide = true;
    if (wider.cluster < blocks.cluster || blocks.threads > kWideForwardThreads) blocks = wider;
  }
  if (rich_rows && wide_x) {
    // A memory-rich device (an H200): fp32 rows at 128 bytes of x a thread in the fewest
    // blocks of at most 512 threads, 64 registers a thread. Exhaustive tuning on the H200,
    // M·N = 64 Mi, graph µs (bench/results/2026-11-28-h200-{50783ff-memory-rich-2,
    // 836255d-peers}/): LN 65536 183.7 → 149.0 (4 x 512 against 8 x 512 at 64 bytes), RMS
    // 131072 200.6 → 171.2 (8 x 512 against 8 x 1024). In bench --graph against the rules
    // before, two runs (-f7b43cf-fp32-clusters/ab.txt): LN 49152-131072 1.17-1.27x (though
    // ptxas spills 4-60 bytes at 49152, 98304 and 131072), RMS 40960-131072 1.23-1.46x;
    // LayerNorm's 320-thread blocks at 40960 (three an SM, 128 bytes spilled) lost 2.5%, so
    // LayerNorm takes blocks of 384 threads or more only. 163840 keeps its blocks of 640.
    // RMSNorm's with γ held in shared memory (two or three blocks an SM, each 40-64 KB): bench
    // --forward --graph, M·N = 64 Mi, A/B against γ read from L2, two rounds
    // (bench/results/2026-12-02-h200-forward-clusters-of-16/, call 3), µs: 40960 146.9 → 145.6,
    // 49152 155.2 → 148.0, 65536 146.0 → 140.1, 98304 165.4 → 152.6, 114688 174.9 → 152.3,
    // 131072 162.7 → 147.4, 163840 174.8 → 168.3, 196608 171.1 → 162.5 (1.01-1.17x). Not timed
    // for LayerNorm, whose γ and β both take the room.
    ClusterBlocks rich = fewest_blocks(max_iters, kMaxForwardRowThreads / 2);
    rich.held_weights = !layer_norm;
    if (!layer_norm || rich.threads >= 384) blocks = rich;
  }
  // Past the wide blocks (RMSNorm beyond 196608, LayerNorm beyond 163840; streamed rows read
  // x twice there): a cluster of 8 of up to 1024 threads, 128 bytes a thread, one block an
  // SM, γ held in shared memory (its loads take registers the row needs: held, no spill at
  // 64 registers). bench --forward --graph with the configs pinned at M = 64 Mi / N
  // (bench/results/2026-12-02-h200-forward-clusters-of-16/, call 1), N = 262144 against the
  // streamed rows: RMS 204.9 → 159.7 µs (64 → 82% of copy), LN 208.9 → 194.0 (63 → 68%).
  // Its blocks take the whole 1024 threads (LongRowClusters::Full), the last block's tail (or
  // the last blocks) empty: fewer slots a thread, and no spill where the exact width leaves
  // ptxas 64 registers (928-992 threads spill 136 bytes). Pinned against the exact width,
  // bench --forward --graph (bench/results/2026-12-02-h200-forward-held-bias/, call 2,
  // 229376-253952 at 32-96 rows: 1.03-1.20x; -forward-long-rows/, call 1, 172032-221184 at
  // 16-292 rows: 672-864 threads, 1.00-1.11x, bar 172032 at 292 rows, 0.997x), LN 245760 at
  // 96 rows 86.0 → 72.4 µs.
  if (rich_long_fp32) {
    blocks = fewest_blocks(max_iters, kMaxForwardRowThreads);
    blocks.wide = blocks.held_weights = true;
    if (long_rows == LongRowClusters::Full) blocks.threads = kMaxForwardRowThreads;
  }
  // 16-bit LayerNorm only in 1024-thread blocks (the whole SM at 64 registers), and not for
  // parallel norms. Its clusters meet once (warp- then block-shifted moments) and, with the
  // rank bounded for ptxas, do not spill; against rows streamed twice (bench --graph, M·N =
  // 64 Mi, bench/NOTES.md entry 38), fp32 γ: 65536 127 → 123 us, 131072 148 → 134, 262144 151
  // → 138; γ in x's dtype: 119 → 106, 144 → 116, 148 → 128. In blocks of 576-896 threads (one
  // an SM) 3-19% slower (36864-57344, 81920, 98304, 163840); parallel norms 7-12% slower
  // (65536, 131072).
  if (layer_norm && !wide_x && (blocks.threads != kMaxForwardRowThreads || p.parallel)) return std::nullopt;
  // RMSNorm's too where its rows stream instead (streams_rows_between_powers), but for the
  // clusters of 8 of four slots a thread that beat the streamed rows.
  if (streams_narrow_blocks && blocks.threads < kMaxForwardRowThreads) return quarter_slot_clusters(p, slots);
  return blocks;
}

// Whether option-free 16-bit rows held by one 1024-thread block an SM, or a cluster of them,
// load their next row while this one meets, on a memory-rich device (an H200): where each
// block (or cluster) takes two rows or more (m's bucket: the clusters an SM's worth of blocks
// makes take m · cluster / SMs rows each). `tune --forward --config` beside the heuristic, bf16,
// M·N = 64 Mi (bench/results/2026-11-30-h200-odd-occupancy/, calls 4-5): RMS 65536-262144
// 1.18-1.21x, LN 1.04-1.09x (ptxas spills 4-36 bytes at the cap of 64 registers with fp32 γ),
// 32768 (one block) 1.02-1.08x. In bench --graph against the rules before (calls 5-6, bf16 and
// fp16, fp32 and 16-bit γ, two rounds): RMS 65536-262144 1.17-1.22x, LN 65536-131072
// 1.02-1.07x, 262144 0.98-1.06x (fp32 γ 0.98-1.00x, 16-bit γ 1.03-1.06x), 32768 1.01-1.07x. Not
// RMSNorm's clusters of 640-768 threads (40960, 98304, 196608), unbounded at 74-76 registers:
// 0.86-0.97x.
bool prefetches_long_rows(const NormProblem& p, int64_t m, int sm_count, int cluster, bool memory_rich_device) {
  return memory_rich_device && !has_forward_fused_options(p) && dtype_size(p.x_dtype) == 2 &&
         (m < 0 || int64_t{next_pow2(std::max<int64_t>(m, 1))} * cluster >= 4 * int64_t{grid_cluster_blocks(sm_count)});
}

// Phased rows (odd 16-bit rows in phase, templates/norm_forward.cuh kPhased) on a memory-rich
// sm_90 at many rows: one block holding the row's span at four 16-byte slots a thread, two where
// four make fewer than 256 threads and two make 256-512, γ and β held in shared memory at the
// block's phase, 64 registers a thread as far as shared memory holds the blocks; prefetching
// where that measured faster (kMaxPhasedPrefetchThreads, below). Tuned at M = 16384 on the H200,
// bf16, fp32 and bf16 γ (bench/results/2026-11-29-h200-forward-phased/call2-tune.txt), then in
// bench --forward --graph against the rules of their alignment (rows of an element a thread),
// M·N = 64 Mi, two rounds (call3-ab.txt there): RMSNorm 1001-30001 1.01-1.41x (fp16 alike).
// With x's chunks loaded whole (PackedSlot::load_phased_whole; call7-ab.txt), bf16 fp32 γ: RMS
// 1001 100 → 77 µs, 6001 90 → 80, 12289 112 → 79, 20001 118 → 90, 30001 129 → 82. Nothing takes
// it without held weights.
//
// LayerNorm's phased rows took the same rule once their statistics met once (Σx and Σx²,
// templates/norm_forward.cuh sums_of_powers_moments): before, with two meetings a row, they
// gained only at 1025-2048, 4000-5120 and 16385-20480 and lost to prefetching elsewhere.
// bench --forward --graph, M·N = 64 Mi, against 8c3cc25, two rounds
// (bench/results/2026-11-29-h200-layernorm-one-meeting/call2-ab.txt), bf16 fp32 γ: 1001 108 →
// 84 µs, 2001 122 → 80, 3001 110 → 78, 4095 114 → 86, 5003 106 → 80, 6001 105 → 82, 8191 114 →
// 100, 10001 106 → 96, 12289 109 → 92, 16385 116 → 87, 20001 119 → 104 (1.10-1.53x); fp16 2001,
// 5003, 12289 1.20-1.56x. Where one block cannot hold LayerNorm's γ and β (N ≈ 28600-32767) rows
// of an element a thread stay: a prefetching cluster of two blocks a row holding them, tuned
// 1.28x faster at 30001 and M = 4096 (call2-tune.txt), measured 0.96x, 1.00x and 1.12x at 29001,
// 30001 and 32001 in bench (2097-2314 rows; 0.955x with γ in x's dtype; call3-ab.txt).

// Prefetching phased blocks (the next row's chunks issued before this row's meetings, made the
// row where worked: PackedSlot::load_phased_chunk), tuned at M = 16384 on the H200, bf16 fp32 γ,
// against the rule above (bench/results/2026-11-29-h200-backward-whole-chunks/call3-tune.txt):
// RMSNorm at two slots a thread (up to 544 threads) 1001-8191 1.01-1.18x (5003 106 → 90 µs),
// else at four, no blocks bound, 10001-12289 0.99-1.01x and 16385 1.31x (190 → 145). Not tried
// past 544 threads. In bench --forward --graph at M·N = 64 Mi against 53e0333 (call4-ab.txt,
// two rounds, bf16 fp32 γ and fp16): RMSNorm 2001-8191 1.05-1.20x, 16385 1.33x, 1001 and
// 10001-12289 within 2%.
constexpr int64_t kMaxPhasedPrefetchThreads = 544;

// LayerNorm's prefetching blocks of two slots take about 72 registers a thread, so past 448
// threads (N ≈ 7163 on) one block fills an SM; its prefetching blocks of four slots take 100-116
// registers. Up to 320 threads of four slots (N ≈ 10233) blocks of four slots that do not
// prefetch, 72-96 registers, two or three an SM, were faster: bench --forward --graph, M·N = 64
// Mi, bf16 fp32 γ, two rounds (bench/results/2026-11-29-h200-bias-registers/call1-output-tail.txt):
// 8191 100 → 89 µs, 9001 105 → 88, 10001 96 → 90; at 11001-12289 (352-416 threads) they tied,
// at 7001 (two slots, 448 threads) they lost (81 → 87). Two-slot prefetching blocks of 576-640
// threads gained less (9001 96, 10001 90; 8191 at 544 threads is the rule's). A/B against
// a7bf2d8 (call2-output.txt, two rounds): bf16 and fp16, fp32 γ and γ in x's dtype, 8191-10233
// 1.04-1.19x, 7001 and 11001 unchanged. RMSNorm's blocks of the same shape lost there (8191 73
// → 78 µs, 9001 74 → 76, 10001 74 → 76): its own rule stays.
constexpr int64_t kMaxLayerNormTwoSlotPrefetchThreads = 448;
constexpr int64_t kMaxLayerNormUnprefetchedFourSlotThreads = 320;

std::optional<LaunchConfig> phased_forward_rule(const NormProblem& p, int sm, int64_t m, int sm_count,
                                                double memory_bytes_per_sm_cycle) {
  const std::optional<NormProblem> twin = phased_twin(p);
  // From N = 1000 (tuned from 1001): shorter rows keep their warps of several rows.
  if (!twin || p.n < 1000 || sm < 90 || !memory_rich(memory_bytes_per_sm_cycle) || few_rows(m, sm_count))
    return std::nullopt;
  LaunchConfig c;
  c.vec = 16 / dtype_size(p.x_dtype);
  const int64_t slots = ceil_div(twin->n, c.vec);
  const int64_t four = warp_threads(slots, 4), two = warp_threads(slots, 2);
  const bool four_unprefetched = p.kind == NormKind::LayerNorm && two > kMaxLayerNormTwoSlotPrefetchThreads &&
                                 four <= kMaxLayerNormUnprefetchedFourSlotThreads;
  c.prefetch = four <= kMaxPhasedPrefetchThreads && !four_unprefetched;
  int64_t threads = four;
  if (threads > kMaxForwardRowThreads) return std::nullopt;
  // (Unprefetched four-slot blocks never take two: their two-slot block passes 448 threads, so
  // their four-slot one has at least 256.)
  const bool two_slots = c.prefetch ? two <= kMaxPhasedPrefetchThreads : threads < 256 && two >= 256 && two <= 512;
  if (two_slots) threads = two;
  c.threads = c.threads_per_row = static_cast<int>(std::max<int64_t>(threads, 64));
  c = phased_forward_config(p, c, sm);  // one block an SM so far: whether γ and β fit at all
  if (!c.shared_weights) return std::nullopt;
  // A prefetching block of four slots a thread holds two rows' 32 elements: left unbound (at 3
  // blocks of 320 threads, LN 10001 spilled 56 bytes).
  c.min_blocks_per_sm = c.prefetch && !two_slots
                            ? 1
                            : static_cast<int>(std::clamp<size_t>(max_shared_per_sm(sm) / forward_dynamic_shared_bytes(p, c),
                                                                  1, static_cast<size_t>(registers_bound_blocks(c.threads))));
  return c;
}

// What choose_forward_config derives from the problem and the device, once, for the rules of
// each family below.
struct ForwardShape {
  const NormProblem& p;
  int sm;
  int64_t m;
  int sm_count;
  bool memory_rich;
  int vec;  // the problem's vector width for the forward
  int64_t slots;
  int slot_bytes;
  int max_iters;
  int target_iters;
  int wide_threads;
  int64_t bucket;
  int sms;
  bool many_streamed_rows;
  bool rich_streams;
};

ForwardShape forward_shape(const NormProblem& p, int sm, int64_t m, int sm_count, double memory_bytes_per_sm_cycle) {
  const int vec = vector_width(p, Pass::Forward);
  const int64_t slots = ceil_div(p.n, vec);
  const int slot_bytes = vec * dtype_size(p.x_dtype);
  const int max_iters = std::max(1, max_forward_register_bytes(p.x_dtype) / slot_bytes);
  // Scalar and narrow slots: at most 8 a thread, more threads instead (one a thread for each
  // 64 bytes cost 8-10 points at N = 4095 and 5003, whose rows are 2- or 4-byte aligned).
  const int target_iters = std::clamp(kForwardBytesTarget / slot_bytes, 1, std::min(max_iters, 8));
  const int wide_threads = p.kind == NormKind::LayerNorm ? kWideForwardThreadsLayerNorm : kWideForwardThreads;
  // Two rows or more an SM (or M not known), option-free: where the streamed rows' blocks are as
  // wide as the row's batches (streamed_rows).
  const int64_t bucket = m > 0 ? next_pow2(m) : 0;
  const int sms = grid_cluster_blocks(sm_count);  // one block an SM, as a grid cluster takes
  const bool many_streamed_rows = (bucket == 0 || bucket >= 2 * sms) && !has_forward_fused_options(p);
  const bool rich = memory_rich(memory_bytes_per_sm_cycle);
  const bool rich_streams = many_streamed_rows && streams_rows_between_powers(p, sm, slot_bytes, rich);
  // In ForwardShape's order.
  return ForwardShape{p,          sm,           m,      sm_count, rich, vec, slots, slot_bytes, max_iters,
                      target_iters, wide_threads, bucket, sms,      many_streamed_rows,   rich_streams};
}

// Rows of at most 32 vector slots: a power-of-two group of lanes a row, several rows a block.
LaunchConfig several_rows_a_block(const ForwardShape& s) {
  LaunchConfig c;
  c.vec = s.vec;
  c.threads_per_row = next_pow2(s.slots);
  c.threads = 256;
  return c;
}

// Rows a warp holds (at most max_forward_register_bytes of x a lane).
LaunchConfig warp_rows(const ForwardShape& s) {
  const NormProblem& p = s.p;
  LaunchConfig c;
  c.vec = s.vec;
  // A warp a row, or half of one where that leaves no lane idle in the last pass; in slots
  // of half the width where that leaves fewer elements idle (N = 320: 16 lanes of 8-byte
  // slots, 5 each, against 32 lanes of 16-byte slots, the second pass three-quarters empty:
  // LN bf16 154 → 105 us, RMS 105 → 101 in bench, graph replays; exhaustive tuning's best;
  // bench/results/2026-11-25-h100-04fe8b6-cliff-tune2/).
  auto lanes_at = [&](int vec) {
    return row_lanes(ceil_div(p.n, vec), std::max(1, max_forward_register_bytes(p.x_dtype) / (vec * dtype_size(p.x_dtype))));
  };
  auto idle = [&](int vec) {
    const int64_t lanes = lanes_at(vec);
    return lanes * ceil_div(ceil_div(p.n, vec), lanes) * vec - p.n;  // elements of the last pass
  };
  if (c.vec >= 2 && idle(c.vec / 2) < idle(c.vec)) c.vec /= 2;
  c.threads_per_row = lanes_at(c.vec);
  c.threads = 256;
  // LayerNorm's 16-bit rows of two or four passes, the last part-empty: 64 registers a thread
  // (four blocks an SM). ptxas gave some of them 67-72 unbounded (three an SM: fp16 904-1016,
  // bf16 392-456), where whole passes take 64-68. bench --forward --graph, M·N = 64 Mi, A/B
  // against the unbounded rows, two rounds (bench/results/2026-12-02-h200-forward-clusters-of-16/,
  // call 3), µs: fp16 fp32 γ 904 104.5 → 94.1, 1000 99.5 → 87.8, 1016 95.9 → 87.9 (fp16 γ
  // alike), bf16 392 140.9 → 126.5, 456 123.3 → 110.7 (bf16 γ alike); where ptxas gave 64 or
  // fewer anyway 0.99-1.00x (fp16 392-456, bf16 904-1016). Not three or five passes (744
  // 0.98-0.99x, 264 and 600 0.99-1.01x), nor whole passes (1024 at 66-68 registers lost 6-7%
  // bounded, call 2: 71.4 → 76.8).
  const int64_t slots = ceil_div(p.n, int64_t{c.vec});
  const int64_t passes = ceil_div(slots, int64_t{c.threads_per_row});
  if (s.memory_rich && p.kind == NormKind::LayerNorm && dtype_size(p.x_dtype) == 2 &&
      slots % c.threads_per_row != 0 && (passes == 2 || passes == 4))
    c.min_blocks_per_sm = registers_bound_blocks(c.threads);
  return c;
}

// 16-bit rows with a pre-norm sum longer than a 512-thread block holds, up to what a cluster of 8
// holds (pre_norm_sum_clusters).
bool takes_pre_norm_sum_clusters(const ForwardShape& s) {
  const NormProblem& p = s.p;
  return s.sm >= 90 && dtype_size(p.x_dtype) == 2 && s.slot_bytes == 16 && forms_pre_norm_sum(p) &&
         s.slots > int64_t{kMaxForwardRowThreads / 2} * s.target_iters &&
         s.slots <= int64_t{kMaxForwardCluster} * kPreNormSumClusterThreads * kPreNormSumSlots;
}

// takes_pre_norm_sum_clusters' rows.
LaunchConfig pre_norm_sum_clusters(const ForwardShape& s) {
  const NormProblem& p = s.p;
  LaunchConfig c;
  c.vec = s.vec;
  // 16-bit rows (16-byte slots) with a pre-norm sum (residual, row scale, dropout) longer
  // than a 512-thread block holds: a cluster of 8 at 64 registers a thread, two 16-byte slots
  // a thread, four where that takes more than 512 threads (LayerNorm) or 256 (RMSNorm, whose
  // statistics leave registers for more). The residual's and the draws' registers spill
  // the one-block and streamed forwards (LN bf16 32768 with residual and dropout: 332 us
  // against 415; 65536: 363 against 430; RMS 131072: 290 against 385; exhaustive tuning,
  // bench/results/2026-11-24-h100-{fd1575b-forward-fused-tune,3fb8e6c-forward-refit}/).
  c.cluster = kMaxForwardCluster;
  const bool layer_norm = p.kind == NormKind::LayerNorm;
  const int64_t most_threads = layer_norm ? kPreNormSumClusterThreads : kPreNormSumClusterThreads / 2;
  int64_t threads = 0;
  int per_thread = 2;
  for (; per_thread <= kPreNormSumSlots; per_thread *= 2) {
    threads = warp_threads(s.slots, int64_t{c.cluster} * per_thread);
    if (threads <= most_threads) break;
  }
  if (layer_norm && per_thread > 2 && p.dropout != DropoutMask::None) {
    // LayerNorm's statistics and the draws at four slots spill (132 bytes): rows streamed
    // twice by 512-thread blocks, two an SM, were the tuned best (LN bf16 131072 with residual
    // and dropout: 384 us against 473 for a cluster of 1024-thread blocks).
    c.cluster = 1;
    c.row_in_registers = false;
    c.threads = c.threads_per_row = kForwardStreamThreads / 2;
    c.min_blocks_per_sm = 2;
  } else {
    c.threads = c.threads_per_row = static_cast<int>(std::clamp<int64_t>(threads, 64, kMaxForwardRowThreads));
    c.min_blocks_per_sm = registers_bound_blocks(c.threads);
  }
  return c;
}

// Rows one block holds in registers (at most kMaxForwardRowThreads threads of max_iters slots).
LaunchConfig row_a_block(const ForwardShape& s) {
  const NormProblem& p = s.p;
  LaunchConfig c;
  c.vec = s.vec;
  int64_t threads = warp_threads(s.slots, s.target_iters);
  if (p.kind == NormKind::LayerNorm && dtype_size(p.x_dtype) == 2 && s.slot_bytes == 16 &&
      p.dropout != DropoutMask::None && !is_pow2(threads)) {
    // LayerNorm drawing a dropout mask, where the target's block has a thread count not a
    // power of two (those spilled 64 bytes with the draws; the power-of-two ones nothing): the
    // fewest 16-byte slots a thread that make blocks of 256-512 threads. Exhaustive tuning of
    // LN bf16 with the residual, row scale, bit mask and zero-centred γ, M·N = 64 Mi, graph
    // replays (bench/results/2026-11-25-h100-7713342-fused-{scan,tune2}/): 2560 and 3072 at a
    // slot a thread (the target's 96 threads 1.24-1.32x the best), 5120 and 7168 at two
    // (1.13-1.21x); 1280 (64 threads), 4096 and 8192 keep theirs (the best, or within 4%).
    for (int per_thread = 1; per_thread < s.target_iters; per_thread *= 2) {
      const int64_t narrower = warp_threads(s.slots, per_thread);
      if (narrower >= 256 && narrower <= 512) {
        threads = narrower;
        break;
      }
    }
  }
  if (p.kind == NormKind::LayerNorm && dtype_size(p.x_dtype) == 2 && p.weight_dtype == DType::F32 &&
      c.vec == 8 && threads > 512) {
    // LayerNorm rows of 16-bit x beyond 512 threads with fp32 γ and β: 4-element slots, the
    // same bytes of x a thread, so that γ's and β's loads are one 16-byte vector a slot
    // (two, 32 bytes apart, fill half of every sector a warp touches). bench, graph replays,
    // bf16: N = 17408 137.6 → 121.8 µs, 24576 124.0 → 109.8, 32768 116.8 → 112.0; fp16
    // alike (bench/results/2026-11-24-h100-e32be31-forward-vec4/).
    c.vec = 4;
    const int half_slot_bytes = s.slot_bytes / 2;
    threads = warp_threads(ceil_div(p.n, c.vec), kForwardBytesTarget / half_slot_bytes);
  }
  if (s.slot_bytes == 2) {
    // 2-byte slots (16-bit x aligned to less, below kRealignedForwardRowsFrom): the fewest of
    // 8, 16 or 32 elements a thread that keep the block within kMaxScalarForwardRowThreads,
    // else 8 as above. Exhaustive tuning, align 2, bf16, fp32 γ, M·N = 64 Mi, L2 flushed
    // (bench/results/2026-11-25-h100-15a9ef7-realign-forward-tune/), µs against the 8 a thread
    // before: LN 5003 at 320 threads 150 against 196 at 640, 8191 at 512 235 against 430 at
    // 1024, 12289 at 416 229 against 278, 16385 at 544 180 against 193; RMS 143 / 223 / 205 /
    // 159 against 156 / 244 / 226 / 163. The best at each of these and at 4095 (512) and 24577
    // (1024), which keep theirs.
    for (int per_thread = s.target_iters; per_thread <= s.max_iters; per_thread *= 2)
      if (const int64_t fewer = warp_threads(s.slots, per_thread); fewer <= kMaxScalarForwardRowThreads) {
        threads = fewer;
        break;
      }
  }
  c.threads = c.threads_per_row = static_cast<int>(std::clamp<int64_t>(threads, 64, kMaxForwardRowThreads));
  // 64 registers a thread, so blocks fill the SM's threads: without a bound ptxas gave some
  // thread counts (160, 224, 448) 30-50% more registers for nothing, and LayerNorm's
  // 512-thread bf16 blocks 70, one block an SM (N = 16384: 62% of copy bandwidth).
  c.min_blocks_per_sm = registers_bound_blocks(c.threads);
  if (!has_forward_fused_options(p) && holds_few_elements(p, c)) {
    // Rows of at most kFewElementSlots elements a thread a pass: 16-32 bytes of x a thread,
    // so what an SM has in flight is its threads' count. 16-bit rows: every thread of the SM
    // (32 registers); fp32: two blocks at least (blocks of 768-1024 threads ran one an SM).
    // bench --graph, fp32 γ, M·N = 64 Mi, against 64 registers a thread
    // (bench/results/2026-11-25-h100-5ed1f96-fill-sm/): LN bf16 3001 136 → 117 us, 3585 164
    // → 127, 4095 129 → 124; RMS bf16 2049 113 → 108, 2561 115 → 108, 3585 119 → 110; LN
    // fp32 6001 284 → 199, 8191 271 → 208. Filling the SM with fp32 rows of at most 512
    // threads (two to three blocks already) lost 2-7% (-full-occupancy/). Where ptxas spills
    // (LN bf16 1025-2561), the engine takes unfilled_forward_config.
    c.min_blocks_per_sm = dtype_size(p.x_dtype) == 2 ? kThreadsPerSm / c.threads : std::max(c.min_blocks_per_sm, 2);
  }
  if (s.memory_rich && s.sm >= 90 && !few_rows(s.m, s.sm_count) && !has_forward_fused_options(p) &&
      dtype_size(p.x_dtype) == 2 && s.slot_bytes == 16) {
    // A memory-rich device (an H200): 16-bit rows of 16-byte slots at two slots a thread, the
    // next row prefetched, instead of four (their loads in flight across this row's
    // barriers). Exhaustive tuning on the H200, bf16, fp32 γ, M·N = 64 Mi, bench --graph
    // (bench/results/2026-11-28-h200-50783ff-memory-rich-2/): LN 5120 102.4 → 79.5 us (320
    // threads), 7168 102.4 → 84.9 (448), 12288 86.7 → 84.2 (768). In bench --graph against
    // four slots a thread, bf16 and fp16, fp32 and bf16 γ, at 2048-16384
    // (-59d6124-forward-rich/ab.txt, two runs): it won where the blocks are of 320 threads or
    // more and keep 768 or more an SM: LN 5120-7168 1.18-1.49x, 8192 1.11 (bf16 γ; 0.99 with
    // fp32 γ), 12288-16384 1.01-1.09x; RMS 5120-8192 1.02-1.09x, 16384 1.01-1.03, 14336 1.00,
    // 12288 0.98. It lost where they are smaller (LN 2048-4096 at 128-256 threads: 0.67-0.82x)
    // or fewer an SM (10240: 640 threads, one an SM: LN 0.95-0.96x).
    const int64_t wider = warp_threads(s.slots, 2);
    if (wider >= 320 && wider <= kMaxForwardRowThreads && wider > c.threads &&
        wider * registers_bound_blocks(static_cast<int>(wider)) >= 768) {
      c.vec = vector_width(p, Pass::Forward);
      c.threads = c.threads_per_row = static_cast<int>(wider);
      c.min_blocks_per_sm = registers_bound_blocks(c.threads);
      c.prefetch = true;
      if (p.kind == NormKind::LayerNorm && slot_weights_span_loads(p, c)) {
        // LayerNorm's fp32 γ and β, 32 bytes a slot each, held in shared memory
        // (templates/norm_forward.cuh says why). Exhaustive forward tuning on the H200, bf16
        // and fp16, fp32 γ, M·N = 64 Mi, bench --graph: blocks of fewer than 512 threads
        // with registers unbounded (-9756722-held-weights-fused/fwd/: LN bf16 5120 79.3 →
        // 69.5 us at 320 threads, 6144 83.0 → 72.9, 7168 85.0 → 71.6, fp16 5120 80.8 → 69.7);
        // larger ones with the bound they have (-6e696a5-review-fused-ncu/fwd/: 8192 81.5 →
        // 70.3 at 512 threads, two blocks an SM; 12288 84.1 → 75.6 at 768, 14336 82.7 → 72.6
        // at 896; unbounded at 512 it had lost, 84 → 87). Not RMSNorm: its γ alone tuned to
        // the heuristic's at 8192 and 14336.
        c.shared_weights = true;
        if (c.threads < 512) c.min_blocks_per_sm = 1;
      }
    }
  }
  // Rows two slots a thread cannot hold in one block: its 1024 threads prefetch as clusters
  // of them do (prefetches_long_rows), where every thread holds as many slots. In bench --graph
  // (call 6): 32768 1.01-1.07x, but 32000 (3.9 slots a thread; 7.8 in LayerNorm's 4-element
  // slots with fp32 γ) 0.94-1.00x.
  const int64_t row_slots = ceil_div(p.n, int64_t{c.vec});
  if (s.sm >= 90 && !c.prefetch && c.threads == kMaxForwardRowThreads && s.slot_bytes == 16 &&
      !holds_few_elements(p, c) && row_slots % c.threads == 0)
    c.prefetch = prefetches_long_rows(p, s.m, s.sm_count, 1, s.memory_rich);
  return c;
}

// Rows a cluster of blocks holds in registers (register_cluster_blocks' blocks).
LaunchConfig register_cluster(const ForwardShape& s, const ClusterBlocks& blocks) {
  const NormProblem& p = s.p;
  LaunchConfig c;
  c.vec = s.vec;
  c.cluster = blocks.cluster;
  c.threads = c.threads_per_row = static_cast<int>(std::clamp<int64_t>(blocks.threads, 64, kMaxForwardRowThreads));
  // 64 registers a thread, but not for 128 bytes of x a thread (one block an SM; LN fp32
  // 131072 in 512-thread blocks tuned 6-10% ahead of the 1024-thread ones it had, unbounded).
  c.min_blocks_per_sm = blocks.wide ? 1 : registers_bound_blocks(c.threads);
  // Three an SM at most (as timed).
  if (blocks.quarter) c.min_blocks_per_sm = std::min(c.min_blocks_per_sm, 3);
  // γ held where every block an SM has room for it.
  if (blocks.held_weights && (p.has_weight || p.has_bias)) {
    LaunchConfig held = c;
    held.shared_weights = true;
    if (forward_dynamic_shared_bytes(p, held) * held.min_blocks_per_sm <= max_stage_bytes(s.sm)) c = held;
  }
  // A memory-rich device (an H200), option-free 16-bit rows: clusters of 1024-thread blocks
  // load their next row while this one's blocks meet (one block an SM: nothing else hides the
  // meeting), where each cluster takes two rows or more (prefetches_long_rows says which).
  c.prefetch = c.threads == kMaxForwardRowThreads &&
               prefetches_long_rows(p, s.m, s.sm_count, c.cluster, s.memory_rich);
  // LayerNorm's fp32 γ (two 16-byte loads a slot, every row, from L2: a block's 32768 columns
  // of γ and β do not stay in L1) instead held in shared memory, β too where both fit
  // (forward_holds_bias), and no prefetch: its registers spilled 16-36 bytes beside the
  // weights' loads (held: 60-62, none). Not L2's bytes: with γ held, fp32 γ still costs what it
  // did against 16-bit γ (bench/NOTES.md entry 75). tune --forward --config, M·N = 64 Mi, bf16 / fp16
  // (bench/results/2026-12-01-h200-long-forward-rows/, call 2, µs): 65536 109.4 → 106.9 /
  // 109.8 → 106.4, 131072 117.2 → 115.1 / 119.0 → 115.5, 262144 131.8 → 122.7 / 132.7 →
  // 123.1. With 16-bit γ held it lost (65536 91.4 → 95.3, 262144 110.8 → 115.5).
  //
  // Then (session 62) those clusters copy the next row ahead into shared memory instead of
  // prefetching it into registers (templates/norm_forward.cuh, RowAhead), γ held there too:
  // bench --forward --graph with the configs pinned at M = 64 Mi / N (bench --config;
  // bench/results/2026-12-01-h200-forward-shared-prefetch/call3/), µs, bf16 / fp16:
  // - RMSNorm, fp32 γ: 65536 77.9 → 74.4 / 79.9 → 74.4, 131072 85.5 → 80.2 / 88.3 → 80.2,
  //   262144 92.1 → 87.2 / 95.3 → 87.8 (the register prefetch took 64 registers, none spilled;
  //   copied ahead without γ held it lost: 81.1 at 65536).
  // - LayerNorm, fp32 γ (held already): 65536 101.1 → 99.0 / 101.7 → 100.8, 131072 110.9 →
  //   107.2 / 110.7 → 110.0, 262144 119.4 → 113.0 / 118.7 → 116.0.
  // - LayerNorm, 16-bit γ: 262144 105.0 → 97.6 / 104.8 → 101.8 (its register prefetch spilled
  //   64 bytes); not 65536 (85.2 either way, fp16 87.7 → 90.6) nor 131072 (93.5 → 92.5).
  // - RMSNorm, 16-bit γ: not taken. In the rule's A/B (call 4, two rounds) it tied at 65536 and
  //   262144 and read 0.98x at bf16 131072 (78.7 → 80.0).
  // One block of 1024 threads (32768) keeps its prefetch (1.02x at best, LN fp32 γ 0.99x).
  const bool copies_ahead =
      c.prefetch && c.cluster > 1 && (p.has_weight || p.has_bias) && whole_aligned_slots(p, c) &&
      (slot_weights_span_loads(p, c) || (p.kind == NormKind::LayerNorm && c.cluster == kMaxForwardCluster));
  if (copies_ahead) {
    LaunchConfig ahead = c;
    ahead.prefetch = false;
    ahead.shared_weights = true;
    ahead.shared_prefetch = 1;
    if (forward_dynamic_shared_bytes(p, ahead) <= max_stage_bytes(s.sm)) c = ahead;
  }
  return c;
}

// Rows too long for registers, read twice.
LaunchConfig streamed_rows(const ForwardShape& s) {
  const NormProblem& p = s.p;
  LaunchConfig c;
  c.vec = s.vec;
  // One 1024-thread block an SM (64 registers: x is held packed, so a batch fits without
  // spills): as many loads in flight as two of 512, half the rows' bytes waiting in L2 for
  // the second pass (two blocks an SM: 63-66% of copy bandwidth, the second pass mostly
  // missing L2).
  c.threads = c.threads_per_row = kForwardStreamThreads;
  c.row_in_registers = false;
  // Fewer rows than SMs (sm_90): a cluster of blocks streams each row, as many as keep the
  // SMs busy (by m's power-of-two bucket, so every m of a bucket gets one config), each
  // thread still streaming two batches at least. N = 1M at 64 rows: 64 blocks left half the
  // H100 idle; clusters of 2, LN bf16 207 → 161 µs, RMS bf16 175 → 154, LN fp32 353 → 297
  // (exhaustive tuning, bench/NOTES.md entry 30). With every SM busy, clusters did not pay
  // (LN bf16 262144 at 256 rows: 158 µs alone, 163 / 171 in clusters of 2 / 4).
  if (s.sm >= 90 && s.m > 0) {
    while (c.cluster < kMaxForwardCluster && s.bucket * c.cluster * 2 <= s.sms &&
           s.slots >= int64_t{c.threads} * c.cluster * 2 * kForwardStreamBatch)
      c.cluster *= 2;
  }
  // Two rows or more an SM (or M not known), option-free: blocks as wide as the row's
  // batches. Where a 1024-thread block would take a second batch a thread for at most half a
  // batch more of the row (N ≤ 49152 in 16-bit types), two blocks of 512 an SM take three
  // between them, half a batch's latency a row less; beyond, the fewest threads that take as
  // many batches as 1024 do (balanced_stream_threads). bench --graph, LN bf16, fp32 γ, M·N =
  // 64 Mi, this rule against 1024 threads (bench/results/2026-11-25-h100-e52089d-refits/;
  // tuned in -c4e1df7-streamed-fits/): 33792 166 → 122 us, 36864 156 → 126, 40960 162 →
  // 125, 45056 152 → 124, 49152 148 → 124 (fp16 alike); 57344 133 → 127 (896 threads), 81920
  // 140 → 135 (864); 65536, 98304-524288 stay 1024. On a memory-rich device
  // (streams_rows_between_powers) two of 512 to 98304, and RMSNorm's rows past 160 KB in
  // clusters of two 1024-thread blocks, so that half as many rows wait in L2 for pass 2.
  if (s.many_streamed_rows) {
    const bool rich_halves =
        s.rich_streams && (p.kind == NormKind::LayerNorm || p.n * dtype_size(p.x_dtype) <= 160 * 1024);
    if (2 * s.slots <= 3 * int64_t{kForwardStreamThreads} * kForwardStreamBatch || rich_halves) {
      c.threads = c.threads_per_row = kForwardStreamThreads / 2;
      c.min_blocks_per_sm = 2;
    } else if (s.rich_streams) {
      c.cluster = 2;
    } else {
      c.threads = c.threads_per_row = balanced_stream_threads(s.slots);
    }
  }
  return c;
}

}  // namespace

void validate_forward_problem(const NormProblem& p) {
  NormProblem forward = p;
  forward.recompute_from_output = false;  // the backward's choice: it conflicts with nothing here
  validate_problem(forward, Pass::Forward);
}

NormProblem resolve_forward_problem(const NormProblem& problem) {
  NormProblem r = resolve_problem(problem);
  r.dx_dtype = r.x_dtype;
  r.recompute_from_output = false;
  return r;
}

bool forms_pre_norm_sum(const NormProblem& p) {
  return p.residual || p.rowscale || p.dropout != DropoutMask::None;
}

bool has_forward_fused_options(const NormProblem& p) {
  return forms_pre_norm_sum(p) || p.gate != Gate::None || p.parallel;
}

std::string describe_forward(const NormProblem& problem) {
  NormProblem r = resolve_forward_problem(problem);
  std::string s = std::string(kind_name(r.kind)) + " forward N=" + std::to_string(r.n) + " x=" + dtype_name(r.x_dtype) +
                  " y=" + dtype_name(r.dy_dtype) + " weight=" + dtype_name(r.weight_dtype) +
                  (r.has_weight ? " +weight" : " -weight");
  if (r.kind == NormKind::LayerNorm) s += r.has_bias ? " +bias" : " -bias";
  return s + " align=" + std::to_string(r.alignment) + (r.alignment < 16 && !r.rows_in_phase ? " out-of-phase" : "") +
         describe_options(r);
}

int max_forward_register_bytes(DType x) { return dtype_size(x) >= 4 ? 128 : 64; }

std::string describe(const NormProblem& problem, Pass pass) {
  return pass == Pass::Forward ? describe_forward(problem) : describe(problem);
}

LaunchConfig choose_forward_config(const NormProblem& p, int sm, int64_t m, int sm_count,
                                   double memory_bytes_per_sm_cycle) {
  if (const std::optional<LaunchConfig> phased = phased_forward_rule(p, sm, m, sm_count, memory_bytes_per_sm_cycle)) {
    check_forward_config(p, *phased);
    return *phased;
  }
  const ForwardShape s = forward_shape(p, sm, m, sm_count, memory_bytes_per_sm_cycle);
  const bool rich_option_free = s.memory_rich && !has_forward_fused_options(p);
  LaunchConfig c;
  if (s.slots <= 32) {
    c = several_rows_a_block(s);
  } else if (s.slots <= int64_t{32} * s.max_iters) {
    c = warp_rows(s);
  } else if (takes_pre_norm_sum_clusters(s)) {
    c = pre_norm_sum_clusters(s);
  } else if (s.slots <= int64_t{kMaxForwardRowThreads} * s.max_iters) {
    c = row_a_block(s);
  } else if (const std::optional<ClusterBlocks> blocks = register_cluster_blocks(
                 p, sm, s.slots, s.target_iters, s.max_iters, s.wide_threads, rich_option_free && !few_rows(m, sm_count),
                 rich_option_free ? long_row_clusters(p, s.bucket, s.sms, s.slot_bytes) : LongRowClusters::None, s.rich_streams)) {
    c = register_cluster(s, *blocks);
  } else {
    c = streamed_rows(s);
  }
  check_forward_config(p, c);
  return c;
}

std::optional<LaunchConfig> unfilled_forward_config(const NormProblem& p, const LaunchConfig& c) {
  if (!holds_few_elements(p, c) || c.min_blocks_per_sm <= registers_bound_blocks(c.threads)) return std::nullopt;
  LaunchConfig unfilled = c;
  unfilled.min_blocks_per_sm = registers_bound_blocks(c.threads);
  return unfilled;
}

void check_forward_config(const NormProblem& p, const LaunchConfig& c) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("launch config " + describe(c) + " cannot run the " + describe_forward(p) + ": " +
                                why);
  };
  if (const std::string why = block_shape_problem(p, c); !why.empty()) fail(why);
  if (!rows_take_vector(p, c.vec)) fail("vec is wider than the row alignment allows (8- or 16-byte vectors may be)");
  if (!c.row_in_registers && c.threads < 64) fail("streamed rows need a block of at least 64 threads");
  if (c.phased) {
    if (!phases_rows(p) || dtype_size(p.x_dtype) != 2)
      fail("phased rows need 16-bit rows of at least 8 elements aligned to less than 16 bytes but in phase (x and y "
           "alike), y of x's element size, and no fused option");
    if (c.vec * dtype_size(p.x_dtype) != 16) fail("phased rows read 16-byte vectors of x");
    if (!c.row_in_registers || c.rows_per_block() != 1)
      fail("phased rows are held in registers, one row a block (or a cluster)");
  }
  if (c.row_in_registers) {
    const int64_t iters = ceil_div(ceil_div(row_span(p, c), c.vec), int64_t{c.threads_per_row} * c.cluster);
    if (iters * c.vec * dtype_size(p.x_dtype) > max_forward_register_bytes(p.x_dtype))
      fail("a thread would hold " + std::to_string(iters * c.vec * dtype_size(p.x_dtype)) +
           " bytes of x in registers (at most " + std::to_string(max_forward_register_bytes(p.x_dtype)) +
           "): stream the row");
  }
  if (c.merge != 1 || c.grid || c.staged || c.shared_sums)
    fail("the forward has no merged blocks, grid clusters, staged rows or shared sums");
  if (c.shared_weights) {
    if (!c.row_in_registers || c.rows_per_block() != 1)
      fail("γ and β are held in shared memory for rows in registers, one row a block");
    if (has_forward_fused_options(p)) fail("held weights are for option-free rows");
    if (!p.has_weight && !p.has_bias) fail("held weights hold γ and β, and the problem has neither");
    if (forward_dynamic_shared_bytes(p, c) > max_stage_bytes(90))
      fail("γ and β held (with any row copied ahead) would take " + std::to_string(forward_dynamic_shared_bytes(p, c)) +
           " bytes of shared memory a block (at most " + std::to_string(max_stage_bytes(90)) + ")");
  }
  if (c.shared_prefetch != 0) {
    if (c.shared_prefetch != 1) fail("the forward copies one row ahead into shared memory (shared_prefetch=1)");
    if (!c.row_in_registers || c.rows_per_block() != 1 || c.prefetch || c.phased)
      fail("a row copied ahead into shared memory is for rows in registers, one a block, neither prefetched into "
           "registers nor phased");
    if (has_forward_fused_options(p)) fail("rows copied ahead are option-free rows");
    if (!whole_aligned_slots(p, c))
      fail("rows copied ahead are read in whole 16-byte slots: rows aligned to 16 bytes, N a multiple of the vector");
    if (forward_dynamic_shared_bytes(p, c) > max_stage_bytes(90))
      fail("the held weights and the row copied ahead would take " + std::to_string(forward_dynamic_shared_bytes(p, c)) +
           " bytes of shared memory a block (at most " + std::to_string(max_stage_bytes(90)) + ")");
  }
  if (c.prefetch && !c.row_in_registers) fail("prefetch loads the next row into registers: rows held there only");
  if (c.prefetch && has_forward_fused_options(p))
    fail("prefetch is for option-free rows (fused options have more to hold per row)");
  if (c.cluster != 1) {
    if (c.cluster < 1 || c.cluster > kMaxForwardCluster || !llvm::isPowerOf2_64(c.cluster))
      fail("a forward cluster is 1, 2, 4 or 8 blocks");
    if (c.rows_per_block() != 1 || c.threads < 64)
      fail("a cluster shares one row (held in registers or streamed) among blocks of at least 64 threads, a row "
           "a block");
  }
  if (c.min_blocks_per_sm < 1 || c.min_blocks_per_sm > 32) fail("min_blocks_per_sm must be in [1, 32]");
}

LaunchConfig phased_forward_config(const NormProblem& p, const LaunchConfig& twin_config, int sm) {
  LaunchConfig c = twin_config;
  c.phased = true;
  c.shared_weights = p.has_weight || p.has_bias;
  const size_t bytes = forward_dynamic_shared_bytes(p, c);
  if (bytes > max_stage_bytes(sm) || bytes * c.min_blocks_per_sm > max_shared_per_sm(sm)) c.shared_weights = false;
  return c;
}

namespace {
// Shared memory of `arrays` held fp32 arrays of a block's slots.
size_t held_arrays_bytes(const NormProblem& p, const LaunchConfig& c, int arrays) {
  return static_cast<size_t>(arrays * elements_per_thread(p, c) * c.threads_per_row) * sizeof(float);
}
}  // namespace

bool forward_holds_bias(const NormProblem& p, const LaunchConfig& c) {
  if (!c.shared_weights || !p.has_bias) return false;
  return !p.has_weight || c.phased || held_arrays_bytes(p, c, 2) <= max_stage_bytes(90);
}

size_t forward_dynamic_shared_bytes(const NormProblem& p, const LaunchConfig& c) {
  // The held weights, then the stage of the row copied ahead (templates/norm_forward.cuh, RowAhead).
  const size_t held =
      c.shared_weights ? held_arrays_bytes(p, c, (p.has_weight ? 1 : 0) + (forward_holds_bias(p, c) ? 1 : 0)) : 0;
  const size_t stage = static_cast<size_t>(c.shared_prefetch) * static_cast<size_t>(elements_per_thread(p, c)) *
                       static_cast<size_t>(c.threads_per_row) * static_cast<size_t>(dtype_size(p.x_dtype));
  return held + stage;
}

void check_config(const NormProblem& p, const LaunchConfig& c, Pass pass) {
  if (pass == Pass::Forward)
    check_forward_config(p, c);
  else
    check_launch_config(p, c);
}

size_t dynamic_shared_bytes(const NormProblem& p, const LaunchConfig& c, Pass pass) {
  return pass == Pass::Forward ? forward_dynamic_shared_bytes(p, c) : dynamic_shared_bytes(p, c);
}

bool slot_weights_span_loads(const NormProblem& p, const LaunchConfig& c) {
  return (p.has_weight || p.has_bias) && dtype_size(p.weight_dtype) * c.vec > 16;
}

std::vector<LaunchConfig> forward_search_space(const NormProblem& p, int sm, int64_t m, int sm_count,
                                               double memory_bytes_per_sm_cycle) {
  std::vector<LaunchConfig> out;
  // The prefetching and held-weight variants come last, with places of their own.
  size_t limit = kMaxForwardCandidates - kMaxForwardPrefetchCandidates - kMaxForwardHeldWeightCandidates -
                 kMaxForwardAheadCandidates;
  auto add = [&](const LaunchConfig& c) {
    if (out.size() >= limit) return;
    try {
      check_forward_config(p, c);
    } catch (const std::invalid_argument&) {
      return;
    }
    if (c.cluster > 1 && sm < 90) return;
    for (const LaunchConfig& o : out)
      if (o == c) return;
    out.push_back(c);
  };
  add(choose_forward_config(p, sm, m, sm_count, memory_bytes_per_sm_cycle));
  // On a memory-rich device, the H100's rules' config too (its rules are fitted to an H200).
  add(choose_forward_config(p, sm, m, sm_count));
  // Phased rows (odd 16-bit rows in phase): the aligned twin's candidates that phased kernels run
  // (a row a block or a cluster in registers, 16-byte slots), the first
  // kMaxForwardPhasedCandidates of them.
  if (const std::optional<NormProblem> twin = phased_twin(p)) {
    const size_t first = out.size();
    for (const LaunchConfig& aligned : forward_search_space(*twin, sm, m, sm_count, memory_bytes_per_sm_cycle)) {
      if (out.size() - first == kMaxForwardPhasedCandidates) break;
      add(phased_forward_config(p, aligned, sm));
    }
  }
  for (int vec : candidate_vector_widths(p, Pass::Forward)) {
    const int slot_bytes = vec * dtype_size(p.x_dtype);
    const int64_t slots = ceil_div(p.n, vec);
    for (int bytes : {64, 32, 128, 16}) {
      const int64_t iters = std::max(1, bytes / slot_bytes);
      const int64_t row_threads = ceil_div(slots, iters);
      for (int cluster : {1, 2, 4, 8}) {
        LaunchConfig c;
        c.vec = vec;
        c.cluster = cluster;
        const int64_t per_block = ceil_div(row_threads, cluster);
        if (cluster == 1 && per_block <= 32) {  // several rows a block, or a warp a row
          c.threads_per_row = next_pow2(per_block);
          c.threads = std::max(c.threads_per_row, 256);
          add(c);
          continue;
        }
        if (per_block > kMaxForwardRowThreads || (cluster > 1 && per_block < 128)) continue;
        c.threads = c.threads_per_row = static_cast<int>(std::max<int64_t>(64, round_up(per_block, 32)));
        c.min_blocks_per_sm = registers_bound_blocks(c.threads);
        add(c);
        c.min_blocks_per_sm = 1;
        add(c);
      }
    }
    // Streamed rows: blocks of 1024, 512 (one or two an SM) and 256 threads (four an SM, more
    // rows in flight), and the fewest threads that stream the row in as many batches a thread
    // as 1024 do (N = 36864: 576), so that no batch runs with most of the block idle.
    for (int threads : {1024, 512, 256, balanced_stream_threads(slots)}) {
      LaunchConfig c;
      c.vec = vec;
      c.threads = c.threads_per_row = std::max(threads, 64);
      c.row_in_registers = false;
      if (threads != 256) add(c);
      if (threads <= 512) {  // two (four) an SM, 64 registers a thread
        c.min_blocks_per_sm = kForwardStreamThreads / c.threads;
        add(c);
      }
    }
    // Streamed rows shared by a cluster (sm_90), for rows of at least a batch of slots a
    // thread: what the heuristic gives rows fewer than the SMs, and fewer rows in flight
    // waiting in L2 (LN bf16 131072 at 512 rows tuned 6% faster in clusters of 2).
    for (int cluster : {2, 4, 8}) {
      LaunchConfig c;
      c.vec = vec;
      c.threads = c.threads_per_row = kForwardStreamThreads;
      c.row_in_registers = false;
      c.cluster = cluster;
      if (sm >= 90 && slots >= int64_t{c.threads} * cluster * kForwardStreamBatch) add(c);
    }
  }
  // Option-free rows a block or a cluster holding at most two slots a thread, again with the
  // next row prefetched: its loads in flight through this row's barriers, in the registers
  // two slots leave free.
  if (!has_forward_fused_options(p)) {
    const std::vector<LaunchConfig> held = out;
    limit = out.size() + kMaxForwardPrefetchCandidates;  // within kMaxForwardCandidates
    for (LaunchConfig c : held) {
      if (!c.row_in_registers || c.threads_per_row <= 32 ||
          ceil_div(ceil_div(row_span(p, c), c.vec), int64_t{c.threads_per_row} * c.cluster) > 2)
        continue;
      c.prefetch = true;
      add(c);
    }
  }
  // Rows a block holds, again with γ and β held in shared memory where a slot's γ spans two
  // loads from L1 (templates/norm_forward.cuh says why): the heuristic's own config first (the
  // limit cut it at 12288-16384, session 30), then the prefetching ones.
  if (!has_forward_fused_options(p) && !out.empty()) {
    std::vector<LaunchConfig> held{out.front()};  // the heuristic's, then the rest from the last added
    held.insert(held.end(), out.rbegin(), out.rend() - 1);
    limit = out.size() + kMaxForwardHeldWeightCandidates;  // within kMaxForwardCandidates
    for (LaunchConfig c : held) {
      if (!c.row_in_registers || c.rows_per_block() != 1 || !slot_weights_span_loads(p, c)) continue;
      c.shared_weights = true;
      const size_t bytes = forward_dynamic_shared_bytes(p, c);
      if (bytes > max_stage_bytes(sm) || bytes * c.min_blocks_per_sm > max_shared_per_sm(sm)) continue;
      add(c);
    }
  }
  // The heuristic's rows in registers with the next row brought the other way: copied ahead
  // (γ held where it fits), or prefetched into registers (γ held as the heuristic has it).
  if (!has_forward_fused_options(p) && !out.empty() && out.front().row_in_registers && out.front().cluster > 1) {
    limit = out.size() + kMaxForwardAheadCandidates;  // within kMaxForwardCandidates
    const LaunchConfig heuristic = out.front();
    LaunchConfig other = heuristic;
    if (heuristic.shared_prefetch > 0) {  // the rules before it: the register prefetch, or γ held alone
      other.shared_prefetch = 0;
      add(other);
      other.shared_weights = false;
      other.prefetch = true;
      add(other);
    } else {
      other.prefetch = false;
      other.shared_prefetch = 1;
      add(other);
      other.shared_weights = p.has_weight || p.has_bias;
      if (forward_dynamic_shared_bytes(p, other) <= max_stage_bytes(sm)) add(other);
    }
  }
  return out;
}

}  // namespace normjit::codegen
