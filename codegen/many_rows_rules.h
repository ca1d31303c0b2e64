// The launch config of many rows (M well beyond the SMs): launch_config.cpp's heuristic starts
// from it (choose_launch_config).
#pragma once

#include "codegen/launch_config.h"

namespace normjit::codegen {

// The heuristic for many rows a block (M well beyond the SMs): staging and prefetch keep the
// next rows' loads in flight. many_rows: M is not few (few_rows); then shared sums also where
// one block holds the row, and the rules fitted to many rows only (few rows want the latency
// of sums in registers).
LaunchConfig config_for_many_rows(const NormProblem& resolved, int sm, int sm_count, bool many_rows, bool memory_rich);

}  // namespace normjit::codegen
