#include "support/float16.h"

#include <cstring>

namespace normjit::test {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// value >> shift, rounded to nearest with ties to even.
uint32_t shift_right_rne(uint32_t value, int shift) {
  const uint32_t kept = value >> shift;
  const uint32_t dropped = value & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return kept + (dropped > half || (dropped == half && (kept & 1)) ? 1 : 0);
}

constexpr uint32_t kF32Inf = 0x7F800000;
constexpr uint32_t kF16Overflow = 0x477FF000;   // 65520: halfway between 65504 (max) and 2^16
constexpr uint32_t kF16MinNormal = 0x38800000;  // 2^-14
constexpr uint32_t kF16HalfMinSubnormal = 0x33000000;  // 2^-25: ties to 0, the even neighbour

}  // namespace

uint16_t float_to_fp16(float value) {
  const uint32_t u = bits_of(value);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const uint32_t magnitude = u & 0x7FFFFFFF;
  if (magnitude > kF32Inf)  // NaN: keep the top payload bits and set the quiet bit
    return sign | 0x7E00 | static_cast<uint16_t>((magnitude >> 13) & 0x3FF);
  if (magnitude >= kF16Overflow) return sign | 0x7C00;  // rounds to Inf (Inf included)
  if (magnitude <= kF16HalfMinSubnormal) return sign;   // rounds to ±0
  if (magnitude < kF16MinNormal) {
    // Subnormal result: the significand (implicit bit included) in units of 2^-24.
    const int exponent = static_cast<int>(magnitude >> 23);
    const uint32_t significand = (magnitude & 0x7FFFFF) | 0x800000;
    // value = significand · 2^(exponent − 150) = significand · 2^(exponent − 126) · 2^-24
    // (a carry into 0x400 is exactly the smallest normal's encoding)
    return sign | static_cast<uint16_t>(shift_right_rne(significand, 126 - exponent));
  }
  // Normal: rebias the exponent (127 → 15) and round the 23-bit mantissa to 10 bits; a carry
  // out of the mantissa correctly bumps the exponent (never to Inf: that case was handled).
  const uint32_t rebiased = magnitude - ((127u - 15u) << 23);
  return sign | static_cast<uint16_t>(shift_right_rne(rebiased, 13));
}

float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1F;
  const uint32_t mantissa = h & 0x3FF;
  if (exponent == 0) {
    // ±0 or subnormal: mantissa · 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * float_of(0x33800000);  // 2^-24
    return float_of(sign | bits_of(magnitude));
  }
  if (exponent == 31) return float_of(sign | kF32Inf | (mantissa << 13));  // Inf or NaN
  return float_of(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

uint16_t float_to_bf16(float value) {
  const uint32_t u = bits_of(value);
  // NaN: truncating could leave an all-zero mantissa (Inf), so set the quiet bit.
  if ((u & 0x7FFFFFFF) > kF32Inf) return static_cast<uint16_t>((u >> 16) | 0x0040);
  // Overflow past the largest bf16 carries into the exponent and gives Inf, as it should.
  return static_cast<uint16_t>(shift_right_rne(u, 16));
}

float bf16_to_float(uint16_t bits) { return float_of(static_cast<uint32_t>(bits) << 16); }

}  // namespace normjit::test
