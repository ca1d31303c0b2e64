#include "compare.h"

#include <math.h>
#include <stdio.h>

#include "dtype.h"

double tolerance_for(nj_dtype x_dtype) { return x_dtype == NJ_F32 ? 1e-5 : 1e-2; }

int compare_output(const char* name, nj_dtype dtype, const void* got, const expected* want, double tolerance) {
  double worst = 0;
  size_t worst_at = 0, bad = 0;
  for (size_t i = 0; i < want->count; ++i) {
    const double value = dtype_load(dtype, got, i);
    double error;
    if (!isfinite(value))
      error = INFINITY; /* the 0xFF poison reads as NaN: an element never written lands here */
    else if (want->scale[i] > 0)
      error = fabs(value - want->ref[i]) / want->scale[i];
    else
      error = value == want->ref[i] ? 0.0 : INFINITY;
    if (!(error <= tolerance)) ++bad;
    if (error > worst) {
      worst = error;
      worst_at = i;
    }
  }
  if (want->count == 0) {
    printf("  %-7s nothing to compare\n", name);
    return 1;
  }
  printf("  %-7s worst rel. error %.2e at [%zu] (got %.9g, want %.9g) over %zu elements: %s\n", name, worst,
         worst_at, (double)dtype_load(dtype, got, worst_at), want->ref[worst_at], want->count,
         bad ? "MISMATCH" : "ok");
  if (bad) printf("          %zu of %zu elements over the tolerance %.0e\n", bad, want->count, tolerance);
  return bad == 0;
}
