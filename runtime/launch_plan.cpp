#include "runtime/launch_plan.h"

#include <algorithm>

namespace normjit::runtime {

namespace {

// Row slots a launch over m rows fills: a block's rows_per_block rows, times the blocks a
// row group merges.
int64_t row_slots(const codegen::LaunchConfig& c, int64_t m) {
  const int64_t per_slot = int64_t{c.rows_per_block()} * c.merge;
  return (m + per_slot - 1) / per_slot;
}

}  // namespace

int64_t max_row_groups(const codegen::LaunchConfig& c, const DeviceLimits& limits, int64_t m) {
  if (c.grid) return 1;  // the grid is one cluster
  if (c.column_pass > 0) return std::max<int64_t>(m, 0);  // a float2 of sums per row
  const int64_t per_sm = std::max(1, std::min(limits.max_threads_per_sm / c.threads, limits.max_blocks_per_sm));
  const int64_t resident = std::max<int64_t>(1, per_sm * limits.sm_count / c.blocks_per_group());
  // Phased rows may take up to c.vec groups however few fit at once (row_groups says why).
  return std::min<int64_t>(row_slots(c, m), c.phased ? std::max<int64_t>(resident, c.vec) : resident);
}

int64_t row_groups(const codegen::LaunchConfig& c, const DeviceLimits& limits, int64_t m, int64_t resident_groups) {
  if (c.column_pass > 0) return max_row_groups(c, limits, m);
  const int64_t cap = std::min<int64_t>(max_row_groups(c, limits, m), std::max<int64_t>(1, resident_groups));
  const int64_t slots = row_slots(c, m);
  if (cap <= 1 && (!c.phased || slots <= 1)) return cap;  // no rows, a grid cluster, or one group
  // As few groups as take the rows in the same number of rounds: every group then works as
  // many rows as the busiest would anyway, and fewer groups write fewer partial rows (199 rows
  // on 132 resident groups: 100 groups of 2 rows, not 67 of 2 and 65 of 1).
  const int64_t rounds = (slots + cap - 1) / cap;
  const int64_t groups = (slots + rounds - 1) / rounds;
  // Phased rows (templates/norm_backward.cuh): a group's rows must share their phase, which
  // repeats every c.vec rows (or fewer): a multiple of c.vec groups, or a group a row.
  if (c.phased && groups < slots) return std::min(slots, std::max<int64_t>(c.vec, groups / c.vec * c.vec));
  return groups;
}

int64_t groups_per_launch(const codegen::LaunchConfig& c, const DeviceLimits& limits, int64_t groups,
                        int sm_margin) {
  // The column pass is two short kernels whose second needs every row's sums: one launch.
  if (c.grid || c.column_pass > 0 || sm_margin <= 0 || limits.sm_count <= 0) return groups;
  const int64_t usable = std::max(1, limits.sm_count - sm_margin);
  return std::clamp<int64_t>(groups * usable / limits.sm_count, std::min<int64_t>(groups, 1), groups);
}

int64_t partial_floats(const NormProblem& p, int64_t groups) {
  const int params = (p.has_weight ? 1 : 0) + (p.has_bias ? 1 : 0);
  return int64_t{params} * groups * p.n;
}

size_t partial_bytes(const NormProblem& p, int64_t groups) {
  return static_cast<size_t>(partial_floats(p, groups)) * (p.parallel ? 2 : 1) * sizeof(float);
}

bool writes_gradients_directly(const codegen::LaunchConfig& c, int64_t groups) {
  return (groups == 1 && c.row_in_registers) || c.column_pass > 0;
}

int64_t column_blocks(const NormProblem& p, const codegen::LaunchConfig& c) {
  const int64_t slots = (p.n + c.vec - 1) / c.vec;
  return c.column_pass > 0 ? (slots + c.column_slots() - 1) / c.column_slots() : 0;
}

int grid_ring_slots(const codegen::LaunchConfig& c) {
  const int defer = c.stages - 2, batch = defer + 1;  // kGridDefer, kGridBatch
  return c.grid ? 2 * (defer + batch) + 2 : 0;
}

size_t grid_counters_offset(const codegen::LaunchConfig& c) {
  return static_cast<size_t>(grid_ring_slots(c)) * static_cast<size_t>(c.cluster) * 8;  // after the float2 sums
}

size_t grid_sums_bytes(const codegen::LaunchConfig& c) {
  return c.grid ? (grid_counters_offset(c) + static_cast<size_t>(grid_ring_slots(c)) * 4 + 15) / 16 * 16 : 0;
}

size_t launch_workspace_bytes(const NormProblem& p, const codegen::LaunchConfig& c, int64_t groups) {
  if (c.grid) return grid_sums_bytes(c);
  if (c.column_pass > 0) return static_cast<size_t>((groups * 8 + 15) / 16 * 16);
  return writes_gradients_directly(c, groups) ? 0 : partial_bytes(p, groups);
}

size_t workspace_bound(const NormProblem& resolved, const DeviceLimits& limits, int64_t m,
                       llvm::function_ref<std::optional<codegen::LaunchConfig>(const NormProblem&)> tuned) {
  size_t bytes = 0;
  auto cover = [&](const NormProblem& p, const codegen::LaunchConfig& c) {
    // max_row_groups of 1 means exactly one group: a direct launch, which needs none.
    bytes = std::max(bytes, launch_workspace_bytes(p, c, max_row_groups(c, limits, m)));
  };
  for (int alignment = resolved.alignment; alignment >= 1; alignment /= 2)
    for (bool in_phase : {true, false}) {  // the call's rows may turn out out of phase too
      // Aligned rows have no phase (NormProblem's operator== and the engine ignore it): once.
      if (in_phase ? !resolved.rows_in_phase : alignment == 16 && resolved.rows_in_phase) continue;
      NormProblem p = resolved;
      p.alignment = alignment;
      p.rows_in_phase = in_phase;
      cover(p, codegen::choose_launch_config(p, limits.sm, limits.sm_count, m, limits.memory_bytes_per_sm_cycle));
      if (tuned)
        if (const std::optional<codegen::LaunchConfig> c = tuned(p)) cover(p, *c);
    }
  return bytes;
}

}  // namespace normjit::runtime
