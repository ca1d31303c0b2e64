// The heuristic for many rows (config_for_many_rows, codegen/many_rows_rules.h): a chain of
// rules, each with what it measured.
#include "codegen/many_rows_rules.h"

#include <algorithm>
#include <optional>

#include "codegen/integer_math.h"
#include "codegen/norm_problem.h"

namespace normjit::codegen {

namespace {
// The fewest slots of 8 at which the gate and parallel norms take a pair of blocks of 8 elements
// a thread instead of one block of 16 (the rule in choose_launch_config). Since σ(z) is
// approximate the gate's block of 16 spills: before the norm from 8193 (bf16 / fp16 12288: 401 /
// 412 µs against 251 / 250 for the pair); after it at 12288 in bf16 (306 against 270; fp16's
// single block 252 against 276), while below it the block wins (10240 bf16: 207 against 290;
// bench/results/2026-11-29-h200-{539569c-sigmoid-2,afca9b6-final}/). fp16 after the norm keeps
// the block at 12288 too: exhaustive tuning with the approximate σ(z) (tune µs, -dfa438f-widen/)
// 375 for it (232 bytes spilled) against 410 for the pair, which bf16 keeps. Since session 50
// the gate after the norm takes the pair from 10241 in both 16-bit types, holding the row there
// as that rule says (prefetching, or two slots a thread): 1.06-1.41x at 10752-12288.
int64_t pair_from(const NormProblem& p) {
  if (p.gate == Gate::BeforeNorm) return kMaxRowThreads + 1;
  if (p.gate == Gate::AfterNorm) return kMaxRowThreads * 5 / 4 + 1;
  return kMaxRowThreads * 3 / 2 + 1;
}

// The gate's rows of 32769-131072 columns, many rows, 16-bit, 8 elements a slot: where the rules
// before leave clusters of 8 blocks of two slots a thread, two or three an SM (N/128 threads),
// which spill 50-130 bytes after the norm and 100-430 before it, these shapes hold the row
// without spill, one block an SM: two slots a thread in a cluster of 4 (N/64 threads, 96
// registers), or one in the smallest cluster of at most 1024-thread blocks (8 to 65536, 16
// beyond). Tuned (`normjit tune`, the search space, M = 64 Mi / N's bucket, RMSNorm, bf16 fp32
// γ, fp16 fp16 γ, fp16 fp32 γ; bench/results/2026-11-30-h200-gate-rules/tune.txt), tune µs
// against the rule before (after / before the norm):
// - 32769-40960: two slots in a cluster of 4, 1.15-1.86x in bf16 (40960 480 → 296 / 545 →
//   293), fp16 fp32 γ 1.02-2.28x; fp16 with 16-bit γ one slot prefetching, 1.06-2.93x (36864
//   before the norm 633 → 270). fp16 after the norm keeps the rule before to 34816 (bench
//   --graph, call2.sh and call3.sh: 16-bit γ 263.6 → 272.4 µs, fp32 γ 264.7 → 283.2).
// - 40961-65536: before the norm one slot in fp16, 1.41-2.12x (57344 985 → 508); bf16 from
//   49153 either order, 1.05-1.19x (at 45056-49152 the rule before was the best). fp16 after
//   the norm keeps the rule before to 57344 (one slot 0.89-0.91x), and with 16-bit γ takes one
//   slot prefetching to 49152 (1.10-1.18x). From 57345 one slot for all (session 49,
//   -elements-a-thread/call7.sh in bench --graph: 61440-65536 1.41-1.61x in bf16, fp16
//   1.13-2.28x).
// - 65537-131072: one slot in clusters of 16 before the norm in fp16 from 81921 (98304 1.37-1.43x;
//   in bench --graph, call2.sh and call3.sh, 90112-131072 1.30-1.94x), in bf16 from 98305
//   (114688 1.12x, 98304 0.90x); after the norm from 114689 (131072 1.10-1.27x; 114688 fp16
//   0.79x). At 65537-81920 fp16 with 16-bit γ before the norm prefetches in them (73728 1.17x,
//   81920 1.33x), while fp32 γ keeps the rule before (0.85-0.94x).
enum class GateLongRows { Keep, TwoSlotsOneBlockAnSm, OneSlot, OneSlotPrefetching };
GateLongRows gate_long_rows(const NormProblem& p) {
  const bool before = p.gate == Gate::BeforeNorm;
  const bool fp16 = p.x_dtype == DType::F16;
  const bool fp16_gamma = fp16 && dtype_size(p.weight_dtype) == 2;
  if (p.n <= 32768 || p.n > int64_t{kMaxRowThreads} * 8 * kMaxCluster) return GateLongRows::Keep;
  if (p.n <= 40960) {
    if (fp16 && !before && p.n <= 34816) return GateLongRows::Keep;
    return fp16_gamma ? GateLongRows::OneSlotPrefetching : GateLongRows::TwoSlotsOneBlockAnSm;
  }
  if (p.n <= 65536) {
    if (fp16_gamma && !before && p.n <= 49152) return GateLongRows::OneSlotPrefetching;
    const bool one_slot = p.n > 57344 || (before && fp16) || (!fp16 && p.n > 49152);
    return one_slot ? GateLongRows::OneSlot : GateLongRows::Keep;
  }
  if (before && fp16_gamma && p.n <= 81920) return GateLongRows::OneSlotPrefetching;
  const bool one_slot = before ? p.n > (fp16 ? 81920 : 98304) : p.n > 114688;
  return one_slot ? GateLongRows::OneSlot : GateLongRows::Keep;
}

// How LayerNorm's blocks of rows of an element, 16 a thread, fill a memory-rich SM
// (config_for_many_rows says why), by threads a block and x's type; null for the shapes left to
// ptxas.
const ElementBlockFill* element_block_fill(int threads, DType x_dtype) {
  for (const ElementBlockFill& fill : kLayerNormElementBlocks)
    if (fill.threads == threads && fill.x_dtype.value_or(x_dtype) == x_dtype) return &fill;
  return nullptr;
}

// What the rules of many rows share: the problem, the device, and the shapes made from them.
struct ManyRowsShape {
  const NormProblem& p;
  int sm;
  int sm_count;
  bool many_rows;
  bool memory_rich;
  int vec = 0;  // the rules' vector width (vector_width), every config's start
  int64_t slots = 0;
  int max_iters = 0;
  int64_t block_slots = 0;
  int prefetch_iters = 0;
  int64_t prefetch_block = 0;
  bool sixteen_bit = false;
  int staged_vec = 0;
  int64_t staged_slots = 0;
  int staged_iters = 0;
  bool aligned = false;
  int64_t half_slots = 0;
  int half_threads = 0;
  int64_t half_iters = 0;
  bool eight_byte_block_rows = false;
  bool half_vectors = false;
  bool half_vectors_hold_row = false;
  bool sixteen_bit_shared_sums = false;
  bool bf16_rows = false;
  bool gate_short_pair = false;
  bool fused_short_rows = false;
  bool sixteen_bit_block_rules = false;
  bool block_of_eighths = false;
  bool rich_warp_rows = false;
  bool rich_shared_sum_rows = false;
  bool rich_option_free_rows = false;
  bool rich_element_rows = false;
  bool residual_alone = false;
  bool fp32_rows = false;

