#include "codegen/launch_config.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "codegen/integer_math.h"
#include "codegen/many_rows_rules.h"
#include "codegen/norm_problem.h"
#include "codegen/phased_rows_config.h"

namespace normjit::codegen {

int aligned_vector_width(const NormProblem& p) {
  return std::max(1, std::min(16, p.alignment) / dtype_size(p.x_dtype));
}

int vector_width(const NormProblem& p, Pass pass) {
  const int64_t from = pass == Pass::Forward ? kRealignedForwardRowsFrom : kRealignedRowsFrom;
  return dtype_size(p.x_dtype) == 2 && p.n >= from ? 16 / dtype_size(p.x_dtype) : aligned_vector_width(p);
}

std::vector<int> candidate_vector_widths(const NormProblem& p, Pass pass) {
  const int widest = vector_width(p, pass);
  std::vector<int> out{widest};
  if (widest > 1) out.push_back(widest / 2);
  const int x_bytes = dtype_size(p.x_dtype);
  for (int vec : {aligned_vector_width(p), x_bytes == 2 ? 16 / x_bytes : 0, x_bytes == 2 ? 8 / x_bytes : 0})
    if (vec > 0 && std::find(out.begin(), out.end(), vec) == out.end()) out.push_back(vec);
  return out;
}

namespace {
// Whether slots of vec elements of x are no wider than p's rows are aligned (every pointer is
// aligned to one element).
bool within_alignment(const NormProblem& p, int vec) {
  return vec * dtype_size(p.x_dtype) <= std::max(p.alignment, dtype_size(p.x_dtype));
}
}  // namespace

bool realigned_slots(const NormProblem& p, const LaunchConfig& c) {
  return !c.staged && !c.phased && !within_alignment(p, c.vec);
}

bool phases_rows(const NormProblem& p) {
  const int x_bytes = dtype_size(p.x_dtype);
  // Rows of at least one 16-byte chunk: only then is the tensor's last chunk the last row's
  // alone, the one chunk a phased kernel reads element by element. Shorter rows share it with
  // the rows before them, whose whole-chunk loads read past the tensor (memcheck, session 43:
  // RMS bf16 N = 3, rows 297-299 of 301, 2 bytes past x).
  return p.alignment < 16 && p.rows_in_phase && dtype_size(p.dy_dtype) == x_bytes && dtype_size(p.dx_dtype) == x_bytes &&
         p.n * x_bytes >= 16 && !has_fused_options(p);
}

int64_t row_span(const NormProblem& p, const LaunchConfig& c) { return c.phased ? p.n + c.vec - 1 : p.n; }

bool rows_take_vector(const NormProblem& p, int vec) {
  const int bytes = vec * dtype_size(p.x_dtype);
  return within_alignment(p, vec) || (dtype_size(p.x_dtype) == 2 && (bytes == 8 || bytes == 16));
}

bool operator==(const LaunchConfig& a, const LaunchConfig& b) {
  return a.threads == b.threads && a.threads_per_row == b.threads_per_row && a.vec == b.vec &&
         a.row_in_registers == b.row_in_registers && a.cluster == b.cluster && a.merge == b.merge && a.grid == b.grid &&
         a.prefetch == b.prefetch &&
         a.staged == b.staged && a.stages == b.stages && a.shared_prefetch == b.shared_prefetch &&
         a.paired_rows == b.paired_rows && a.early_weights == b.early_weights &&
         a.min_blocks_per_sm == b.min_blocks_per_sm &&
         a.shared_sums == b.shared_sums && a.shared_weights == b.shared_weights && a.phased == b.phased &&
         a.column_pass == b.column_pass;
}

bool packs_rows(const NormProblem& p, const LaunchConfig& c) {
  return c.shared_sums && (dtype_size(p.x_dtype) < 4 || dtype_size(p.dy_dtype) < 4);
}

bool gate_holds_gamma(const NormProblem& p) {
  return p.gate != Gate::None && p.x_dtype == DType::BF16 && dtype_size(p.weight_dtype) == 4;
}

int64_t block_slots(const NormProblem& p, const LaunchConfig& c) {
  return ceil_div(ceil_div(row_span(p, c), c.vec), c.cluster);
}

int64_t elements_per_thread(const NormProblem& p, const LaunchConfig& c) {
  return ceil_div(block_slots(p, c), c.threads_per_row) * c.vec;
}

size_t dynamic_shared_bytes(const NormProblem& p, const LaunchConfig& c) {
  const int64_t slots = block_slots(p, c);
  int64_t bytes = 0;
  if (const int stages = c.staged ? c.stages : c.shared_prefetch; stages > 0) {
    // templates/norm_backward.cuh, StagePlan: each tensor's slice rounded up to 16 bytes, plus
    // 16 bytes of room for the shift of rows aligned to less than 16; a stage a staged row in
    // flight, or a row copied ahead (kSharedPrefetch).
    const int64_t shift_room = p.alignment < 16 ? 16 : 0;
    auto stage_bytes = [&](DType t) { return ceil_div(slots * c.vec * dtype_size(t) + shift_room, 16) * 16; };
    bytes = stages * (stage_bytes(p.x_dtype) + stage_bytes(p.dy_dtype));
  }
  if (c.shared_sums) {
    // templates/norm_backward.cuh, SlotSums: every slot a thread may hold, for each sum.
    const int64_t sums = (int64_t{p.has_weight} + int64_t{p.has_bias}) * (p.parallel ? 2 : 1);
    bytes += sums * elements_per_thread(p, c) * c.threads_per_row * int64_t{sizeof(float)};
  }
  // templates/norm_backward.cuh, kSharedWeights: γ of every slot a thread may hold, as fp32.
  if (c.shared_weights) bytes += elements_per_thread(p, c) * c.threads_per_row * int64_t{sizeof(float)};
  return static_cast<size_t>(bytes);
}

size_t static_merge_bytes(const NormProblem& p, const LaunchConfig& c) {
  // templates/norm_backward.cuh, write_merged_sum: kMergeColumns floats.
  return c.merge > 1 && c.rows_per_block() == 1 ? static_cast<size_t>(std::min<int64_t>(p.n, 8192)) * sizeof(float) : 0;
}

size_t block_shared_bytes(const NormProblem& p, const LaunchConfig& c) {
  return dynamic_shared_bytes(p, c) + static_merge_bytes(p, c) + kStaticSharedReserve;
}

size_t max_shared_per_sm(int sm) {
  if (sm == 80 || sm == 87) return 164 * 1024;
  if (sm == 90 || sm == 100 || sm == 103) return 228 * 1024;
  if (sm == 75) return 64 * 1024;
  return (sm >= 80 ? 100 : 96) * 1024;  // sm_70, sm_86, sm_89, sm_120, others
}

// Dynamic shared memory one block may use on compute capability `sm`, leaving 1 KB for the
// kernel's static buffers (CUDA C Programming Guide, "Technical Specifications per Compute
// Capability"); 0 where rows are not staged (before sm_80).
size_t max_stage_bytes(int sm) {
  if (sm < 80) return 0;
  if (sm == 80 || sm == 87) return (163 - 1) * 1024;
  if (sm == 90 || sm == 100 || sm == 103) return (227 - 1) * 1024;
  return (99 - 1) * 1024;  // sm_86, sm_89, sm_120 and anything not listed
}

// The heuristic, fitted to `normjit tune --exhaustive` on the H100 (bench/NOTES.md, entry 10;
// bench/results/2026-11-23-h100-8311444-tune/tune.txt), where each rule below was the fastest
// or within 5% of it:
//   16-bit rows N <= 8192 (RMSNorm 16384): registers with 8-byte vectors, 16-32 elements a
//     thread (LN 4096: 164 us vs 195 staged; RMS 16384: 155 us vs 236 with a cluster);
//   staged rows: 2 stages (a third never won), up to 768 threads of 2 slots (LN 12288: 279 us
//     vs 445), then a pair of 1024-thread blocks of 1 slot (16384: 224 us), beyond that
//     clusters of 512-thread blocks with 4 slots each (65536: 265 us vs 308 with 8 blocks of 2);
//   fp32 rows beyond one block: register clusters of 1024 threads x 8 elements (LN 65536:
//     362 us vs 385 staged);
//   rows aligned to less than 16 bytes: registers up to N = 4096 in 16-bit types (LN 4095:
//     332 us vs 354 staged) and for fp32; staged beyond (LN 5003: 223 us vs 294).
int grid_cluster_blocks(int sm_count) {
  return sm_count > 0 ? std::min(sm_count, kMaxGridCluster) : kDefaultGridCluster;
}

// A slot a thread up to 512 threads (16-bit; 1024 for fp32), then up to 4 slots (LN bf16 1M:
// 512 x 2, 288 us, vs 290 for 1024 x 1, which spills, and 427 for 256 x 4; RMS fp32 1M: 1024 x
// 2, 516 us vs 549 for 512 x 4; LN fp32 262144: 512 x 1 best), and 5 stages where they fit (288
// us vs 316 for 3). Beyond the row worked and the one copying, each stage holds a row whose dx
// waits for the other blocks' sums, so the meeting's latency hides behind that many rows.
std::optional<LaunchConfig> grid_config(const NormProblem& p, int sm, int sm_count, int64_t min_block_slots) {
  LaunchConfig c;
  c.vec = 16 / dtype_size(p.x_dtype);
  c.staged = true;
  c.grid = true;
  c.cluster = grid_cluster_blocks(sm_count);
  const int64_t per_block = ceil_div(ceil_div(p.n, c.vec), c.cluster);
  if (per_block < min_block_slots) return std::nullopt;
  const int64_t iters = std::clamp<int64_t>(ceil_div(per_block, sixteen_bit_rows(p) ? 512 : kMaxRowThreads), 1,
                                            kMaxStagedSlotsPerThread);
  c.threads = c.threads_per_row = row_block_threads(per_block, iters);
  if (c.threads > kMaxRowThreads) return std::nullopt;
  for (c.stages = 5; c.stages >= 2; --c.stages)
    if (dynamic_shared_bytes(p, c) <= max_stage_bytes(sm)) return c;
  return std::nullopt;
}

// Timed on the H200 against the grid the rules gave there, bf16 with fp32 γ and fp32, 16-byte
// aligned, at M = 64 Mi / N's bucket (bench/results/2026-12-01-h200-grid-edge/, calls 1-2; µs, in
// blocks of 1024 threads): LN bf16 262152 285 against 487 for the grid (1557 streamed, what the
// rules gave up to 270335), 327680 308 / 526, 393216 342 / 533; fp16 393216 333 / 531; RMS bf16
// with γ in shared memory 262152 211 / 471, 327680 218 / 508, 393216 242 / 527; fp32 LN (20
// elements a thread) 262148 419 / 553, 327680 562 / 612; fp32 RMS 262148 276 / 544, 327680 321 /
// 599, 393216 (24 a thread) 483 / 636. Beyond, the grid won: RMS bf16 32 a thread 521 against
// 564 at 458752 (no room for γ) but 322 against 292 at 524288; fp32 LN 24 a thread 766 / 639
// (spilling 520 bytes), fp32 RMS 28 a thread 804 / 704. Rows aligned to 2 bytes: LN 712 against
// 591 for the grid (327681), RMSNorm's 370 against 589 (taken since call 8).
// The fewest threads that hold the slots beat 1024 (call 7: LN bf16 262152 704 threads with γ
// in shared memory, which then fits, 208 against 283; 327680 864 threads 267 / 305; fp16 283 /
// 331; LN fp32 262152 832 threads 357 / 422; RMS bf16 262152 177 / 209; but RMS fp32 262152 289
// / 274). bench --graph against the session's start (call 7): LN bf16 262152 1571 → 203 µs,
// 270328 471 → 194, 327680 417 → 214, 393216 354 → 234; RMS bf16 763 → 166, 456 → 145, 402 →
// 157, 349 → 166; fp32 LN 1.09-1.57x, RMS 1.35-1.91x. At few rows the grid wins (grid_for_few_rows).
std::optional<LaunchConfig> wide_cluster_config(const NormProblem& p, int sm) {
  // RMSNorm's 16-bit rows aligned to less hold realigned 16-byte slots (LayerNorm's lost).
  const bool realigned =
      p.alignment < 16 && p.kind == NormKind::RMSNorm && sixteen_bit_rows(p) && dtype_size(p.dx_dtype) == 2;
  const int vec = realigned ? 8 : vector_width(p);
  if (sm < 90 || (p.alignment < 16 && !realigned) || vec * dtype_size(p.x_dtype) != 16 || has_fused_options(p) ||
      !(p.has_weight || p.has_bias))
    return std::nullopt;
  const int64_t slots = ceil_div(p.n, vec);
  const int64_t iters = ceil_div(slots, int64_t{kMaxRowThreads} * kMaxCluster);
  const bool fp32_layer_norm = p.kind == NormKind::LayerNorm && dtype_size(p.x_dtype) == 4;
  if (iters * vec <= 16 ||
      iters * vec > (fp32_layer_norm ? kMaxWideClusterLayerNormFp32Elements : kMaxWideClusterElements))
    return std::nullopt;
  LaunchConfig c;
  c.vec = vec;
  c.cluster = kMaxCluster;
  // The fewest threads that hold a block's slots at `iters` a thread: no thread with an empty
  // slot, and more registers a thread (LN bf16 262152: 704 threads 225.5 us against 283.5 for
  // 1024, which spill 68 bytes; 327680: 864 threads 268.5 against 306.7; call 6).
  c.threads = c.threads_per_row = row_block_threads(ceil_div(slots, int64_t{kMaxCluster}), iters);
  c.shared_sums = true;
  if (dynamic_shared_bytes(p, c) > max_stage_bytes(sm)) return std::nullopt;
  return c;
}

int row_lanes(int64_t slots, int max_passes) {
  return slots % 32 != 0 && slots % 16 == 0 && slots / 16 <= max_passes ? 16 : 32;
}

LaunchConfig streamed_launch_config(const NormProblem& p) {
  LaunchConfig c;
  // Never realigned slots: streamed, they measured 2x slower (LN bf16 262145: 931 → 1878 µs;
  // bench/NOTES.md entry 34), so rows beyond the register clusters keep the aligned width.
  c.vec = aligned_vector_width(p);
  c.threads = c.threads_per_row = 512;
  c.row_in_registers = false;
  check_launch_config(p, c);
  return c;
}

int shared_sums_blocks_per_sm(const NormProblem& p, const LaunchConfig& c, int sm) {
  return static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(kSharedSumsThreadsPerSm / c.threads, max_shared_per_sm(sm) / block_shared_bytes(p, c))));
}

