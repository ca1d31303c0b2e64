// Plain data that every layer shares: what a backward pass is asked to do.
// No logic here (codegen/norm_problem.h validates, resolves and describes problems).
#pragma once
#include <cstddef>
#include <cstdint>

#include "normjit/normjit.h"

namespace normjit {

enum class NormKind : int { LayerNorm = NJ_LAYERNORM, RMSNorm = NJ_RMSNORM };

// Default means "same as x" wherever a dtype may be left out.
enum class DType : int { Default = NJ_DTYPE_DEFAULT, F32 = NJ_F32, F16 = NJ_F16, BF16 = NJ_BF16 };

// One backward problem: everything that changes the generated code.
struct NormProblem {
  NormKind kind = NormKind::LayerNorm;
  int64_t n = 0;                       // hidden size (row length)
  DType x_dtype = DType::F32;          // storage dtype of x
  DType dy_dtype = DType::Default;     // storage dtype of dy (default: x)
  DType dx_dtype = DType::Default;     // storage dtype of dx (default: x)
  DType weight_dtype = DType::Default; // gamma/beta and dgamma/dbeta: fp32 or x's dtype (default: x)
  bool has_weight = true;              // affine: gamma present, dgamma written
  bool has_bias = false;               // LayerNorm only: dbeta written
  int alignment = 16;                  // bytes every row of x, dy, dx is aligned to (power of two, <= 16);
                                       // the engine lowers it to what the actual pointers and strides allow
};

// Pointers and shapes of one call. Strides are in elements; 0 means contiguous (n).
struct BackwardArgs {
  int64_t m = 0;
  const void* x = nullptr;
  int64_t x_stride = 0;
  const void* dy = nullptr;
  int64_t dy_stride = 0;
  const float* mean = nullptr;  // LayerNorm only, one per row
  const float* rstd = nullptr;  // one per row
  const void* weight = nullptr; // gamma, when has_weight
  void* dx = nullptr;
  int64_t dx_stride = 0;
  void* dweight = nullptr;      // when has_weight
  void* dbias = nullptr;        // when has_bias (LayerNorm)
  void* workspace = nullptr;    // null: normjit allocates stream-ordered
  size_t workspace_bytes = 0;
};

}  // namespace normjit