  // The config each rule starts from: vec, every other field at its default.
  LaunchConfig start() const {
    LaunchConfig c;
    c.vec = vec;
    return c;
  }
};

ManyRowsShape many_rows_shape(const NormProblem& p, int sm, int sm_count, bool many_rows, bool memory_rich) {
  ManyRowsShape s{p, sm, sm_count, many_rows, memory_rich};
  s.vec = vector_width(p);
  s.slots = ceil_div(p.n, s.vec);
  s.max_iters = std::max(1, kMaxRegisterElementsPerThread / s.vec);
  s.block_slots = int64_t{kMaxRegisterRowThreads} * s.max_iters;  // what one block can hold
  s.prefetch_iters = std::max(1, kMaxPrefetchElementsPerThread / s.vec);
  s.prefetch_block = int64_t{kPrefetchBlockThreads} * s.prefetch_iters;
  s.sixteen_bit = sixteen_bit_rows(p);
  // Staged rows read 16-byte vectors of x from shared memory whatever the rows' alignment.
  s.staged_vec = 16 / dtype_size(p.x_dtype);
  s.staged_slots = ceil_div(p.n, s.staged_vec);
  s.staged_iters = std::max(1, kMaxRegisterElementsPerThread / s.staged_vec);
  s.aligned = s.vec == s.staged_vec;
  // 16-bit rows held in registers as 8-byte vectors, 16 elements a thread (32 without β).
  s.half_slots = ceil_div(p.n, 4);
  s.half_threads = static_cast<int>(std::clamp<int64_t>(round_up(p.n / 16, 32), 256, 512));
  s.half_iters = ceil_div(s.half_slots, s.half_threads);
  // 16-bit rows of 1025-2047 that the rule for rows up to 2048 holds in a block of 8-byte
  // vectors, 16 elements a thread (below).
  s.eight_byte_block_rows = p.n > 1024 && p.n < 2048 && p.n % 128 == 0;
  // Only at the measured block sizes, 256 and 512 threads: 320 and 448 (N = 5120, 7168) ran at
  // 35-45% this way against 75-85% staged.
  s.half_vectors = sm >= 90 && s.sixteen_bit && s.aligned && (s.half_threads == 256 || s.half_threads == 512) &&
                   (s.half_iters == 4 || (s.half_iters == 8 && !p.has_bias));
  // Shared sums (bench/NOTES.md, entry 21; bench/results/2026-11-23-h100-d338c5b-packed/): 16-bit
  // rows held packed, 16 elements a thread in 16-byte vectors, dγ/dβ summed in shared memory.
  // One block of N/16 threads up to 16384 (LN bf16 5120: 189 us vs 206 staged; 8192: 151 vs
  // 167; 14336: 279 vs 347; 16384: 166 vs 198), beyond that clusters of 512-thread blocks, two
  // per SM, up to 8 (32768: 183 vs 230 for staged 1024-thread blocks; 65536: 194 vs 264), then
  // of 1024-thread blocks (131072: 216 vs 256). Not where a half-vector row of 32 elements a
  // thread already fits (RMS 16384: 149 us vs 155), but with fused options other than the
  // recompute: their extra rows spill there (RMS bf16 16384, exhaustive tuning, graph replays,
  // bench/results/2026-11-25-h100-7713342-fused-tune2/: the residual 1.22x the best, which is
  // one block of 16 elements a thread with shared sums, all four elementwise options 1.37x,
  // the gate 1.40x, parallel norms 1.59x with 572 bytes spilled).
  s.half_vectors_hold_row =
      s.half_vectors && s.half_iters == 8 && (!has_fused_options(p) || p.recompute_from_output);
  s.sixteen_bit_shared_sums = sm >= 90 && s.sixteen_bit && s.aligned && (p.has_weight || p.has_bias) &&
                              p.n > 4096 && !s.half_vectors_hold_row &&
                              s.slots <= int64_t{kMaxRowThreads} * 2 * kMaxCluster;
  s.bf16_rows = p.x_dtype == DType::BF16;
  // The gate after the norm at 10241-12288, whose block of 16 elements a thread spilled 88-140
  // bytes, in the pair of blocks (pair_from; session 50, tune, M = 64 Mi / N's bucket,
  // bench/results/2026-11-30-h200-gate-rules/tune-12k.txt): with 16-bit γ one slot a thread
  // prefetching (1.15-1.44x, bf16 11776 407 → 282 µs), with fp32 γ two slots a thread, two blocks
  // an SM (bf16 1.07-1.29x, fp16 1.11-1.16x).
  s.gate_short_pair = p.gate == Gate::AfterNorm && s.slots <= kMaxRowThreads * 3 / 2;
  // The gate (RMSNorm), since packed rows hold z beside x and dy (kHoldsGate): shared sums, at
  // 8 elements a thread (in bf16 only until σ(z) was approximate; below). Exhaustive tuning, RMS,
  // fp32 γ, graph replays
  // (bench/results/2026-11-24-h100-3e82f92-gate/tune-new.txt), after / before the norm:
  // - 4096 (M = 16384): bf16 512 threads with shared sums 255 / 260 µs against 294 / 288 with
  //   sums in registers; fp16 keeps registers (288 / 283 against 290 / 300 with shared sums).
  // - 8192 (M = 8192): bf16 1024 threads of 8, 286 µs, and before the norm prefetching, 256
  //   (against 329 / 316 before z was held); its 512 threads of 16 spill (473 µs). fp16 512
  //   threads of 16, two blocks an SM: 278 / 300 (against 326 / 315).
  // - 32768 (M = 2048): clusters of 8 x 512 threads of 8 (fp16 382 / 386 against 447 / 435 for
  //   the option-free rule's 4 x 512 of 16), prefetching in bf16 after the norm only (331, and
  //   before the norm 332 without against 380 with).
  // Since σ(z) is the SFU's approximations (templates/gate_math.cuh: 4 instructions where expf
  // and a division took about 20), ptxas holds more in flight and those shapes spill where they
  // held 16 elements a thread or prefetched: on the H200 (bench/results/2026-11-29-h200-539569c-
  // sigmoid-2/) fp16 4096-12288 spilled 232-680 bytes (0.42-0.68x of the division's speed), bf16
  // before the norm at 6144-12288 144-480 (0.68-0.87x), bf16 clusters prefetching after the norm
  // 0.89-0.93x. Exhaustive tuning there, graph replays: RMS bf16 8192 before the norm 1024
  // threads of 8 without prefetching 208-218 µs against 303 with; 12288 a pair of 768-thread
  // blocks of 8, 371 / 395 after / before against 594 / 453 for one block of 16; 32768 after
  // the norm, clusters of 8 without prefetching 258 against 289; fp16 8192 1024 threads of 8
  // (199-205 µs) against 512 of 16 (477-610), fp16 4096 512 threads of 8 with shared sums 187
  // against 468. So fp16 takes bf16's shapes, before the norm nothing prefetches, the gate's
  // clusters do not prefetch, and a pair of blocks of 8 holds the row from pair_from(p).
  // Exhaustive tuning with it at 1536-24576 (-dfa438f-widen/, -34d0d11-gate-rules/) then moved
  // these bounds: the block of eighths at 2048; prefetching after the norm at 2561-3072;
  // before the norm, sums in registers at 1025-2560 but 2048, and prefetching in blocks of up to
  // 640 threads; a pair of blocks of 16 at 16385-24576 after the norm (and before it in bf16);
  // fp16's pair after the norm from beyond 12288 (each where it is made, with its numbers).
  // Fused options on 16-bit rows up to 4096 that the option-free rule holds in 8-byte vectors,
  // 16 elements a thread, sums in registers (half_vectors: 3073-4096), with many rows: that
  // leaves the options' extra loads and registers no room. bf16 4096, fp32 γ, M = 16384,
  // exhaustive tuning (graph replays; bench/results/2026-11-24-h100-{9445af3-few-groups,
  // 0fb0bd3-racecheck}/tune-fused-4096.txt): parallel LayerNorms (four sums) 443 us against 238
  // for 8 elements a thread in 8-byte vectors; the gate 400 against 295 for a slot of 8 a
  // thread, two blocks an SM; for shared sums at 2 slots of 8: residual 255 against 195;
  // residual, row scale, bit mask and zero-centred γ together 365 against 257; parallel
  // RMSNorms 345 against 214. Not LayerNorm recomputing x̂ from y and β: 177 us as before, 183
  // with shared sums (its best, 172, is 32 elements a thread). The option-free rows keep their
  // rule (LayerNorm 157 us against 155). Measured at 4096 only.
  // LayerNorm recomputing x̂ from y and β keeps the option-free rows' rules (at 4096 as measured
  // above; at 2304-16384, since its packed rows hold x̂ for the dx pass, they are its exhaustive
  // best: bench/results/2026-11-25-h100-{1b07551-recompute-held,4a91695-recompute-rules}/).
  // On a memory-rich device (an H200) LayerNorm's recompute takes the shared sums at 2 slots of 8
  // too: exhaustive tuning, M = 16384, fp32 / 16-bit γ, graph replays (bench/results/
  // 2026-12-01-h200-forward-shared-prefetch/call2/): LN 4096 bf16 144.5 µs against 162.1 for the
  // option-free rows' blocks of 8-byte vectors, fp16 154.1 against 161.3, bf16 γ 136.4 against
  // 163.9. (The best blocks of 128 threads lose 1.27x in fp16: 180 registers, two blocks an SM.)
  const bool layer_norm_recompute = p.recompute_from_output && p.has_bias && !s.memory_rich;
  s.fused_short_rows =
      many_rows && s.half_vectors && has_fused_options(p) && p.n <= 4096 && !layer_norm_recompute;
  // Many aligned 16-bit rows on sm_90 (the only machine timed), but for fused_short_rows: the
  // rules of one block a row at 1025-4095 below.
  s.sixteen_bit_block_rules = sm >= 90 && many_rows && s.sixteen_bit && s.aligned && !s.fused_short_rows;
  // Of those, rows that a block of N/8 threads holds at 8 elements a thread in whole warps:
  // 1025-2047 where 8-byte vectors held the row, and 2049-3072 where N/8 fills warps.
  // The gate takes them at 2048 too (below).
  s.block_of_eighths = s.sixteen_bit_block_rules &&
                       (s.eight_byte_block_rows || (p.n > 2048 && p.n <= 3072 && p.n % 256 == 0) ||
                        (p.n == 2048 && p.gate != Gate::None));
  // Option-free rows of 513-2047 that leave a warp's last vector pass part-empty, on memory-rich
  // devices: not the H100's staged blocks (below) but a warp a row up to 1023 (there, below) and
  // a block of shared sums beyond (rich_shared_sum_rows_config says which).
  const bool rich_part_warp_rows = memory_rich && s.sixteen_bit_block_rules && !has_fused_options(p) &&
                                   (p.has_weight || p.has_bias) && p.n > 512 && p.n < 2048 && p.n % 128 != 0;
  s.rich_warp_rows = rich_part_warp_rows && p.n < 1024;
  s.rich_shared_sum_rows = rich_part_warp_rows && p.n > 1024;
  // Option-free rows, many of them on a memory-rich sm_90: what the memory-rich rules below for
  // rows aligned to less than 16 bytes (and fp32 rows) have in common.
  s.rich_option_free_rows = memory_rich && many_rows && sm >= 90 && !has_fused_options(p);
  // Rows of an element a slot among them (the rich_element_warp_rows and row_in_one_block rules).
  s.rich_element_rows = s.rich_option_free_rows && s.sixteen_bit && s.vec == 1;
  NormProblem option_free = p;
  option_free.residual = false;
  s.residual_alone = p.residual && !has_fused_options(option_free);  // no other fused option
  s.fp32_rows = p.x_dtype == DType::F32 && p.dy_dtype == DType::F32;
  return s;
}

void one_row_per_block(LaunchConfig& c, int64_t per_block_slots, int iters) {
  c.threads = c.threads_per_row = row_block_threads(per_block_slots, iters);
}

// Stages a row per block, or per cluster of `cluster` blocks with `iters` slots a thread;
// false when the stages would not fit in shared memory.
std::optional<LaunchConfig> stage(const ManyRowsShape& s, int cluster, int iters) {
  const NormProblem& p = s.p;
  LaunchConfig c;
  c.vec = s.staged_vec;
  c.staged = true;
  c.cluster = cluster;
  const int64_t per_block = ceil_div(s.staged_slots, cluster);
  c.threads = c.threads_per_row = row_block_threads(per_block, iters);
  // Two blocks of 512 threads leave 64 registers a thread: fp16 and fp32 rows then spill.
  c.min_blocks_per_sm = cluster == 1 && iters == s.staged_iters && c.threads <= 448 && s.sixteen_bit ? 2 : 1;
  if (dynamic_shared_bytes(p, c) * c.min_blocks_per_sm > max_stage_bytes(s.sm)) c.min_blocks_per_sm = 1;
  if (dynamic_shared_bytes(p, c) > max_stage_bytes(s.sm)) return std::nullopt;
  return c;
}

// c, its block shape set, with shared sums: false, leaving c as `before`, where they do not fit
// (or one block would hold the row where many_rows does not allow it); else as
// many blocks per SM as 64 registers a thread and the SM's shared memory allow.
// fp32_blocks_fill_sm: rows held as fp32 too take as many blocks an SM as fit (below).
bool take_shared_sums(LaunchConfig& c, const ManyRowsShape& s, const LaunchConfig& before,
                      bool fp32_blocks_fill_sm = false) {
  const NormProblem& p = s.p;
  c.shared_sums = true;
  const size_t bytes = dynamic_shared_bytes(p, c);
  if (bytes > max_stage_bytes(s.sm) || (!s.many_rows && c.cluster == 1)) {
    c = before;
    return false;
  }
  // Rows held as fp32 (not packs_rows: fp32 rows) need the registers of one block per SM: at
  // two they spill (RMS bf16 8192 with parallel norms, unpacked: 296 bytes, 376 us against 163
  // without the option). Not the fp32 clusters of 16385-57344 (fp32_blocks_fill_sm, below),
  // where two or three blocks an SM won even where they spilled.
  const bool rows_stay_fp32 = !packs_rows(p, c) && !fp32_blocks_fill_sm;
  // Unmerged, though with 16 elements a thread LayerNorm's partial rows are 8.6% of x, dy and
  // dx at any N: pairs merging their sums (half the partials) measured 1.5-10% slower
  // (LN bf16 16384: 182 us against 166; bench/results/2026-11-23-h100-75909f4/tune-merge.txt).
  c.min_blocks_per_sm = rows_stay_fp32 ? 1 : shared_sums_blocks_per_sm(p, c, s.sm);
  return true;
}

// One row a block (or cluster) with shared sums, `iters` slots a thread; false, leaving c as
// it was, where the sums do not fit in shared memory (parallel norms of the longest rows).
bool shared_sums_rows(LaunchConfig& c, const ManyRowsShape& s, int iters, bool wide_blocks = false,
                      bool fp32_blocks_fill_sm = false) {
  const LaunchConfig before = c;
  const int64_t lanes = ceil_div(s.slots, iters);
  // Blocks of 512 threads while a cluster of at most the portable size of them holds the row
  // (of 1024 where wide_blocks asks).
  const int64_t block_limit = wide_blocks || lanes <= kMaxRowThreads ||
                                      lanes > int64_t{kMaxRegisterRowThreads} * kPortableCluster
                                  ? kMaxRowThreads
                                  : kMaxRegisterRowThreads;
  c.cluster = static_cast<int>(next_pow2(ceil_div(lanes, block_limit)));
  one_row_per_block(c, ceil_div(s.slots, c.cluster), iters);
  return take_shared_sums(c, s, before, fp32_blocks_fill_sm);
}

// A cluster of two blocks sharing the row, `iters` slots a thread, with shared sums; false,
// leaving c as it was, where they do not fit.
bool pair_shared_sums(LaunchConfig& c, const ManyRowsShape& s, int iters) {
  const LaunchConfig before = c;
  c.cluster = 2;
  one_row_per_block(c, ceil_div(s.slots, 2), iters);
  return take_shared_sums(c, s, before);
}

// One block of 8-byte vectors, four a thread, with shared sums; false, c unchanged, where the
// sums do not fit.
bool quarter_vector_block(LaunchConfig& c, const ManyRowsShape& s) {
  const LaunchConfig before = c;
  c.vec = 4;
  c.cluster = 1;
  one_row_per_block(c, ceil_div(s.p.n, int64_t{4}), 4);
  return take_shared_sums(c, s, before);
}

// Option-free 16-bit rows of 1025-2047 that leave a warp's last vector pass part-empty, many of
// them on a memory-rich device: two rows a turn (paired_rows) with shared sums (and, by
// with_shared_weights, γ in shared memory), in place of a row a turn with shared sums at as
// many blocks an SM as 1024 threads make (session 34's rule, bench/NOTES.md entry 47) and of
// LayerNorm's fp16 rows' staged blocks up to 1280. RMSNorm keeps that rule's block (a slot a
// thread up to 128 threads, then two); LayerNorm takes a slot a thread, in one block up to
// kMaxPairedLayerNormBlockThreads, then in a cluster of two. Paired rows hold two rows'
// registers: one block an SM (at the 6-10 of 96-160 threads that shared sums take they spilled
// in tune: LN 1128 205 µs against 142, RMS 1128 361 against 129), LayerNorm's clusters 8 (85
// registers at 96 threads). Found by tune on the H200 (bench/results/2026-11-30-h200-odd-rows/
// call7/). In bench --graph against the rule before (M·N = 64 Mi, two rounds within 1%;
// bench/results/2026-11-30-h200-short-rows/call1/, 1032-2024): RMS bf16 fp32 γ 1.00-1.08x,
// bf16 γ 0.99-1.04x, fp16 fp16 γ 1.05-1.10x; LN bf16 fp32 γ 1.02-1.14x, fp16 fp16 γ 1.10-1.28x.
// LayerNorm's bf16 rows with 16-bit γ and β lost up to 1640 (1296 0.94x, 1384 0.96x; 1768-2024
// 1.03-1.08x): up to kMaxUnpairedBf16LayerNormColumns they keep the rule before.
// False, c unchanged, where the sums do not fit.
bool rich_shared_sum_rows_config(LaunchConfig& c, const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  const bool layer_norm = p.kind == NormKind::LayerNorm;
  const bool paired = !(layer_norm && s.bf16_rows && dtype_size(p.weight_dtype) == 2 &&
                        p.n <= kMaxUnpairedBf16LayerNormColumns);
  const bool taken = !layer_norm || !paired ? shared_sums_rows(c, s, static_cast<int>(ceil_div(s.slots, 128)))
                     : s.slots <= kMaxPairedLayerNormBlockThreads ? shared_sums_rows(c, s, 1)
                                                                  : pair_shared_sums(c, s, 1);
  if (!taken || !paired) return taken;
  c.paired_rows = true;
  c.min_blocks_per_sm = c.cluster == 1 ? 1 : kPairedLayerNormClusterBlocksPerSm;
  return true;
}

// The rules (kManyRowsRules, below, asks them in order): each gives the config of the rows it
// serves, or none.

std::optional<LaunchConfig> short_rows(const ManyRowsShape& s) {
  if (s.slots > 32) return std::nullopt;
  LaunchConfig c = s.start();
  // Short rows: a power-of-two group of lanes per row, many rows per block.
  c.threads_per_row = next_pow2(s.slots);
  c.threads = 256;
  return c;
}

// Fused problems take this rule and the three after it (but for 3073-4096, where
// fused_short_rows has rules of their own); they had kept the configs these rules
// replaced. Against those in bench --graph --fused (bf16 and fp16, fp32 γ, M·N = 64 Mi;
// bench/results/2026-11-25-h100-b63ffe0-fused-cliffs/, the last three rules alone): LN 1280
// residual 446 → 193 us, all four elementwise options 649 → 264, parallel 559 → 211,
// recompute 430 → 194; RMS 1280 residual 384 → 190, gate 601 → 290 (before the norm
// 601 → 262), parallel 465 → 232; at 2304-3072 residual 218-224 → 189-201, the gate
// 405-467 → 287-329; nothing slower but LayerNorm's recompute at 2049-4095 (below).
// The gate and parallel norms on those rows: shared sums at 8 elements a thread, one row a
// block of N/8 threads, as many blocks an SM as make 1024 threads; parallel norms prefetch
// the next row (not fp16 LayerNorms: 1.27-1.30x their best that way). Exhaustive tuning at
// 1280-3072, M·N = 64 Mi (graph replays, L2 flushed; bench/results/
// 2026-11-25-h100-17a4667-fused-tune/): within 1.5% of the best but the bf16 gate at 3072
// (1.10-1.12: the best prefetches there, not at 2560, where that lost 6%), LN bf16 parallel
// 2560 (1.03) and RMSNorm's parallel at 3072 (1.01); the rules before took 1.06-1.33x
// (gate), 1.07-1.43x (parallel). fp16 before the norm keeps sums in registers (its best at
// 1536 and 2560; shared sums 1.11-1.16x), as do RMSNorm's parallel norms at 3072 (its best;
// in bench shared sums lost 1-3%). In bench against the rules before (graph replays,
// -bf00285-fused-refit/): the bf16 gate 1280-3072 259-329 → 239-268 us, parallel RMSNorms
// 1280-2560 220-258 → 198-215, parallel LayerNorms 2304-3072 259-315 → 214-229.
// Since σ(z) is approximate (below), exhaustive tuning on the H200 (bf16 and fp16, fp32 γ,
// graph replays; bench/results/2026-11-29-h200-dfa438f-widen/, bench µs): the gate at 2048
// takes these blocks too (after the norm 236 → 174, fp16 alike; before it 236 → 178-185);
// after the norm at 3072 it prefetches (197 → 171; 2560 lost 6% prefetching on the H100);
// before the norm at 1025-2560 its sums stay in registers (bf16 1536: 232 → 187, 2560
// 222 → 191; with shared sums ptxas spills 80 bytes there), as fp16's did at 1025-3072, but
// at 2048 (in registers fp16 184 against 178, bf16 ties) and 2561-3072 (fp16 205 → 196;
// -34d0d11-gate-rules/).
std::optional<LaunchConfig> gate_and_parallel_eighths(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  // The gate before the norm keeps its sums in registers there up to 2560 but at 2048 (below).
  const bool gate_before_in_registers =
      p.gate == Gate::BeforeNorm && (s.eight_byte_block_rows || (p.n > 2048 && p.n <= 2560));
  const bool eighths_parallel = p.parallel && !(p.kind == NormKind::RMSNorm && p.n > 2560);
  LaunchConfig c = s.start();
  if (!(s.block_of_eighths && (eighths_parallel || (p.gate != Gate::None && !gate_before_in_registers)) &&
        (p.has_weight || p.has_bias) && shared_sums_rows(c, s, 1)))
    return std::nullopt;
  c.prefetch = (p.parallel && !(p.kind == NormKind::LayerNorm && p.x_dtype == DType::F16)) ||
               (p.gate == Gate::AfterNorm && p.n > 2560);
  return c;
}

// RMSNorm's 16-bit rows of 1025-2047 that 8-byte vectors would hold (below), and of
// 2049-3072 whose N/8 threads fill whole warps, many of them: 8 elements a thread in
// registers, one row a block of N/8 threads, two blocks an SM. bench --graph
// (bench/results/2026-11-25-h100-{8b1aebb-cliff-tune,986d9d5-refits2,ea6e933-refits3,
// 04fe8b6-cliff-tune2,f29be5c-range-check}/): RMS bf16 1280 266 → 142 us, 1408 253 → 166,
// 1536 238 → 141, 1792 178 → 142 (the exhaustive best), 2304 168 → 142, 2560 169 → 150,
// 3072 151 (staged) → 144 (shared sums, below, took 157 there); fp16 alike. Not 2432, 2688,
// 2944 (N/8 threads to a warp less some lanes): 7-15% slower than their staged blocks,
// which they keep (below), as do the other RMSNorm rows up to 3072.
std::optional<LaunchConfig> rms_eighths(const ManyRowsShape& s) {
  if (!(s.block_of_eighths && s.p.kind == NormKind::RMSNorm)) return std::nullopt;
  LaunchConfig c = s.start();
  one_row_per_block(c, s.slots, 1);
  c.min_blocks_per_sm = 2;
  return c;
}

// LayerNorm's of those rows of 1025-2047: shared sums at 8 elements a thread, one row a
// block of N/8 threads, as many blocks an SM as 1024 threads make (the exhaustive best:
// LN bf16 1280 308 → 147 us, 1536 277 → 146, 1792 198 → 148 in bench; fp16 and bf16 γ
// alike; -04fe8b6-cliff-tune2/). The 8-byte vectors had 96-128 threads of 92-115 registers.
std::optional<LaunchConfig> layer_norm_eighths(const ManyRowsShape& s) {
  LaunchConfig c = s.start();
  if (s.block_of_eighths && s.eight_byte_block_rows && (s.p.has_weight || s.p.has_bias) && shared_sums_rows(c, s, 1))
    return c;
  return std::nullopt;
}

// Aligned 16-bit rows of 2049-4095 (staged blocks, or 256 threads of 8-byte vectors with
// the last slots part-idle below): shared sums at 16 elements a thread, one row a block of
// N/16 threads, as many blocks an SM as 1024 threads make. Exhaustive tuning (graph
// replays, L2 flushed; bench/results/2026-11-25-h100-8b1aebb-cliff-tune/): within 2.4% of
// the best at LN and RMS 2560, 3072, 3584 (bf16, fp32 γ), against 10-35% behind for the
// staged and 8-byte-vector configs. In bench against the rules before (-986d9d5-refits2/,
// bf16 and fp16): LN 2304-4000 151-211 → 150-161 us, RMS 3584-4000 204-207 → 153-157; at
// 2560 and 3584 other configs were 5-9% faster still in bench (tuned: 320 threads of 8
// prefetching; 128 threads of 28). 4096 keeps its 8-byte vectors (91-93% of copy).
// LayerNorm recomputing x̂ from y and β too, since its packed rows hold x̂ for the dx pass
// (1b07551): the exhaustive best at 2304-4000 in bf16 and fp16 but fp16 3584 (1.04x there);
// in bench against the 8 elements a thread in registers (2049-3072) and the 8-byte vectors
// it took before (bench/results/2026-11-25-h100-4a91695-recompute-rules/): bf16 2304 203 →
// 172 us, 2560 191 → 172, 3072 181 → 173, 3584 255 → 158, 4000 255 → 169; fp16 alike.
std::optional<LaunchConfig> sixteen_bit_shared_sum_blocks(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  LaunchConfig c = s.start();
  if (s.sixteen_bit_block_rules && (p.has_weight || p.has_bias) && p.n > 2048 && p.n < 4096 &&
      !(p.kind == NormKind::RMSNorm && p.n <= 3072) && shared_sums_rows(c, s, 2))
    return c;
  return std::nullopt;
}

// Paired rows with shared sums, or LayerNorm's bf16 rows with 16-bit γ to 1664 a row a turn
// (the lambda says why).
std::optional<LaunchConfig> rich_shared_sum_rows(const ManyRowsShape& s) {
  LaunchConfig c = s.start();
  if (s.rich_shared_sum_rows && rich_shared_sum_rows_config(c, s)) return c;
  return std::nullopt;
}

// 16-bit rows of 512-2048 that leave a warp's last 8-byte vector pass part-empty: one
// staged row per block, a slot a thread (N = 1000: LN 331 us vs 387 for a warp per row,
// RMS 300 vs 330; bench/results/2026-11-23-h100-8109dfa-tune/). Why a warp per row loses
// 35% against N = 1024 is not understood. On memory-rich devices the option-free rows take
// the rule above from 1025, and up to 1023 a warp a row (below): LN bf16 520 1.23x, 600
// 1.09x, RMS 1.14x, 1.04x, fp16 alike (session 34); since session 52 641-1023 too, where
// session 51's tune found it the best or within 4% of it at 744-1000 (-odd-rows/call7/).
// In bench --graph against the staged blocks (641-768) and shared sums (769-1023) before
// (M·N = 64 Mi, two rounds within 1%; bench/results/2026-11-30-h200-short-rows/call1/):
// 648 1.27-1.39x, 800 1.18-1.39x, 1000 1.00-1.29x (RMS bf16 1.00-1.03), 1016 1.04-1.24x,
// both kinds, bf16 with fp32 and bf16 γ, fp16 with fp16 γ; none slower. Session 34 had
// read 712 0.93x a warp a row in LayerNorm, against the staged blocks as well: 1.24-1.27x
// now.
std::optional<LaunchConfig> staged_part_warp_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  if (s.sm >= 90 && s.sixteen_bit && s.aligned && p.n > 512 && p.n <= 2048 && p.n % 128 != 0 && !s.rich_warp_rows)
    return stage(s, 1, 1);
  return std::nullopt;
}

// 16-bit rows up to 2048: 8-byte vectors, a warp per row (4 rows a block) up to N = 1024,
// then a block of 4 vectors a thread (bench/results/2026-11-23-h100-06afd96-tune: LN 1024
// 154 us vs 187 with 16-byte vectors and prefetch, LN 2048 159 vs 203, RMS 2048 148 vs 171).
std::optional<LaunchConfig> sixteen_bit_rows_to_2048(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  if (!(s.sm >= 90 && s.sixteen_bit && s.aligned && p.n <= 2048)) return std::nullopt;
  LaunchConfig c = s.start();
  c.vec = 4;
  const int64_t quads = ceil_div(p.n, 4);
  if (quads <= 256) {
    // Many rows: half a warp a row where a warp's last pass would be half empty (N = 320:
    // LN bf16 199 → 152 us, RMS 175 → 150 in bench, graph replays; exhaustive tuning, the
    // best at every dtype and γ dtype timed; bench/results/2026-11-25-h100-04fe8b6-cliff-tune2/).
    c.threads_per_row = s.many_rows ? row_lanes(quads, 8) : 32;
    c.threads = 128;
    // On a memory-rich device (an H200), many rows of 897-1024 with parallel norms, the residual
    // or the gate: a warp a row holds 32 elements a lane of each tensor, at 162-255 registers
    // two or three blocks an SM. One row a block of N/8 threads instead (2 quads a thread,
    // 64-95 registers). bench --graph, bf16, fp32 γ, the config pinned at M = 64 Mi / N
    // (bench --config; bench/results/2026-12-01-h200-forward-shared-prefetch/call4/), µs at
    // 1024: parallel LN 317.9 → 164.6, RMS 303.8 → 147.2; the residual LN 220.0 → 155.8, RMS
    // 173.1 → 156.4; the gate 320.3 → 217.1. Not the option-free rows (108.6 against 119.1) nor
    // the recompute (LN 138.4 against 140.8), nor at 768 (the warp rows ahead for every option:
    // 24 elements a lane) or 512.
    if (s.memory_rich && s.many_rows && (p.parallel || p.residual || p.gate != Gate::None) &&
        ceil_div(quads, int64_t{32}) == 8)
      one_row_per_block(c, quads, 2);
  } else {
    one_row_per_block(c, quads, 4);
    // fp16 parallel norms on a memory-rich device: two quads a thread with shared sums (bf16 is
    // at its best in the blocks above). Exhaustive tuning and bench --config at 2048 (-call2/,
    // -call4/): LN 274.1 → 166.4 µs, RMS 215.9 → 145.3 (bf16 0.95-0.98x, not taken).
    if (s.memory_rich && s.many_rows && p.parallel && p.x_dtype == DType::F16 && (p.has_weight || p.has_bias)) {
      const LaunchConfig before = c;
      one_row_per_block(c, quads, 2);
      take_shared_sums(c, s, before);
    }
  }
  return c;
}

// 16-bit rows of 513-768 columns aligned to 2 bytes (odd N: rows of an element a slot), and
// RMSNorm's to 999, many of them on a memory-rich sm_90: a warp a row, 16 rows a block, in
// place of a block of 64 threads a row. Tune on the H200 (rows in phase, M = 64 Mi / N's
// bucket, bf16 fp32 γ and fp16 fp16 γ; bench/results/2026-11-30-h200-short-rows/call3/): LN
// 519 1.20-1.23x, 647 1.22x, 745 1.20-1.22x; RMS 519 1.18-1.22x, 647 1.08-1.09x, 745
// 1.21-1.24x, 871 1.08-1.10x, 999 1.10-1.12x. Not LayerNorm's 871 (28 elements a thread with
// its two sums: 0.95x). In bench --graph against the blocks of 64 threads (two rounds;
// -short-rows/call4/): LN 513-767 1.18-1.25x (66 → 81% of copy), RMS 513-999 1.08-1.26x. Rows
// in phase of RMSNorm from 960 take their phased block instead (short_rows_in_phase_config).
std::optional<LaunchConfig> warp_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  const bool rich_element_warp_rows = s.rich_element_rows && (p.has_weight || p.has_bias) && p.n > 512 &&
                                      p.n <= (p.kind == NormKind::LayerNorm ? kMaxLayerNormElementWarpRowColumns
                                                                           : kMaxRmsElementWarpRowColumns);
  if (!(s.slots <= int64_t{32} * s.max_iters || rich_element_warp_rows)) return std::nullopt;
  LaunchConfig c = s.start();
  c.threads_per_row = 32;  // one warp per row
  c.threads = rich_element_warp_rows ? kElementWarpRowThreads : 256;
  return c;
}

