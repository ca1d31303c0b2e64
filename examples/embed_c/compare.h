/* Compares one output copied back from the GPU with its expected values. */
#ifndef EMBED_C_COMPARE_H
#define EMBED_C_COMPARE_H

#include <normjit/normjit.h>

#include "host_case.h"

/* Relative error allowed: fp32 problems 1e-5; problems with 16-bit x/dy/dx 1e-2 (their dx is
 * rounded to 8 or 11 significant bits). */
double tolerance_for(nj_dtype x_dtype);

/* Each element's error is |got - ref| / scale (host_case.h says why scale, not |ref|); an
 * element whose scale is 0 must equal ref exactly, and NaN or inf never passes. Prints one
 * line ("  dx     worst rel. error 3.1e-07 at [12] ... ok") and returns 1 when every element is
 * within tolerance. */
int compare_output(const char* name, nj_dtype dtype, const void* got, const expected* want, double tolerance);

#endif
