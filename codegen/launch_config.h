// How a backward kernel is laid out on the GPU: a handful of named integers (derived values
// are computed, never stored). Part of the generated source, so part of the cache key.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/pass.h"
#include "normjit/norm_problem.hpp"

namespace normjit::codegen {

struct LaunchConfig {
  int threads = 256;          // threads per block
  int threads_per_row = 256;  // threads that share one row (a power of two <= 32, or a multiple of 32)
  int vec = 8;                // elements per vector access
  bool row_in_registers = true;  // false: the row is streamed twice (rows too long for registers)
  int cluster = 1;            // blocks sharing one row (sm_90 thread-block cluster); 1: none
  int merge = 1;              // blocks of an sm_90 cluster that each work their own rows and add
                              // their dγ/dβ sums in distributed shared memory, so the launch
                              // writes (and reduces) merge times fewer partial rows; 1: none
  bool grid = false;          // the cluster is the whole grid, meeting through global memory in a
                              // cooperative launch rather than through distributed shared memory:
                              // any size, sm_80+, staged rows (rows too long for a cluster)
  bool prefetch = false;      // load the next row while the current one is reduced (registers x2)
  bool staged = false;        // rows copied into shared memory (cp.async), sm_80+
  int stages = 2;             // staged rows in flight per block: one worked, the others copying
  int shared_prefetch = 0;    // rows held in registers: this many next rows copied into shared
                              // memory (cp.async, sm_80+) while the held one is worked, each then
                              // read into registers once (templates/norm_backward.cuh, RowStages);
                              // aligned rows, one a block (or cluster), no fused option; 0: none
  bool paired_rows = false;   // rows held in registers, one a block (or cluster): two of its rows
                              // worked at once, their row sums meeting together and the column
                              // sums and γ touched once for both (templates/norm_backward.cuh,
                              // kPairedRows); registers x2, no prefetch, no fused option
  bool early_weights = false;  // x̂ recomputed from y (NormProblem::recompute_from_output), rows held
                               // in registers as fp32 (not packs_rows): each thread reads its
                               // slots' γ and β at the top of each row, not at each slot's turn
                               // (templates/norm_backward.cuh, RowTopWeights); faster for some
                               // shapes, slower for others (bench/NOTES.md entry 71)
  int min_blocks_per_sm = 1;  // ptxas keeps registers low enough for this many blocks per SM
  bool shared_sums = false;   // each thread sums its columns' dγ/dβ in shared memory, not in
                              // registers: one row per block (or cluster), and the registers
                              // hold more of the row instead
  bool shared_weights = false;  // with shared sums: each thread also holds its columns' γ in
                                // shared memory, read there every row instead of from L1
  bool phased = false;        // rows aligned to less than 16 bytes but in phase (NormProblem::
                              // rows_in_phase) read as aligned 16-byte chunks: each row group
                              // takes rows of one phase, so its slots' columns sit shifted by
                              // the same 0 .. vec − 1 elements in all its rows (templates/
                              // norm_backward.cuh); the row then spans n + vec − 1 columns of slots
  int column_pass = 0;        // > 0: few rows that fit in L2 take two kernels instead of rows and
                              // partial rows: row sums (a row per block of threads_per_row),
                              // then blocks that own columns of every row, this many lanes down
                              // the rows each, writing dx and dγ/dβ themselves
                              // (templates/column_pass.cuh); 0: the rows families above