namespace {

// Few rows (at most kLatencyRowsPerSm a multiprocessor): a block sees one row or two, so
// staging rows only adds a shared-memory round trip. fp32 rows that one block holds then take
// registers (LN fp32 4096 at M = 1 / 37 / 199: 5.2 / 10.7 / 16.0 us against 9.5 / 15.2 / 26.5
// staged; 8192: 7.0 / 13.4 / 23.1 against 12.7 / 20.8 / 32.7; bench/results/2026-11-23-h100-8109dfa-tune/),
// their width and prefetch as below. 16-bit rows already sit in registers up to 8192; those a
// warp would share take a block (below).
std::optional<LaunchConfig> config_for_few_rows(const NormProblem& p, const LaunchConfig& many, int64_t m) {
  const bool sixteen_bit = sixteen_bit_rows(p);
  const int64_t bucket = next_pow2(std::max<int64_t>(m, 1));
  const bool single_row = bucket == 1;
  if (sixteen_bit && single_row && !has_fused_options(p) && many.rows_per_block() == 1 && many.cluster == 1 &&
      !many.staged && many.row_in_registers && aligned_vector_width(p) >= 8) {
    // A single 16-bit row with 16-byte aligned rows and no fused options, graph replays of the whole sweep tuned on the H100 (bench/results/
    // 2026-11-24-h100-8cf39bc-tune-time/, and 0195f46-tune-sweep/ before it): one row, in
    // registers, `elements` a thread in `vec`-wide vectors; nothing to prefetch, sums in
    // registers (latency).
    // - RMSNorm, 2049-4096: 32 elements a thread in 4-wide vectors, the block's reduction over
    //   half the warps (N = 4096 with fp32 γ: 4.80 us against 5.28-5.34 at 16 a thread; with
    //   16-bit γ within 0.1 us either way).
    // (LayerNorm of 4097-8192 with fp32 γ/β had a cluster of 4 here, 9.09 us at 8192 against
    // 10.14 in one block; the column pass took its place: column_pass_for_few_rows.)
    if (p.kind == NormKind::RMSNorm && p.n > 2048 && p.n <= 4096) {
      LaunchConfig c = many;
      c.vec = 4;
      c.threads = c.threads_per_row = row_block_threads(p.n, 32);
      c.prefetch = false;
      c.min_blocks_per_sm = 1;
      c.shared_sums = false;
      return c;
    }
  }
  if (sixteen_bit && many.rows_per_block() > 1 && many.vec == 4 && p.n > 512) {
    // 16-bit rows of 513-1024 that many rows give a warp each: a block of 16 elements a thread
    // per row instead (LN bf16 1024 at M <= 8 / 64 / 256: 6.9 / 7.7 / 10.1 us against 9.0 /
    // 9.9 / 10.5 a warp per row; RMS 5.6 / 7.4 / 8.6 against 6.7 / 8.7 / 9.3; plain launches,
    // bench/results/2026-11-23-h100-a81232e/tune-fewrows.txt).
    LaunchConfig c = many;
    c.threads = c.threads_per_row = row_block_threads(p.n, 4 * 4);
    return c;
  }
  const bool fp32_rows = dtype_size(p.x_dtype) == 4 && dtype_size(p.dy_dtype) == 4;
  // 16-byte aligned fp32 rows in a register cluster of 1024-thread blocks (16384-32768 on sm_90)
  // at 1-8 rows: twice the blocks, of 512 threads, 8 elements a thread as before (exhaustive
  // tuning, graph replays, L2 flushed; bench/results/2026-11-24-h100-ba37a10-tune-fp32-few/ and
  // -ec78de1-fp32-few/; µs at M = 1 / 4 / 8, before → after, the best candidate in brackets):
  // LN 16384 12.74 / 11.78 / 12.00 → 9.18 / 10.37 / 10.62 (8.19 / 9.95 / 10.27, staged clusters
  // of 8 and a column pass), LN 32768 12.90 / 13.57 / 14.34 → 10.05 / 12.42 / 13.18 (9.41 / 12.42
  // / 12.67), RMS 16384 9.18 / 9.98 / 10.56 → 7.23 / 8.99 / 9.47 (7.23 / 8.83 / 9.34), RMS 32768
  // 9.50 / 11.10 / 12.00 → 7.68 / 10.43 / 11.36 (7.68 / 10.43 / 11.17). Without fused options
  // and aligned (the only ones timed); 9-16 rows (not timed) as many rows, and the column pass
  // from 17 (column_pass_for_few_rows).
  if (fp32_rows && p.alignment >= 16 && bucket <= 8 && !has_fused_options(p) && many.cluster > 1 &&
      many.cluster * 2 <= kPortableCluster && many.threads == kMaxRowThreads && many.row_in_registers &&
      !many.staged && !many.grid && many.rows_per_block() == 1) {
    LaunchConfig c = many;
    c.threads = c.threads_per_row = kMaxRowThreads / 2;
    c.cluster *= 2;
    c.prefetch = false;
    c.shared_sums = false;
    c.min_blocks_per_sm = 1;
    return c;
  }
  // The rows many rows stage or prefetch, and the aligned fp32 rows of 4097-8192 they hold in
  // registers (config_for_many_rows; staged there before, and timed so at few rows).
  const bool one_block_fp32 = vector_width(p) == 4 && p.n > 4096 && many.rows_per_block() == 1 && many.row_in_registers;
  if (!fp32_rows || many.cluster != 1 || !(many.staged || many.prefetch || one_block_fp32)) return std::nullopt;
  LaunchConfig c;
  // Up to 8192: 16 elements a thread in 4-wide vectors, prefetching the next row. Timed as graph
  // replays (61b9de6, bench/results/2026-11-23-h100-61b9de6/tune-fewrows.txt.gz), this was within
  // 7% of the best candidate at every fp32 shape of N = 1024, 4096, 8192 and M <= 8, 64, 256,
  // where 2-wide vectors were up to 13% behind at M <= 256: with more rows than SMs a block
  // gets a second row, and prefetching it pays.
  // Longer fp32 rows are never staged or prefetched by one block (clusters on sm_90, streamed
  // before), so this covers every row the rule is for.
  const int64_t threads = warp_threads(p.n, 16);
  if (threads > kMaxFewRowsPrefetchThreads) return std::nullopt;
  if (single_row) {
    // A single row: no next row to prefetch, and the latency is the block's. Half the threads,
    // 32 elements each in 2-wide vectors (graph replays, exhaustive tuning of the whole sweep:
    // LN fp32 4096 5.25 us against 7.01, 8192 6.85 against 10.37, RMS fp32 8192 5.63 against
    // 7.33; bench/results/2026-11-24-h100-0195f46-tune-sweep/).
    c.vec = std::min(vector_width(p), 2);
    c.threads = c.threads_per_row = row_block_threads(p.n, 32);
    return c;
  }
  c.vec = std::min(vector_width(p), 4);
  c.prefetch = true;
  c.threads = c.threads_per_row = static_cast<int>(std::max<int64_t>(threads, 64));
  return c;
}

// The column pass at few rows (exhaustive tuning on the H100, graph replays with L2 flushed,
// bench/results/2026-11-24-h100-088beab-column-pdl/tune.txt.gz and -d347d59/tune.txt; bf16, fp32
// γ): 16-bit rows of 4096-65536, 16-byte aligned (the only ones timed), without fused options,
// at more than 16 rows (below: 2-16) (LN 8192 at M = 37 / 199: 8.51 / 12.48 us against 10.18 / 15.36 for the
// rows families; LN 16384 at 37 / 128: 10.56 / 13.18 against 18.46 / 22.02; LN 32768 at 37 /
// 128: 14.66 / 22.27 against 27.62 / 34.37; LN 65536 at 37: 25.54 against 37.70; RMS 8192:
// 8.22 / 12.32 against 8.83 / 13.50; RMS 32768 at 37: 14.56 against 20.99; LN 4096: 7.46 /
// 10.53 against 7.81 / 11.39), and LayerNorm beyond 4096 at one row (8192: 8.06 against 9.15;
// 32768: 11.36 against 18.21; at 4096, and for RMSNorm, one row is as fast or faster in one
// block or a cluster). About 4 rows a lane (the bucket's rows / 4 lanes: the best at every
// shape above but LN/RMS 32768 at 128 rows, where 16 lanes took 21.12 / 21.50 us and 32 lanes
// 22.27 / 21.76), in 512-thread blocks from 128 rows or 16384 columns, else 256 (M = 37: 8.51
// against 9.18 at 8192, but 10.56 against 11.84 at 16384). fp32 rows: below.
std::optional<LaunchConfig> column_pass_for_few_rows(const NormProblem& p, int64_t m) {
  const int64_t bucket = next_pow2(std::max<int64_t>(m, 1));
  const bool sixteen_bit = sixteen_bit_rows(p);
  const bool fp32_rows = dtype_size(p.x_dtype) == 4 && dtype_size(p.dy_dtype) == 4;
  // fp32 rows of 8192-32768, 16-byte aligned, at 33-64 rows (17-32 from 16384), and
  // LayerNorm's at 65-128 too: 512 threads, bucket / 4 lanes (-ba37a10-tune-fp32-few/: LN at
  // M = 37 8192 / 16384 / 32768 10.30 / 14.24 / 23.14 us against 11.65 / 17.66 / 28.45, at 128
  // rows 13.66 / 20.99 against 14.78 / 24.54; RMS at 37 9.86 / 13.89 / 22.78 against 10.34 /
  // 14.94 / 25.38; -ec78de1-fp32-few/: at 32 rows LN 16384 / 32768 11.62 / 16.99 against 15.39 /
  // 20.42, RMS 10.75 / 16.06 against 13.09 / 17.86). RMS at 128 rows, 8192 below 33 rows and
  // fewer than 17 rows of either kind keep the rows families (not timed at 9-16), and LN 8192 at
  // 199 rows too: 19.10 against 18.59.
  if (fp32_rows && p.alignment >= 16 && p.n >= 8192 && p.n <= 32768 && column_pass_fits(p, bucket) &&
      (bucket == 64 || (bucket == 32 && p.n >= 16384) || (bucket == 128 && p.kind == NormKind::LayerNorm)))
    return column_pass_config(p, 512, column_lanes(bucket, 4));
  // 2-16 rows (-93d1356-tune-2-16/): LayerNorm beyond 4096 (8192 at M = 2 / 16: 8.10 / 7.90 us
  // against 8.42 / 9.06; 16384: 9.66 / 9.38 against 12.93 / 14.88; 32768: 11.87 / 12.03 against
  // 14.69 / 16.96), RMSNorm of 8193-16384 (16384: 7.81 / 8.42 against 9.12 / 9.92), and every
  // shape at 16 rows (RMS 4096: 6.72 against 6.94, 32768: 10.82 against 13.25; LN 4096 7.26
  // against 7.30). Not: LN 4096 at 2-8 rows (7.07-7.36 against 7.39-7.65), RMS 4096 / 8192 at
  // 2-8 (within 2%, merged blocks at 4), RMS 32768 at 2-8 (a cluster of 8, 2% ahead), one RMS row.
  const bool long_layer_norm = p.kind == NormKind::LayerNorm && p.n > 4096;
  const bool mid_rms = p.kind == NormKind::RMSNorm && bucket > 1 && p.n > 8192 && p.n <= 16384;
  if (!sixteen_bit || p.alignment < 16 || p.n < 4096 || p.n > 65536 ||
      !column_pass_fits(p, bucket) || !(bucket >= 16 || long_layer_norm || mid_rms))
    return std::nullopt;
  return column_pass_config(p, bucket >= 128 || p.n >= 16384 ? 512 : 256, column_lanes(bucket, 4));
}

// Whether the rules below may copy p's rows ahead (check_launch_config's conditions for
// shared_prefetch, as those rules' 16-byte slots of 16-bit rows meet them): 16-bit x and dy,
// rows aligned to 16 bytes of whole slots, no fused option, and a sum to share.
bool copies_rows_ahead(const NormProblem& p) {
  return sixteen_bit_rows(p) && p.alignment >= 16 && p.n % 8 == 0 &&
         !has_fused_options(p) && (p.has_weight || p.has_bias);
}
// The rules' blocks: 16 elements of 16-bit rows a thread (two 16-byte slots), whole warps, the
// sums in shared memory; a block, or each of a cluster of `cluster`.
LaunchConfig sixteen_element_blocks(int64_t n, int cluster) {
  LaunchConfig c;
  c.vec = 8;
  c.cluster = cluster;
  c.threads = c.threads_per_row = static_cast<int>(round_up(ceil_div(ceil_div(n, 8), int64_t{cluster} * 2), 32));
  c.shared_sums = true;
  return c;
}

// Long 16-bit rows of one column sum (RMSNorm; LayerNorm without γ or β) that a cluster of
// blocks of 16 elements a thread holds at 65537-262144 columns: blocks of up to 1024 threads,
// one an SM, copying the next row into shared memory while the held one is worked
// (shared_prefetch = 1), in place of the clusters before (two blocks of 512 an SM up to 131072,
// one of 1024 beyond). One block an SM has no second row in flight while it meets its cluster
// and writes dx; the copy is that row. Exhaustive tuning on the H200, fp32 γ but where said,
// M·N = 64 Mi (tune µs, L2 flushed; bench/results/2026-11-30-h200-shared-prefetch/): RMS bf16
// 262144 160.5 → 149.5, fp16 160.5 → 150.2, bf16 with bf16 γ 159.5 → 148.5, 131072 (a cluster
// of 8) 137.6 → 134.1; 65536 and 32768 keep their two blocks an SM (the best there). Not
// LayerNorm: its two sums, γ and a stage do not fit in shared memory at 262144 (γ then read
// from L2: 184.8 → 275.4), and at 131072 one block an SM copying ahead took 160.9 against the
// two blocks' 151.6.
std::optional<LaunchConfig> rows_copied_ahead(const NormProblem& p, int sm, int64_t m) {
  const bool one_sum = p.has_weight != p.has_bias;
  // From 128 rows (a bucket: the tuner's and the engine's kernel key), 8 or more a cluster:
  // 256 rows of 262144 were measured; with fewer, little is left to copy ahead.
  const bool rows_to_copy = m < 0 || next_pow2(std::max<int64_t>(m, 1)) >= 128;
  if (sm < 90 || !one_sum || !rows_to_copy || !copies_rows_ahead(p) || p.n <= 65536 ||
      p.n > int64_t{kMaxCluster} * kMaxRowThreads * 16)
    return std::nullopt;
  LaunchConfig c = sixteen_element_blocks(p.n, static_cast<int>(next_pow2(ceil_div(p.n, int64_t{kMaxRowThreads} * 16))));
  c.shared_prefetch = 1;
  return c;
}

// Rows (a bucket, as above) from which mid_rows_copied_ahead applies.
constexpr int64_t kManyRowsForCopiesAhead = 1024;

// 16-bit rows of 12289-16384 on a memory-rich sm_90 (the H200), at many rows: one block a row,
// or a cluster of two blocks (two an SM), of 16 elements a thread, copying the next row into
// shared memory (shared_prefetch = 1); LayerNorm's 15361-16384 pair their rows in a cluster of
// two blocks instead (paired_rows, one an SM). In place of one block of shared sums without a
// second row in flight (12289-14336) and of RMSNorm's pairs of blocks (14337-14848).
// Exhaustive tuning on the H200, bf16 with fp32 γ, M = 64 Mi / N (its bucket, 8192 rows, but
// 4096 at 16384), tune µs against the heuristic before (bench/results/2026-11-30-h200-paired-
// rows/, calls 1-3):
// - a cluster of two at 12289-13312: LN 12544 195.9 → 177.3, 12800 200.8 → 172.2, 13056 201.5
//   → 175.6, 13312 205.7 → 174.0; RMS 176.2 → 158.7, 181.8 → 162.2, 181.3 → 166.0, 186.2 →
//   167.7 (the best of every candidate or within 2% of it). Not at 12288 and below, where one
//   block prefetching into registers stays (12288: 179.7 against 162.2);
// - LayerNorm at 13313-13824 too: 13568 206.4 → 190.2, 13824 209.7 → 200.1 (211.1 → 209.0 in a
//   second run); not RMSNorm there (13568 187.8 against 185.9, 13824 201.8 against 188.1);
// - one block at 13825-14336: LN 14080 211.9 → 183.1, 14336 209.1 → 186.6 (16-bit γ 186.5, fp16
//   187.0); RMS 190.5 → 179.7, 190.1 → 184.2. At 13824 one block took 228-230 µs (both kinds,
//   every dtype tuned), a cliff not understood;
// - RMSNorm's cluster of two at 14337-14848: 14592 198.8 → 185.2, 14848 200.7 → 187.7; 15360
//   was 1.01x in bf16 and 0.98x in fp16 with fp16 γ: left as it was;
// - LayerNorm 16384 paired: 127.7 → 124.1 (16-bit γ 127.7 → 124.8, fp16 127.3 → 125.8); from
//   15361 (15360 kept its pair of blocks: the best there).
// Not RMSNorm's one block at 15361-16384: tuned 1.04x at 16384 (116.0 → 111.5), it read 0.99x
// there in bench --graph and 0.93x at 15872 (108.1 → 115.6 µs; call 4).
// In bench --graph against the rules before (call 4, two rounds, M·N = 64 Mi; bf16 fp32 γ, and
// fp16 with fp16 γ alike): LN 12544-14336 1.08-1.17x (13312 128.1 → 109.5 µs, 14336 121.5 →
// 110.5), 15872 / 16384 1.016 / 1.025x; RMS 12544-13056 1.10-1.11x, 13312 1.06x, 14080-14848
// 1.04-1.06x; the N outside the rule unchanged.
// LayerNorm's two sums, γ and a stage fill shared memory beyond 14528 columns in one block; the
// cluster of two fits two an SM to 14528 as well.
std::optional<LaunchConfig> mid_rows_copied_ahead(const NormProblem& p, int sm, int64_t m, bool memory_rich) {
  const bool one_sum = p.has_weight != p.has_bias;
  const bool two_sums = p.has_weight && p.has_bias;
  const bool many = m < 0 || next_pow2(std::max<int64_t>(m, 1)) >= kManyRowsForCopiesAhead;
  // Tuned with dx in x's 16-bit dtype only.
  if (!memory_rich || sm < 90 || !many || !copies_rows_ahead(p) || dtype_size(p.dx_dtype) != 2 || p.n <= 12288 ||
      p.n > 16384)
    return std::nullopt;
  const int64_t n = p.n;
  if (n <= 13312 || (two_sums && n <= 13824) || (one_sum && n > 14336 && n <= 14848)) {
    LaunchConfig c = sixteen_element_blocks(n, 2);
    c.min_blocks_per_sm = 2;
    c.shared_prefetch = 1;
    return c;
  }
  if (n > 13824 && n <= 14336) {
    LaunchConfig c = sixteen_element_blocks(n, 1);
    c.shared_prefetch = 1;
    return c;
  }
  if (two_sums && n > 15360) {
    LaunchConfig c = sixteen_element_blocks(n, 2);
    c.paired_rows = true;
    return c;
  }
  return std::nullopt;
}

}  // namespace

