#pragma once
// The heuristic's rules for 16-bit rows in phase but aligned to less than 16 bytes (odd N from
// contiguous tensors), read as the aligned chunks that cover them (LaunchConfig::phased): the
// aligned twin, phased configs made from the twin's, and the short rows' own blocks, each rule
// with what it measured on the H200. choose_launch_config asks it first; the tuner's search space
// and the forward's config take phased rows from the same twin.

#include <cstdint>
#include <optional>

#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"

namespace normjit::codegen {

// The aligned twin of a problem whose rows can be phased: the same problem with rows aligned to
// 16 bytes and as long as the phased span (n + vec − 1), whose configs phased rows take. Only
// 16-bit rows so far (fp32 rows of an element already read whole lines a warp access); none
// otherwise.
std::optional<NormProblem> phased_twin(const NormProblem& resolved);
// A config of the aligned twin as phased rows of p run it (γ in shared memory on sm `sm`), where
// its shape is one phased kernels have: a row in registers in 16-byte slots, unstaged, one row a
// block or a cluster of up to kMaxPhasedCluster blocks, unmerged, no column pass. None otherwise.
std::optional<LaunchConfig> phased_config(const NormProblem& resolved, const LaunchConfig& twin_config, int sm);

// The config of rows in phase (phases_rows) on sm `sm` of sm_count SMs at m rows: phased, but
// LayerNorm's rows of an element at 4097-5119 (short rows in phase); none where they take the
// rules of their alignment (choose_launch_config's other rules).
std::optional<LaunchConfig> in_phase_launch_config(const NormProblem& resolved, int sm, int sm_count, int64_t m,
                                                   double memory_bytes_per_sm_cycle);

}  // namespace normjit::codegen
