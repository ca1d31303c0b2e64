// Host-side conversions between float and the two 16-bit float formats the kernels read and
// write. Rounding is to nearest, ties to even (what CUDA's __float2half_rn / __float2bfloat16_rn
// do); Inf stays Inf, NaN stays NaN (quieted, sign kept), subnormal fp16 values are exact.
#pragma once
#include <cstdint>

namespace normjit::test {

uint16_t float_to_fp16(float value);
float fp16_to_float(uint16_t bits);

uint16_t float_to_bf16(float value);
float bf16_to_float(uint16_t bits);

}  // namespace normjit::test
