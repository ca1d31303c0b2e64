#include "codegen/search_space.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "codegen/integer_math.h"
#include "codegen/norm_problem.h"
#include "codegen/phased_rows_config.h"

namespace normjit::codegen {
namespace {

// Block sizes a multi-row block may take; the families' own limits decide the rest.
constexpr int kRowGroupBlocks[] = {128, 256, 512};
// Elements of x per thread the register families try (kMaxRegisterElementsPerThread is 16;
// 32 is allowed by check_launch_config and can pay for long rows without clusters).
constexpr int kElementsPerThread[] = {4, 8, 16, 32};
// Slots (16-byte vectors) per thread for staged rows. kMaxStagedSlotsPerThread (4) stays
// allowed, and the heuristic takes it, but the search does not enumerate it: over the 250
// shapes of bench/tune-sweep.toml tuned exhaustively on the H100 (bench/results/
// 2026-11-24-h100-0195f46-tune-sweep/), 548 staged candidates at 4 slots a thread were timed,
// none won and 2 came within 2% of the best; they were also the slowest to compile (84 of the
// 95 last-finishing compiles of the shapes whose compiles took 1.8 s or more), so they set
// the wall time of tuning.
constexpr int kStagedSlotsPerThread[] = {1, 2};
// What the H100's exhaustive tuning of the sweep (bench/tune-sweep.toml, 250 shapes,
// bench/results/2026-11-24-h100-0195f46-tune-sweep/) found never worth compiling; each rule
// below removes candidates none of which came within 0.5% of their shape's best (the
// heuristic's own config is always kept):
// - merged blocks beyond 8 rows: 896 timed, none within 0.2% (and 10-40% behind at 64 and 256
//   rows in the few-rows tuning, 2026-11-23-h100-61b9de6/; at 8 rows they won RMS 1024 by 5%);
constexpr int64_t kMaxMergedRows = 8;
// - clusters that keep dγ/dβ in registers at 1024 rows or more (shared sums free those
//   registers for a second block per SM): 882 timed, none within 0.5%;
constexpr int64_t kManyRows = 1024;
// - grid clusters where a cluster of at most 16 holds the row at 64 rows or more (168 timed,
//   none within 28%), and at 4 slots a thread anywhere (54 timed, never the grid's best);
constexpr int64_t kGridFewRows = 64;
constexpr int kGridSlotsPerThread[] = {2, 1};
// - streamed rows where clusters exist (sm_90): 176 timed, 6-9x behind the best;
// - one row a block of kMinRowBlockThreads at kManyRows rows or more (sm_90): 347 timed, none
//   within 0.5% (bench/NOTES.md, entry 25).
// Together they took the median tuning from 1.64 to 1.25 s on the H100's host (entry 25).

// Rows from which copying rows ahead into shared memory is tried: where rows are long enough
// for a cluster, or for one block of 8-16 elements a thread, to hold few rows an SM.
constexpr int64_t kSharedPrefetchFromN = 8192;
// A floor below which one row per block wastes the SM on block overhead.
constexpr int kMinRowBlockThreads = 64;
// Blocks per SM a shared-sums candidate of `threads` asks for: kSharedSumsThreadsPerSm threads,
// at most 8 blocks (prune_reason drops what the SM's shared memory cannot hold).
int shared_sums_blocks_per_sm(int threads) { return std::clamp(kSharedSumsThreadsPerSm / threads, 1, 8); }
// Registers no kernel gets below: indices, pointers, loop state, the reduction.
constexpr int kBaseRegisters = 32;

// Collects configs in enumeration order, once each.
class Candidates {
 public:
  // m: the rows tuned for (< 0: many); with at most kMaxMergedRows of them, each config that
  // can merge its blocks' dγ/dβ is tried merged as well (right after it, ahead of the truncation).
  Candidates(const NormProblem& p, int sm, int sm_count, int64_t m)
      : p_(p),
        sm_(sm),
        m_(few_rows(m, sm_count) && next_pow2(std::max<int64_t>(m, 1)) <= kMaxMergedRows ? m : -1),
        many_rows_(sm >= 90 && (m < 0 || m >= kManyRows)) {}  // measured on sm_90 only
  void add(const LaunchConfig& c) { add(c, /*heuristic=*/false); }
  // The heuristic's configs: kept whatever the data prunes say.
  void add_heuristic(const LaunchConfig& c) { add(c, /*heuristic=*/true); }
  // c with two rows worked at once (LaunchConfig::paired_rows), in place of a prefetch or rows
  // copied ahead, at c's blocks an SM and at one (twice the registers of a row); dropped where
  // check_launch_config says it cannot run. Only where rows are many (sm_90, kManyRows): a pair
  // is worth its registers where a row group takes several turns, and with fewer rows the
  // candidates they would push past kMaxCandidates (staged rows at 256) are the ones to keep.
  void add_paired(LaunchConfig c) {
    if (!many_rows_) return;
    c.paired_rows = true;
    c.prefetch = false;
    c.shared_prefetch = 0;
    add(c);
    c.min_blocks_per_sm = 1;
    add(c);
  }
  // Recomputing x̂ from y, the first `first` configs again with their γ and β read the other
  // way (LaunchConfig::early_weights flipped), where it runs: which of the two schedules ptxas
  // makes faster changes from shape to shape (bench/NOTES.md entry 71).
  void add_early_weights_flipped(size_t first) {
    if (!p_.recompute_from_output) return;
    for (size_t i = 0; i < std::min(first, list_.size()); ++i) {
      LaunchConfig flipped = list_[i];
      flipped.early_weights = !flipped.early_weights;
      add_one(flipped);
    }
  }
  // Enumeration order is priority order: what is past `most` is dropped.
  void keep_first(size_t most) {
    if (list_.size() > most) list_.resize(most);
  }
  std::vector<LaunchConfig> take() { return std::move(list_); }

