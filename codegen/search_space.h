// The autotuner's search space: every LaunchConfig worth timing for one problem on one arch.
// Enumerated broadly over what the kernel families expose (rows per block and threads per
// row, elements per thread, vector width, prefetch, staged rows, clusters, blocks per SM),
// then pruned: check_launch_config is the authority on what can run at all, and a static
// estimate of registers and shared memory drops what could run only by spilling or could not
// be resident. Pure C++: the same list on a build box and on the GPU machine.
#pragma once
#include <string>
#include <vector>

#include "codegen/launch_config.h"
#include "normjit/norm_problem.hpp"

namespace normjit::codegen {

// Static limits of compute capability `sm` that pruning uses (CUDA C Programming Guide,
// "Technical Specifications per Compute Capability").
struct ArchLimits {
  int registers_per_sm = 65536;
  int max_registers_per_thread = 255;
  size_t shared_per_sm = 0;     // bytes a whole SM gives its blocks (dynamic + static)
  size_t shared_per_block = 0;  // dynamic bytes one block may opt in to (max_stage_bytes)
  int max_cluster = 1;          // 1: no thread-block clusters before sm_90
};
ArchLimits arch_limits(int sm);

// Registers per thread that `config` needs at least, estimated from the elements it holds
// (x and dy, twice with prefetch, plus the dγ/dβ accumulators) over a fixed base. Meant to
// prune the hopeless, not to predict ptxas: it errs low.
int estimated_registers(const NormProblem& resolved, const LaunchConfig& config);

// A rough rank of how long NVRTC takes to compile `config`: the elements of a row one thread
// works, unrolled in the kernel, weighted 4 a plain element, 5 with prefetch and 8 staged (their
// copy and two passes). Fitted to NVRTC 13.0 single-threaded over LN bf16 8192's candidates:
// 32 elements a thread 448 ms, with prefetch 556 ms; 16 elements 297 ms, staged 488 ms. The
// tuner compiles the costliest first, so the longest compiles do not start last: over the
// candidates of LN bf16 8192, RMS bf16 4096 and LN fp32 32768, 16 threads would finish 24%
// sooner (bench/NOTES.md, entry 22).
int64_t compile_cost(const NormProblem& resolved, const LaunchConfig& config);

// Why `config` is pruned for (problem, sm), or "" when it is kept.
std::string prune_reason(const NormProblem& resolved, const LaunchConfig& config, int sm);

// The candidates of a resolved, validated problem on compute capability sm for m rows (< 0:
// not known, many) on a device moving memory_bytes_per_sm_cycle (choose_launch_config): the
// heuristic's config for m first (on a memory-rich device, the H100 rules' too), then the others
// in a fixed enumeration order, without duplicates, each accepted by check_launch_config and
// prune_reason. At most kMaxCandidates,
// so that one shape compiles and times in about a second on a 16-core host.
constexpr size_t kMaxCandidates = 40;
// ... and, for x̂ recomputed from y, up to this many more: the first ones with early_weights flipped.
constexpr size_t kMaxFlippedCandidates = 20;
// Phased configs among them (rows that can be phased): at most this many, right after the heuristic's.
constexpr int kMaxPhasedCandidates = 8;
std::vector<LaunchConfig> search_space(const NormProblem& resolved, int sm, int sm_count = 0, int64_t m = -1,
                                       double memory_bytes_per_sm_cycle = 0);

}  // namespace normjit::codegen