  int rows_per_block() const { return threads / threads_per_row; }
  // The column pass: vector slots of every row one block of its second kernel owns.
  int column_slots() const { return column_pass > 0 ? threads / column_pass : 0; }
  // Blocks of one row group (one partial row of dγ/dβ): a cluster sharing a row, merged blocks,
  // or for a grid cluster the whole grid.
  int blocks_per_group() const { return cluster * merge; }
};

bool operator==(const LaunchConfig& a, const LaunchConfig& b);

// The widest vector of x (elements) the row alignment allows, at most 16 bytes. Other tensors
// use the same element count, in pieces no wider than the alignment (templates/common.cuh).
int aligned_vector_width(const NormProblem& resolved);
// The vector the heuristics use: the aligned width, but 16 bytes (realigned: two aligned loads
// and selects a slot, templates/common.cuh) for 16-bit x aligned to less with rows of at least
// kRealignedRowsFrom (the backward, where a block or cluster then holds the row in registers:
// streamed_launch_config keeps the aligned width) or kRealignedForwardRowsFrom (the forward) elements. There
// they replace staged clusters and streamed scalar rows (LN bf16 32769: backward 433 → 258 µs,
// forward 344 → 284). Shorter rows keep an element a thread a pass, measured faster there (LN
// bf16 5003: backward 177 against 274 µs): a warp's 2-byte accesses are contiguous, where a
// realigned slot loads both chunks (twice the sectors) and is stored as 3-4 pieces whose every
// store instruction touches 16 sectors a warp; likely the cost, not profiled (bench/NOTES.md
// entry 34).
constexpr int64_t kRealignedRowsFrom = 16385;
constexpr int64_t kRealignedForwardRowsFrom = 32769;
int vector_width(const NormProblem& resolved, Pass pass = Pass::Backward);
// Whether slots of vec elements of x can be read from p's rows outside shared memory: within
// the alignment, or 8- and 16-byte slots of 16-bit x realigned (the only ones run on a GPU).
bool rows_take_vector(const NormProblem& resolved, int vec);
// Whether config's slots of x are wider than p's rows are aligned (not staged: those read from
// shared memory): its kernel realigns them (NJ_REALIGNED_SLOTS in the generated source).
bool realigned_slots(const NormProblem& resolved, const LaunchConfig& config);
// The vector widths tuning tries for rows in registers: vector_width and half of it, then the
// aligned width and the realigned 16- and 8-byte ones where those differ.
std::vector<int> candidate_vector_widths(const NormProblem& resolved, Pass pass = Pass::Backward);

// The largest cluster of the aligned twin a phased config takes (choose_launch_config's
// phased rule: clusters of eight lost at 65537).
constexpr int kMaxPhasedCluster = 4;
// Whether p's rows can be read phased (LaunchConfig::phased): aligned to less than 16 bytes but
// in phase, x, dy and dx of one element size, at least 16 bytes long (shorter rows share the
// tensor's last chunk), and no fused option (their rows are not phased).
bool phases_rows(const NormProblem& resolved);
// The aligned twin's config (phased_twin, codegen/phased_rows_config.h) that phased rows start
// from: choose_launch_config's, but without the memory-rich rule of rows copied ahead at
// 12289-16384 columns (copies need rows aligned to 16 bytes, and phased rows were not timed in
// its clusters of two or paired).
LaunchConfig twin_launch_config(const NormProblem& twin, int sm, int sm_count, int64_t m,
                                double memory_bytes_per_sm_cycle);
// The block shape phased kernels have (check_launch_config's phased rows): a row held in
// registers, one row a block or cluster, unstaged, unmerged, no column pass.
bool phased_block_shape(const LaunchConfig& config);
// Columns of slots a row of p spans under config: n, or phased n + vec − 1 (the shift).
int64_t row_span(const NormProblem& resolved, const LaunchConfig& config);

// Whether the backward kernel of config holds its rows packed, as stored (the kernel's
// kPackedRows): with shared sums and 16-bit x or dy. What a fused option makes of x or dy as
// they are loaded (the gate, x̂ recovered from y, the second norm's gradient) is then made
// again from the packed row for dx.
bool packs_rows(const NormProblem& resolved, const LaunchConfig& config);
// Whether the gated kernel of p keeps the γ its dx pass read for dz (the kernel's
// kGateHoldsGamma, where it holds rows packed): bf16 x with fp32 γ. Other dtypes read γ again
// (held, fp16 rows spilled 12-128 bytes more; bench/NOTES.md entry 63); with_shared_weights
// holds γ in shared memory for the gate only where it is read no more than twice a row.
bool gate_holds_gamma(const NormProblem& resolved);
// config with shared_weights set where holding γ in shared memory measured faster than
// reading it from L1 twice a row, and fits on compute capability sm: rows in registers with
// shared sums; a slot's γ of more than 16 bytes with one block an SM or a cluster (several
// blocks of the same columns share one γ in L1), or of 16 bytes in a cluster (not 16-bit rows
// in 4-wide slots); none of the options measured slower with it (the gate, the recompute); and
// the SM's shared memory still holding config.min_blocks_per_sm blocks. The
// heuristic, every tuning candidate and `normjit emit`'s overridden shapes take it so
// (shared_weights is not tuned on its own); elsewhere it comes back cleared.
LaunchConfig with_shared_weights(const NormProblem& resolved, LaunchConfig config, int sm);

// Vector slots of a row that one block of config holds (its slice, where a cluster shares the
// row), and the elements of them one thread works: what it holds in registers or unrolls.
int64_t block_slots(const NormProblem& resolved, const LaunchConfig& config);
int64_t elements_per_thread(const NormProblem& resolved, const LaunchConfig& config);

// Dynamic shared memory a launch of config needs: the stages of staged rows, then the shared
// weights and sums (each thread's columns of γ; of dγ, dβ, and the second norm's with parallel
// norms).
size_t dynamic_shared_bytes(const NormProblem& resolved, const LaunchConfig& config);

// Elements per thread held in registers at most (x and dy, plus γ, dγ, dβ accumulators).
constexpr int kMaxRegisterElementsPerThread = 16;
// Threads of one block holding a row (or, with clusters, a slice of it) in registers.
constexpr int kMaxRegisterRowThreads = 512;
// With prefetch each thread holds two rows' elements, so it takes half as many of each, and
// blocks stay at most this large.
constexpr int kMaxPrefetchElementsPerThread = 8;
// 16-bit rows aligned to 2 or 4 bytes on memory-rich devices (config_for_many_rows says why):
// slots a thread, prefetching, and the most threads such a block has.
constexpr int kUnalignedPrefetchSlots = 8;
constexpr int kMaxUnalignedPrefetchThreads = 320;
// fp32 rows aligned to 4 bytes on memory-rich devices (config_for_many_rows says why): the most
// threads a block of 8 elements a thread takes before it spills (80 registers and fewer); past a
// cluster of eight such blocks, the most a block of a cluster of eight takes, at 8 elements a
// thread with β and 16 without, where the rule still won.
constexpr int kMaxElementRowBlockThreads = 640;
constexpr int kMaxWideElementRowThreadsWithBias = 960;
constexpr int kMaxWideElementRowThreads = 416;
// 16-bit rows aligned to 4 or 8 bytes on memory-rich devices (config_for_many_rows says why):
// - 8193-16384 columns without β: the most threads a block of 16 elements a thread takes
//   before it takes 32 a thread instead;
// - fp16 LayerNorm's slots of two: the most threads a block prefetching 8 elements a thread
//   takes (more spill);
// - LayerNorm's slots of two past 8192 columns: the most threads at which they stay staged
//   (blocks of 16 elements a thread with shared sums won only beyond).
// - LayerNorm's slots of four up to 8192 columns: the most threads of a block of 16 elements a
//   thread, two an SM, that keeps dγ and dβ in registers (ptxas: 96 registers at 320; at 384
//   the cap of 85 spills 92 bytes); beyond, the block's sums are shared.
constexpr int kMaxWideBlockRowThreads = 896;
constexpr int kMaxFp16LayerNormPrefetchThreads = 896;
constexpr int kMaxStagedSlotRowThreads = 768;
// - slots of four without β: the most threads of a block of 16 elements a thread, two an SM,
//   before it takes 32 a thread (RMS bf16 7500: 480 threads spill 68 bytes at the cap of 68).
constexpr int kMaxSlotsOfFourRegisterSumThreads = 320;
constexpr int kMaxSlotsOfFourBlockThreadsNoBias = 448;
// fp32 rows of slots of two (8-byte aligned) without β on memory-rich devices: the most columns
// one block holds 32 elements a thread (416 threads); longer rows take clusters of blocks of 8 a
// thread (RMS 13002 lost 0.93x in them, 14002 gained 1.17x).
constexpr int64_t kMaxFp32PairRowBlockColumns = 13312;
// ... and the columns past which such rows of up to 6144 prefetch (with β from 4097; without,
// 4098 and 4502 lost 4-7% prefetching, 5002 gained 16%).
constexpr int64_t kMinFp32PairPrefetchColumnsNoBias = 4608;
// Threads an SM holds of rows held 16 elements a thread (about 128 registers each).
constexpr int kHeldElementRowThreadsPerSm = 512;
// LayerNorm's blocks of rows of an element, 16 a thread, on memory-rich devices
// (config_for_many_rows): by threads a block and x's type (nullopt: both 16-bit types), the
// threads to take instead, blocks an SM and whether to prefetch. At 96 registers a thread (64:
// 769-1024 columns; 96: fp16's 1025-1536; 128: fp16's 1537-2048; 160: fp16's 2049-2560; 192:
// 2561-3072), at 80 the blocks of 224 (3073-3584) widened to 256, 12-14 a thread, or bf16's
// prefetching the next row two an SM (128: 1537-2048).
struct ElementBlockFill {
  int threads;
  std::optional<DType> x_dtype;
  int take_threads;
  int blocks_per_sm;
  bool prefetch;
};
constexpr ElementBlockFill kLayerNormElementBlocks[] = {
    {64, std::nullopt, 64, 10, false},     {96, std::nullopt, 96, 6, false},  {128, DType::BF16, 128, 2, true},
    {128, DType::F16, 128, 5, false},      {160, std::nullopt, 160, 4, false}, {192, std::nullopt, 192, 3, false},
    {224, std::nullopt, 256, 3, false}};
constexpr int kPrefetchBlockThreads = 256;

// Threads per SM that shared-sums configs aim for: 64 registers a thread (65536 / 64).
constexpr int kSharedSumsThreadsPerSm = 1024;

// Paired LayerNorm rows of 1025-2047 on memory-rich devices (config_for_many_rows): the most
// slots (threads, a slot each) of one block, beyond which a cluster of two shares the row, and
// the clusters' blocks an SM (96-128 threads: 64-85 registers a thread).
constexpr int kMaxPairedLayerNormBlockThreads = 160;
constexpr int kPairedLayerNormClusterBlocksPerSm = 8;
// ... and the columns up to which LayerNorm's bf16 rows with 16-bit γ and β keep a row a turn.
constexpr int64_t kMaxUnpairedBf16LayerNormColumns = 1664;
// 16-bit rows aligned to 2 bytes held a warp a row on memory-rich devices (config_for_many_rows):
// the most columns (LayerNorm, RMSNorm), and the block's threads (16 rows).
constexpr int64_t kMaxLayerNormElementWarpRowColumns = 768;
constexpr int64_t kMaxRmsElementWarpRowColumns = 1023;
constexpr int kElementWarpRowThreads = 512;

// Slots (16-byte vectors of x) per thread whose dγ/dβ accumulators staged rows keep in registers.
constexpr int kMaxStagedSlotsPerThread = 4;

// Staged rows: at most this many threads when each holds 2 slots (registers), and the slots
// one block of a staged cluster holds (512 threads x 4).
constexpr int kMaxStagedThreadsAtTwoSlots = 768;
constexpr int kMaxStagedThreadsAtTwoSlotsNoBias = 896;  // without β's accumulators
constexpr int kMaxShiftedStagedThreadsAtTwoSlots = 800;  // rows aligned to less, memory-rich devices
constexpr int64_t kStagedClusterBlockSlots = 2048;
// Threads per block at most.
constexpr int kMaxRowThreads = 1024;
// Few fp32 rows prefetching 16 elements a thread: at most this many threads (a row of 8192;
// twice the row in registers leaves no room for 1024 threads of a block).
constexpr int kMaxFewRowsPrefetchThreads = 512;

// Dynamic shared memory (bytes) a block may use for stages on compute capability sm.
size_t max_stage_bytes(int sm);
// Shared memory (bytes) a whole SM gives its blocks, dynamic and static, on compute capability sm
// (CUDA C Programming Guide, "Technical Specifications per Compute Capability").
size_t max_shared_per_sm(int sm);
// Shared memory a block holds beyond its dynamic part: the kernel's static reduction buffers
// and the driver's reservation; merged blocks of one row a block hold static_merge_bytes more.
constexpr size_t kStaticSharedReserve = 1024;
size_t static_merge_bytes(const NormProblem& resolved, const LaunchConfig& config);
// Shared memory one block of config takes from its SM: dynamic, merge buffer and reserve; an SM
// holds config.min_blocks_per_sm of them where that many times this fits max_shared_per_sm.
size_t block_shared_bytes(const NormProblem& resolved, const LaunchConfig& config);
// Blocks an SM for a config of shared sums whose rows are held packed: 1024 threads' worth
// (kSharedSumsThreadsPerSm), as the SM's shared memory allows.
int shared_sums_blocks_per_sm(const NormProblem& resolved, const LaunchConfig& config, int sm);

// Largest cluster a launch may ask for (16 is beyond the portable 8: the kernel opts in).
constexpr int kMaxCluster = 16;
// Largest grid cluster (blocks that must all be resident at once), and the size the heuristic
// gives one when it does not know the device's SM count (one block per SM of an H100 SXM).
constexpr int kMaxGridCluster = 1024;
constexpr int kDefaultGridCluster = 132;
// Blocks of a grid cluster on a device of `sm_count` SMs (0: not known): one per SM.
int grid_cluster_blocks(int sm_count);
// The grid cluster of p's rows on compute capability sm (sm_80+): one block per SM, each staging
// its column slice of every row, up to 4 16-byte slots a thread, in as many stages as fit (up
// to 5); none where a block's slice is under min_block_slots slots or two stages do not fit.
std::optional<LaunchConfig> grid_config(const NormProblem& resolved, int sm, int sm_count, int64_t min_block_slots);
// Past the rows a cluster of 16 holds at 16 elements a thread (sm_90+): the cluster of 16 blocks,
// as few threads as hold the row at up to kMaxWideClusterElements a thread (LayerNorm's fp32
// rows kMaxWideClusterLayerNormFp32Elements), with shared sums; none for rows a cluster holds at
// 16, rows aligned to less than 16 bytes (but RMSNorm's 16-bit rows, in realigned slots), fused
// options, neither γ nor β, or sums that do not fit.
std::optional<LaunchConfig> wide_cluster_config(const NormProblem& resolved, int sm);
constexpr int kMaxWideClusterElements = 24;
constexpr int kMaxWideClusterLayerNormFp32Elements = 20;
// Columns a cluster of 16 blocks of 1024 threads holds at 16 elements a thread.
constexpr int64_t kMaxClusterRowColumns = int64_t{kMaxCluster} * kMaxRowThreads * kMaxRegisterElementsPerThread;
// Stages a grid cluster may have: stages − 2 rows wait for the other blocks' sums.
constexpr int kMaxGridStages = 8;
// Rows a block held in registers may have copied ahead into shared memory (shared_prefetch).
constexpr int kMaxSharedPrefetch = 3;

// Blocks a cluster may have without opting in to a larger one.
constexpr int kPortableCluster = 8;
// Merged blocks at most (the portable cluster size).
constexpr int kMaxMerge = kPortableCluster;

// The column pass reads x and dy twice, the second time from L2 (templates/column_pass.cuh):
// only for m rows whose x and dy take at most kColumnPassBytes together (a third of an H100's
// L2, and under the 40 MB of an A100's), and for problems without fused options.
constexpr int64_t kColumnPassBytes = int64_t{16} << 20;
bool column_pass_fits(const NormProblem& resolved, int64_t m);
// The column pass's config: blocks of `threads` (a row a block in its row sums, threads / lanes
// vector slots a block in its column kernel), `lanes` down the rows, the widest vectors the
// alignment allows.
LaunchConfig column_pass_config(const NormProblem& resolved, int threads, int lanes);
// Lanes down the rows that give each about rows_per_lane of an M bucket's rows, 1 to
// kMaxColumnLanes (what the heuristic and the search space try).
constexpr int kMaxColumnLanes = 64;
int column_lanes(int64_t bucket, int rows_per_lane);

// Rows a multiprocessor at most for the heuristic's few-rows (latency) configs.
constexpr int kLatencyRowsPerSm = 2;
// m rows are few on a device of `sm_count` SMs (0: not known, taken as kDefaultGridCluster):
// m's power-of-two bucket (1, 2, 4, ... rows) holds at most kLatencyRowsPerSm per SM; on an
// H100 (132 SMs) M <= 256. m < 0 stands for "not known", which is many.
bool few_rows(int64_t m, int sm_count);
// few_rows(m, sm_count) for some device: keys that must tell m's bucket apart without asking
// the device (the engine's kernel cache) use this.
bool may_be_few_rows(int64_t m);

// Few rows: a launch of a block (or a few) per row writes a partial row of dγ/dβ per block, and
// at M = 199 those rows (fp32, twice for LayerNorm) outweigh x, dy and dx together. On sm_90
// up to kMaxMerge blocks of a cluster add their sums first, as many as m's bucket has row
// workers, so M <= 8 needs no reduction launch at all. The merge the tuner tries for config at
// m rows, or 1 where config cannot merge (clusters sharing a row, staged or streamed rows, no
// γ or β). The heuristic never merges (bench/NOTES.md, entry 17); the tuner tries it.
int merge_for_few_rows(const NormProblem& resolved, const LaunchConfig& config, int sm, int64_t m);

// The device's memory bandwidth per multiprocessor clock, in bytes: peak DRAM bandwidth over SMs
// times SM clock (an H100 SXM: 3.35 TB/s over 132 SMs at 1.98 GHz, 12.8; an H200: 4.9 TB/s,
// 18.8 by the datasheets, 18.4 from the lent H200's driver). From kMemoryRichBytesPerSmCycle
// up, a memory-bound kernel needs about half as many bytes again in flight on each SM, and the
// rules fitted to H100 timings lose to other configs for 16-bit rows (bench/NOTES.md entry
// 41): memory_rich picks the rules fitted to an H200.
constexpr double kMemoryRichBytesPerSmCycle = 16.0;
// Whether a device moving memory_bytes_per_sm_cycle takes the rules fitted to an H200.
inline bool memory_rich(double memory_bytes_per_sm_cycle) {
  return memory_bytes_per_sm_cycle >= kMemoryRichBytesPerSmCycle;
}
// From the driver's attributes: peak bandwidth, two transfers a memory clock (kHz) across the
// bus (bits), over sm_count x the SM clock (kHz); 0 where any of them is not known (reported 0).
double memory_bytes_per_sm_cycle(int memory_clock_khz, int bus_width_bits, int sm_count, int sm_clock_khz);

// The heuristic config for a resolved, validated problem on compute capability `sm` with
// `sm_count` multiprocessors (0: not known; grid clusters then take kDefaultGridCluster blocks)
// for m rows (< 0: not known, the config for many rows), on a device moving
// `memory_bytes_per_sm_cycle` (0: not known, taken as an H100's). Correct for every problem and
// every m; the tuner refines it.
LaunchConfig choose_launch_config(const NormProblem& resolved, int sm = 90, int sm_count = 0, int64_t m = -1,
                                  double memory_bytes_per_sm_cycle = 0);

// Lanes a row of `slots` vector slots takes where a warp or less holds it: 32, or 16 where that
// leaves none of the row's slots idle in the last pass and 32 lanes would (N = 320 in 8-byte
// slots: 16 lanes x 5 against 32 x 3, a sixth of them empty), at most max_passes slots a lane.
int row_lanes(int64_t slots, int max_passes);

// Rows streamed twice by one block each: runs on any device, whatever N (the fallback when a
// grid cluster cannot be resident all at once).
LaunchConfig streamed_launch_config(const NormProblem& resolved);

// Throws std::invalid_argument if config cannot run problem (for hand-written configs).
void check_launch_config(const NormProblem& resolved, const LaunchConfig& config);

// What every kernel's block shape must satisfy, backward and forward alike (threads, threads
// a row, the vector width over x, a streamed row a block): why `config` does not, or "".
std::string block_shape_problem(const NormProblem& resolved, const LaunchConfig& config);

// "threads=256 threads_per_row=32 vec=8 registers"
std::string describe(const LaunchConfig& config);
// The config `describe` printed as `text` (every field it leaves out at its default), so a
// config a tool printed can be given back to one; throws std::invalid_argument naming the word
// it does not know. It does not check the config can run a problem (check_launch_config does).
LaunchConfig parse_described_config(std::string_view text);

}  // namespace normjit::codegen