namespace {

// Blocks that m's power-of-two bucket of rows occupies, a row (or rows_per_block) each.
int64_t bucket_blocks(const LaunchConfig& c, int64_t m) {
  return ceil_div(next_pow2(std::max<int64_t>(m, 1)), c.rows_per_block());
}

}  // namespace

int merge_for_few_rows(const NormProblem& p, const LaunchConfig& c, int sm, int64_t m) {
  if (sm < 90 || (!p.has_weight && !p.has_bias) || c.cluster != 1 || c.grid || c.staged || !c.row_in_registers)
    return 1;
  return static_cast<int>(std::min<int64_t>(kMaxMerge, bucket_blocks(c, m)));
}

bool few_rows(int64_t m, int sm_count) {
  // Whole power-of-two buckets of M (the tuner's and the engine's kernel keys), so every m of
  // a bucket gets the same config whichever comes first.
  const int64_t limit = int64_t{kLatencyRowsPerSm} * grid_cluster_blocks(sm_count);
  return m >= 0 && m <= limit && next_pow2(std::max<int64_t>(m, 1)) <= limit;
}

bool may_be_few_rows(int64_t m) { return few_rows(m, kMaxGridCluster); }

int column_lanes(int64_t bucket, int rows_per_lane) {
  return static_cast<int>(std::clamp<int64_t>(bucket / rows_per_lane, 1, kMaxColumnLanes));
}

