#pragma once
// The heuristic's rules for 16-bit rows in phase but aligned to less than 16 bytes (odd N from
// contiguous tensors), read as the aligned chunks that cover them (LaunchConfig::phased): the
// aligned twin, phased configs made from the twin's, and the short rows' own blocks, each rule
// with what it measured on the H200. choose_launch_config asks it first. phased_twin and
// phased_config (defined in phased_rows_config.cpp) are declared with the rest of the codegen
// layer's API in codegen/launch_config.h.

#include <cstdint>
#include <optional>

#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"

namespace normjit::codegen {

// The config of rows in phase (phases_rows) on sm `sm` of sm_count SMs at m rows: phased, but
// LayerNorm's rows of an element at 4097-5119 (short rows in phase); none where they take the
// rules of their alignment (choose_launch_config's other rules).
std::optional<LaunchConfig> in_phase_launch_config(const NormProblem& resolved, int sm, int sm_count, int64_t m,
                                                   double memory_bytes_per_sm_cycle);

}  // namespace normjit::codegen
