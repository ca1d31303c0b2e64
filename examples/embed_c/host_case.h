/* One backward problem as the host sees it: seeded inputs, the statistics a forward pass would
 * have saved, and the expected outputs from a double-precision reference. */
#ifndef EMBED_C_HOST_CASE_H
#define EMBED_C_HOST_CASE_H

#include <normjit/normjit.h>
#include <stdint.h>

/* What is run: x, dy and dx share x_dtype; gamma/dgamma/dbeta are in weight_dtype. */
typedef struct case_spec {
  nj_norm_kind kind;
  int64_t m, n;
  nj_dtype x_dtype;
  nj_dtype weight_dtype;
} case_spec;

/* The normjit problem a case_spec stands for (gamma always; beta for LayerNorm). */
nj_problem case_problem(const case_spec* spec);

/* "LayerNorm bf16 (fp32 gamma/beta), M x N = 37 x 1000" */
void case_describe(const case_spec* spec, char* out, size_t out_size);

/* One expected output: ref is the exact result of the formulas on the stored (rounded) inputs;
 * scale is, per element, the sum of the magnitudes of the terms that make it up. An error is
 * measured against scale, not against |ref|: a result that cancels to nearly zero (RMSNorm
 * over N = 1) cannot carry more digits than the terms it came from. */
typedef struct expected {
  double* ref;
  double* scale;
  size_t count;
} expected;

typedef struct host_case {
  case_spec spec;
  void* x;      /* m*n, x_dtype */
  void* dy;     /* m*n, x_dtype */
  float* mean;  /* m (LayerNorm only, else NULL) */
  float* rstd;  /* m */
  void* gamma;  /* n, weight_dtype */
  expected dx, dgamma, dbeta; /* dbeta.count = 0 for RMSNorm */
} host_case;

/* Fills a host_case from a seed. Returns 0 when memory ran out (everything freed again). */
int host_case_build(const case_spec* spec, uint64_t seed, host_case* out);
void host_case_free(host_case* c);

#endif
