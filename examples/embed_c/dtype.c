#include "dtype.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

size_t dtype_size(nj_dtype dtype) { return dtype == NJ_F32 ? 4 : 2; }

const char* dtype_name(nj_dtype dtype) {
  switch (dtype) {
    case NJ_F32: return "fp32";
    case NJ_F16: return "fp16";
    case NJ_BF16: return "bf16";
    default: return "default";
  }
}

static uint32_t float_bits(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

static float bits_float(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint16_t float_to_bf16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40u); /* NaN stays NaN */
  x += 0x7FFFu + ((x >> 16) & 1u);                                             /* round to nearest even */
  return (uint16_t)(x >> 16);
}

/* Round to nearest even: drop `shift` low bits of value, rounding on what was dropped. */
static uint32_t round_shift(uint32_t value, int shift) {
  const uint32_t kept = value >> shift, rest = value & ((1u << shift) - 1u), half = 1u << (shift - 1);
  return kept + (rest > half || (rest == half && (kept & 1u)));
}

static uint16_t float_to_f16(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  const uint32_t exponent = (x >> 23) & 0xFFu, mantissa = x & 0x7FFFFFu;
  if (exponent == 0xFFu) return (uint16_t)(sign | 0x7C00u | (mantissa ? 0x200u : 0u)); /* inf, NaN */
  const int e = (int)exponent - 127 + 15; /* the fp16 biased exponent */
  if (e >= 31) return (uint16_t)(sign | 0x7C00u); /* too large: inf */
  if (e <= 0) {                                   /* an fp16 subnormal (units of 2^-24), or zero */
    if (e < -10) return sign;                     /* below half the smallest subnormal */
    return (uint16_t)(sign | round_shift(mantissa | 0x800000u, 14 - e));
  }
  /* A carry out of the mantissa bumps the exponent, and to inf past the largest: both right. */
  return (uint16_t)(sign | round_shift(((uint32_t)e << 23) | mantissa, 13));
}

static float f16_to_float(uint16_t h) {
  const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  if (exponent == 0) return sign * ldexpf((float)mantissa, -24);
  if (exponent == 31) return mantissa ? NAN : sign * INFINITY;
  return sign * ldexpf((float)(mantissa | 0x400), exponent - 25);
}

static float load16(nj_dtype dtype, uint16_t bits) {
  return dtype == NJ_BF16 ? bits_float((uint32_t)bits << 16) : f16_to_float(bits);
}

static uint16_t store16(nj_dtype dtype, float value) {
  return dtype == NJ_BF16 ? float_to_bf16(value) : float_to_f16(value);
}

float dtype_load(nj_dtype dtype, const void* array, size_t i) {
  if (dtype == NJ_F32) return ((const float*)array)[i];
  return load16(dtype, ((const uint16_t*)array)[i]);
}

void dtype_store(nj_dtype dtype, void* array, size_t i, float value) {
  if (dtype == NJ_F32)
    ((float*)array)[i] = value;
  else
    ((uint16_t*)array)[i] = store16(dtype, value);
}

int dtype_self_check(char* why, size_t why_size) {
  const nj_dtype dtypes[] = {NJ_F16, NJ_BF16};
  for (int d = 0; d < 2; ++d) {
    const nj_dtype dtype = dtypes[d];
    for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
      const uint16_t h = (uint16_t)bits;
      const float value = load16(dtype, h);
      if (isnan(value)) continue;
      uint16_t back = store16(dtype, value);
      if (back != h) {
        snprintf(why, why_size, "%s 0x%04x -> %.9g -> 0x%04x", dtype_name(dtype), (unsigned)h, (double)value,
                 (unsigned)back);
        return 0;
      }
      /* Halfway to the next pattern up (same sign, finite, non-zero magnitude steps): a tie. */
      const uint16_t next = (uint16_t)(h + 1);
      const float above = load16(dtype, next);
      if ((h & 0x7FFFu) == 0x7FFFu || isnan(above) || isinf(above) || isinf(value)) continue;
      const float mid = (float)(((double)value + (double)above) / 2);
      if ((double)mid != ((double)value + (double)above) / 2) continue; /* not exact in float */
      back = store16(dtype, mid);
      const uint16_t even = (h & 1u) ? next : h;
      if (back != even) {
        snprintf(why, why_size, "%s tie %.9g between 0x%04x and 0x%04x went to 0x%04x", dtype_name(dtype),
                 (double)mid, (unsigned)h, (unsigned)next, (unsigned)back);
        return 0;
      }
    }
  }
  return 1;
}