std::optional<LaunchConfig> prefetch_rows(const ManyRowsShape& s) {
  // fp32 rows of 3073-4096 prefetch too, in blocks of up to 512 threads (N = 4096, M = 16384: LN
  // 279 us against 291 staged, RMS 278 against 294; session 12's exhaustive sweep,
  // bench/results/2026-11-24-h100-8e940ae-exhaustive/; in `bench`, LN 290 against 298, RMS 289
  // against 308, -c4851cb-fp32/). Not at 3072, where 384 such threads took LN 1.18x the best
  // (16 elements a thread, 192 threads; -6ccb8a2-fp32-tune/).
  const bool fp32_prefetch_wide =
      !s.sixteen_bit && s.p.n > 3072 && s.slots <= int64_t{kMaxRegisterRowThreads} * s.prefetch_iters;
  if (!(s.sm >= 90 && s.aligned && (s.slots <= s.prefetch_block || fp32_prefetch_wide))) return std::nullopt;
  LaunchConfig c = s.start();
  c.prefetch = true;
  one_row_per_block(c, s.slots, s.prefetch_iters);
  return c;
}

// A slot of 8 a thread with shared sums, fp16 as bf16 (fp16 after the norm had taken 16
// elements a thread, which spill with the approximate σ(z): above).
std::optional<LaunchConfig> fused_short_gate_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  if (!(s.fused_short_rows && p.gate != Gate::None)) return std::nullopt;
  LaunchConfig c = s.start();
  if (!((p.has_weight || p.has_bias) && shared_sums_rows(c, s, 1))) {
    one_row_per_block(c, s.slots, 1);
    c.min_blocks_per_sm = 2;
  }
  return c;
}