LaunchConfig column_pass_config(const NormProblem& p, int threads, int lanes) {
  LaunchConfig c;
  c.vec = aligned_vector_width(p);  // the column pass was timed on aligned rows only
  c.threads = c.threads_per_row = threads;
  c.row_in_registers = false;
  c.column_pass = lanes;
  return c;
}

bool column_pass_fits(const NormProblem& p, int64_t m) {
  return m >= 1 && !has_fused_options(p) &&
         m * p.n * (dtype_size(p.x_dtype) + dtype_size(p.dy_dtype)) <= kColumnPassBytes;
}

LaunchConfig with_shared_weights(const NormProblem& p, LaunchConfig c, int sm) {
  // Measured (bench --graph, A/B against γ from L1; bench/results/2026-11-25-h100-{d83fc1c-
  // shared-weights,ffd698a-shared-weights-rule,81e5efc-shared-weights-16}/): one block an SM or
  // a cluster's blocks gain where a slot's γ spans two loads from L1 (fp32 γ of 16-bit rows:
  // LN bf16 9216-14336 3-5.5%, clusters of 20480-262144 7-13%); several blocks an SM of the
  // same columns lose, as L1 held one γ for all of them and shared memory needs one each (LN
  // 5120 at 3 blocks 7%, 8192 at 2 6.5%). Where a slot's γ is one 16-byte load (whole
  // sectors), clusters only: bf16 γ 8-11%, fp32 rows 2-24% (LN 131072 414 → 313 us), but one
  // block an SM 1-2.5% at 10240-14336 and 4.6% slower at LN 16384 (-cb73074-final/), and not
  // 16-bit rows in 4-wide slots, chosen where γ's loads fill whole sectors (LN 16384 2.8%
  // slower). Not the gate (RMS 12288 8%) or LayerNorm's recompute (14336 4.5%), which lost
  // where the option-free rows gained. Parallel norms gain where their sums leave room (γ only;
  // γ1 still from L1): LN bf16 8192-65536 5-7.5%, RMS 14336 11%, 65536 22%
  // (-629b00c-parallel-weights/); parallel LayerNorms' four sums fill one block's shared
  // memory at 12288. Grid clusters gain everywhere measured, where γ fits beside the stages
  // the config already has (option-free rows aligned to 16 bytes, whose staged slots are contiguous): N = 1M,
  // graph replays, LN bf16 292 → 274 us, RMS 271 → 253, γ in x's dtype 7.5-9%, fp16 alike, fp32
  // LN 529 → 458, RMS 513 → 472 (bench/results/2026-11-25-h100-7d65ddb-grid-weights/; Nsight
  // Compute had γ's loads, twice a row, as the grid kernel's top long-scoreboard stalls).
  c.shared_weights = false;
  if (c.phased) {
    // A phased slot's γ is read element by element at columns that move with the row's phase:
    // once a block into shared memory, where it fits, rather than once a row.
    if (!p.has_weight) return c;
    LaunchConfig held = c;
    held.shared_weights = true;
    const bool fits = dynamic_shared_bytes(p, held) <= max_stage_bytes(sm) &&
                      c.min_blocks_per_sm * block_shared_bytes(p, held) <= max_shared_per_sm(sm);
    return fits ? held : c;
  }
  if (c.grid) {
    if (!p.has_weight || p.alignment < 16 || has_fused_options(p)) return c;  // the fused options' grids: not timed
    LaunchConfig held = c;
    held.shared_weights = true;
    return dynamic_shared_bytes(p, held) <= max_stage_bytes(sm) ? held : c;
  }
  const int slot_gamma_bytes = dtype_size(p.weight_dtype) * c.vec;
  const bool sixteen_bit_quads = dtype_size(p.x_dtype) == 2 && c.vec == 4;
  // 16-bit γ of 16-bit rows in one block an SM too (H200, bench --graph against γ from L1,
  // bench/results/2026-11-29-h200-719d048-final/ab-sw.txt): LN 9216 126 → 109 µs, 12288 123 →
  // 109 (fp16 136 → 109: it had spilled 36 bytes), RMS 9216 112 → 104, 12288 1.01-1.04x, the
  // residual at 12288 1.04x; 14848 and 16384 with the residual unchanged. The H100 had read
  // 1-2.5% at 10240-14336 and 4.6% slower at 16384 (above): not blocks of 1024 threads.
  const bool sixteen_bit_weights_one_block = dtype_size(p.x_dtype) == 2 && dtype_size(p.weight_dtype) == 2 &&
                                             c.min_blocks_per_sm == 1 && c.threads < kMaxRowThreads;
  const bool for_its_width = slot_gamma_bytes > 16 ? c.min_blocks_per_sm == 1 || c.cluster > 1
                                                   : slot_gamma_bytes == 16 && (c.cluster > 1 || sixteen_bit_weights_one_block) &&
                                                         !sixteen_bit_quads;
  // The gate after the norm in a cluster of two blocks of 1024 threads (15873-16384), where its
  // rows keep the dx pass's γ for dz (gate_holds_gamma: bf16 with fp32 γ), so γ is read twice a
  // row, both then from shared memory. bench --graph against γ from L1 (call8.sh): 15880-16384
  // 1.028-1.037x (16384 223.7 → 217.6 µs). fp16 rows, which read γ for dz again, 0.965-0.971x.
  const bool gate_pair_of_wide_blocks = p.gate == Gate::AfterNorm && gate_holds_gamma(p) && c.cluster == 2 &&
                                        c.threads == kMaxRowThreads;
  const bool gains = c.shared_sums && c.row_in_registers && !c.staged && !c.grid && c.column_pass == 0 &&
                     c.rows_per_block() == 1 && p.has_weight && for_its_width &&
                     (p.gate == Gate::None || gate_pair_of_wide_blocks) && !p.recompute_from_output;
  if (!gains) return c;
  LaunchConfig shared = c;
  shared.shared_weights = true;
  if (dynamic_shared_bytes(p, shared) > max_stage_bytes(sm) ||
      c.min_blocks_per_sm * block_shared_bytes(p, shared) > max_shared_per_sm(sm))
    return c;
  return shared;
}

