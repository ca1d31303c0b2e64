#include "support/reference.h"

#include <cmath>
#include <limits>

#include "support/norm_inputs.h"
#include "support/parallel.h"

namespace normjit::test {
namespace {

double square_if_finite(double v) { return std::isfinite(v) ? v * v : 0.0; }

// Per-chunk sums of a parallel loop, added in chunk order so the result does not depend on
// thread timing.
struct ChunkSums {
  std::vector<double> dweight, dbias, dweight1, dbias1;
  double dx_terms = 0, dweight_terms = 0, dbias_terms = 0, dresidual_in_terms = 0, dz_terms = 0;
  double dweight1_terms = 0, dbias1_terms = 0;
};

}  // namespace

double silu(double z) { return z / (1.0 + std::exp(-z)); }
double silu_grad(double z) {
  const double s = 1.0 / (1.0 + std::exp(-z));
  return s * (1.0 + z * (1.0 - s));
}

ReferenceGrads reference_backward(const ReferenceProblem& p) {
  const int64_t m = p.m, n = p.n;
  const bool layer_norm = p.kind == NormKind::LayerNorm;
  const bool has_weight = p.weight != nullptr;
  ReferenceGrads out;
  out.dx.assign(static_cast<size_t>(m * n), 0.0);
  if (has_weight) out.dweight.assign(static_cast<size_t>(n), 0.0);
  if (p.has_bias) out.dbias.assign(static_cast<size_t>(n), 0.0);
  const bool scales_branch = p.rowscale || p.keep;
  if (scales_branch) out.dresidual_in.assign(static_cast<size_t>(m * n), 0.0);
  const bool gate_before = p.gate == Gate::BeforeNorm, gate_after = p.gate == Gate::AfterNorm;
  if (p.gate != Gate::None) out.dz.assign(static_cast<size_t>(m * n), 0.0);
  const bool parallel = p.dy1 != nullptr;
  if (parallel && has_weight) out.dweight1.assign(static_cast<size_t>(n), 0.0);
  if (parallel && p.has_bias) out.dbias1.assign(static_cast<size_t>(n), 0.0);
  const double gamma_shift = p.zero_centered_weight ? 1.0 : 0.0;
  const bool recompute = p.y != nullptr;

  std::vector<ChunkSums> chunks(static_cast<size_t>(row_chunk_count(m, n)));
  parallel_for_rows(m, n, [&](int64_t chunk, int64_t first, int64_t end) {
    ChunkSums& sums = chunks[chunk];
    if (has_weight) sums.dweight.assign(static_cast<size_t>(n), 0.0);
    if (p.has_bias) sums.dbias.assign(static_cast<size_t>(n), 0.0);
    sums.dweight1.assign(out.dweight1.size(), 0.0);
    sums.dbias1.assign(out.dbias1.size(), 0.0);
    std::vector<double> xhat(static_cast<size_t>(n)), g(static_cast<size_t>(n)), dy_norm(static_cast<size_t>(n));
    for (int64_t r = first; r < end; ++r) {
      const double* x = p.x ? p.x + r * n : nullptr;  // null: recompute without x
      const double* dy = p.dy + r * n;
      const double* z = p.z ? p.z + r * n : nullptr;
      const double rstd = p.rstd[r];
      const double mean = layer_norm ? p.mean[r] : 0.0;
      double sum_g = 0, sum_gx = 0;
      for (int64_t c = 0; c < n; ++c) {
        // The norm's input and output gradient: gated before or after the norm.
        const double norm_input = !x ? 0.0 : gate_before ? x[c] * silu(z[c]) : x[c];
        dy_norm[c] = gate_after ? dy[c] * silu(z[c]) : dy[c];
        const double gamma = has_weight ? p.weight[c] + gamma_shift : 1.0;
        bool unknown = false;  // recompute: γ = 0 and no x
        if (!recompute) {
          xhat[c] = (norm_input - mean) * rstd;
        } else if (gamma != 0) {
          xhat[c] = (p.y[r * n + c] - (p.bias ? p.bias[c] : 0.0)) / gamma;
        } else {
          unknown = x == nullptr;
          xhat[c] = unknown ? std::numeric_limits<double>::quiet_NaN() : (x[c] - mean) * rstd;
        }
        g[c] = has_weight ? dy_norm[c] * gamma : dy_norm[c];
        if (parallel) g[c] += has_weight ? p.dy1[r * n + c] * (p.weight1[c] + gamma_shift) : p.dy1[r * n + c];
        sum_g += g[c];
        sum_gx += unknown ? g[c] * 0.0 : g[c] * xhat[c];
      }
      const double mean_g = layer_norm ? sum_g / n : 0.0;
      const double mean_gx = sum_gx / n;
      double* dx = out.dx.data() + r * n;
      const double row_scale = p.rowscale ? p.rowscale[r] : 1.0;
      for (int64_t c = 0; c < n; ++c) {
        const double d_norm_input = rstd * (g[c] - mean_g - xhat[c] * mean_gx);
        // Before the norm, x reaches its input through xg = x·silu(z).
        const double input_scale = gate_before ? silu(z[c]) : 1.0;
        if (gate_before) {
          out.dz[r * n + c] = d_norm_input * x[c] * silu_grad(z[c]);
          sums.dz_terms += square_if_finite(rstd * g[c] * x[c] * silu_grad(z[c]));
        } else if (gate_after) {
          const double gamma = has_weight ? p.weight[c] + gamma_shift : 1.0;
          out.dz[r * n + c] = dy[c] * xhat[c] * gamma * silu_grad(z[c]);
          sums.dz_terms += square_if_finite(out.dz[r * n + c]);
        }
        double dh = d_norm_input * input_scale;
        const double residual = p.dresidual ? p.dresidual[r * n + c] : 0.0;
        dh += residual;
        // dx_in = dh·rowscale·keep/(1 − p); a product, so a NaN in a dropped element stays NaN.
        const double scale = row_scale * (p.keep ? p.keep[r * n + c] / (1.0 - p.dropout_p) : 1.0);
        dx[c] = dh * scale;
        if (scales_branch) {
          out.dresidual_in[r * n + c] = dh;
          sums.dresidual_in_terms += square_if_finite(rstd * g[c] * input_scale) + square_if_finite(residual);
        }
        sums.dx_terms += square_if_finite(rstd * g[c] * input_scale * scale) + square_if_finite(residual * scale);
        if (has_weight) {
          sums.dweight[c] += dy_norm[c] * xhat[c];
          sums.dweight_terms += square_if_finite(dy_norm[c] * xhat[c]);
        }
        if (p.has_bias) {
          sums.dbias[c] += dy_norm[c];
          sums.dbias_terms += square_if_finite(dy_norm[c]);
        }
        if (parallel) {
          const double dy1 = p.dy1[r * n + c];
          if (has_weight) {
            sums.dweight1[c] += dy1 * xhat[c];
            sums.dweight1_terms += square_if_finite(dy1 * xhat[c]);
          }
          if (p.has_bias) {
            sums.dbias1[c] += dy1;
            sums.dbias1_terms += square_if_finite(dy1);
          }
        }
      }
    }
  });

  double dx_terms = 0, dweight_terms = 0, dbias_terms = 0, dresidual_in_terms = 0, dz_terms = 0;
  for (const ChunkSums& sums : chunks) {
    dresidual_in_terms += sums.dresidual_in_terms;
    dz_terms += sums.dz_terms;
    for (size_t c = 0; c < sums.dweight1.size(); ++c) out.dweight1[c] += sums.dweight1[c];
    for (size_t c = 0; c < sums.dbias1.size(); ++c) out.dbias1[c] += sums.dbias1[c];
    out.dweight1_term_norm += sums.dweight1_terms;  // squares until the square root below
    out.dbias1_term_norm += sums.dbias1_terms;
    for (size_t c = 0; c < sums.dweight.size(); ++c) out.dweight[c] += sums.dweight[c];
    for (size_t c = 0; c < sums.dbias.size(); ++c) out.dbias[c] += sums.dbias[c];
    dx_terms += sums.dx_terms;
    dweight_terms += sums.dweight_terms;
    dbias_terms += sums.dbias_terms;
  }
  out.dx_term_norm = std::sqrt(dx_terms);
  out.dweight_term_norm = std::sqrt(dweight_terms);
  out.dbias_term_norm = std::sqrt(dbias_terms);
  out.dresidual_in_term_norm = std::sqrt(dresidual_in_terms);
  out.dz_term_norm = std::sqrt(dz_terms);
  out.dweight1_term_norm = std::sqrt(out.dweight1_term_norm);
  out.dbias1_term_norm = std::sqrt(out.dbias1_term_norm);
  return out;
}

namespace {

// The first `rows` rows of n values of t, as doubles, row after row (a vector of γ: rows = 1).
std::vector<double> as_doubles(const HostTensor& t, int64_t rows, int64_t n) {
  std::vector<double> out(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) out[r * n + c] = t.get(r, c);
  return out;
}

}  // namespace

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
  const std::vector<double> weight = in.problem.has_weight ? as_doubles(in.weight, 1, n) : std::vector<double>{};

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