// Parallel LayerNorms: 8 elements a thread in 8-byte vectors, since packed rows hold dy1
// with shared sums, two blocks an SM (bf16 218 us against 239 with sums in registers; fp16
// 218 against 238; bench/results/2026-11-24-h100-9f89c00-parallel/tune-new.txt).
std::optional<LaunchConfig> fused_short_parallel_layer_norms(const ManyRowsShape& s) {
  if (!(s.fused_short_rows && s.p.parallel && s.p.has_bias)) return std::nullopt;
  LaunchConfig c = s.start();
  c.vec = 4;
  one_row_per_block(c, ceil_div(s.p.n, 4), 2);
  const LaunchConfig registers = c;
  take_shared_sums(c, s, registers);
  return c;
}

// The other options: rows packed, sums in shared memory (one block of N/16 threads).
std::optional<LaunchConfig> fused_short_option_rows(const ManyRowsShape& s) {
  LaunchConfig c = s.start();
  if (s.fused_short_rows && (s.p.has_weight || s.p.has_bias) && shared_sums_rows(c, s, 2)) return c;
  return std::nullopt;
}

// bf16 with fp32 γ after the norm at 10241-12288: one block of 8-byte vectors, four a
// thread (N/16 threads), shared sums, where the pair below took 1.03-1.09x its time (tune,
// M = 64 Mi / N's bucket, -gate-rules/tune-12k.txt: 10752 297 against 308 µs, 11264 310 /
// 319, 11776 323 / 351, 12288 332 / 352). fp16 and 16-bit γ kept the pair there.
std::optional<LaunchConfig> bf16_gate_quarter_block(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  LaunchConfig c = s.start();
  if (s.sixteen_bit_shared_sums && s.many_rows && s.gate_short_pair && s.bf16_rows && dtype_size(p.weight_dtype) == 4 &&
      pair_from(p) <= s.slots && quarter_vector_block(c, s))
    return c;
  return std::nullopt;
}

// The gate and parallel norms where one block of 16 elements a thread holds the row of
// 12289-16384 (or, for parallel LayerNorms at 16384, whose four sums do not fit there,
// staged blocks): a pair of blocks of 8 elements a thread, with shared sums. Exhaustive
// tuning, bf16, fp32 γ, M·N = 64 Mi, graph replays (-7713342-fused-tune2/): the gate at
// 14336 and 16384 1.00-1.08 of the best, where the block took 1.22-1.63x (after the norm at
// 14336 the best, a cluster of 4 prefetching, took 500 us against 758); parallel norms 1.00
// -1.04 (LN 16384 274 us against 690 staged). Not at 12288, where the block ties with it.
// In bench against the rules before (-274e130-fused-wide/): the bf16 gate 14336 / 16384
// 438 / 422 → 313 / 299 us, parallel LN 325 / 681 → 279 / 268, RMS 274 / 393 → 265 / 243;
// fp16 alike but the gate at 14336 (315 → 351 with the exact σ(z), when fp16 gates kept the
// block where no half vectors would hold the row). Since σ(z) is approximate (above), the
// gate in both 16-bit types takes the pair from 8193 before the norm, and after it from 12288
// (bf16; fp16 beyond), since session 50 from 10241 (pair_from).
// After the norm at 10241-12288 (gate_short_pair) the pair prefetches with 16-bit γ; with
// fp32 γ it holds two slots a thread, two blocks an SM (the pair's iters, above).
std::optional<LaunchConfig> gate_and_parallel_pair(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  LaunchConfig c = s.start();
  if (!(s.sixteen_bit_shared_sums && s.many_rows && (p.parallel || p.gate != Gate::None) &&
        pair_from(p) <= s.slots && s.slots <= kMaxRowThreads * 2 &&
        pair_shared_sums(c, s, s.gate_short_pair && dtype_size(p.weight_dtype) != 2 ? 2 : 1)))
    return std::nullopt;
  if (s.gate_short_pair && dtype_size(p.weight_dtype) == 2) c.prefetch = true;
  return c;
}

// Parallel norms' four sums (with β) leave room for one block of 16 elements a thread per
// SM: where one block holds the row, 8 elements a thread, so 1024 threads, do better (LN
// bf16 8192: 271 us against 330; -7dafbbd-fused/tune-fused.txt). With two blocks per SM
// (RMSNorm's two sums) 16 stay better (RMS bf16 8192: 219 us against 289; -ef8c699/).
// bf16 LayerNorms where that block has 1024 threads (8192): a cluster of two 512-thread
// blocks instead, two an SM (256.7 us against 278.6; fp16 keeps the block, its best at
// 266.2; exhaustive tuning, graph replays, bench/results/2026-11-24-h100-2e41f5d-tune-gaps/).
// Measured at 8192 only.
void parallel_layer_norm_pair(LaunchConfig& c, const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  if (p.parallel && c.min_blocks_per_sm == 1 && c.cluster == 1 && s.slots <= kMaxRowThreads &&
      shared_sums_rows(c, s, 1) && s.bf16_rows && p.has_bias && c.threads == kMaxRowThreads)
    pair_shared_sums(c, s, 1);
}

// Where one block holds the row, the gate at 8 elements a thread (above). After the norm
// it prefetches too in blocks of fewer than 1024 threads (5120: 302 us against 399 without;
// -7713342-fused-tune2/); before the norm in blocks of up to 640 threads (5120, bf16: 234 →
// 178 µs; 6144 ties, 7168 loses; -dfa438f-widen/), not beyond (above).
void gate_block_prefetch(LaunchConfig& c, const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  if (p.gate != Gate::None && c.cluster == 1 && s.slots <= kMaxRowThreads && shared_sums_rows(c, s, 1))
    c.prefetch = c.threads < kMaxRowThreads && (p.gate == Gate::AfterNorm || c.threads <= 640);
}

// Option-free rows a cluster shares (N > 16384), many rows: since clusters meet by posting
// (bench/NOTES.md entry 39), wider clusters of narrower slices win where their blocks fill
// the SM: up to 65536, 8 elements a thread in a cluster of 8, prefetching the next row,
// where that makes blocks of at most 512 threads (two or more an SM) or of 1024; 16 in a
// cluster of 16 where that makes blocks of 512, two an SM. Exhaustive tuning at 32768-131072
// (bench/results/2026-11-25-h100-96adb72-cluster-tune/), then bench --graph against the
// rule before across the range (bf16, fp32 γ, M·N = 64 Mi, -2b43bd7-cluster-rules/), LN /
// RMS µs: 16392 205 / 150 → 164 / 156, 20480 152 / 150 → 147 / 143, 24576 160 / 150 → 157 /
// 152, 32768 158 / 153 → 151 / 145, 65536 164 / 150 → 160 / 149, 131072 185 / 160 → 175 /
// 157. Not where the blocks came out 640-768 threads, one an SM (LN / RMS 40960 158 / 147 →
// 167 / 163, 49152 167 / 154 → 163 / 157), or 384 in a cluster of 16 (98304 177 / 163 →
// 187 / 166): there the rule before stays. At 163840-262144 the two tie. The elementwise
// fused options take it too (residual, zero-centred γ, row scale, dropout: the row's work
// keeps its shape); bench --graph against the rule before, bf16 fp32 γ 32768-131072
// (-8d898cb-fused-cluster-rule/): the residual 1.0-4.6% faster, all four 0.99-1.02.
// On a memory-rich device (an H200) the rule before wins where it would take clusters of
// eight: exhaustive tuning, bf16, fp32 γ (bench/results/2026-11-28-h200-0299eca-tune/): LN
// 32768 144.0 → 135.2 us, 65536 157.8 → 142.4, RMS 65536 129.1 → 122.1; in bench
// (-5cbc10c-memory-rich/) 20480 and 32768 3-9% faster too, 24576 0.97-1.01 (kept simple:
// one range). So for the elementwise options: with the rule on the H200 the residual ran
// 4-6% and all four 4-7% slower at 32768-65536 (-0299eca-python/ab.txt).
void option_free_wide_clusters(LaunchConfig& c, const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  const bool eight_wide = s.slots <= int64_t{kMaxRowThreads} * kPortableCluster;
  if (c.cluster > 1 && s.slots > kMaxRowThreads && s.many_rows && has_option_free_row_shape(p) &&
      !(s.memory_rich && eight_wide)) {
    const LaunchConfig before = c;
    c.cluster = eight_wide ? kPortableCluster : kMaxCluster;
    one_row_per_block(c, ceil_div(s.slots, c.cluster), eight_wide ? 1 : 2);
    c.prefetch = eight_wide;
    const bool fills_sm = eight_wide ? c.threads <= kMaxRegisterRowThreads || c.threads == kMaxRowThreads
                                     : c.threads == kMaxRegisterRowThreads;
    if (!fills_sm || !take_shared_sums(c, s, before)) c = before;
  }
}

// Where a cluster shares the row one block cannot hold, up to 32768 (32768, M = 2048, exhaustive tuning, graph
// replays; bench/results/2026-11-24-h100-{e12b52f-fused-tune,7707c20-fused-fp16}/): parallel
// norms at 8 elements a thread (bf16 LN 338 us against 402, RMS 299 against 340, the best
// 330 / 289 in 1024-thread blocks; fp16 LN 365 against the best's 356, and 0.72 of the
// option-free row's % of copy against 0.61 in `bench --fused`, -7707c20-fused/); recompute
// from the output in blocks of 1024 threads, one an SM (LN 257 against 274 in bf16, 289
// against 311 in fp16, the best); the gate at 8 elements a thread (above, with the numbers).
// In bf16 only, where it wins: RMSNorm's recompute as LayerNorm's (213 against 229; in
// fp16 271 against 248). Measured at 32768 only.
void fused_clusters(LaunchConfig& c, const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  if (!(c.cluster > 1 && s.slots > kMaxRowThreads && p.n <= 32768)) return;
  if (p.parallel && shared_sums_rows(c, s, 1, /*wide_blocks=*/true)) {
    // Parallel norms holding dy1: 1024-thread blocks of 8 (LN bf16 301 us against 318 for
    // 512, fp16 323 against 332; RMS 273 against 282, 279 against 291; -9f89c00-parallel/).
  } else if ((p.gate == Gate::AfterNorm || (p.gate == Gate::BeforeNorm && s.bf16_rows)) &&
             s.slots <= int64_t{kMaxRowThreads} * 3 && pair_shared_sums(c, s, 2)) {
    // After the norm, up to 24576: a pair of blocks of 16 elements a thread (exhaustive
    // tuning, bf16, fp32 γ, -dfa438f-widen/: 20480 256 → 221 µs, 24576 292 → 277 against
    // the clusters of 8 below; beyond, blocks of more than 768 threads of 16 were not timed;
    // fp16 alike in bench, -34d0d11-gate-rules/: 20480 255 → 232, 24576 288 → 260). Before
    // the norm in bf16 too (20480: 261 → 217; fp16's best there is the clusters of 8).
  } else if (p.gate != Gate::None && shared_sums_rows(c, s, 1)) {
    c.prefetch = false;
  } else if (p.recompute_from_output && (p.has_bias || s.bf16_rows)) {
    shared_sums_rows(c, s, 2, /*wide_blocks=*/true);
  }
}

// The gate's rows of 32769-131072 columns, many rows (16-bit x and dy, 16-byte slots): the
// rules above leave clusters of 8 blocks of two slots a thread, two or three an SM, that
// spill 50-430 bytes; gate_long_rows says which shape holds them instead, and why.
void gate_long_row_clusters(LaunchConfig& c, const ManyRowsShape& s) {
  if (!(c.cluster > 1 && s.p.gate != Gate::None && s.many_rows && s.sixteen_bit && s.aligned)) return;
  switch (gate_long_rows(s.p)) {
    case GateLongRows::Keep:
      break;
    case GateLongRows::TwoSlotsOneBlockAnSm:
      shared_sums_rows(c, s, 2, /*wide_blocks=*/true);
      break;
    case GateLongRows::OneSlot:
      shared_sums_rows(c, s, 1, /*wide_blocks=*/true);
      break;
    case GateLongRows::OneSlotPrefetching:
      if (shared_sums_rows(c, s, 1, /*wide_blocks=*/true)) c.prefetch = true;
      break;
  }
}