 private:
  void add(const LaunchConfig& c, bool heuristic) {
    if (!heuristic && many_rows_ && c.rows_per_block() == 1 && c.cluster == 1 && c.threads == kMinRowBlockThreads)
      return;
    add_one(c, heuristic);
    if (m_ < 0) return;
    LaunchConfig merged = c;
    merged.merge = merge_for_few_rows(p_, c, sm_, m_);
    if (merged.merge > 1) add_one(merged);
  }
  // A heuristic's config is kept whatever prune_reason estimates: the rules take some configs
  // that spill because they were timed the fastest (wide_cluster_config: LayerNorm's fp32 rows at
  // 20 elements a thread), and tuning must be able to match what an untuned engine runs.
  void add_one(const LaunchConfig& candidate, bool heuristic = false) {
    // γ in shared memory wherever the heuristic would hold it there (not a candidate of its own).
    const LaunchConfig c = with_shared_weights(p_, candidate, sm_);
    if (std::find(list_.begin(), list_.end(), c) != list_.end()) return;
    try {
      check_launch_config(p_, c);
    } catch (const std::invalid_argument&) {
      return;  // the authority says it cannot run
    }
    if (!heuristic && !prune_reason(p_, c, sm_).empty()) return;
    list_.push_back(c);
  }
  const NormProblem& p_;
  int sm_;
  int64_t m_;
  bool many_rows_;
  std::vector<LaunchConfig> list_;
};

}  // namespace

ArchLimits arch_limits(int sm) {
  ArchLimits a;
  a.shared_per_block = max_stage_bytes(sm);
  if (sm >= 90) a.max_cluster = kMaxCluster;
  a.shared_per_sm = max_shared_per_sm(sm);
  return a;
}

int estimated_registers(const NormProblem& p, const LaunchConfig& c) {
  const int x_bytes = dtype_size(p.x_dtype), dy_bytes = dtype_size(p.dy_dtype);
  // Shared sums keep the dγ/dβ accumulators out of registers.
  const int accumulators = c.shared_sums ? 0 : (p.has_weight ? 1 : 0) + (p.has_bias ? 1 : 0);
  if (!c.row_in_registers) return kBaseRegisters + 2 * c.vec * accumulators;  // one vector at a time
  const int64_t held = elements_per_thread(p, c);  // of each tensor
  // Staged: x and dy sit in shared memory; registers keep the dγ/dβ accumulators of the thread's slots.
  if (c.staged) return static_cast<int>(kBaseRegisters + 2 * c.vec + held * accumulators);
  const int64_t row_registers = ceil_div(held * (x_bytes + dy_bytes), 4) * (c.prefetch || c.paired_rows ? 2 : 1);
  return static_cast<int>(kBaseRegisters + row_registers + held * accumulators);
}

int64_t compile_cost(const NormProblem& p, const LaunchConfig& c) {
  const int64_t elements = elements_per_thread(p, c);
  return elements * (c.staged ? 8 : 4) + (c.prefetch || c.paired_rows ? elements : 0);
}

std::string prune_reason(const NormProblem& p, const LaunchConfig& c, int sm) {
  const ArchLimits a = arch_limits(sm);
  if (!c.grid && c.cluster > a.max_cluster)
    return "a cluster of " + std::to_string(c.cluster) + " blocks needs sm_90 or newer and at most " +
           std::to_string(kMaxCluster) + " blocks";
  if (c.merge > a.max_cluster) return "merged blocks are a cluster: they need sm_90 or newer";
  if ((c.staged || c.shared_prefetch > 0) && sm < 80)
    return "staged rows and shared prefetch need cp.async (sm_80 or newer)";
  const size_t shared = dynamic_shared_bytes(p, c);
  if (shared > a.shared_per_block)
    return "stages and shared sums of " + std::to_string(shared) + " bytes exceed the " +
           std::to_string(a.shared_per_block) +
           " a block may use on sm_" + std::to_string(sm);
  if (c.min_blocks_per_sm * block_shared_bytes(p, c) > a.shared_per_sm)
    return std::to_string(c.min_blocks_per_sm) + " blocks per SM need more shared memory than an SM has";
  const int registers = estimated_registers(p, c);
  if (registers > a.max_registers_per_thread)
    return "about " + std::to_string(registers) + " registers a thread: it would spill";
  if (int64_t{registers} * c.threads * c.min_blocks_per_sm > a.registers_per_sm)
    return "about " + std::to_string(registers) + " registers x " + std::to_string(c.threads) + " threads x " +
           std::to_string(c.min_blocks_per_sm) + " blocks exceed the SM's registers";
  return "";
}

std::vector<LaunchConfig> search_space(const NormProblem& p, int sm, int sm_count, int64_t m,
                                       double memory_bytes_per_sm_cycle) {
  Candidates out(p, sm, sm_count, m);
  // The heuristic for these m rows first: tuning can only match or beat what an untuned
  // engine runs. Then its config for many rows, where m is few.
  const LaunchConfig heuristic_at_m = choose_launch_config(p, sm, sm_count, m, memory_bytes_per_sm_cycle);
  out.add_heuristic(heuristic_at_m);
  out.add_heuristic(choose_launch_config(p, sm, sm_count, -1, memory_bytes_per_sm_cycle));
  // On a memory-rich device, the configs of the rules fitted to the H100 too.
  if (memory_rich(memory_bytes_per_sm_cycle)) {
    out.add_heuristic(choose_launch_config(p, sm, sm_count, m));
    out.add_heuristic(choose_launch_config(p, sm, sm_count));
  }

  // Phased rows (odd 16-bit rows in phase): the configs of the aligned twin as long as their span
  // that phased kernels can run, the first kMaxPhasedCandidates of them. The heuristic phases
  // only rows whose twin is a cluster, yet one-block phased kernels won at some N and lost at
  // others (M = 16384: LN bf16 12289 1.16x, RMS 5003 1.16x; LN 4095 0.90x, RMS 8191 0.86x).
  if (const std::optional<NormProblem> twin = phased_twin(p)) {
    int phased = 0;
    for (const LaunchConfig& aligned : search_space(*twin, sm, sm_count, m, memory_bytes_per_sm_cycle))
      if (const std::optional<LaunchConfig> c = phased_config(p, aligned, sm); c && phased < kMaxPhasedCandidates) {
        out.add(*c);
        ++phased;
      }
  }

  const int x_bytes = dtype_size(p.x_dtype);
  const int widest = vector_width(p);

  // The column pass (row sums, then blocks owning columns of every row) for few rows whose
  // bucket fits in L2: about 4 or 8 rows a lane down the rows, 256 or 512 threads a block.
  const int64_t bucket = next_pow2(std::max<int64_t>(m, 1));
  if (m > 0 && few_rows(m, sm_count) && column_pass_fits(p, bucket))
    for (int lanes = column_lanes(bucket, 8); lanes <= column_lanes(bucket, 4); lanes *= 2)
      for (int threads : {256, 512}) out.add(column_pass_config(p, threads, lanes));
  const int max_cluster = arch_limits(sm).max_cluster;
  // Where shared-sums candidates exist, clusters with sums in registers are left to few rows.
  const bool sums_can_be_shared = sm >= 80 && (p.has_weight || p.has_bias);
  const bool register_sum_clusters = !sums_can_be_shared || (m >= 0 && m < kManyRows);
  // A cluster of shared-sums blocks holds the row at 16 elements a thread.
  const bool cluster_holds_row =
      sums_can_be_shared && ceil_div(ceil_div(ceil_div(p.n, widest), 16 / widest), max_cluster) <= kMaxRowThreads;

  // Shared sums (sm_80+: rows that long are staged or clustered otherwise): rows in registers,
  // 8 or 16 elements a thread, blocks of up to 1024 threads, as many of them per SM as 64
  // registers a thread allow; the smallest cluster (or none) whose blocks hold the row, and the
  // next larger. Then the heuristic's config for many rows with shared sums. Not 32 elements a
  // thread, though shared sums hold 16-bit rows packed: over the sweep's exhaustive tuning
  // (bench/results/2026-11-24-h100-0195f46-tune-sweep/) 236 such candidates were timed, none
  // came within 2% of the best, and they were among the last compiles to finish (LN bf16 14336:
  // the last, at 1.86 s). Each at the widest vector also with its rows paired (two a turn, for
  // one shared-memory round trip of the sums and one meeting per two rows).
  if (sums_can_be_shared) {
    const bool sixteen_bit = sixteen_bit_rows(p);
    // Rows copied ahead into shared memory (shared_prefetch), 1 and 2 of them, at the config's
    // blocks an SM and at one: memory stays busy through a row's reductions and cluster meeting
    // without the registers of a second row (templates/norm_backward.cuh, RowStages). For 16-bit
    // rows of kSharedPrefetchFromN or more (the long rows of clusters and one-block rows), after
    // the shared-sums configs; check_launch_config keeps them to aligned rows without fused
    // options. Not fp32 rows, whose stages are twice the bytes: none came within 10% of the best
    // at LN / RMS 65536 and 131072 (bench/results/2026-11-30-h200-shared-prefetch/, calls 2-3).
    std::vector<LaunchConfig> copied_ahead;
    auto add_copied_ahead = [&](LaunchConfig c) {
      if (sm < 80 || p.n < kSharedPrefetchFromN || !sixteen_bit) return;
      if (c.cluster > 1 && !c.shared_sums && !register_sum_clusters) return;  // as for the clusters themselves
      c.prefetch = false;
      for (int ahead : {1, 2})
        for (int blocks : {c.min_blocks_per_sm, 1}) {
          c.shared_prefetch = ahead;
          c.min_blocks_per_sm = blocks;
          copied_ahead.push_back(c);  // out.add drops repeats
        }
    };
    // Half-width vectors too where γ/β are fp32 and the rows 16-bit: a thread's γ for 8
    // columns is two 16-byte loads 32 bytes apart, so each of a warp's loads touches twice the
    // sectors it uses (Nsight Compute, bench/NOTES.md entry 29); at 4 columns a thread they are
    // whole sectors, for 8-byte loads of x and dy. Not in clusters: there their 4 slots a
    // thread spill and lost 13-20% at every tuned shape (-0ee91b3-vec4/).
    const bool wide_weights = sixteen_bit && widest == 8 && dtype_size(p.weight_dtype) == 4;
    std::vector<int> vecs{widest};
    if (wide_weights) vecs.push_back(widest / 2);
    for (int vec : vecs) {
      const bool widest_vec = vec == widest;  // the half-width ones: one block a row, no prefetch
      for (int elements : {16, 8}) {
        if (elements < vec) continue;
        const int64_t slots = ceil_div(p.n, vec);
        const int64_t lanes = ceil_div(slots, elements / vec);
        if (lanes <= 32) continue;  // a warp holds the row: several rows a block
        int smallest = 1;
        while (smallest < max_cluster && ceil_div(lanes, smallest) > kMaxRowThreads) smallest *= 2;
        for (int cluster = smallest; cluster <= std::min(2 * smallest, max_cluster); cluster *= 2) {
          if (!widest_vec && cluster > 1) continue;
          LaunchConfig c;
          c.vec = vec;
          c.cluster = cluster;
          c.shared_sums = true;
          const int64_t threads = std::max<int64_t>(warp_threads(lanes, cluster), kMinRowBlockThreads);
          if (threads > kMaxRowThreads || (cluster > 1 && ceil_div(lanes, cluster) < kMinRowBlockThreads)) continue;
          c.threads = c.threads_per_row = static_cast<int>(threads);
          c.min_blocks_per_sm = shared_sums_blocks_per_sm(c.threads);
          out.add(c);
          if (widest_vec) {
            out.add_paired(c);
            add_copied_ahead(c);
          }
          // 8 elements a thread leave room to load the next row while this one is reduced; so
          // do 16 of a packed 16-bit row where one block fills the SM (the SM's second row in flight).
          if (widest_vec && (elements == 8 || (elements == 16 && sixteen_bit && c.min_blocks_per_sm == 1))) {
            c.prefetch = true;
            out.add(c);
          }
        }
      }
    }
    LaunchConfig heuristic = choose_launch_config(p, sm, sm_count);
    if (heuristic.rows_per_block() == 1 && heuristic.row_in_registers && !heuristic.grid) {
      heuristic.shared_sums = true;
      heuristic.min_blocks_per_sm = shared_sums_blocks_per_sm(heuristic.threads);
      out.add(heuristic);
    }
    add_copied_ahead(heuristic_at_m);
    for (const LaunchConfig& c : copied_ahead) out.add(c);
  }
  // The heuristic's config with its rows paired, where it holds one row a block in registers:
  // the shared-sums blocks above are paired each, as are the phased ones.
  out.add_paired(heuristic_at_m);

  // Grid clusters (one block per SM owning a column slice of every row) for rows long enough
  // to need a cluster of 8 or more, and no cluster holds it or the rows are few: 1 or 2 slots
  // a thread; 8, 5 or 3 stages (6, 3 or 1 rows waiting for the other blocks' sums), those that fit.
  if (sm >= 80 && !(cluster_holds_row && (m < 0 || m >= kGridFewRows))) {
    const int staged_vec = 16 / dtype_size(p.x_dtype);
    const int64_t slots = ceil_div(p.n, staged_vec);
    if (slots > 8 * int64_t{kMaxRegisterRowThreads} * 2)
      for (int per_thread : kGridSlotsPerThread)
        for (int stages : {8, 5, 3}) {
          LaunchConfig c;
          c.vec = staged_vec;
          c.staged = true;
          c.grid = true;
          c.cluster = grid_cluster_blocks(sm_count);
          const int64_t lanes = ceil_div(ceil_div(slots, c.cluster), per_thread);
          c.threads = c.threads_per_row = static_cast<int>(std::max<int64_t>(round_up(lanes, 32), kMinRowBlockThreads));
          c.stages = stages;
          if (c.threads <= kMaxRowThreads) out.add(c);
        }
  }

  // Past what a cluster of 16 holds at 16 elements a thread: its blocks at up to 24 elements a
  // thread (wide_cluster_config; the heuristic's from 17 rows, 33 in realigned slots, and worth
  // timing at fewer).
  if (const std::optional<LaunchConfig> wide = wide_cluster_config(p, sm)) out.add(*wide);

  // Rows in registers, at the widest vector, at half of it and at the aligned width.
  for (int vec : candidate_vector_widths(p)) {
    const int64_t slots = ceil_div(p.n, vec);
    for (int elements : kElementsPerThread) {
      if (elements < vec) continue;
      const int iters = elements / vec;
      const int64_t lanes = ceil_div(slots, iters);
      LaunchConfig c;
      c.vec = vec;
      if (lanes <= 32) {
        // Short rows: a power-of-two group of lanes per row, several rows per block.
        c.threads_per_row = next_pow2(lanes);
        for (int threads : kRowGroupBlocks) {
          c.threads = threads;
          out.add(c);
        }
        continue;
      }
      // One row per block (no cluster); the half-width vector only in its plain form. No
      // prefetch for 32 elements a thread loaded 2 bytes at a time (16-bit rows aligned to 2
      // bytes): such rows are bound by their load instructions, not their latency. In the
      // sweep's exhaustive tuning none of the 32 timed came within 2% of the best, and they
      // compiled slowest (LN bf16 5003: 2.9 s, with 16 compiles at once).
      const bool issue_bound = vec * x_bytes < 4 && elements >= 32;
      c.threads = c.threads_per_row = static_cast<int>(std::max<int64_t>(round_up(lanes, 32), kMinRowBlockThreads));
      for (bool prefetch : {false, true})
        for (int min_blocks : {1, 2}) {
          if (vec != widest && (prefetch || min_blocks > 1)) continue;
          if (prefetch && issue_bound) continue;
          c.prefetch = prefetch;
          c.min_blocks_per_sm = min_blocks;
          out.add(c);
        }
    }
  }

  // A cluster sharing one row held in registers (sm_90): the smallest cluster whose blocks
  // hold the row at 16 elements a thread in 512 threads, and the next larger; with sums in
  // registers, for fewer than kManyRows rows where sums can be shared.
  if (max_cluster > 1 && register_sum_clusters) {
    const int64_t slots = ceil_div(p.n, widest);
    const int64_t block_slots = int64_t{kMaxRegisterRowThreads} * std::max(1, kMaxRegisterElementsPerThread / widest);
    const int smallest = std::max(2, next_pow2(ceil_div(slots, block_slots)));
    for (int cluster = smallest; cluster <= std::min(2 * smallest, max_cluster); cluster *= 2)
      for (int elements : {8, 16}) {
        if (elements < widest) continue;
        LaunchConfig c;
        c.vec = widest;
        c.cluster = cluster;
        const int64_t lanes = ceil_div(ceil_div(slots, cluster), elements / widest);
        if (lanes < kMinRowBlockThreads) continue;  // a block's slice too small to pay for a cluster
        c.threads = c.threads_per_row = static_cast<int>(round_up(lanes, 32));
        out.add(c);
      }
  }

  // Staged rows (sm_80+): one row per block, or per cluster when a block cannot stage it.
  if (sm >= 80) {
    const int staged_vec = 16 / x_bytes;
    const int64_t slots = ceil_div(p.n, staged_vec);
    const int64_t block_slots = int64_t{kMaxRegisterRowThreads} * kMaxStagedSlotsPerThread;
    const int smallest = next_pow2(ceil_div(slots, block_slots));
    for (int cluster = 1; cluster <= (register_sum_clusters ? max_cluster : 1); cluster *= 2) {
      // Clusters only where they are needed: the smallest that holds the row with 4 slots a
      // thread, and 2x and 4x it (smaller blocks, two of them per SM). Where one block holds
      // it with half its threads, none: staged clusters of rows up to 8192 (16-bit) won no
      // shape tuned exhaustively; from 12288 up they did (LN 14336: 2 x 224 threads).
      if (cluster > 1 && ((smallest == 1 && 2 * slots <= block_slots) || cluster < smallest || cluster > 4 * smallest))
        continue;
      for (int per_thread : kStagedSlotsPerThread) {
        LaunchConfig c;
        c.vec = staged_vec;
        c.staged = true;
        c.cluster = cluster;
        const int64_t lanes = ceil_div(ceil_div(slots, cluster), per_thread);
        c.threads = c.threads_per_row = static_cast<int>(std::max<int64_t>(round_up(lanes, 32), kMinRowBlockThreads));
        // Two stages: a third won none of the 26 shapes tuned exhaustively on the H100 (at
        // best a tie, LN 5120: 229.79 vs 229.86 us; bench/NOTES.md entries 9, 10 and 12), and
        // dropping it keeps a tuning to about 2 s, most of which is compiling candidates.
        for (int min_blocks : {1, 2}) {
          c.min_blocks_per_sm = min_blocks;
          out.add(c);
        }
      }
    }
  }

  // Streamed rows: only for rows too long for one block's registers, where no cluster shares them.
  if (max_cluster == 1 &&
      ceil_div(p.n, widest) > int64_t{kMaxRegisterRowThreads} * std::max(1, kMaxRegisterElementsPerThread / widest))
    for (int threads : {256, 512, 1024}) {
      LaunchConfig c;
      c.vec = widest;
      c.row_in_registers = false;
      c.threads = c.threads_per_row = threads;
      out.add(c);
    }

  out.keep_first(kMaxCandidates);
  // After the cap, so that the flips push none of the others out.
  out.add_early_weights_flipped(kMaxFlippedCandidates);
  return out.take();
}

}  // namespace normjit::codegen