  // Fused options.
  const NormProblem& problem = in.problem;
  const FusedInputs& f = in.fused;
  p.zero_centered_weight = problem.zero_centered_weight;
  std::vector<double> dresidual, rowscale(f.rowscale.begin(), f.rowscale.end()), keep, z;
  if (problem.residual) {
    dresidual = as_doubles(f.dresidual, m, n);
    p.dresidual = dresidual.data();
  }
  if (problem.rowscale) p.rowscale = rowscale.data();
  if (problem.dropout != DropoutMask::None) {
    keep.resize(static_cast<size_t>(m * n));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) keep[r * n + c] = f.kept(problem.dropout, r, c) ? 1.0 : 0.0;
    p.keep = keep.data();
    p.dropout_p = f.dropout_p;
  }
  std::vector<double> dy1, weight1;
  if (problem.parallel) {
    dy1 = as_doubles(f.dy1, m, n);
    p.dy1 = dy1.data();
    if (problem.has_weight) {
      weight1 = as_doubles(f.weight1, 1, n);
      p.weight1 = weight1.data();
    }
  }
  std::vector<double> y, bias;
  if (problem.recompute_from_output) {
    y = as_doubles(f.y, m, n);
    p.y = y.data();
    if (problem.has_bias) {
      bias = as_doubles(f.bias, 1, n);
      p.bias = bias.data();
    }
    if (!f.x_given) p.x = nullptr;  // the kernel is given no x either
  }
  if (problem.gate != Gate::None) {
    z = as_doubles(f.z, m, n);
    p.gate = problem.gate;
    p.z = z.data();
  }
  return reference_backward(p);
}

