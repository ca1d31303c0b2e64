// Grid size and workspace of one launch: how many row groups (blocks) run, each writing one
// fp32 partial row of dγ and of dβ. Sized by the blocks that can be resident at once, not by
// M. Pure arithmetic: testable without a GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "codegen/launch_config.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "normjit/norm_problem.hpp"

namespace normjit::runtime {

struct DeviceLimits {
  int sm = 0;                  // compute capability major*10+minor
  int sm_count = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  bool memory_pools = false;   // cuMemAllocAsync works
  // Peak DRAM bandwidth over SMs x SM clock (codegen::memory_bytes_per_sm_cycle; 0: not known):
  // the heuristic's rules for memory-rich devices (an H200) take over from kMemoryRichBytesPerSmCycle.
  double memory_bytes_per_sm_cycle = 0;
};

// Upper bound on the row groups (blocks, or clusters of config.blocks_per_group() blocks) of a launch over
// m rows, whatever the kernel's occupancy.
int64_t max_row_groups(const codegen::LaunchConfig& config, const DeviceLimits& limits, int64_t m);
// The row groups actually launched: no more than can be resident at once (`resident_groups`,
// from the occupancy calculator), and of those as few as take the rows in as many rounds
// (fewer partial rows to write and reduce); each gets at least one row.
int64_t row_groups(const codegen::LaunchConfig& config, const DeviceLimits& limits, int64_t m,
                   int64_t resident_groups);
// Row groups one launch holds: all `groups`, or with `sm_margin` of the device's SMs left to
// other work (communication kernels running beside the norm), the remaining SMs' share of
// them, at least one; the backward's other groups follow in further launches on the stream.
// Each launch is told the groups it holds, so the partial rows, and the bits of dγ/dβ, are
// those of `groups` whatever the margin. A grid cluster needs every block resident: it is
// always one launch.
int64_t groups_per_launch(const codegen::LaunchConfig& config, const DeviceLimits& limits, int64_t groups,
                        int sm_margin);
// The column pass (config.column_pass > 0) counts each row as a row group: its workspace is
// the rows' float2 sums, and its second kernel's blocks own column_slots() slots each.
int64_t column_blocks(const NormProblem& problem, const codegen::LaunchConfig& config);
// fp32 partials of one norm's dγ and dβ rows for `groups` row groups (0 when the problem has
// neither γ nor β), and the bytes of all of them: parallel norms have two such sets, the
// second norm's after the first's.
int64_t partial_floats(const NormProblem& problem, int64_t groups);
size_t partial_bytes(const NormProblem& problem, int64_t groups);
// A launch writes dγ/dβ itself, with no partials and no reduction launch, when it is a single
// row group holding its rows in registers (the small-M latency case), or a column pass.
bool writes_gradients_directly(const codegen::LaunchConfig& config, int64_t groups);
// A grid cluster's meeting place in the workspace (templates/norm_backward.cuh, GridSums): a
// ring of grid_ring_slots() slots of [cluster] float2 row sums, then one arrival counter per
// slot (zeroed before each launch), padded to 16 bytes; 0 for other configs.
int grid_ring_slots(const codegen::LaunchConfig& config);
size_t grid_counters_offset(const codegen::LaunchConfig& config);  // bytes from the workspace's start
size_t grid_sums_bytes(const codegen::LaunchConfig& config);
// The workspace a launch of `groups` row groups of `config` uses: its partials, a grid
// cluster's row sums, or none.
size_t launch_workspace_bytes(const NormProblem& problem, const codegen::LaunchConfig& config, int64_t groups);
// Workspace to ask callers for: enough for any alignment the rows may turn out to have,
// since a lower alignment can pick a config with more row groups. `tuned`, when given, names
// a config that may run instead of the heuristic's at an alignment (the tuning database's).
size_t workspace_bound(const NormProblem& resolved, const DeviceLimits& limits, int64_t m,
                       llvm::function_ref<std::optional<codegen::LaunchConfig>(const NormProblem&)> tuned = nullptr);

}  // namespace normjit::runtime