double memory_bytes_per_sm_cycle(int memory_clock_khz, int bus_width_bits, int sm_count, int sm_clock_khz) {
  if (memory_clock_khz <= 0 || bus_width_bits <= 0 || sm_count <= 0 || sm_clock_khz <= 0) return 0;
  const double peak_bytes_per_second = 2 * 1e3 * memory_clock_khz * (bus_width_bits / 8.0);
  return peak_bytes_per_second / (sm_count * 1e3 * sm_clock_khz);
}

bool phased_block_shape(const LaunchConfig& c) {
  return c.row_in_registers && !c.staged && !c.grid && c.merge == 1 && c.column_pass == 0 && c.rows_per_block() == 1;
}

namespace {
// Few rows of long rows, aligned and without fused options, on sm_90: the grid cluster (one
// block an SM, each a slice of every row) in place of many rows' config where, with so few rows,
// that config leaves SMs idle or waits on its meeting. Tuned on the H200 (bench/results/
// 2026-12-01-h200-grid-edge/, calls 3-4; bf16 with fp32 γ, fp16, fp32; µs, many rows' config
// against the grid):
// - One row from 32768 columns in 16-bit types, LayerNorm's fp32 rows from 65536: LN bf16 32768
//   10.5 / 7.8 (the column pass), 65536 14.3 / 8.3, RMS bf16 65536 12.1 / 7.8, fp32 LN 65536 12.2
//   / 8.1; clusters of 8-16 blocks 2-3.4x (LN bf16 262144 45.7 / 13.4). Not fp32 32768, whose
//   clusters of eight 512-thread blocks (config_for_few_rows) beat it in graph replays (call 5:
//   LN 5.8 / 6.1, RMS 3.9 / 6.0) though not in plain launches (10.4 / 8.6, 8.7 / 8.9), nor
//   RMSNorm's fp32 65536 (graph replays 5.9 / 6.0-6.2, plain launches 0.93-1.26x; call 6).
// - Clusters of 1024-thread blocks with shared sums: of 8 up to 4 rows (LN bf16 131072 19.2 /
//   14.3, RMS 14.7 / 12.6, RMS fp32 131072 15.3 / 12.5; at 8 rows 0.81-0.98x), of 16 up to 8 (LN
//   bf16 262144 29.7 / 24.9, RMS 22.6 / 20.8, fp16 29.6 / 22.8, LN fp32 32.1 / 24.6; at 16 rows
//   36.1 / 40.3), of 16 at more than 16 elements a thread (wide_cluster_config) up to 16 (LN bf16
//   393216 57 / 46, LN fp32 262148 46.8 / 42.7, RMS bf16 393216 39.9 / 41.0; at 32 rows LN bf16
//   262152 59 / 71), of RMSNorm's realigned slots (rows aligned to less) up to 32 (calls 8-9:
//   327681 at 32 rows 88.2 / 79.9, 393215 111.6 / 81.4, 262147 tied; at 64 rows 126.1 / 152.5,
//   104.1 / 139.2, 393215 tied). LayerNorm's 16-bit column pass at 65536 up to 4 rows (15.5 /
//   12.7; 2 rows 14.3 / 9.6), not at 8 (14.7 / 19.8).
std::optional<LaunchConfig> grid_for_few_rows(const NormProblem& p, const LaunchConfig& many, int sm, int sm_count,
                                              int64_t m) {
  const bool sixteen_bit = sixteen_bit_rows(p);
  const int64_t one_row_from = sixteen_bit ? 32768 : p.kind == NormKind::LayerNorm ? 65536 : 131072;
  // Rows aligned to less: only the wide clusters (RMSNorm's realigned slots); the rest not timed.
  const bool wide = elements_per_thread(p, many) > kMaxRegisterElementsPerThread;  // wide_cluster_config's blocks
  if (sm < 90 || (p.alignment < 16 && !wide) || has_fused_options(p) || many.grid || p.n < 32768) return std::nullopt;
  const int64_t bucket = next_pow2(std::max<int64_t>(m, 1));
  int64_t rows = 1;
  if (many.cluster >= 8 && many.shared_sums && !many.staged && (many.threads == kMaxRowThreads || wide)) {
    rows = many.cluster < kMaxCluster ? 4 : !wide ? 8 : p.alignment < 16 ? 32 : 16;
  } else if (many.column_pass > 0 && p.n >= 65536) {
    rows = 4;
  }
  if (bucket > rows || (rows == 1 && p.n < one_row_from)) return std::nullopt;
  return grid_config(p, sm, sm_count, 1);
}

// Parallel norms on many aligned 16-bit rows held in registers with shared sums, on a
// memory-rich sm_90, since their packed rows keep pass 1's g for the dx pass (kHoldsSecondDy,
// session 59): a slot of 8 elements a thread. In one block of N/8 threads where that holds the
// row, for RMSNorm (it held two slots a thread) and for LayerNorm where the rules gave a pair of
// blocks (bf16 8192); in clusters of 512-thread blocks, two an SM, where the rules gave
// 1024-thread blocks: LayerNorm past 8192 columns, RMSNorm past 16384 at two slots a thread (at
// 16384 its blocks of 1024 stay, 1.03-1.26 of the best against 1.15-1.21 for a pair of 512); and
// (session 60) in clusters of four blocks of two slots, two an SM, where the rules gave one block
// an SM of fewer than 1024 threads in a cluster of 4 (16385-24576 LayerNorm, -28672 RMSNorm).
// Exhaustive tuning, M = 64 Mi / N, bf16 and fp16 with fp32 and 16-bit γ
// (bench/results/2026-12-01-h200-parallel-held-grad/call2-3), the rules before / this one against
// each shape's best: RMS 4096 1.01-1.61 / 1.00-1.05, 8192 1.00-1.53 / 1.00-1.09, 32768 1.00-1.20
// / 1.00; LN 8192 (bf16) 1.18 / 1.04-1.15, 16384 1.01-1.03 / 1.00, 32768 1.00-1.02 / 1.00-1.01.
// In bench --graph against the rules and kernel before (call 6; bench/NOTES.md entry 73): RMS
// 4096-8192 1.06-1.55x. Only parallel norms alone (other options with them untimed) and dx in
// x's dtype.
std::optional<LaunchConfig> parallel_norms_config(const NormProblem& p, const LaunchConfig& many, int sm,
                                                  bool memory_rich) {
  NormProblem others = p;
  others.parallel = false;
  const bool sixteen_bit = sixteen_bit_rows(p) && dtype_size(p.dx_dtype) == 2;
  if (!p.parallel || has_fused_options(others) || !memory_rich || sm < 90 || !sixteen_bit || p.alignment < 16 ||
      !many.shared_sums || !many.row_in_registers || many.staged || many.rows_per_block() != 1 ||
      many.vec * dtype_size(p.x_dtype) != 16)
    return std::nullopt;
  const int64_t slots = ceil_div(p.n, int64_t{many.vec});
  const bool layer_norm = p.kind == NormKind::LayerNorm;
  LaunchConfig c = many;
  c.paired_rows = false;
  // bf16 RMSNorm rows with 16-bit γ lost in the one block (5120 / 6144 / 8192 0.83 / 0.90 / 0.98x
  // in bench, call 4; tuned best there: the two-slot blocks before), where the other types
  // gained 1.11-1.48x.
  const bool bf16_with_narrow_gamma = p.x_dtype == DType::BF16 && dtype_size(p.weight_dtype) == 2;
  int iters = 1;
  int blocks_an_sm = 0;  // clusters of two-slot blocks: how many an SM (0: shared_sums_blocks_per_sm)
  if (slots <= kMaxRowThreads && ((!layer_norm && !bf16_with_narrow_gamma) || (layer_norm && many.cluster == 2))) {
    c.cluster = 1;
  } else if (p.x_dtype == DType::BF16 && (layer_norm || !bf16_with_narrow_gamma) && many.cluster > 1 &&
             slots > int64_t{kMaxRowThreads} * 27 / 16 && slots <= int64_t{kMaxRowThreads} * 2) {
    // 13825-16384 bf16 columns, which the rows' rule gives a cluster of two blocks of 864-1024
    // threads one an SM (LayerNorm 16384: four of 512, two an SM): the shape below three an SM,
    // 224-256 threads. `tune --config` beside the heuristic, µs
    // (bench/results/2026-12-01-h200-parallel-clusters/, call 8): LN fp32 γ 14336 426.9 → 404.0,
    // 16384 244.8 → 224.5, bf16 γ 14336 411.6 → 372.1, 16384 236.9 → 223.1; RMS fp32 γ 14336
    // 370.5 → 320.8, 16384 212.8 → 182.7. Not RMSNorm with bf16 γ (360.3 against 362.1, 208.8
    // against 207.7), nor fp16 rows (0.98-1.04x with fp32 γ; with fp16 γ 10% slower, call 6).
    iters = 2;
    blocks_an_sm = 3;
  } else if (many.cluster == 4 && many.min_blocks_per_sm == 1 && many.threads < kMaxRowThreads &&
             slots > int64_t{kMaxRowThreads} * 2) {
    // 16385-32767 columns, which the rows' rule gives one block an SM of 544-1023 threads in a
    // cluster of 4: two slots a thread in blocks half as wide, two an SM, so one block's
    // reductions and barriers overlap the other's loads. Exhaustive tuning and --config, bf16
    // with fp32 γ unless said (bench/results/2026-12-01-h200-parallel-clusters/, call 1, µs):
    // LN 18432 364.2 → 267.1, 20480 382.6 → 299.0, 24576 423.8 → 349.1 (bf16 γ 410.9 → 313.0),
    // fp16 γ 20480 379.0 → 291.0; RMS 20480 345.8 → 230.5, 24576 375.2 → 272.0 (fp16 γ 373.3 →
    // 307.0), 28672 405.5 → 313.3. bench --graph against the rows' rule, two rounds (call 3):
    // LN 17408-24576 1.07-1.37x, RMS 17408-28672 1.11-1.58x in bf16 and fp16, fp32 and 16-bit γ.
    // Past 448 threads two blocks an SM spill (RMS 30720 in 480: 64 registers, 88-132 bytes;
    // fp16 0.80-0.90x), and LayerNorm's four sums past 384 (28672 in 448: 72 registers, 120
    // bytes; 472.7 against 464.4 tuned): those keep the rows' rule. (LN 22528, 352 threads at 80
    // registers, spills 88 bytes stored and still gains 1.10-1.21x.)
    iters = 2;
    blocks_an_sm = 2;
  } else if (many.cluster > 1 && many.threads == kMaxRowThreads &&
             slots > int64_t{kMaxRowThreads} * (layer_norm ? 1 : 2) &&
             slots <= int64_t{kMaxRegisterRowThreads} * kPortableCluster) {
    // RMSNorm's two sums leave room for two slots a thread there (LayerNorm's four for one).
    iters = layer_norm ? 1 : 2;
    c.cluster = static_cast<int>(next_pow2(ceil_div(slots, int64_t{kMaxRegisterRowThreads} * iters)));
  } else {
    return std::nullopt;
  }
  if (blocks_an_sm > 0) c.cluster = 4;
  c.threads = c.threads_per_row = row_block_threads(ceil_div(slots, int64_t{c.cluster}), iters);
  if (blocks_an_sm == 2 && c.threads > (layer_norm ? 384 : 448)) return std::nullopt;
  if (dynamic_shared_bytes(p, c) > max_stage_bytes(sm)) return std::nullopt;
  c.min_blocks_per_sm = blocks_an_sm > 0 ? blocks_an_sm : shared_sums_blocks_per_sm(p, c, sm);
  if (c.min_blocks_per_sm * block_shared_bytes(p, c) > max_shared_per_sm(sm)) return std::nullopt;
  // One block an SM of fewer than 1024 threads has the registers to load the next row ahead, and
  // nothing else on the SM to overlap its reductions with (RMS 5120, 640 threads: 191-195 µs
  // prefetching against 231-288 without, tune, call 5; at 512 threads two blocks an SM overlap,
  // and prefetching lost 3-9%, at 1024 6-18%: call 3).
  c.prefetch = c.cluster == 1 && c.min_blocks_per_sm == 1 && c.threads < kMaxRowThreads;
  return c;
}

// choose_launch_config for rows that are not phased; mid_rows_ahead: with mid_rows_copied_ahead.
LaunchConfig unphased_launch_config(const NormProblem& p, int sm, int sm_count, int64_t m,
                                    double memory_bytes_per_sm_cycle, bool mid_rows_ahead);
}  // namespace

