#include "codegen/phased_rows_config.h"

#include <algorithm>
#include <optional>

#include "codegen/integer_math.h"

namespace normjit::codegen {

std::optional<NormProblem> phased_twin(const NormProblem& p) {
  // fp32 rows of an element already read whole 128-byte lines a warp access (99% of copy at
  // 4095 and 5003 on the H200); their phased kernels, not yet timed, hold γ in shared memory
  // beside registers that spill at LN 8191 and 50001: 16-bit rows only, so far.
  if (!phases_rows(p) || dtype_size(p.x_dtype) != 2) return std::nullopt;
  NormProblem aligned = p;
  aligned.alignment = 16;
  aligned.n = p.n + 16 / dtype_size(p.x_dtype) - 1;
  return aligned;
}

std::optional<LaunchConfig> phased_config(const NormProblem& p, const LaunchConfig& twin_config, int sm) {
  const LaunchConfig& t = twin_config;
  // Not rows copied ahead: their copies need rows aligned to 16 bytes.
  if (t.vec * dtype_size(p.x_dtype) != 16 || !phased_block_shape(t) || t.cluster > kMaxPhasedCluster ||
      t.shared_prefetch > 0)
    return std::nullopt;
  LaunchConfig c = t;
  c.phased = true;
  return with_shared_weights(p, c, sm);
}

namespace {
// Rows in phase but aligned to less than 16 bytes (odd N in a 16-bit type, N not a multiple of
// 8 from contiguous tensors) read as aligned chunks, phased, do the work of aligned rows. They
// take the config of aligned rows as long as their span:
// - where it is a cluster of blocks holding the row in registers in 16-byte slots. There they
//   replace realigned register clusters (two chunks and selects a slot): LN/RMS bf16 fp32 γ
//   16383 216/210 → 175/147 µs, 20001 201/175 → 176/142, 24575 226/205 → 183/157, 30001
//   218/184 → 181/149 (graph replays, bench/results/2026-11-29-h200-phased-validate/).
// - where it is one block, from N = 5000 (since session 51 RMSNorm's from kRmsHalvesFromN and
//   LayerNorm's from kLayerNormHalvesFromN), at many rows on a memory-rich device,
//   with sums to share: halved, a cluster of two blocks of shared sums, two slots a thread. Tuned at M =
//   16384 on the H200 (call6-tune.txt there), these were the fastest of every candidate or
//   within 3% of it at LN and RMS 5003-15001 (bf16 and fp32 γ), where the rules of their own
//   alignment were 1.01-1.67x slower (LN 13001: 468 against 292 µs). Below 5000 they lost
//   (LN 4095: 171 against 142 µs), and so did the one block itself at 4095-8191 (LN 0.90x,
//   RMS 8191 0.86x), which is why it is halved (short rows have their own rules since session 51:
//   short_rows_in_phase_config). In the A/B of the rule (bench --graph, M·N = 64
//   Mi, call8-ab.txt and bench.txt there) RMS 5003-15001 gained 1.08-1.56x and LN 6001-15001
//   1.01-1.32x; LN 5003 gained 1.07x with 16-bit γ and β (167 → 156 µs) but lost 1-2% with fp32
//   ones in bf16 (154 → 157 µs). LayerNorm's halves cap at 64 registers where blocks of 1024
//   threads' worth an SM fill it, and spill 8 bytes at 5003, 6001, 10001 and 15001 (RMS none);
//   one block fewer an SM spilled nothing and was no faster (5003, 6001) or slower (10001
//   1.08x, 15001 1.33x; call9-output.txt).
// Clusters of eight lost (65537: LN 290 → 360 µs, RMS 275 → 340); warps of several rows,
// staged or streamed rows and the column pass keep those rules too.
// - RMSNorm's, from N = kRmsPhasedPrefetchFromN, in one prefetching block of shared sums (as
//   many threads as hold the span at one or two slots a thread, two slots making at most
//   kMaxRmsPhasedPrefetchThreads) instead of the halves, once a prefetching block's next row no
//   longer waited where loaded (session 41, bench/NOTES.md entry 55). Tuned on the H200, bf16
//   fp32 γ, at M = 16384 / 8192 (bench/results/2026-11-29-h200-backward-whole-chunks/
//   call7-tune.txt): 7001 1.05/1.04x, 8191 1.07/1.04x, 9001 1.10/1.06x, 10001 1.09/1.05x,
//   11001 1.24/1.21x; 6001 tied, 12289 (800 threads) 0.97x, 14001 0.93x. LayerNorm's tied or
//   lost (4095-12289, call5-tune.txt there).
constexpr int64_t kRmsPhasedPrefetchFromN = 6145;
constexpr int64_t kMaxRmsPhasedPrefetchThreads = 768;
// short_rows_in_phase_config's bounds (its comment says why).
constexpr int64_t kShortRowsInPhaseFromN = 960;
constexpr int64_t kRmsPhasedOneSlotToN = 2048;
constexpr int kMaxRmsShortPhasedThreads = 128;  // up to kMaxRmsElementWarpRowColumns
constexpr int64_t kRmsHalvesFromN = 4097;
constexpr int64_t kLayerNormElementRowsFromN = 4097;
constexpr int64_t kLayerNormHalvesFromN = 5120;

// One prefetching phased block of shared sums for RMSNorm's rows in phase (its callers say
// where), as many threads as hold the span at one or two slots a thread.
std::optional<LaunchConfig> rms_phased_prefetch_config(const NormProblem& p, const NormProblem& twin, int sm) {
  if (p.kind != NormKind::RMSNorm) return std::nullopt;
  LaunchConfig c;
  c.vec = 16 / dtype_size(p.x_dtype);
  c.prefetch = true;
  c.shared_sums = true;
  const int64_t slots = ceil_div(twin.n, c.vec);
  const int64_t per_thread = ceil_div(slots, int64_t{kMaxRowThreads});
  const int64_t threads = warp_threads(slots, per_thread);
  if (per_thread > 2 || (per_thread == 2 && threads > kMaxRmsPhasedPrefetchThreads)) return std::nullopt;
  c.threads = c.threads_per_row = static_cast<int>(threads);
  return phased_config(p, c, sm);
}

// Phased blocks of two slots a thread with shared sums, one (cluster 1) or a cluster of
// `cluster` sharing the row, as many blocks an SM as shared sums take elsewhere: RMSNorm's short
// rows' one block and the halves (cluster 2). None where such blocks would pass kMaxRowThreads.
std::optional<LaunchConfig> phased_two_slot_blocks(const NormProblem& p, const NormProblem& twin, int cluster, int sm) {
  LaunchConfig c;
  c.vec = 16 / dtype_size(p.x_dtype);
  c.cluster = cluster;
  c.shared_sums = true;
  const int64_t threads = warp_threads(ceil_div(twin.n, c.vec), int64_t{2} * cluster);
  if (threads > kMaxRowThreads) return std::nullopt;
  c.threads = c.threads_per_row = static_cast<int>(threads);
  std::optional<LaunchConfig> phased = phased_config(p, c, sm);
  if (phased) phased->min_blocks_per_sm = shared_sums_blocks_per_sm(p, *phased, sm);
  return phased;
}

// Rows in phase from kShortRowsInPhaseFromN columns to the halves, many of them, on a
// memory-rich sm_90 (the halves' conditions). The rules of their own alignment gave rows of an
// element a thread (vec = 1, 16 elements a thread) up to 4096 and realigned staged slots beyond,
// which tuning at M = 64 Mi / N on the H200 (bench/results/2026-11-30-h200-odd-rows/call2/,
// bf16 and fp16, fp32 and 16-bit γ) beat at most N:
// - RMSNorm up to kRmsPhasedOneSlotToN: one prefetching phased block of a slot a thread
//   (rms_phased_prefetch_config's shape): 1001 1.16-1.21x, 1537 1.11-1.12x, 2001 1.11-1.14x.
// - RMSNorm beyond: one phased block of two slots a thread and shared sums, as many blocks an SM
//   as shared sums take elsewhere: 3001 1.33x (the rows of an element prefetching tied it),
//   3583 1.18-1.22x, 4095 1.10-1.11x. From kRmsHalvesFromN the halves instead (4607 1.11-1.13x,
//   4999 1.14x against 1.09-1.12x and 1.11-1.12x for the one block).
// - LayerNorm's phased blocks lost to its rows of an element (4095 274 against 267 µs) and its
//   halves did at 4999-5501; beyond 4096 rows of an element, 16 a thread, two blocks an SM (96
//   registers, no spill) took 4607 1.14x, 4999 1.09-1.20x, 5003 1.05-1.09x where the rules gave
//   staged slots (4607, 4999) or the halves (5003); the halves from kLayerNormHalvesFromN.
//   Below kLayerNormElementRowsFromN the tuned winners were rows of an element prefetching two
//   blocks an SM by 1.0-1.13x, but they spill 28-152 bytes in fp16 and at 3001: LayerNorm keeps
//   its rules there. (Not phased, these come from in_phase_launch_config all the same: they are
//   the rule for rows in phase.)
// Since session 52 RMSNorm's one prefetching block from 960 (was 1000): in bench --graph against
// the warp a row of elements that rows aligned to 2 bytes take up to 999 (config_for_many_rows;
// bench/results/2026-11-30-h200-short-rows/call5/, bf16 and fp16, fp32 γ) 967 1.02-1.06x, 999
// 1.07-1.13x; 937 tied (bf16 1.01x, fp16 0.98x), which keeps the warp.
std::optional<LaunchConfig> short_rows_in_phase_config(const NormProblem& p, const NormProblem& twin, int sm) {
  if (p.kind == NormKind::LayerNorm) {
    if (p.n < kLayerNormElementRowsFromN) return std::nullopt;
    LaunchConfig c;
    c.vec = 1;
    c.threads = c.threads_per_row = static_cast<int>(warp_threads(p.n, kMaxRegisterElementsPerThread));
    c.min_blocks_per_sm = 2;
    return c;
  }
  if (p.n >= kRmsPhasedOneSlotToN) return phased_two_slot_blocks(p, twin, 1, sm);
  // Where the block's last warp would hold one chunk (1018-1023 columns, 129 chunks: 160 threads),
  // the rules of their alignment instead (config_for_many_rows): for odd N a warp a row of
  // elements (to kMaxRmsElementWarpRowColumns), tuned at 1019, 1021 and 1023 (M = 64 Mi / N's
  // bucket, bf16 fp32 γ and fp16 fp16 γ; bench/results/2026-11-30-h200-pairs-odd-layernorm/
  // call1/tune.txt) 236 µs against 276-283 for the phased block, the best of 39 candidates; in
  // bench --graph 1.16-1.19x (call 2: 71 → 82-83% of copy). For rows aligned to 4 bytes (1018,
  // 1022) blocks of 64 threads of two-element slots: 1018 1.34-1.38x (call 2). Rows aligned to 8
  // bytes (1020) keep the phased block: their alignment's blocks were not timed.
  std::optional<LaunchConfig> phased = rms_phased_prefetch_config(p, twin, sm);
  if (!phased || (p.n <= kMaxRmsElementWarpRowColumns && p.alignment <= 4 && phased->threads > kMaxRmsShortPhasedThreads))
    return std::nullopt;
  phased->min_blocks_per_sm = shared_sums_blocks_per_sm(p, *phased, sm);  // as the tuned blocks
  return phased;
}

}  // namespace

std::optional<LaunchConfig> in_phase_launch_config(const NormProblem& p, int sm, int sm_count, int64_t m,
                                                   double memory_bytes_per_sm_cycle) {
  const std::optional<NormProblem> twin = phased_twin(p);
  if (!twin) return std::nullopt;
  const LaunchConfig aligned = twin_launch_config(*twin, sm, sm_count, m, memory_bytes_per_sm_cycle);
  // Not paired twins (LayerNorm's clusters of two at 1281-2047, rich_shared_sum_rows_config):
  // phased, they took 1.3-1.56x the time of the rows of an element a thread (bench --graph, bf16
  // and fp16, fp32 and 16-bit γ; bench/results/2026-11-30-h200-short-rows/call1/: 1537 131 →
  // 203 µs), which keep the rules of their alignment.
  if (aligned.cluster >= 2 && !aligned.paired_rows) return phased_config(p, aligned, sm);
  if (sm < 90 || !memory_rich(memory_bytes_per_sm_cycle) || few_rows(m, sm_count) || p.n < kShortRowsInPhaseFromN ||
      !(p.has_weight || p.has_bias) || aligned.grid)
    return std::nullopt;
  // The short rows' blocks are their own, whatever the twin's shape (since session 52 a warp a
  // row at 1007-1024: RMS 1001 fell back to the rules of its alignment, 108 → 131 µs, call 4).
  if (p.n < (p.kind == NormKind::RMSNorm ? kRmsHalvesFromN : kLayerNormHalvesFromN))
    return short_rows_in_phase_config(p, *twin, sm);
  // The halves replace one block holding the row in registers: not the rows streamed past
  // 262144 columns (until session 57 they asked 8224 threads there, and the heuristic threw).
  if (aligned.rows_per_block() != 1 || !aligned.row_in_registers) return std::nullopt;
  if (p.n >= kRmsPhasedPrefetchFromN)
    if (const std::optional<LaunchConfig> one = rms_phased_prefetch_config(p, *twin, sm)) return one;
  return phased_two_slot_blocks(p, *twin, 2, sm);
}

}  // namespace normjit::codegen
