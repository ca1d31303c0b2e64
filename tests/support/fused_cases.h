// GPU cases of the fused options (docs/FUSED.md), shared by the tests of each option: a problem
// over m rows, how its fused inputs are drawn, and how it is run; and running a list of them
// against the float64 reference.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <vector>

#include "normjit/normjit.hpp"
#include "support/device_run.h"
#include "support/norm_inputs.h"

namespace normjit::test {

struct FusedCase {
  NormProblem problem;
  int64_t m;
  FusedSpec spec;
  RunOptions run;
};

// The shapes: every N with every M, but M·N above kFusedMaxElements only with M = 1.
extern const std::vector<int64_t> kFusedRowCounts;    // {1, 199, 4096}
extern const std::vector<int64_t> kFusedHiddenSizes;  // {1, 33, 4096, 8192, 65536}
constexpr int64_t kFusedMaxElements = int64_t{1} << 23;
// kFusedMaxElements, or under the sanitizers (scripts/gpu-sanitize.sh) the tool's cap, as for
// the matrix (support/sanitize_mode.h).
int64_t fused_max_elements();

// LayerNorm with γ and β, RMSNorm with γ (fp32 γ, as in the README's table).
NormProblem fused_base_problem(NormKind kind, int64_t n, DType x, DType dx = DType::Default);

// One N per kernel family (sm_90 heuristic, `normjit emit --arch sm_90` shows it): 33 several
// rows per block, 4096 registers, 5120 staged, 5003 shifted (interleaved) staged rows in
// 16-bit types, 65536 a cluster (bf16 staged, fp32 in registers), 262144 a 16-block staged
// cluster in bf16 and a grid cluster in fp32, 2097152 a grid cluster in bf16 and streamed
// rows in fp32.
struct FamilyShape {
  int64_t n, m;
};
extern const std::vector<FamilyShape> kFamilyShapes;

// Compiles every kernel the cases may use in parallel (the aligned one, the one contiguous
// rows allow, and for misaligned cases one element's alignment), then runs each case with
// fresh inputs against the reference (seed printed with a failure), stopping after a few
// failures.
void run_fused_cases(Engine& engine, CUstream stream, const std::vector<FusedCase>& cases);

}  // namespace normjit::test