LaunchConfig choose_launch_config(const NormProblem& p, int sm, int sm_count, int64_t m,
                                  double memory_bytes_per_sm_cycle) {
  if (const std::optional<LaunchConfig> in_phase = in_phase_launch_config(p, sm, sm_count, m, memory_bytes_per_sm_cycle)) {
    check_launch_config(p, *in_phase);
    return *in_phase;
  }
  return unphased_launch_config(p, sm, sm_count, m, memory_bytes_per_sm_cycle, /*mid_rows_ahead=*/true);
}

LaunchConfig twin_launch_config(const NormProblem& twin, int sm, int sm_count, int64_t m,
                                double memory_bytes_per_sm_cycle) {
  return unphased_launch_config(twin, sm, sm_count, m, memory_bytes_per_sm_cycle, /*mid_rows_ahead=*/false);
}

namespace {
LaunchConfig unphased_launch_config(const NormProblem& p, int sm, int sm_count, int64_t m,
                                    double memory_bytes_per_sm_cycle, bool mid_rows_ahead) {
  // Shared sums buy throughput (more of the row in flight per SM) at the price of latency (the
  // sums zeroed, read and written back, x̂ and dy·γ recomputed): for few rows only where a
  // cluster shares each row (LN bf16 8192 at M = 1 / 199: 13.8 / 16.1 us against 7.6 / 9.9
  // without, graph replays; LN bf16 262144 at M = 256: 278 us against 320 staged).
  const bool few = few_rows(m, sm_count);
  const bool rich = memory_rich(memory_bytes_per_sm_cycle);
  LaunchConfig c = config_for_many_rows(p, sm, sm_count, !few, rich);
  if (const std::optional<LaunchConfig> ahead = rows_copied_ahead(p, sm, m)) {
    c = *ahead;
  } else if (mid_rows_ahead) {
    if (const std::optional<LaunchConfig> mid = mid_rows_copied_ahead(p, sm, m, rich))
      c = *mid;
  }
  if (few) {
    // Unmerged (merge = 1) at every M: in graph replays on the H100 merged blocks were slower
    // than their unmerged twin at every shape once partial rows are vector stores (bench/NOTES.md,
    // entry 17). The tuner still tries them.
    if (const std::optional<LaunchConfig> column = column_pass_for_few_rows(p, m)) c = *column;
    else if (const std::optional<LaunchConfig> few = config_for_few_rows(p, c, m)) c = *few;
    if (const std::optional<LaunchConfig> grid = grid_for_few_rows(p, c, sm, sm_count, m)) c = *grid;
  } else if (const std::optional<LaunchConfig> parallel = parallel_norms_config(p, c, sm, rich)) {
    c = *parallel;
  }
  c = with_shared_weights(p, c, sm);
  check_launch_config(p, c);
  return c;
}
}  // namespace