// LayerNorm with fp32 γ/β where one 1024-thread block holds the row (15873-16384): 4-wide
// vectors, 4 slots a thread, so that each of a warp's fp32 γ loads fills whole sectors (8
// columns a thread read γ as two 16-byte loads 32 bytes apart, each touching twice the
// sectors it used; Nsight Compute, bench/NOTES.md entry 29). Exhaustive tuning, graph
// replays (-0ee91b3-vec4/): LN bf16 16384 158.9 us against 166.2; 768-896-thread blocks and
// RMSNorm gained 0.6-1.3% (not taken), clusters lost 13-20% (their 4 slots spill).
void fp32_weight_quad_slots(LaunchConfig& c, const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  if (p.kind == NormKind::LayerNorm && dtype_size(p.weight_dtype) == 4 && !has_fused_options(p) &&
      c.cluster == 1 && c.threads == kMaxRowThreads && !c.prefetch)
    c.vec = 4;
}

// Aligned 16-bit rows past 4096 (sixteen_bit_shared_sums says why): shared sums at 16 elements a
// thread, one block or a cluster a row, then the shapes that parallel norms, the gate, the other
// fused options and rows of clusters take from there, each in the order asked.
std::optional<LaunchConfig> sixteen_bit_shared_sum_rows(const ManyRowsShape& s) {
  LaunchConfig c = s.start();
  if (!(s.sixteen_bit_shared_sums && shared_sums_rows(c, s, 2))) return std::nullopt;
  parallel_layer_norm_pair(c, s);
  gate_block_prefetch(c, s);
  option_free_wide_clusters(c, s);
  fused_clusters(c, s);
  gate_long_row_clusters(c, s);
  fp32_weight_quad_slots(c, s);
  return c;
}

std::optional<LaunchConfig> half_vector_rows(const ManyRowsShape& s) {
  if (!(s.half_vectors && (s.half_vectors_hold_row || s.half_iters != 8))) return std::nullopt;
  LaunchConfig c = s.start();
  c.vec = 4;
  c.threads = c.threads_per_row = s.half_threads;
  return c;
}

// Memory-rich devices: fp32 rows of an element (4-byte aligned) beyond the 640 threads of 8
// that the rule below takes up to 5120 columns: there its blocks of 768-1024 threads and the
// register clusters of 8 a thread after them spill 36-360 bytes at 72-80 registers (LN 7001
// 200/360). Exhaustive tuning on the H200, fp32 γ, M·N = 64 Mi, at 6001-50001 (bench/results/
// 2026-11-29-h200-element-rows-tune/, -fp32-realigned-tune/; tune µs at the M bucket), each
// within 1.06 of the best but where said:
// - up to 8192: 16 elements a thread prefetching the next row, N/16 threads (LN 7001 1.02,
//   RMS 7001 1.06, 8001 1.04; the rule below 1.18-1.5);
// - up to 16384: one block holding the row, with β 16 elements a thread with shared sums
//   (LN 10001-16001 the best), without β 32 a thread in registers (RMS 12001-16001 the
//   best, 10001 1.02); the register cluster of two took 1.17-1.54;
// - beyond: clusters of blocks of 8 a thread with shared sums, as many blocks as keep them
//   at 640 threads or fewer (20001: four, prefetching at one block an SM, the best; 30001:
//   eight of 480, two an SM, the best). Past eight blocks' reach (from 40961): eight of 8
//   a thread with β (LN 50001 1.04; the best a cluster of 16), 16 a thread without (RMS
//   50001 the best). The register clusters took 1.10-1.41 here.
// In bench --graph against the rules before, two rounds (-element-rows-rule/, 32 N from 5001
// to 65001): 1.00-2.25x, LN 7501 502 → 222 µs, 13001 470 → 278, RMS 7501 343 → 215,
// 16385 397 → 289; 33001-40001 tie; RMS 6501 0.93x (214 → 230). Beyond eight blocks the
// rule stops where it lost: with β at blocks of 1024 threads (LN 65001 348 → 454 µs; 45001
// -60001, 704-960 threads, 1.14-1.26x), without β past 416 threads (RMS 45001-50001
// 1.29-1.40x, 55001 ties, 60001-65001 0.48-0.80x).
// Realigned 16-byte slots (two aligned loads and selects, as 16-bit rows take from 16385)
// were 1.35-1.7x the element-wide best at 6001-8001 in the same tuning, and are not offered.
// fp32 rows of slots of two (8-byte aligned) past 8192 take the same shapes, untuned: in
// bench --graph against the register clusters of 8 elements a thread they had, two rounds
// (-fp32-pair-rows/, 14 N of 8194-60002): median 1.07-1.09, up to 1.40x (LN 8194 305 → 226
// µs, RMS 30002 310 → 231); ties at 16386-20002 and 36002; slower at LN 12002 (0.97x), LN
// 40002 (0.96x) and RMS 14002 (0.87x: 227 → 262 µs, its cluster of two 896-thread blocks
// had been at 89% of copy). Tuned since (session 37, -pair-rows-tune/): without β past
// 13312 columns the clusters of blocks of 8 a thread with shared sums, two an SM (RMS 14002
// and 16002 1.20-1.23x the one block of 32 a thread; bench --graph, -slot-rules-37/: RMS
// 14002-16382 1.17-1.20x, but 12290 and 13002 0.86-0.93x, which keep the block).
// Slots of two of 4097-6144 prefetch as well (session 37, -pair-rows-tune/ and -tune2/: 5002
// and 6002 within 1.04 of the best, where one block of 16 a thread without prefetch, one an
// SM at 126-128 registers, took 1.09-1.19). In bench --graph against that block, two rounds
// (-pair-prefetch-ab/, 4098-6142): with β 1.09-1.26x (LN 4098 276 → 220 µs); without, from
// 5002 1.08-1.16x, but 4098 and 4502 0.93-0.96x, so those start past 4608 columns.
std::optional<LaunchConfig> rich_fp32_element_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  // fp32 rows of slots of one element past 5120 columns, and of two past 8192, on memory-rich
  // devices (the rule says why): blocks of 8 elements a thread, and in the widest clusters 8
  // (with β) or 16 a thread, the most blocks of them that stay within the rule. Slots a thread
  // for e elements: e / c.vec.
  const int64_t element_row_blocks = ceil_div(s.slots, int64_t{kMaxElementRowBlockThreads} * 8 / s.vec);
  const int wide_element_row_iters = (p.has_bias ? 8 : 16) / s.vec;
  const bool rich_fp32_element_rows =
      s.rich_option_free_rows && p.x_dtype == DType::F32 && p.dy_dtype == DType::F32 && s.vec <= 2 &&
      ((element_row_blocks > 1 && (s.vec == 1 || p.n > 8192)) ||
       (s.vec == 2 && p.n > (p.has_bias ? 4096 : kMinFp32PairPrefetchColumnsNoBias) && p.n <= 6144)) &&
      (element_row_blocks <= kPortableCluster ||
       row_block_threads(ceil_div(s.slots, kPortableCluster), wide_element_row_iters) <=
           (p.has_bias ? kMaxWideElementRowThreadsWithBias : kMaxWideElementRowThreads));
  if (!rich_fp32_element_rows) return std::nullopt;
  LaunchConfig c = s.start();
  if (p.n <= int64_t{kMaxRegisterRowThreads} * 16) {
    c.prefetch = true;
    one_row_per_block(c, s.slots, 16 / c.vec);
  } else if (p.n <= int64_t{kMaxRowThreads} * 16 &&
             !(c.vec == 2 && !p.has_bias && p.n > kMaxFp32PairRowBlockColumns)) {
    if (!p.has_bias || !shared_sums_rows(c, s, 16 / c.vec)) one_row_per_block(c, s.slots, 32 / c.vec);
  } else {
    // Slots of two of 32769-40960 with γ or β (session 37, -pair-rows-tune/ and
    // -pair-rows-tune2/, 36002 and 40002 the best in tuning, 1.17-1.28x the clusters of eight
    // the rule gives otherwise): with β a cluster of four blocks of 16 elements a thread,
    // without a cluster of sixteen of 8, three an SM; sums shared, no prefetch. In bench
    // --graph against the clusters of eight, two rounds (-pair-clusters-ab/, 32770-40958):
    // 1.03-1.36x, median 1.27-1.29 (LN 32770 413 → 308 µs, RMS 32770 372 → 277; LN 40958,
    // whose 640 threads spill 16 bytes, 1.03x).
    const bool sums = p.has_weight || p.has_bias;
    const bool pair_clusters = c.vec == 2 && p.n > 32768 && p.n <= 40960 && sums;
    c.cluster = pair_clusters ? (p.has_bias ? 4 : 16)
                              : static_cast<int>(std::min<int64_t>(next_pow2(element_row_blocks), kPortableCluster));
    const int iters = pair_clusters                          ? (p.has_bias ? 16 : 8) / c.vec
                      : element_row_blocks > kPortableCluster ? wide_element_row_iters
                                                              : 8 / c.vec;
    one_row_per_block(c, ceil_div(s.slots, c.cluster), iters);
    const LaunchConfig unshared = c;  // without γ or β: no sums to share
    if (sums && take_shared_sums(c, s, unshared, /*fp32_blocks_fill_sm=*/true))
      c.prefetch = !pair_clusters && c.threads > kMaxRegisterRowThreads && c.cluster < kPortableCluster;
  }
  return c;
}

// fp32 rows aligned to 4 bytes only, 4097-8192: 8 elements a thread, prefetching the next
// row (N = 5003: LN 351 us against 394 at 16 a thread, RMS 350 against 391; graph
// replays, bench/results/2026-11-24-h100-8cf39bc-tune-time/). Up to 4096 the 16 stay
// (4095: within 1% of the best).
std::optional<LaunchConfig> fp32_element_prefetch_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  if (!(s.sm >= 90 && !s.sixteen_bit && s.vec == 1 && p.n > 4096 && s.slots <= int64_t{kMaxRowThreads} * 8))
    return std::nullopt;
  LaunchConfig c = s.start();
  c.prefetch = true;
  one_row_per_block(c, s.slots, 8);
  // On a memory-rich device, many such rows recomputing x̂ from y: the same blocks without the
  // next row, two an SM (at 48 registers LN spills 60-156 bytes). tune --config at M = 64 Mi /
  // N's bucket (bench/results/2026-12-01-h200-recompute-row-top/call2/, call6/): LN 4609 1.28x,
  // 5003 1.21x, RMS 4609 1.50x, 5003 1.18x, one an SM 1.08-1.61x slower (call 6);
  // with early_weights 5003 lost (LN 0.90x). In bench --graph against the rule before, two
  // rounds (call 6): LN 1.12-1.38x (4097 432 → 327 µs), RMS 1.18-1.61x. At 6001
  // (rich_fp32_element_rows) RMS tied, and the rule stops at 5120.
  if (s.memory_rich && s.many_rows && p.recompute_from_output && p.n <= 5120) {
    c.prefetch = false;
    c.min_blocks_per_sm = 2;
  }
  return c;
}

// Memory-rich devices: 16-bit rows aligned to 2 or 4 bytes prefetch the next row, 8 slots a
// thread (8 or 16 elements), two blocks an SM for rows of an element (LN 2505 1.01x, 3001
// 1.04x over one; slots of two gained nothing and spilled in LN fp16 4002, 16 bytes).
// Exhaustive tuning with predicated loads (bench/results/2026-11-29-h200-predicated-loads/,
// tune µs): within 4% of the best at 1505-2505 and 1506-4002, over the 16 elements a thread
// of row_in_one_block below at 1.00-2.41x (LN 2505 405 → 168, RMS 1505 232 → 199, LN 3002
// 238 → 180, LN 4002 253 → 210). Rows of an element:
// - not beyond 2560: two blocks of 352-384 such threads spill (16-72 bytes), and one block
//   of them lost to 16 a thread (RMS 3001 1.29x the best);
// - only where row_in_one_block's blocks of 16 a thread leave an SM short of threads: 96 or
//   160 of them at about 150-186 registers (LN 1505, 2505) hold 320-384 threads an SM, 64 or
//   128 hold 512, and there the 16 a thread stay ahead (bench --graph, -unaligned-rule/: RMS
//   bf16 1001 and 2001 80 → 67-69% of copy prefetching; LN 2001 77 → 72);
// - in bf16 only: fp16 ones prefetching were 1.09-1.47x the exhaustive best at 1025-2505,
//   the 16 a thread 1.00-1.34x (-fp16-element-tune/).
std::optional<LaunchConfig> rich_unaligned_prefetch_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  // Rows of an element held 16 a thread (row_in_one_block) fill an SM only in blocks that tile
  // kHeldElementRowThreadsPerSm threads.
  const bool held_elements_fill_sm = kHeldElementRowThreadsPerSm % row_block_threads(s.slots, s.max_iters) == 0;
  const bool rich_unaligned_prefetch_rows =
      s.rich_option_free_rows && s.sixteen_bit && s.vec <= 2 && p.n <= 4096 &&
      s.slots <= int64_t{kUnalignedPrefetchSlots} * kMaxUnalignedPrefetchThreads &&
      (s.vec == 2 || (!held_elements_fill_sm && s.bf16_rows));
  if (!rich_unaligned_prefetch_rows) return std::nullopt;
  LaunchConfig c = s.start();
  c.prefetch = true;
  one_row_per_block(c, s.slots, kUnalignedPrefetchSlots);
  if (c.vec == 1) c.min_blocks_per_sm = 2;
  return c;
}

