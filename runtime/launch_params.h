// Host-side mirror of nj::BackwardParams in templates/norm_backward.cuh: the same fields in
// the same order, all 8 bytes wide, so the layouts agree without padding rules.
#pragma once
#include <cstdint>

namespace normjit::runtime {

struct BackwardParams {
  int64_t m;
  const void* x;
  int64_t x_stride;
  const void* dy;
  int64_t dy_stride;
  const float* mean;
  const float* rstd;
  const void* weight;
  void* dx;
  int64_t dx_stride;
  float* partial;  // null: a single row group writes dweight/dbias itself (rows in registers)
  void* dweight;
  void* dbias;
};
static_assert(sizeof(BackwardParams) == 13 * 8, "every field is 8 bytes, as on the device");

// Blocks of the partial-sum reduction: 32 columns by 8 lanes (templates/reduce_partials.cuh).
constexpr int kReduceColumns = 32;
constexpr int kReduceLanes = 8;

}  // namespace normjit::runtime