std::string block_shape_problem(const NormProblem& p, const LaunchConfig& c) {
  if (c.threads < 32 || c.threads > 1024 || c.threads % 32 != 0) return "threads must be a multiple of 32 in [32, 1024]";
  if (c.threads_per_row < 1 || c.threads_per_row > c.threads || c.threads % c.threads_per_row != 0)
    return "threads_per_row must divide threads";
  if (c.threads_per_row > 32 && c.threads_per_row % 32 != 0) return "threads_per_row above 32 must be a multiple of 32";
  if (c.threads_per_row <= 32 && !is_pow2(c.threads_per_row)) return "threads_per_row up to 32 must be a power of two";
  if (!is_pow2(c.vec) || c.vec * dtype_size(p.x_dtype) > 16) return "vec must be a power of two of at most 16 bytes of x";
  if (!c.row_in_registers && c.rows_per_block() != 1) return "streamed rows need threads_per_row == threads";
  return "";
}

void check_launch_config(const NormProblem& p, const LaunchConfig& c) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("launch config " + describe(c) + " cannot run " + describe(p) + ": " + why);
  };
  if (const std::string why = block_shape_problem(p, c); !why.empty()) fail(why);
  if (!c.staged && !c.phased && !rows_take_vector(p, c.vec))
    fail("vec is wider than the row alignment allows (only staged rows, and 8- or 16-byte vectors, may be less "
         "aligned than their vectors)");
  if (!c.grid && (!is_pow2(c.cluster) || c.cluster > kMaxCluster)) fail("cluster must be a power of two up to 16");
  if (c.grid && (!c.staged || c.cluster < 2 || c.cluster > kMaxGridCluster))
    fail("a grid cluster stages its rows, over 2 to " + std::to_string(kMaxGridCluster) + " blocks");
  if (c.cluster > 1 && (c.rows_per_block() != 1 || !c.row_in_registers))
    fail("a cluster shares one row held in registers");
  if (!is_pow2(c.merge) || c.merge > kMaxMerge) fail("merge must be a power of two up to " + std::to_string(kMaxMerge));
  if (c.merge > 1 && (c.cluster != 1 || c.grid || c.staged || !c.row_in_registers))
    fail("merged blocks each hold their own rows in registers (no cluster sharing a row, no staged rows)");
  if (c.merge > 1 && !p.has_weight && !p.has_bias) fail("merged blocks add dγ/dβ, and the problem has neither");
  if (c.prefetch && (!c.row_in_registers || c.rows_per_block() != 1)) fail("prefetch needs one row per block in registers");
  if (c.staged && (c.rows_per_block() != 1 || c.prefetch || !c.row_in_registers))
    fail("staged rows take one whole block (or cluster) each, without prefetch");
  if (c.staged && c.vec * dtype_size(p.x_dtype) != 16) fail("staged rows need 16-byte vectors of x");
  if (c.shared_prefetch < 0 || c.shared_prefetch > kMaxSharedPrefetch)
    fail("shared_prefetch must be 0 (off) to " + std::to_string(kMaxSharedPrefetch) + " rows");
  if (c.shared_prefetch > 0) {
    if (!c.row_in_registers || c.staged || c.prefetch || c.rows_per_block() != 1 || c.phased || c.grid ||
        c.merge != 1 || c.column_pass != 0)
      fail("shared prefetch copies rows ahead for one row a block (or cluster) held in registers: no staged rows, "
           "prefetch into registers, phased rows, grid, merge or column pass");
    if (p.alignment < 16 || p.n % c.vec != 0 || c.vec * dtype_size(p.x_dtype) % 16 != 0 ||
        c.vec * dtype_size(p.dy_dtype) % 16 != 0)
      fail("shared prefetch needs rows aligned to 16 bytes, N a multiple of vec and 16-byte slots of x and dy "
           "(each thread copies whole pieces, the ones it reads)");
    if (has_fused_options(p)) fail("shared prefetch takes no fused options");
  }
  if (c.paired_rows) {
    if (!c.row_in_registers || c.staged || c.prefetch || c.shared_prefetch > 0 || c.rows_per_block() != 1 || c.grid ||
        c.merge != 1 || c.column_pass != 0)
      fail("paired rows are two rows of one block (or cluster) held in registers at once: no staged rows, "
           "prefetch, shared prefetch, several rows a block, grid, merge or column pass");
    if (has_fused_options(p)) fail("paired rows take no fused options");
  }
  if (c.early_weights) {
    if (!p.recompute_from_output) fail("early weights read γ and β for x̂ recomputed from y: the problem does not recompute");
    if (!c.row_in_registers || c.staged || packs_rows(p, c))
      fail("early weights are for rows held in registers as fp32: not streamed, staged or packed (16-bit rows with "
           "shared sums)");
  }
  if (c.stages < 2 || c.stages > (c.grid ? kMaxGridStages : 4) || (!c.staged && c.stages != 2))
    fail("stages must be 2 to 4 (2 unless staged; up to " + std::to_string(kMaxGridStages) + " for a grid cluster)");
  if (dynamic_shared_bytes(p, c) > max_stage_bytes(90))
    fail("the stages and shared sums need " + std::to_string(dynamic_shared_bytes(p, c)) +
         " bytes of shared memory, more than any GPU gives a block");
  if (c.min_blocks_per_sm < 1 || c.min_blocks_per_sm > 32) fail("min_blocks_per_sm must be in [1, 32]");
  if (c.shared_sums && (!c.row_in_registers || c.rows_per_block() != 1 || c.grid))
    fail("shared sums need one row per block (or cluster sharing it) in registers or staged, not a grid cluster");
  if (c.shared_sums && !p.has_weight && !p.has_bias) fail("shared sums hold dγ/dβ, and the problem has neither");
  if (c.phased) {
    if (!phases_rows(p))
      fail("phased rows need rows of at least 16 bytes aligned to less than 16 bytes but in phase, x, dy and dx of "
           "one element size, and no fused option");
    if (c.vec * dtype_size(p.x_dtype) != 16) fail("phased rows read 16-byte vectors of x");
    if (!phased_block_shape(c)) fail("phased rows are held in registers, one row a block (or cluster), unmerged");
  }
  // Phased rows hold γ in shared memory with or without shared sums: their slots' columns move
  // with the row's phase, so γ is read element by element (once a block, not once a row).
  const bool held_row_weights = (c.shared_sums || c.phased) && !c.staged && c.column_pass == 0;
  const bool grid_weights = c.grid && p.alignment >= 16;  // contiguous staged slots (not interleaved)
  if (c.shared_weights && !held_row_weights && !grid_weights)
    fail("shared weights come with shared sums or phased rows held in registers, or with a grid cluster's rows "
         "aligned to 16 bytes");
  if (c.shared_weights && !p.has_weight) fail("shared weights hold γ, and the problem has none");
  if (c.column_pass > 0) {
    if (!is_pow2(c.column_pass) || c.column_pass > c.threads) fail("column_pass (lanes down the rows) must be a power of two up to threads");
    if (c.row_in_registers || c.cluster != 1 || c.merge != 1 || c.grid || c.prefetch || c.staged || c.shared_sums)
      fail("the column pass streams its rows (row sums, then columns): no registers, cluster, merge, grid, prefetch, "
           "staged rows or shared sums");
    if (has_fused_options(p)) fail("the column pass takes no fused options");
  }
  if (c.column_pass < 0) fail("column_pass must be 0 (off) or a number of lanes");
  if (c.row_in_registers) {
    if (elements_per_thread(p, c) > 4 * kMaxRegisterElementsPerThread) fail("row too long to hold in registers");
    if (c.rows_per_block() > 1 && p.n > 16384) fail("several rows per block need N <= 16384 (shared-memory merge)");
  }
}