// Memory-rich devices: 16-bit rows aligned to 4 bytes (slots of two elements) or 8 (of four)
// past 4096 columns hold the row in those slots instead of staging it. Exhaustive tuning on
// the H200, fp32 γ, M·N = 64 Mi (bench/results/2026-11-29-h200-{element-rows-tune,
// slot-rows-tune}/, tune µs at the M bucket), against the staged blocks and clusters, each
// within 1.09 of the best but where said:
// - slots of two, up to 8192: 8 elements a thread prefetching the next row (bf16 5002-8002,
//   fp16 6002; staged 1.18-1.52);
// - from 8193: with β 16 elements a thread with shared sums (LN 14002-16002 the best,
//   staged 1.38-1.43; 10002, 10004 1.16-1.17 and 12002 1.06, tying the staged block);
//   without β 16 a thread in registers up to 896 threads (RMS 10002-14004 1.00-1.13,
//   staged 1.18-1.28), 32 beyond (RMS 16002 the best, staged 1.69).
// - slots of four up to 8192 (session 37, -pair-rows-tune/: 4100-8004, bf16): two blocks an
//   SM of 16 elements a thread, within 1.05 of the best (staged 1.21-1.40), but LayerNorm's
//   past 320 threads share their sums (ptxas spills them at the cap of two blocks: 6004 92
//   bytes), within 1.14 (6004; its best 32 a thread), and without β past 448 threads 32 a
//   thread (RMS 8004 the best; 7500's 480 threads of 16 spill 68 bytes).
// In bench --graph against the staged blocks, two rounds (-slot-rows-rule/, bf16 and fp16,
// 20 N from 4098 to 16382): 1.2x at the median, up to 1.9x (RMS bf16 16004 214 → 115 µs, LN
// bf16 8002 170 → 115, 14002 233 → 165). Where it lost, the staged blocks stay: LayerNorm's
// slots of two at 8193-12288 (blocks of up to 768 threads: bf16 and fp16 0.90-1.06x, 11002
// 0.90x; from 13002 1.37-1.51x), and fp16 LayerNorm's prefetching blocks past 896 threads
// (8002: 1024 threads spill 64 bytes, 0.84x). The slots of four up to 8192 (-slot-rules-37/,
// bf16 and fp16, 10 N from 4100 to 8188, two rounds): 1.05-1.45x, median 1.21-1.25 (RMS
// bf16 8188 152 → 107 µs, LN fp16 8004 169 → 131).
std::optional<LaunchConfig> rich_unaligned_block_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  // 16-bit rows aligned to 4 or 8 bytes of 4097-16384 on memory-rich devices (the rule says why).
  const bool fp16_layer_norm = p.x_dtype == DType::F16 && p.has_bias;
  const bool rich_unaligned_block_rows =
      s.rich_option_free_rows && s.sixteen_bit && !s.aligned && s.vec >= 2 && p.n > 4096 &&
      p.n <= kMaxRowThreads * 16 &&
      (p.n <= 8192 ? s.vec == 4 || !(fp16_layer_norm && p.n > int64_t{kMaxFp16LayerNormPrefetchThreads} * 8)
                   : !p.has_bias || s.vec == 4 || p.n > int64_t{kMaxStagedSlotRowThreads} * 16);
  if (!rich_unaligned_block_rows) return std::nullopt;
  LaunchConfig c = s.start();
  if (p.n <= 8192 && c.vec == 2) {
    c.prefetch = true;
    one_row_per_block(c, s.slots, 8 / c.vec);
  } else if (p.n <= 8192) {
    // Slots of four: two blocks an SM of 16 elements a thread, LayerNorm's sums shared past
    // the threads whose registers hold them.
    if (!(p.has_bias && row_block_threads(s.slots, 16 / c.vec) > kMaxSlotsOfFourRegisterSumThreads &&
          shared_sums_rows(c, s, 16 / c.vec))) {
      one_row_per_block(c, s.slots, 16 / c.vec);
      if (!p.has_bias && c.threads > kMaxSlotsOfFourBlockThreadsNoBias) one_row_per_block(c, s.slots, 32 / c.vec);
      c.min_blocks_per_sm = 2;
    }
  } else if (p.has_bias && shared_sums_rows(c, s, 16 / c.vec)) {
  } else {
    // In registers; without β, 32 a thread past kMaxWideBlockRowThreads.
    one_row_per_block(c, s.slots, 16 / c.vec);
    if (!p.has_bias && c.threads > kMaxWideBlockRowThreads) one_row_per_block(c, s.slots, 32 / c.vec);
  }
  return c;
}

// Since session 57 the recompute's blocks of 8 a thread read γ and β at each row's top
// (early_weights) at 2049-3584 columns, and RMSNorm's in 16-bit rows of 3841-4096: each
// config timed by normjit tune --config at M = 64 Mi / N's bucket (bench/results/
// 2026-12-01-h200-recompute-row-top/call2/ and call4/, bf16 and fp16 with fp32 γ, and fp32),
// against the rules before: LN 2049-3583 1.11-4.92x (bf16 3201 1852 → 388 µs, 3457 2078 →
// 424), RMS 1.04-2.25x; RMS 16-bit 3841-4095 1.15-1.47x. In bench --graph (call 3, 2305-3201
// and RMS 16-bit 3841-4095) 1.09-4.93x. Elsewhere neither won as a rule: at 1857-1985 (blocks
// of 128) and 3585 (of 256) each of the four configs won some shapes and lost others, and the
// same flag alone lost 0.59-0.86x at LN bf16 1283 and 1793, fp16 3841 and fp32 1001 and 3841
// (its schedule is ptxas's to make): those keep their rules, and the tuner tries both.
bool recompute_early_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  return (p.n > 2048 && p.n <= 3584) ||
         (p.kind == NormKind::RMSNorm && s.sixteen_bit && p.n > 3840 && p.n <= 4096);
}

// Rows of an element a slot with fused options, many of them on a memory-rich sm_90: blocks of
// 8 elements a thread, two an SM, in place of the option-free rows' 16 a thread, one to two an
// SM as ptxas left them, where that measured faster:
// - the elementwise options (residual, row scale, dropout, zero-centred γ, the gate) at 769-1024
//   and 2561-3072 columns, the residual alone also at 3073-4096;
// - LayerNorm's x̂ recomputed from y in bf16 rows of 3841-4096 (fp16's 4095 ran its blocks of
//   16 a thread at the best candidate's time, and 8 a thread 1.03x slower: call 5).
// Without a register bound ptxas issued each slot's loads just before their use in some of
// these kernels (LN bf16 4095 recomputing x̂: 0.27 of the option-free row; Nsight Compute,
// bench/results/2026-11-30-h200-odd-recompute/call2/), and which ones it did so in follows
// no rule we found: the same config ran bf16 LN 4095 at 945 µs and fp16 at 393 (call 5).
// Every candidate timed (call 5: bf16 fp32 γ, fp16, fp32; M = 64 Mi / N's bucket), then in
// bench --graph against the rules before, two rounds (calls 6-7; bf16 fp32 γ and fp32):
// residual 1.03-2.23x (2561 and 3001 498/442 → 233/212 µs), all four 1.07-2.17x but RMS 897
// (0.93x) and fp32 RMS 1001 (0.95x), the gate 1.01-1.66x; LayerNorm's recompute (call 8, the
// final kernels) 3841 525 → 221 µs, 4095 498 → 213 (20 → about 46% of copy). Where they lost the
// rules before stay: all four and the gate at 3585 (0.70-0.86x), fp32 all at 4095 (LN 0.91x),
// RMSNorm's recompute at 4095 (0.82x; 3841 gained 1.48x), recompute at 897 and 2561-3585
// (0.65-0.78x in calls 6-7, with 0c66f20's marks since reverted), and parallel norms (their
// best at 4095 prefetches 16 a thread; 8 a thread lost, 1.23 → 1.38 of the best). 1025-2560
// keep theirs: at 1537 8 a thread lost (all 1.01 → 1.84 of the best).
bool rich_fused_element_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  const bool fused_short_window = (p.n > 768 && p.n <= 1024) || (p.n > 2560 && p.n <= 3072);
  const bool fused_element_rows_gain =
      p.recompute_from_output ? (p.kind == NormKind::LayerNorm && s.bf16_rows && p.n > 3840 && p.n <= 4096) ||
                                    recompute_early_rows(s)
                              : fused_short_window || (s.residual_alone && p.n > 3072 && p.n <= 4096);
  return s.memory_rich && s.many_rows && s.sm >= 90 && has_fused_options(p) && !p.parallel && s.vec == 1 &&
         (p.has_weight || p.has_bias) && fused_element_rows_gain;
}

// One block holding the row in registers, 16 elements a thread: aligned fp32 rows of 4097-8192
// (sm_90; session 12's exhaustive sweep, M·N = 64 Mi, -8e940ae-exhaustive/: LN 5120 362 us
// against 369 staged, 7168 484 against 525, 8192 282 against 298; RMS 354 / 482 / 281 against
// 365 / 516 / 297; each within 1.6% of the best), and rows aligned to less than 16 bytes up to
// 4096 in 16-bit types and for fp32.
// Rows an element a thread a pass hold 16 (odd 16-bit N 1001-4096); the bf16 rule of 8 for
// 2049-3072 is gone since 16-bit rows load without per-slot branches, which ptxas
// serialized (load_slot_if; bench/NOTES.md entries 35, 48).
std::optional<LaunchConfig> row_in_one_block(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  const bool row_in_one_block = ((s.sm >= 90 && s.aligned && !s.sixteen_bit && p.n > 4096) ||
                                 (!s.aligned && (!s.sixteen_bit || p.n <= 4096))) &&
                                s.slots <= s.block_slots;
  if (!row_in_one_block) return std::nullopt;
  // LayerNorm's rows of an element a thread in blocks of 16 elements a thread (row_in_one_block),
  // many of them on a memory-rich sm_90 (the rule there says why).
  const bool rich_layer_norm_element_rows = s.rich_element_rows && p.kind == NormKind::LayerNorm && p.has_bias;
  LaunchConfig c = s.start();
  one_row_per_block(c, s.slots, s.max_iters);
  if (const ElementBlockFill* fill = rich_layer_norm_element_rows ? element_block_fill(c.threads, p.x_dtype) : nullptr) {
    // LayerNorm's blocks of 64 (769-1024 columns), of 96 (fp16's 1025-1536) and of 192
    // (2561-3072): as many an SM as ptxas then holds at 96 registers a thread without spilling
    // (10, 6 and 3: 640, 576 and 576 threads). Unbounded it gave them 109-151 registers: 7-8
    // blocks of 64 an SM (448-512 threads; 139 at 897-959), 4-5 of 96 (384-480), 2 of 192. The
    // rows want the threads: in bench --graph (bf16 and fp16, fp32 and 16-bit γ, rows in
    // phase; bench/results/2026-11-30-h200-pairs-odd-layernorm/), 8 blocks of 64 at 128
    // registers against 7 took LN 903-951 1.12-1.14x (935 162 → 142 µs; call 2), and 10 at 96
    // against 8 801-1021 1.01-1.09x (801 141 → 130; call 6); fp16's 6 blocks of 96 1025-1535
    // 1.00-1.26x (1201 174 → 138; call 6); 3 of 192 2561-3071 1.11-1.34x (2561 187 → 141;
    // call 7). The blocks of 224 (3073-3584) spill at 3 an SM (80 registers: 188-284 bytes);
    // widened to 256 threads, 12-14 elements a thread, they do not, and in bench --graph against
    // the 224 threads two an SM (session 54, -odd-occupancy/ call 5, bf16 and fp16, fp32 and
    // 16-bit γ, two rounds) took 3073-3457 1.08-1.16x (3201 158 → 136 µs), 3583 1.03-1.06x.
    // Not the blocks of 256 (3585-4096): at 3 an SM they spill (4095 88 bytes), and neither 352
    // to 512 threads two an SM nor clusters of two of 128 beat them at 4095 (call 1's tune).
    // bf16's blocks of 128 (1537-2048) prefetch the next row instead, two an SM (120-163
    // registers at the cap of 255: no spill; three fit). Against the block alone (session 53,
    // -pairs-odd-layernorm/ call 1's abQ and call 2): 1537 1.00-1.06x, 1793 1.06-1.14x, 1901
    // 1.21-1.37x (166 → 125 µs), 2001 1.04-1.15x, 2047 1.05-1.14x; five an SM without prefetch
    // lost to it, 0.96-0.97x in tune (-odd-occupancy/ call 1). (bf16's 2049-2560 prefetch 8 a
    // thread, rich_unaligned_prefetch_rows: at 16 a thread LN 2559 lost, 0.94-0.99x.)
    // fp16's blocks of 128 hold five an SM and of 160 (2049-2560) four, at 96 registers as
    // above (session 54, bench/results/2026-11-30-h200-odd-occupancy/): ptxas had given the
    // blocks of 160 119-186 registers (2433-2557: 186, two an SM). In bench --graph against the
    // rules before (call 2, fp32 and fp16 γ, two rounds): 1601-2047 1.03-1.09x, 2113-2305
    // 1.08-1.13x, 2433-2553 2.4x (2553 325 → 137 µs), 2559 1.05x.
    // Not prefetching elsewhere: fp16's blocks of 96 prefetching two an SM gained 1.09-1.12x at
    // 1201, but at 1409 180 registers left three of 96 an SM and it took twice the time (140 →
    // 285 µs). The blocks of 192-256 prefetching two an SM are capped at 128-170 registers,
    // where they spill (LN fp16 3001 40 bytes, 0.80x; 3457 632 bytes).
    c.threads = c.threads_per_row = fill->take_threads;
    c.min_blocks_per_sm = fill->blocks_per_sm;
    if (fill->prefetch) c.prefetch = true;
  } else if (rich_fused_element_rows(s)) {
    one_row_per_block(c, s.slots, 8);
    c.min_blocks_per_sm = 2;
    c.early_weights = p.recompute_from_output && recompute_early_rows(s);
  }
  return c;
}

