#include "host_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"

static const double kEpsilon = 1e-5; /* the forward pass's epsilon, as in most models */

nj_problem case_problem(const case_spec* spec) {
  nj_problem p;
  memset(&p, 0, sizeof p); /* zero = defaults: dy and dx in x's dtype, alignment 16 */
  p.kind = spec->kind;
  p.n = spec->n;
  p.x_dtype = spec->x_dtype;
  p.weight_dtype = spec->weight_dtype;
  p.has_weight = 1;
  p.has_bias = spec->kind == NJ_LAYERNORM;
  return p;
}

void case_describe(const case_spec* spec, char* out, size_t out_size) {
  snprintf(out, out_size, "%s %s (%s %s), M x N = %lld x %lld", spec->kind == NJ_LAYERNORM ? "LayerNorm" : "RMSNorm",
           dtype_name(spec->x_dtype), dtype_name(spec->weight_dtype),
           spec->kind == NJ_LAYERNORM ? "gamma/beta" : "gamma", (long long)spec->m, (long long)spec->n);
}

/* splitmix64: small, seedable, and the same sequence on every platform. */
static uint64_t next_u64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A standard normal sample (Box-Muller); u1 is kept away from 0 so log() stays finite. */
static double next_normal(uint64_t* state) {
  const double u1 = ((double)(next_u64(state) >> 11) + 1.0) / 9007199254740993.0;
  const double u2 = (double)(next_u64(state) >> 11) / 9007199254740992.0;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static int expected_alloc(expected* e, size_t count) {
  e->count = count;
  e->ref = calloc(count ? count : 1, sizeof(double));
  e->scale = calloc(count ? count : 1, sizeof(double));
  return e->ref && e->scale;
}

static void expected_free(expected* e) {
  free(e->ref);
  free(e->scale);
  memset(e, 0, sizeof *e);
}

void host_case_free(host_case* c) {
  free(c->x);
  free(c->dy);
  free(c->mean);
  free(c->rstd);
  free(c->gamma);
  expected_free(&c->dx);
  expected_free(&c->dgamma);
  expected_free(&c->dbeta);
  memset(c, 0, sizeof *c);
}

/* The formulas of README.md ("The operation") in double, on the values as stored. */
static int reference(host_case* c) {
  const case_spec* s = &c->spec;
  const int layer_norm = s->kind == NJ_LAYERNORM;
  const size_t n = (size_t)s->n;
  double* xhat = malloc(n * sizeof(double));
  double* g = malloc(n * sizeof(double));
  if (!xhat || !g) {
    free(xhat);
    free(g);
    return 0;
  }
  for (size_t row = 0; row < (size_t)s->m; ++row) {
    const double rstd = c->rstd[row], mean = layer_norm ? c->mean[row] : 0.0;
    double mean_g = 0, mean_gx = 0, mean_abs_g = 0, mean_abs_gx = 0;
    for (size_t col = 0; col < n; ++col) {
      const size_t i = row * n + col;
      const double dy = dtype_load(s->x_dtype, c->dy, i);
      xhat[col] = ((double)dtype_load(s->x_dtype, c->x, i) - mean) * rstd;
      g[col] = dy * (double)dtype_load(s->weight_dtype, c->gamma, col);
      mean_g += g[col] / (double)n;
      mean_gx += g[col] * xhat[col] / (double)n;
      mean_abs_g += fabs(g[col]) / (double)n;
      mean_abs_gx += fabs(g[col] * xhat[col]) / (double)n;
      c->dgamma.ref[col] += dy * xhat[col];
      c->dgamma.scale[col] += fabs(dy * xhat[col]);
      if (layer_norm) {
        c->dbeta.ref[col] += dy;
        c->dbeta.scale[col] += fabs(dy);
      }
    }
    for (size_t col = 0; col < n; ++col) {
      const size_t i = row * n + col;
      c->dx.ref[i] = rstd * (g[col] - (layer_norm ? mean_g : 0.0) - xhat[col] * mean_gx);
      c->dx.scale[i] = rstd * (fabs(g[col]) + (layer_norm ? mean_abs_g : 0.0) + fabs(xhat[col]) * mean_abs_gx);
    }
  }
  free(xhat);
  free(g);
  return 1;
}

int host_case_build(const case_spec* spec, uint64_t seed, host_case* out) {
  memset(out, 0, sizeof *out);
  out->spec = *spec;
  const int layer_norm = spec->kind == NJ_LAYERNORM;
  const size_t m = (size_t)spec->m, n = (size_t)spec->n, count = m * n;
  const size_t es = dtype_size(spec->x_dtype);
  out->x = malloc(count * es);
  out->dy = malloc(count * es);
  out->mean = layer_norm ? malloc(m * sizeof(float)) : NULL;
  out->rstd = malloc(m * sizeof(float));
  out->gamma = malloc(n * dtype_size(spec->weight_dtype));
  int ok = out->x && out->dy && (out->mean || !layer_norm) && out->rstd && out->gamma &&
           expected_alloc(&out->dx, count) && expected_alloc(&out->dgamma, n) &&
           expected_alloc(&out->dbeta, layer_norm ? n : 0);
  if (!ok) {
    host_case_free(out);
    return 0;
  }
  uint64_t state = seed;
  /* x off-centre and wider than 1 so that the mean and rstd matter; gamma near 1. */
  for (size_t i = 0; i < count; ++i) {
    dtype_store(spec->x_dtype, out->x, i, (float)(0.3 + 1.5 * next_normal(&state)));
    dtype_store(spec->x_dtype, out->dy, i, (float)next_normal(&state));
  }
  for (size_t col = 0; col < n; ++col)
    dtype_store(spec->weight_dtype, out->gamma, col, (float)(1.0 + 0.25 * next_normal(&state)));
  /* The statistics the forward pass saves: fp32, from the stored x. */
  for (size_t row = 0; row < m; ++row) {
    double sum = 0, sum_sq = 0;
    for (size_t col = 0; col < n; ++col) sum += dtype_load(spec->x_dtype, out->x, row * n + col);
    const double mean = layer_norm ? sum / (double)n : 0.0;
    for (size_t col = 0; col < n; ++col) {
      const double d = dtype_load(spec->x_dtype, out->x, row * n + col) - mean;
      sum_sq += d * d;
    }
    if (layer_norm) out->mean[row] = (float)mean;
    out->rstd[row] = (float)(1.0 / sqrt(sum_sq / (double)n + kEpsilon));
  }
  if (!reference(out)) {
    host_case_free(out);
    return 0;
  }
  return 1;
}
