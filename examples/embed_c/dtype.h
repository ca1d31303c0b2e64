/* Host-side storage of the three element types normjit reads and writes: fp32, fp16, bf16.
 * C has no 16-bit float types, so 16-bit values are kept as their bit patterns. */
#ifndef EMBED_C_DTYPE_H
#define EMBED_C_DTYPE_H

#include <normjit/normjit.h>
#include <stddef.h>

size_t dtype_size(nj_dtype dtype);       /* bytes per element */
const char* dtype_name(nj_dtype dtype);  /* "fp32", "fp16", "bf16" */

/* Element i of an array of dtype, widened to float (exactly: every fp16/bf16 value is a float). */
float dtype_load(nj_dtype dtype, const void* array, size_t i);

/* Stores value into element i, rounded to nearest even as the GPU's conversions do. */
void dtype_store(nj_dtype dtype, void* array, size_t i, float value);

/* Checks the conversions above on every fp16 and bf16 bit pattern (each must come back from
 * float unchanged) and on ties between neighbours (each must go to the even one). Returns 1
 * when all hold; otherwise 0, with the first failure in why. Runs on the CPU, so CI covers the
 * code the device comparison depends on. */
int dtype_self_check(char* why, size_t why_size);

#endif
