// NormProblem + LaunchConfig -> CUDA source text, with N, the dtypes and the launch shape as
// compile-time constants. The text is what NVRTC compiles and what the cache key hashes.
#pragma once
#include <cstdint>
#include <string>

#include "codegen/launch_config.h"
#include "normjit/norm_problem.hpp"

namespace normjit::codegen {

struct KernelSource {
  std::string text;
  std::string name;  // file name for NVRTC messages, e.g. "layernorm_bwd_n4096.cu"
  static constexpr const char* kBackwardEntry = "nj_norm_backward";
  static constexpr const char* kReduceEntry = "nj_reduce_partials";
  static constexpr const char* kRowSumsEntry = "nj_row_sums";  // the column pass's first kernel
  static constexpr const char* kForwardEntry = "nj_norm_forward";
};

// The dγ/dβ reduction's launch (nj_reduce_partials, templates/reduce_partials.cuh): one row of
// blocks per gradient, each block `across` threads by `lanes` down the partial rows, each thread
// `vec` adjacent columns: 4 for long rows whose N is a multiple of 4 (16-byte loads, a quarter
// of the blocks: at few partial rows the step is bound by blocks, not bytes), else 1. The
// source generated for a problem carries these as constants; the launch reads them from here.
struct ReduceShape {
  int across = 32;
  int lanes = 16;
  int vec = 1;
  int64_t columns_per_block() const { return int64_t{across} * vec; }
  int64_t blocks_per_gradient(int64_t n) const { return (n + columns_per_block() - 1) / columns_per_block(); }
};
ReduceShape reduce_shape(const NormProblem& problem);

// problem must be resolved and validated; config must pass check_launch_config.
KernelSource generate_backward_source(const NormProblem& problem, const LaunchConfig& config);

// The forward (templates/norm_forward.cuh, docs/FORWARD.md): problem from
// resolve_forward_problem and validated by validate_forward_problem; config must pass
// check_forward_config. One entry point, kForwardEntry. The text differs from every backward
// source (another template, another entry point), so its cache key does too.
KernelSource generate_forward_source(const NormProblem& problem, const LaunchConfig& config);

}  // namespace normjit::codegen
