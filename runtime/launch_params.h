// Host-side mirror of nj::BackwardParams in templates/norm_backward.cuh: the same fields in
// the same order, all 8 bytes wide, so the layouts agree without padding rules.
#pragma once
#include <cstdint>

namespace normjit::runtime {

struct BackwardParams {
  int64_t m;
  const void* x;  // recompute from the output: y, the rows the kernel recovers x̂ from (fallback_x: x)
  int64_t x_stride;
  const void* dy;
  int64_t dy_stride;
  const float* mean;
  const float* rstd;
  const void* weight;
  void* dx;
  int64_t dx_stride;
  float* partial;  // null: a single row group writes dweight/dbias itself (rows in registers)
  int64_t groups;       // row groups (partial rows) of the whole backward
  int64_t first_group;  // the first of them this launch holds (several launches: groups_per_launch)
  void* dweight;
  void* dbias;
  // nj::FusedParams (templates/fused_ops.cuh), which only a kernel with a fused option
  // declares: the driver copies as many bytes as the kernel's parameter has, so an option-free
  // kernel reads the fields above and never sees these.
  const void* dresidual;
  int64_t dresidual_stride;
  const float* rowscale;
  const void* keep;
  int64_t keep_stride;  // bytes
  double keep_scale;    // 1/(1 - p)
  void* dresidual_in;
  int64_t dresidual_in_stride;
  const void* z;  // gated RMSNorm
  int64_t z_stride;
  void* dz;
  int64_t dz_stride;
  const void* dy1;  // parallel norms
  int64_t dy1_stride;
  const void* weight1;
  void* dweight1;
  void* dbias1;
  const void* fallback_x;  // recompute from the output: x or null, read only where gamma = 0
  int64_t fallback_x_stride;
  const void* bias;  // recompute from the output with has_bias: beta
};
static_assert(sizeof(BackwardParams) == 35 * 8, "every field is 8 bytes, as on the device");

// keep_scale of both passes: 1/(1 - p), what a kept element is scaled by. A run-time value, so
// p needs no kernel of its own.
inline double dropout_keep_scale(double p) { return 1.0 / (1.0 - p); }

}  // namespace normjit::runtime

namespace normjit::runtime {

// Host-side mirror of nj::ForwardParams in templates/norm_forward.cuh, every field 8 bytes.
struct ForwardParams {
  int64_t m;
  const void* x;
  int64_t x_stride;
  const void* weight;
  const void* bias;
  void* y;
  int64_t y_stride;
  float* mean;
  float* rstd;
  double eps;
  // The forward's fused fields (templates/norm_forward.cuh), which only a kernel with a fused
  // option declares: an option-free kernel's parameter ends above, and the driver copies no more.
  const void* residual;
  int64_t residual_stride;
  void* residual_out;
  int64_t residual_out_stride;
  const float* rowscale;
  void* keep;
  int64_t keep_stride;  // bytes
  double keep_scale;    // 1/(1 - p)
  uint64_t seed;
  uint64_t offset;
  int64_t drop_below;   // p * 2^32 rounded down
  const void* z;
  int64_t z_stride;
  const void* weight1;
  const void* bias1;
  void* y1;
  int64_t y1_stride;
};
static_assert(sizeof(ForwardParams) == 27 * 8, "every field is 8 bytes, as on the device");

}  // namespace normjit::runtime