std::string describe(const LaunchConfig& c) {
  std::ostringstream s;
  s << "threads=" << c.threads << " threads_per_row=" << c.threads_per_row << " vec=" << c.vec << " "
    << (c.row_in_registers ? "registers" : "streamed");
  if (c.cluster > 1) s << " cluster=" << c.cluster;
  if (c.merge > 1) s << " merge=" << c.merge;
  if (c.grid) s << " grid";
  if (c.prefetch) s << " prefetch";
  if (c.staged) s << " staged";
  if (c.staged && c.stages != 2) s << " stages=" << c.stages;
  if (c.shared_prefetch > 0) s << " shared_prefetch=" << c.shared_prefetch;
  if (c.paired_rows) s << " paired_rows";
  if (c.early_weights) s << " early_weights";
  if (c.min_blocks_per_sm > 1) s << " min_blocks=" << c.min_blocks_per_sm;
  if (c.shared_sums) s << " shared_sums";
  if (c.shared_weights) s << " shared_weights";
  if (c.phased) s << " phased";
  if (c.column_pass > 0) s << " column_pass=" << c.column_pass;
  return s.str();
}

LaunchConfig parse_described_config(std::string_view text) {
  LaunchConfig c;
  c.threads = c.threads_per_row = c.vec = 0;
  std::istringstream words{std::string(text)};
  std::string word;
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("launch config '" + std::string(text) + "': " + why +
                                "; give it as `normjit tune --list` prints one, e.g. '" +
                                describe(LaunchConfig{}) + " prefetch'");
  };
  while (words >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) {
      if (word == "registers") c.row_in_registers = true;
      else if (word == "streamed") c.row_in_registers = false;
      else if (word == "grid") c.grid = true;
      else if (word == "prefetch") c.prefetch = true;
      else if (word == "staged") c.staged = true;
      else if (word == "shared_sums") c.shared_sums = true;
      else if (word == "shared_weights") c.shared_weights = true;
      else if (word == "phased") c.phased = true;
      else if (word == "paired_rows") c.paired_rows = true;
      else if (word == "early_weights") c.early_weights = true;
      else fail("'" + word + "' is no flag of a launch config");
      continue;
    }
    const std::string name = word.substr(0, eq), value = word.substr(eq + 1);
    int* field = name == "threads"           ? &c.threads
                 : name == "threads_per_row" ? &c.threads_per_row
                 : name == "vec"             ? &c.vec
                 : name == "cluster"         ? &c.cluster
                 : name == "merge"           ? &c.merge
                 : name == "stages"          ? &c.stages
                 : name == "shared_prefetch" ? &c.shared_prefetch
                 : name == "min_blocks"      ? &c.min_blocks_per_sm
                 : name == "column_pass"     ? &c.column_pass
                                             : nullptr;
    if (!field) fail("'" + name + "' is no field of a launch config");
    int parsed = 0;
    const char* end = value.data() + value.size();
    const std::from_chars_result r = std::from_chars(value.data(), end, parsed);
    if (r.ec != std::errc() || r.ptr != end || parsed < 1) fail("'" + word + "' wants a positive whole number");
    *field = parsed;
  }
  if (c.threads == 0 || c.threads_per_row == 0 || c.vec == 0) fail("threads, threads_per_row and vec are required");
  return c;
}

}  // namespace normjit::codegen
