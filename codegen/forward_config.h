// The forward pass (docs/FORWARD.md) from the same NormProblem as the backward: which problems
// it serves, the problem it compiles (backward-only fields normalised away), and the heuristic
// launch config of its kernel. Pure C++: no CUDA calls.
//
// The forward's launch is described by the backward's LaunchConfig, so the tuner and the
// tuning database can take it up later; it uses only threads, threads_per_row, vec,
// row_in_registers, cluster, min_blocks_per_sm, prefetch, shared_weights and phased (merge 1, no
// grid, no staging).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/launch_config.h"
#include "codegen/pass.h"
#include "normjit/norm_problem.hpp"

namespace normjit::codegen {

// Throws normjit::Error like validate_problem. Every fused option is taken (docs/FORWARD.md,
// "Fused options"); recompute_from_output is the backward's choice and changes nothing here.
void validate_forward_problem(const NormProblem& problem);

// resolve_problem, then the fields the forward has no use for set to what they resolve to
// without them: dx_dtype (the backward's) takes x's dtype and recompute_from_output is cleared.
// y is stored in dy_dtype (y is what the backward's dy is the gradient of). Two problems that
// differ only in those fields give the same forward problem, so one kernel.
NormProblem resolve_forward_problem(const NormProblem& problem);

// Whether the forward's kernel carries fused code: residual, rowscale, dropout, gate or
// parallel (zero-centred γ is one of the forward's plain constants).
bool has_forward_fused_options(const NormProblem& problem);

// Whether the forward forms h from x (residual, rowscale or dropout) rather than normalising x.
bool forms_pre_norm_sum(const NormProblem& problem);

// "layernorm forward N=4096 x=bf16 y=bf16 weight=fp32 +weight +bias align=16", then the fused
// options as describe gives them (the backward's dx dtype is not part of it).
std::string describe_forward(const NormProblem& problem);
// describe_forward for the forward, describe (the backward's) otherwise.
std::string describe(const NormProblem& problem, Pass pass);

// Bytes of x a thread holds in registers at most (the forward holds only x, as loaded: 16-bit
// elements two a register): 32 registers of fp32, 16 of 16-bit elements, whose unpacking
// takes registers too (a 1024-thread block, 64 registers a thread, spills 144-424 bytes at
// 128 bytes of bf16 or fp16 a thread, none at 64).
int max_forward_register_bytes(DType x);
// Threads of a block holding one row in registers, at most.
constexpr int kMaxForwardRowThreads = 1024;
// Rows of 2-byte slots (16-bit x aligned to less): blocks of at most this many threads where 8,
// 16 or 32 elements a thread allow it (choose_forward_config).
constexpr int kMaxScalarForwardRowThreads = 576;
// Bytes of x a thread holds, where the row is long enough: the forward is bound by the loads
// an SM keeps in flight, and registers cap that at (resident threads × elements a thread),
// which more elements a thread raise (its fixed registers are shared by more data).
constexpr int kForwardBytesTarget = 64;
// Registers an SM has (every arch normjit targets), and what the heuristic lets a thread of a
// row-in-registers block use.
constexpr int kRegistersPerSm = 65536;
constexpr int kForwardRegistersPerThread = 64;
// Threads an SM runs at once (every arch normjit targets).
constexpr int kThreadsPerSm = 2048;
// Rows of an element a thread a pass, at most this many a thread: blocks bounded to fill the
// SM's threads (16-bit x) or to two an SM at least (fp32) instead of to 64 registers a thread.
constexpr int kFewElementSlots = 8;
// Blocks of a cluster holding one row (sm_90; 8 is the portable maximum).
constexpr int kMaxForwardCluster = 8;
// Threads a block at most where an fp32 cluster's threads hold 128 bytes of x each: RMSNorm
// 768 (80 registers, no spills), LayerNorm 640 (at 768 it spilled 152-216 bytes and lost 4% at
// N = 196608 to streaming; bench/results/2026-11-25-h100-986d9d5-refits2/).
constexpr int kWideForwardThreads = 768;
constexpr int kWideForwardThreadsLayerNorm = 640;
// The clusters that take long 16-bit rows with a pre-norm sum: 16-byte slots a thread at
// most, and threads a block at most (LayerNorm; RMSNorm half as many before more slots).
constexpr int kPreNormSumSlots = 4;
constexpr int kPreNormSumClusterThreads = 512;
// Threads of a block streaming one row, and 16-byte loads a thread keeps in flight (the
// forward source's kStreamBatch).
constexpr int kForwardStreamThreads = 1024;
constexpr int kForwardStreamBatch = 4;

// The heuristic config of a resolved forward problem on compute capability `sm` for m rows
// (< 0: not known). Correct for every problem; not tuned (docs/FORWARD.md):
//   rows of at most 32 slots: a power-of-two group of lanes per row, 256 threads a block;
//   rows a warp holds (<= 32 elements a lane): a warp per row, 8 rows a block;
//   rows a block of up to 1024 threads holds: one row per block in registers, as few
//     threads as hold kForwardBytesTarget bytes of x each (at least 64);
//   rows a cluster of up to 8 such blocks holds (sm_90): a cluster per row, the fewest blocks
//     that hold it at the target bytes a thread;
//   longer rows: one block per row, streamed twice: of 1024 threads, and for fewer rows than
//     the device's SMs (m's power-of-two bucket) on sm_90 a cluster of such blocks per row; at
//     twice the SMs or more (or m not known) and without fused options, two blocks of 512 an SM
//     where 1024 threads would take a second batch for at most half a batch more of the row,
//     else the fewest threads that take as many batches each as 1024 do.
// sm_count: the device's SMs (0: not known, taken as an H100's, as choose_launch_config does).
// memory_bytes_per_sm_cycle: the device's, as choose_launch_config takes it (0: the H100's
// rules). On a memory-rich device many option-free rows take rules tuned on the H200: 16-bit
// rows a block holds two 16-byte slots a thread and prefetch the next row; fp32 rows of register
// clusters 128 bytes a thread in blocks of at most 512 threads; 16-bit rows in phase but aligned to
// less than 16 bytes (odd N), from N = 1000, phased where that measured faster (one block of four
// or two 16-byte slots a thread, γ and β held at the block's phase; the rule in forward_config.cpp
// says where).
LaunchConfig choose_forward_config(const NormProblem& resolved, int sm = 90, int64_t m = -1, int sm_count = 0,
                                   double memory_bytes_per_sm_cycle = 0);

// Rows of an element a thread a pass, at most kFewElementSlots a thread, held in one block:
// choose_forward_config bounds their blocks to fill the SM (16-bit x: 32 registers a thread)
// or to two an SM at least (fp32), which ptxas holds without spilling at some N only (LN bf16
// 3001, 4095; not 1025-1985). For such a config this is the same block bounded to 64 registers
// a thread, as every other row in registers: the engine compiles the filled one and takes
// this one where that spills. nullopt for any other config.
std::optional<LaunchConfig> unfilled_forward_config(const NormProblem& resolved, const LaunchConfig& config);

// Throws std::invalid_argument if config cannot run the forward of `resolved`.
void check_forward_config(const NormProblem& resolved, const LaunchConfig& config);
// check_forward_config for the forward, check_launch_config (the backward's) otherwise.
void check_config(const NormProblem& resolved, const LaunchConfig& config, Pass pass);

// A config of the aligned twin (codegen::phased_twin) as phased rows of `resolved` run it: γ and
// β held in shared memory at the block's phase where they fit on sm `sm` (read element by
// element from L1 every row, they took LN bf16 5003 from 139 to 238 µs at M = 16384: a warp's
// scalar loads span 8 lines each). check_forward_config says whether it runs.
LaunchConfig phased_forward_config(const NormProblem& resolved, const LaunchConfig& twin_config, int sm);

// Whether shared_weights holds β beside γ. Where the two would not fit a block's shared memory
// (LayerNorm's long rows: a cluster of two 1024-thread blocks at 65536 columns holds 32768 of
// them, 256 KB of fp32 γ and β), γ alone is held and β read from memory each row. Not phased
// rows (they read γ and β of a slot element by element; theirs fit).
bool forward_holds_bias(const NormProblem& resolved, const LaunchConfig& config);
// Dynamic shared memory of the forward's kernel: γ and β held with shared_weights (every slot
// a thread of the block may hold, in fp32; β only where forward_holds_bias), else none.
// templates/norm_forward.cuh lays it out.
size_t forward_dynamic_shared_bytes(const NormProblem& resolved, const LaunchConfig& config);
// forward_dynamic_shared_bytes for the forward, dynamic_shared_bytes (the backward's) otherwise:
// what the engine opts a loaded kernel in to and launches it with.
size_t dynamic_shared_bytes(const NormProblem& resolved, const LaunchConfig& config, Pass pass);
// Whether a slot's γ spans more than one 16-byte load (fp32 γ of 8-element slots), the loads a
// warp makes from L1 then half-filling each sector: where shared_weights may pay.
bool slot_weights_span_loads(const NormProblem& resolved, const LaunchConfig& config);

// The tuner's candidates for the forward of a resolved, validated problem on compute capability
// sm: the heuristic's config first, then, without duplicates and each accepted by
// check_forward_config, rows in registers at 16 to 128 bytes of x a thread (fewer or more
// threads a row; several rows a block for short rows), 64 registers a thread or no bound,
// clusters of 2-8 blocks on sm_90 (either kind), streamed rows in 512- and 1024-thread blocks,
// half-width vectors, and (option-free rows of a block or a cluster at one or two slots a
// thread) the next row prefetched; then, where a slot's γ spans two loads, up to
// kMaxForwardHeldWeightCandidates of the rows a block holds again with γ and β held in shared
// memory. Rows that can be phased (codegen::phased_twin) take, right after the heuristic's, up
// to kMaxForwardPhasedCandidates of their aligned twin's candidates as phased ones (a row a block
// or a cluster held in registers in 16-byte slots, γ and β not held). Last, the heuristic's
// own cluster of rows in registers with the next row brought the other way
// (kMaxForwardAheadCandidates):
// copied ahead into shared memory (shared_prefetch, without and with γ held) where it does not,
// and where it does, not copied ahead (γ held alone) and prefetched into registers. At most
// kMaxForwardCandidates.
constexpr size_t kMaxForwardCandidates = 48;
constexpr size_t kMaxForwardAheadCandidates = 2;
constexpr size_t kMaxForwardPhasedCandidates = 8;
constexpr size_t kMaxForwardPrefetchCandidates = 8;
constexpr size_t kMaxForwardHeldWeightCandidates = 8;
std::vector<LaunchConfig> forward_search_space(const NormProblem& resolved, int sm, int64_t m = -1, int sm_count = 0,
                                               double memory_bytes_per_sm_cycle = 0);

}  // namespace normjit::codegen
