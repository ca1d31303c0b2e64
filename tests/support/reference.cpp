#include "support/reference.h"

#include <cmath>

#include "support/norm_inputs.h"
#include "support/parallel.h"

namespace normjit::test {
namespace {

double square_if_finite(double v) { return std::isfinite(v) ? v * v : 0.0; }

// Per-chunk sums of a parallel loop, added in chunk order so the result does not depend on
// thread timing.
struct ChunkSums {
  std::vector<double> dweight, dbias;
  double dx_terms = 0, dweight_terms = 0, dbias_terms = 0;
};

}  // namespace

ReferenceGrads reference_backward(const ReferenceProblem& p) {
  const int64_t m = p.m, n = p.n;
  const bool layer_norm = p.kind == NormKind::LayerNorm;
  const bool has_weight = p.weight != nullptr;
  ReferenceGrads out;
  out.dx.assign(static_cast<size_t>(m * n), 0.0);
  if (has_weight) out.dweight.assign(static_cast<size_t>(n), 0.0);
  if (p.has_bias) out.dbias.assign(static_cast<size_t>(n), 0.0);

  std::vector<ChunkSums> chunks(static_cast<size_t>(row_chunk_count(m, n)));
  parallel_for_rows(m, n, [&](int64_t chunk, int64_t first, int64_t end) {
    ChunkSums& sums = chunks[chunk];
    if (has_weight) sums.dweight.assign(static_cast<size_t>(n), 0.0);
    if (p.has_bias) sums.dbias.assign(static_cast<size_t>(n), 0.0);
    std::vector<double> xhat(static_cast<size_t>(n)), g(static_cast<size_t>(n));
    for (int64_t r = first; r < end; ++r) {
      const double* x = p.x + r * n;
      const double* dy = p.dy + r * n;
      const double rstd = p.rstd[r];
      const double mean = layer_norm ? p.mean[r] : 0.0;
      double sum_g = 0, sum_gx = 0;
      for (int64_t c = 0; c < n; ++c) {
        xhat[c] = (x[c] - mean) * rstd;
        g[c] = has_weight ? dy[c] * p.weight[c] : dy[c];
        sum_g += g[c];
        sum_gx += g[c] * xhat[c];
      }
      const double mean_g = layer_norm ? sum_g / n : 0.0;
      const double mean_gx = sum_gx / n;
      double* dx = out.dx.data() + r * n;
      for (int64_t c = 0; c < n; ++c) {
        dx[c] = rstd * (g[c] - mean_g - xhat[c] * mean_gx);
        sums.dx_terms += square_if_finite(rstd * g[c]);
        if (has_weight) {
          sums.dweight[c] += dy[c] * xhat[c];
          sums.dweight_terms += square_if_finite(dy[c] * xhat[c]);
        }
        if (p.has_bias) {
          sums.dbias[c] += dy[c];
          sums.dbias_terms += square_if_finite(dy[c]);
        }
      }
    }
  });

  double dx_terms = 0, dweight_terms = 0, dbias_terms = 0;
  for (const ChunkSums& sums : chunks) {
    for (size_t c = 0; c < sums.dweight.size(); ++c) out.dweight[c] += sums.dweight[c];
    for (size_t c = 0; c < sums.dbias.size(); ++c) out.dbias[c] += sums.dbias[c];
    dx_terms += sums.dx_terms;
    dweight_terms += sums.dweight_terms;
    dbias_terms += sums.dbias_terms;
  }
  out.dx_term_norm = std::sqrt(dx_terms);
  out.dweight_term_norm = std::sqrt(dweight_terms);
  out.dbias_term_norm = std::sqrt(dbias_terms);
  return out;
}

ReferenceGrads reference_backward(const NormInputs& in) {
  const int64_t m = in.m, n = in.n();
  std::vector<double> x(static_cast<size_t>(m * n)), dy(static_cast<size_t>(m * n));
  parallel_for_rows(m, 2 * n, [&](int64_t, int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r)
      for (int64_t c = 0; c < n; ++c) {
        x[r * n + c] = in.x.get(r, c);
        dy[r * n + c] = in.dy.get(r, c);
      }
  });
  const std::vector<double> mean(in.mean.begin(), in.mean.end());
  const std::vector<double> rstd(in.rstd.begin(), in.rstd.end());
  std::vector<double> weight;
  if (in.problem.has_weight)
    for (int64_t c = 0; c < n; ++c) weight.push_back(in.weight.get(0, c));

  ReferenceProblem p;
  p.kind = in.problem.kind;
  p.m = m;
  p.n = n;
  p.x = x.data();
  p.dy = dy.data();
  p.mean = in.problem.kind == NormKind::LayerNorm ? mean.data() : nullptr;
  p.rstd = rstd.data();
  p.weight = in.problem.has_weight ? weight.data() : nullptr;
  p.has_bias = in.problem.has_bias;
  return reference_backward(p);
}

}  // namespace normjit::test
