// What `normjit compile` builds when given neither problem flags nor --shapes: the norms of
// common transformer widths, so that a node can be warmed with no thought about shapes.
// examples/shapes/common.toml lists the same problems (a test keeps the two equal).
#pragma once
#include <vector>

#include "normjit/norm_problem.hpp"

namespace normjit::tools {

// Hidden sizes 2048, 4096, 5120, 7168, 8192, 12288, 16384; LayerNorm (γ and β) and RMSNorm (γ);
// x, dy and dx in bf16 or fp16; γ/β in fp32; rows 16-byte aligned.
std::vector<NormProblem> default_problems();

}  // namespace normjit::tools