ForwardReference reference_forward(NormKind kind, int64_t m, int64_t n, const double* x, const double* weight,
                                   const double* bias, bool zero_centered_weight, double eps) {
  ForwardReference out;
  out.y.assign(static_cast<size_t>(m * n), 0.0);
  out.mean.assign(static_cast<size_t>(m), 0.0);
  out.rstd.assign(static_cast<size_t>(m), 0.0);
  const double shift = zero_centered_weight ? 1.0 : 0.0;
  double terms = 0;
  for (int64_t r = 0; r < m; ++r) {
    const double* row = x + r * n;
    double mean = 0;
    if (kind == NormKind::LayerNorm) {
      for (int64_t c = 0; c < n; ++c) mean += row[c];
      mean /= static_cast<double>(n);
    }
    double squares = 0;
    for (int64_t c = 0; c < n; ++c) squares += (row[c] - mean) * (row[c] - mean);
    const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(n) + eps);
    out.mean[r] = mean;
    out.rstd[r] = rstd;
    for (int64_t c = 0; c < n; ++c) {
      const double scaled = (row[c] - mean) * rstd * (weight ? weight[c] + shift : 1.0);
      const double b = bias ? bias[c] : 0.0;
      out.y[r * n + c] = scaled + b;
      if (std::isfinite(scaled)) terms += scaled * scaled;
      if (std::isfinite(b)) terms += b * b;
    }
  }
  out.y_term_norm = std::sqrt(terms);
  return out;
}

}  // namespace normjit::test