// One row per block, staged (up to N = 8192). 16-bit RMSNorm rows aligned to less than 16
// bytes with shared sums, as many blocks an SM as 64 registers a thread allow (5003: bf16
// 207.5 us against 214.8, fp16 207.4 against 215.6; LayerNorm's best keeps its sums in
// registers; -2e41f5d-tune-gaps/). Measured at 5003 only.
std::optional<LaunchConfig> staged_block_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  if (!(s.sm >= 80 && s.staged_slots <= int64_t{kMaxRegisterRowThreads} * s.staged_iters)) return std::nullopt;
  std::optional<LaunchConfig> c = stage(s, 1, s.staged_iters);
  if (c && s.sm >= 90 && s.sixteen_bit && !s.aligned && p.kind == NormKind::RMSNorm && p.has_weight && !p.has_bias &&
      !has_fused_options(p)) {
    const LaunchConfig staged = *c;
    take_shared_sums(*c, s, staged);
  }
  return c;
}

// Up to 768 threads of 2 slots (N = 12288), 896 without β (RMS 14336: 287 us vs 370 for a
// staged cluster of 2 x 896 x 1; -8109dfa-tune), 800 for rows aligned to less on
// memory-rich devices (LN bf16 12289: 179 us against 244 for a cluster of two; entry 47).
std::optional<LaunchConfig> two_slot_staged_rows(const ManyRowsShape& s) {
  // Threads of a staged block of 2 slots a thread: β's accumulators take registers.
  const int two_slot_staged_threads = !s.p.has_bias                 ? kMaxStagedThreadsAtTwoSlotsNoBias
                                      : s.memory_rich && !s.aligned ? kMaxShiftedStagedThreadsAtTwoSlots
                                                                    : kMaxStagedThreadsAtTwoSlots;
  if (s.sm >= 80 && s.sixteen_bit && s.staged_slots <= int64_t{two_slot_staged_threads} * 2) return stage(s, 1, 2);
  return std::nullopt;
}

// One block of 512 threads x 4 slots would spill (N = 16384 with β): a pair of 1024 x 1.
std::optional<LaunchConfig> staged_pair(const ManyRowsShape& s) {
  if (s.sm >= 90 && s.sixteen_bit && s.staged_slots <= kStagedClusterBlockSlots) return stage(s, 2, 1);
  return std::nullopt;
}

// Clusters of 1024-thread blocks: 1 slot a thread with β, up to 8 blocks (LN 32768: 4
// blocks, 244 us vs 249 for 2 x 512 x 4; LN 65536: 8 blocks, 276 vs 303 for 8 x 512 x 2),
// 2 slots without, up to 16 (RMS 32768: 193 us vs 210 for 2 x 512 x 4; 65536: 203 vs
// 225; 131072: 230 vs 249; 262144: 288 vs 305; -06afd96-tune, -8109dfa-tune).
std::optional<LaunchConfig> staged_wide_clusters(const ManyRowsShape& s) {
  // Staged clusters of 1024-thread blocks: slots a thread, and blocks at most.
  const int wide_cluster_slots = s.p.has_bias ? 1 : 2;
  const int64_t wide_cluster_limit = s.p.has_bias ? 8 : kMaxCluster;
  if (!(s.sm >= 90 && s.sixteen_bit && s.aligned &&
        s.staged_slots <= int64_t{kMaxRowThreads} * wide_cluster_slots * wide_cluster_limit))
    return std::nullopt;
  return stage(s, static_cast<int>(next_pow2(ceil_div(s.staged_slots, int64_t{kMaxRowThreads} * wide_cluster_slots))),
               wide_cluster_slots);
}

// Too long for one block: a cluster shares the row, each block staging its slice, so x
// and dy are still read once.
std::optional<LaunchConfig> staged_clusters(const ManyRowsShape& s) {
  // Blocks of staged clusters: 512 threads of 4 slots (2 where rows are interleaved, which
  // addresses each element on its own: 128 registers and spills at 4).
  const int cluster_iters = s.aligned ? kMaxStagedSlotsPerThread : 2;
  const int64_t cluster_block_slots = int64_t{kMaxRegisterRowThreads} * cluster_iters;
  if (!(s.sm >= 90 && s.sixteen_bit && s.staged_slots <= cluster_block_slots * kMaxCluster)) return std::nullopt;
  return stage(s, next_pow2(ceil_div(s.staged_slots, cluster_block_slots)), cluster_iters);
}

std::optional<LaunchConfig> register_block_rows(const ManyRowsShape& s) {
  if (s.slots > s.block_slots) return std::nullopt;
  LaunchConfig c = s.start();
  one_row_per_block(c, s.slots, s.max_iters);
  return c;
}

// fp32 rows of 8193-12288: one block at 32 elements a thread, not a register cluster of
// two at 8 (fp32 12288: LN 426 us against 477, RMS 421 against 473; graph replays,
// bench/results/2026-11-24-h100-0195f46-tune-sweep/). Not beyond: 448 threads of about
// 160 registers (N = 14336) exceed an SM's registers.
std::optional<LaunchConfig> fp32_wide_block_rows(const ManyRowsShape& s) {
  if (!(s.sm >= 90 && !s.sixteen_bit && s.aligned && s.p.n <= 12288)) return std::nullopt;
  LaunchConfig c = s.start();
  one_row_per_block(c, s.slots, std::max(1, 32 / c.vec));
  return c;
}

// Register clusters of up to 1024 threads with 8 elements each. Where that takes more than 8
// blocks, 16 elements a thread with shared sums instead (LN fp32 131072: 427 us with 8
// blocks, against 493 with 16; -d338c5b-packed/).
std::optional<LaunchConfig> register_clusters(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  if (!(s.sm >= 90 && s.slots <= int64_t{kMaxRowThreads} * std::max(1, 8 / s.vec) * kMaxCluster))
    return std::nullopt;
  LaunchConfig c = s.start();
  const int iters = std::max(1, 8 / c.vec);
  while (int64_t{c.cluster} * kMaxRowThreads * iters < s.slots) c.cluster *= 2;
  one_row_per_block(c, ceil_div(s.slots, c.cluster), iters);
  // Aligned option-free fp32 rows of 57345-131072 with many rows (a cluster of eight
  // 1024-thread blocks above, or more): a cluster of 16 blocks of at most 512 threads, sums
  // in shared memory, as many blocks an SM as fit; 8 elements a thread up to 65536, 16
  // beyond. Since clusters meet by posting (entry 39), from exhaustive tuning
  // (-96adb72-cluster-tune/); bench --graph against the rule before across the range
  // (-2b43bd7-cluster-rules/), LN / RMS µs: 61440 327 / 321 → 288 / 282, 65536 292 / 285 →
  // 285 / 279, 98304 295 / 289 → 293 / 286, 131072 303 / 293 → 296 / 288 (RMSNorm's tuned
  // best there, 8 elements in 1024-thread blocks prefetching, 282 in the tuner, not taken).
  // On a memory-rich device (the H200) not the cluster of eight 960-1024-thread blocks (57345-
  // 65536): it takes blocks of 16 elements in a cluster of 8 (below).
  const bool wide_cluster =
      s.many_rows && s.aligned && !has_fused_options(p) && (p.has_weight || p.has_bias) &&
      (c.cluster > kPortableCluster || (c.cluster == kPortableCluster && c.threads > 896 && !s.memory_rich)) &&
      s.slots <= int64_t{kMaxRegisterRowThreads} * 4 * kMaxCluster;
  if (wide_cluster) {
    const LaunchConfig before = c;
    c.cluster = kMaxCluster;
    const int wide_iters = c.cluster * kMaxRegisterRowThreads * iters < s.slots ? 2 * iters : iters;
    one_row_per_block(c, ceil_div(s.slots, c.cluster), wide_iters);
    if (!take_shared_sums(c, s, before, /*fp32_blocks_fill_sm=*/true) && c.cluster > kPortableCluster &&
        (p.has_weight || p.has_bias))
      shared_sums_rows(c, s, 2 * iters);
  } else if (c.cluster > kPortableCluster && (p.has_weight || p.has_bias)) {
    shared_sums_rows(c, s, 2 * iters);
  } else if (s.many_rows &&
             (c.cluster == 4 || (c.cluster == kPortableCluster && (c.threads <= 896 || s.memory_rich))) &&
             s.aligned && !has_fused_options(p) && (p.has_weight || p.has_bias) &&
             shared_sums_rows(c, s, c.cluster == 4 ? iters : 2 * iters, /*wide_blocks=*/false,
                              /*fp32_blocks_fill_sm=*/true)) {
    // Aligned fp32 rows of 16385-57344 (a cluster of four 1024-thread blocks above, or of eight
    // of at most 896): blocks of at most 512 threads in a cluster of 8, sums in shared memory,
    // as many blocks an SM as 1024 threads and shared memory allow, so two or three rows are
    // in flight an SM instead of one; 8 elements a thread up to 32768 (56 registers, no
    // spills), 16 beyond (36-240 bytes spilled, and still faster). Found by exhaustive tuning
    // (bench/results/2026-11-25-h100-{c4e1df7-streamed-fits,8b1aebb-cliff-tune}/); bench --graph against the
    // register cluster, M·N = 64 Mi (-e52089d-refits/, -986d9d5-refits2/): LN 16896 405 → 321
    // us, 20480 372 → 305, 24576 342 → 336, 28672 329 → 321, 32768 323 → 312, 36864 425 → 342,
    // 40960 405 → 354, 45056 399 → 344, 49152 381 → 339, 57344 368 → 339; RMSNorm alike. At
    // 24576-28672 blocks of 16 elements in clusters of 4 tuned 3-7% faster still, at LN 40960 a
    // cluster of 16 at 8 elements 4%. Not at 61440 on the H100, where this lost 3-8% to the
    // cluster of 960-thread blocks (LN 354 → 384 us, 240 bytes spilled); on a memory-rich
    // device (the H200) up to 65536: exhaustive tuning, fp32 γ, M·N = 64 Mi (tune µs, bench/
    // results/2026-11-30-h200-shared-prefetch/, calls 2-3), LN 65536 238.5 → 212.5 against
    // the cluster of 16 blocks of 8 elements the rules gave, RMS 228.7 → 209.7 (its best, 1024
    // threads of 8 prefetching in a cluster of 8, 203.7). Without fused options, many rows
    // only (the only ones timed).
  }
  return c;
}

// Beyond that, 16 elements a thread with shared sums in clusters of up to 16 blocks
// (fp32 262144: LN 471 us against 605 for the grid cluster below, RMS 445 against 607;
// graph replays, bench/results/2026-11-24-h100-0195f46-tune-sweep/).
std::optional<LaunchConfig> shared_sum_clusters(const ManyRowsShape& s) {
  LaunchConfig c = s.start();
  if (s.sm >= 90 && (s.p.has_weight || s.p.has_bias) &&
      s.slots <= int64_t{kMaxRowThreads} * std::max(1, 16 / s.vec) * kMaxCluster &&
      shared_sums_rows(c, s, std::max(1, 16 / s.vec)))
    return c;
  return std::nullopt;
}

std::optional<LaunchConfig> wide_clusters(const ManyRowsShape& s) {
  return wide_cluster_config(s.p, s.sm);  // up to 24 elements a thread (20 for LayerNorm's fp32 rows) where it wins
}

// Rows no cluster holds (past the wide clusters above, or past 262144 less aligned or with
// fused options; anything beyond a block before sm_90): a grid cluster, one block per SM,
// each owning a column slice of every row. Measured against the clusters at their edge it
// loses at many rows (LN bf16 262144: 535 us vs 340 for a staged cluster of 16; LN fp32
// 131072: 516 vs 482), so it starts where they end (LN bf16 1M: 288 us vs 2500 streamed;
// RMS fp32 1M: 516 vs 690; bench/results/2026-11-23-h100-6b817c0-grid/); at few rows
// grid_for_few_rows takes it before.
std::optional<LaunchConfig> grid_rows(const ManyRowsShape& s) {
  // The grid cluster's slices (grid_config, below): each block's must carry 4 KB of x and of dy a
  // row (256 16-byte slots), or the meeting outweighs it: at 497 slots it already beats
  // streaming (LN fp32 262144: 593 us vs 1130, bench/results/2026-11-23-h100-79688fa-peers/
  // tune-time.txt). But for rows past 16 elements a thread of a cluster of 16
  // (kMaxClusterRowColumns), whatever the slice: the 16-bit ones up to 270335 have 249-255 slots
  // a block of 132, and streamed they took 1.4-22x the grid's time (LN bf16 262145 aligned to 2
  // bytes 548 us against 748, RMS 538 / 566; LN 262152 at 4 rows 17.9 / 392;
  // bench/results/2026-12-01-h200-grid-edge/).
  const int64_t min_grid_block_slots = s.p.n > kMaxClusterRowColumns ? 1 : 256;
  std::optional<LaunchConfig> c = s.sm >= 80 ? grid_config(s.p, s.sm, s.sm_count, min_grid_block_slots) : std::nullopt;
  // Stages of 24 KB and more (x and dy of a block's slice: 16-bit rows of 1M, fp32 of 512K): a
  // sixth, where γ still fits beside it in shared memory, so four rows wait for the other blocks'
  // sums instead of three. The grid's time goes with the rows waiting, not with the rows copying
  // ahead (H200; bench/results/2026-12-02-h200-long-row-stalls/, calls 3-4, bench --graph, µs): 1M at 64
  // rows LN bf16 237.4 → 232.7, RMS 218.4 → 212.3, bf16 γ 228.8 → 223.5 and 213.5 → 207.7, fp16
  // alike; LN bf16 at 16 / 32 / 128 rows 77.5 → 76.0, 131.6 → 128.7, 454.2 → 442.2; LN fp32
  // 524288 447.5 → 438.6, RMS 433.2 → 432.7. Not without γ held (277 µs: γ read from L2 twice a
  // row), and not the smaller stages of 16-bit 458752-524288 (8-12 stages there: 0.98-1.02x).
  if (c && c->stages == 5 && s.p.has_weight && s.memory_rich) {
    LaunchConfig six = *c;
    six.stages = 6;
    const int64_t stage_bytes = block_slots(s.p, *c) * c->vec * (dtype_size(s.p.x_dtype) + dtype_size(s.p.dy_dtype));
    if (stage_bytes >= 24 * 1024 && with_shared_weights(s.p, six, s.sm).shared_weights) return six;
  }
  return c;
}

// The rules in the order they are asked: the first that serves the rows gives their config.
using ManyRowsRule = std::optional<LaunchConfig> (*)(const ManyRowsShape&);
constexpr ManyRowsRule kManyRowsRules[] = {
    short_rows,
    gate_and_parallel_eighths,
    rms_eighths,
    layer_norm_eighths,
    sixteen_bit_shared_sum_blocks,
    rich_shared_sum_rows,
    staged_part_warp_rows,
    sixteen_bit_rows_to_2048,
    warp_rows,
    prefetch_rows,
    fused_short_gate_rows,
    fused_short_parallel_layer_norms,
    fused_short_option_rows,
    bf16_gate_quarter_block,
    gate_and_parallel_pair,
    sixteen_bit_shared_sum_rows,
    half_vector_rows,
    rich_fp32_element_rows,
    fp32_element_prefetch_rows,
    rich_unaligned_prefetch_rows,
    rich_unaligned_block_rows,
    row_in_one_block,
    staged_block_rows,
    two_slot_staged_rows,
    staged_pair,
    staged_wide_clusters,
    staged_clusters,
    register_block_rows,
    fp32_wide_block_rows,
    register_clusters,
    shared_sum_clusters,
    wide_clusters,
    grid_rows,
};

// The first rule's config, or rows streamed twice where no rule serves them.
LaunchConfig rules_config(const ManyRowsShape& s) {
  for (const ManyRowsRule rule : kManyRowsRules)
    if (const std::optional<LaunchConfig> c = rule(s)) return *c;
  return streamed_launch_config(s.p);
}

// The residual alone (dresidual added to dx: one more row read an element, nothing more
// held) takes the prefetching rules below on 16-bit rows. Exhaustive tuning of the fused
// problems on the H200, LN bf16, fp32 γ, M·N = 64 Mi (bench/results/
// 2026-11-28-h200-9756722-held-weights-fused/tune-summary.txt), µs at M's bucket: 4096 a
// cluster of two prefetching blocks 150.8 against 155.3 for the H100 rules', 12288 768 threads
// prefetching 234.6 against 258.9. Not the non-prefetching ones (8192's 4-wide slots: 173.0
// against 159.0), nor the four elementwise options together (4096 and 12288 slower so).
bool memory_rich_rows(const ManyRowsShape& s) {
  const NormProblem& p = s.p;
  return s.memory_rich && s.many_rows && s.sm >= 90 && (s.sixteen_bit || s.fp32_rows) && s.aligned &&
         (!has_fused_options(p) || (s.residual_alone && s.sixteen_bit)) && (p.has_weight || p.has_bias);
}

// A row a block (or cluster), `iters` slots of `vec` a thread, sums in registers ...
LaunchConfig block_rows(const ManyRowsShape& s, int vec, int cluster, int iters, bool prefetch) {
  LaunchConfig c;
  c.vec = vec;
  c.cluster = cluster;
  one_row_per_block(c, ceil_div(ceil_div(s.p.n, vec), cluster), iters);
  c.prefetch = prefetch;
  return c;
}

// ... or shared.
LaunchConfig shared_rows(const ManyRowsShape& s, const LaunchConfig& chosen, int vec, int cluster, int iters,
                         bool prefetch) {
  LaunchConfig c = block_rows(s, vec, cluster, iters, prefetch);
  take_shared_sums(c, s, chosen, /*fp32_blocks_fill_sm=*/s.fp32_rows);
  return c;
}

// A memory-rich device (an H200) wants more of each SM's rows in flight than the rules
// above, fitted to the H100, give 16-bit rows. Exhaustive tuning on the H200, bf16, fp32 γ,
// M·N = 64 Mi, then bench --graph heuristic against tuned (bench/results/
// 2026-11-28-h200-0299eca-tune/), µs:
// - 1536-7168 in whole 512-column steps: a cluster of two blocks of N/16 threads, 8 elements
//   a thread, prefetching, sums shared, 1024 threads an SM (LN 2048 118.5 → 106.6, 4096
//   123.3 → 110.1; RMS 4096 119.8 → 103.3; -41c3636-final/: LN 5120 122.2 → 112.7, 7168
//   126.8 → 115.0);
// - rows of 8192 columns: 16 elements a thread in 8-byte vectors, sums shared, two blocks an
//   SM (LN 127.0 → 118.4);
// - one block of 16 elements a thread of 576-768 threads (9216-12288): prefetching (12288:
//   LN 135.4 → 113.0, RMS 120.7 → 110.7). Not blocks of 896-960 (14336-15360): in bench
//   against the rules before, LN bf16 fp32 γ 14336 135.1 → 151.2 us, 15360 137.7 → 174.2;
// - 13313-16384: a cluster of two blocks of 16 elements a thread, two an SM (LN 16384
//   134.9 → 123.1; -41c3636-final/: 14336 LN 136.5 → 124.6, RMS 118.8 → 110.9). Below
//   15361 whole warps only (N a multiple of 1024): at 13824 the last warp's ragged slots
//   spill LN bf16 (20 bytes) and lose 15% (132.8 → 152.5 us), though fp16 and RMSNorm
//   gained 4-6% there.
// In bench --graph against the rules before, bf16 (fp32 and bf16 γ) and fp16 (fp32 γ) at
// 1536-65536 (bench/results/2026-11-28-h200-5cbc10c-memory-rich/), new / old % of copy:
// LN 1.05-1.26 but 24576 (0.99-1.01), RMS 1.01-1.25 but 1536 (0.99-1.01), 8192 with bf16 γ
// (0.99), 16384 in fp16 (0.98) and 24576 (0.97-0.99).
// fp32 rows mostly keep up there (84-102% of copy) but for two ranges, where exhaustive
// tuning (-41c3636-final/) found clusters of two blocks of 8 elements a thread: LN fp32 5120
// 232.2 → 197.4 us (320 threads, three blocks an SM), 14336 260.0 → 212.7 (896 threads,
// prefetching).
// In bench --graph against the rules before (-50783ff-memory-rich-2/ab.txt), two runs each:
// 16-bit (bf16 and fp16, fp32 γ) at 4608-7168 and 13824-15360: 1.02-1.42x the speed but LN
// bf16 13824 (0.87, above); fp32 at 4608-6144 and 13824-15360: LN 1.02-1.24x, RMS 1.03-1.27x.
LaunchConfig memory_rich_config(const ManyRowsShape& s, const LaunchConfig& chosen) {
  const NormProblem& p = s.p;
  const bool option_free_layer_norm = p.kind == NormKind::LayerNorm && p.has_bias && !has_fused_options(p);
  const bool layer_norm_prefetch_block =
      option_free_layer_norm && (p.n == 3584 || p.n == 7168 || p.n == 8192 ||
                                 ((p.n == 1024 || p.n == 4096 || p.n == 6656) && p.x_dtype == DType::BF16));
  const bool paired_layer_norm = option_free_layer_norm && s.sixteen_bit && dtype_size(p.dx_dtype) == 2;
  const bool half_kilo_steps = p.n > 1024 && p.n <= 7168 && p.n % 512 == 0;  // 1536-7168
  LaunchConfig c = chosen;
  if (s.fp32_rows) {
    if (p.n > 4096 && p.n <= 6144 && p.n % 512 == 0)
      c = shared_rows(s, chosen, 4, 2, 2, false);
    else if (p.n > 13312 && p.n <= 15360 && p.n % 512 == 0)
      c = shared_rows(s, chosen, 4, 2, 2, true);
  } else if (layer_norm_prefetch_block) {
    // LayerNorm (γ and β) retuned on the H200 (session 37, bench/results/
    // 2026-11-29-h200-sweep-retune/, bf16, fp32 γ, tune µs): one block a row prefetching,
    // its sums in registers, 8 elements a thread (two blocks an SM up to 512 threads: LN
    // 4096 109.0 against 131.5 with one), 16 at 8192; the cluster of two with shared sums it
    // replaces took 1.04-1.06 (4096, 7168), the 4-wide blocks of 8192 1.05 and the warp a
    // row of 1024 1.09. In bench --graph against those, two rounds (-layernorm-prefetch-ab/,
    // bf16 and fp16 with fp32 γ, bf16 with bf16 γ, 1024-8192 in 512-column steps) it won
    // only in blocks of 448 threads or more of 8 a thread (3584-4096 and 6656-7168: 1.01-1.06x,
    // LN bf16 4096 110.0 → 104.3 µs; but fp16 4096, 0.99x, where ptxas spills 8 bytes), at
    // 8192 (16 a thread, 512 threads: 1.02-1.05x) and at 1024 in bf16 (1.09-1.10x; fp16
    // 0.99x). Where it lost the rules before stay: blocks of 320-384 threads (2560, 3072:
    // 0.90-0.96x), 16 a thread in 96-128 or 480 threads (fp16 1536-2048 0.85-0.91x; 7680 with
    // fp32 γ 0.89-0.90x), and 4097-6144 (5120: the cluster of two the best in tuning). Not
    // RMSNorm: within 1.03 of its best already. fp16 6656 pairs its rows since session 53
    // (below: 1.23-1.25x).
    c = block_rows(s, s.staged_vec, 1, p.n == 8192 ? 2 : 1, true);
    if (p.n <= 4096) c.min_blocks_per_sm = 2;
  } else if (paired_layer_norm && (p.n == 1024 || half_kilo_steps)) {
    // LayerNorm's rows of 1024 (fp16: bf16 prefetches, above) and 1536-7168 in 512-column
    // steps but the prefetching blocks above: two rows a turn (paired_rows), a slot of 8 a
    // thread, sums shared, one block of N/8 threads at 1024, else a cluster of two, as many
    // blocks an SM as shared sums take (no spill: 64-79 registers). In place of a warp a row of
    // 8-byte vectors (1024) and of the cluster of two prefetching (below). Session 51's tune
    // found them at fp16 1024 (1.09x) and 5120 (1.03-1.04x; bench/results/2026-11-30-h200-odd-
    // rows/call6/). In bench --graph against the rules before (M·N = 64 Mi, two rounds within
    // 1%; bench/results/2026-11-30-h200-pairs-odd-layernorm/call1/, abP: bf16 and fp16, fp32 and
    // 16-bit γ): fp16 1024 1.10x (113 → 103 µs, 87 → 96% of copy), 1536-3072 1.03-1.04x, fp16
    // 4096 1.04x, 4608-5120 1.03-1.05x, 6144 1.01-1.02x, 5632 1.00x, fp16 6656 1.23-1.25x (142 →
    // 114 µs, where the prefetching block lost its bf16 gain). The prefetching blocks stay where
    // pairs lost: bf16 4096 and 6656 (0.975-0.98x), 3584 and 7168 (bf16 0.985-0.99x, fp16
    // 1.00-1.01x).
    c = block_rows(s, s.staged_vec, p.n == 1024 ? 1 : 2, 1, false);
    if (take_shared_sums(c, s, chosen)) c.paired_rows = true;  // else c is chosen again
  } else if (half_kilo_steps)
    c = shared_rows(s, chosen, s.staged_vec, 2, 1, true);
  else if (p.n == 8192)
    c = shared_rows(s, chosen, 4, 1, 4, false);
  else if (c.shared_sums && c.cluster == 1 && !c.staged && c.rows_per_block() == 1 && c.vec == s.staged_vec &&
           int64_t{c.threads} * 2 >= s.slots && c.threads >= 576 && c.threads <= 768)
    c.prefetch = true;
  else if (p.n > 13312 && p.n <= 16384 && (p.n > 15360 || p.n % 1024 == 0))
    c = shared_rows(s, chosen, s.staged_vec, 2, 2, false);
  if (s.residual_alone && !c.prefetch) c = chosen;  // the residual: the prefetching rules only
  return c;
}

}  // namespace

LaunchConfig config_for_many_rows(const NormProblem& p, int sm, int sm_count, bool many_rows, bool memory_rich) {
  const ManyRowsShape s = many_rows_shape(p, sm, sm_count, many_rows, memory_rich);
  const LaunchConfig c = rules_config(s);
  return memory_rich_rows(s) ? memory_rich_config(s, c) : c;
}

}  // namespace normjit::codegen
