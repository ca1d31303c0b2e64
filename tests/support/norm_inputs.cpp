#include "support/norm_inputs.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "support/parallel.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"

namespace normjit::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Streams of the seed: one per row for x and dy, one for γ; the fused inputs' rows take
// streams of their own, far above any row number.
constexpr uint64_t kWeightStream = ~0ull;
constexpr uint64_t kRowScaleStream = ~0ull - 1;
constexpr uint64_t kResidualStreams = 1ull << 48;
constexpr uint64_t kMaskStreams = 2ull << 48;
constexpr uint64_t kGateStreams = 3ull << 48;
constexpr uint64_t kSecondNormStreams = 4ull << 48;
constexpr uint64_t kWeight1Stream = ~0ull - 2;
constexpr uint64_t kBiasStream = ~0ull - 3;
constexpr int64_t kMaskRowPadding = 3;  // garbage bytes after each mask row: the stride is used

double log_uniform(Rng& rng, double lo, double hi) { return std::exp(rng.uniform(std::log(lo), std::log(hi))); }

void poison_gaps(HostTensor& t) {
  for (int64_t r = 0; r < t.rows(); ++r)
    for (int64_t c = t.cols(); c < t.stride(); ++c) t.set(r, c, kNaN);
}

// γ as stored: 1 + N(0,1)/4, or its zero-centred form N(0,1)/4 (the same γ).
HostTensor draw_weight(const NormProblem& p, uint64_t seed, uint64_t stream) {
  HostTensor weight(p.weight_dtype, 1, p.n);
  Rng rng(seed, stream);
  const double stored_one = p.zero_centered_weight ? 0.0 : 1.0;
  for (int64_t c = 0; c < p.n; ++c) weight.set(0, c, stored_one + 0.25 * rng.normal());
  return weight;
}

// A gradient-like [m, n] tensor: row r is scale_r·N(0,1), scale_r log-uniform in [1/4, 4],
// drawn from stream first_stream + r; gaps NaN.
HostTensor draw_gradient_rows(DType dtype, int64_t m, int64_t n, int64_t stride, uint64_t seed,
                              uint64_t first_stream) {
  HostTensor t(dtype, m, n, stride);
  parallel_for_rows(m, n, [&](int64_t, int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      Rng rng(seed, first_stream + static_cast<uint64_t>(r));
      const double scale = log_uniform(rng, 1.0 / 4, 4.0);
      for (int64_t c = 0; c < n; ++c) t.set(r, c, scale * rng.normal());
    }
  });
  poison_gaps(t);
  return t;
}

void draw_fused_inputs(NormInputs& in, const FusedSpec& spec) {
  const NormProblem& p = in.problem;
  const int64_t m = in.m, n = p.n;
  FusedInputs& f = in.fused;
  if (p.residual) f.dresidual = draw_gradient_rows(p.dx_dtype, m, n, spec.dresidual_stride, in.seed, kResidualStreams);
  if (p.rowscale) {
    Rng rng(in.seed, kRowScaleStream);
    for (int64_t r = 0; r < m; ++r) f.rowscale.push_back(static_cast<float>(log_uniform(rng, 0.5, 2.0)));
  }
  if (p.dropout != DropoutMask::None) {
    const bool bits = p.dropout == DropoutMask::Bits;
    f.dropout_p = spec.dropout_p;
    f.keep_mask_stride = (bits ? (n + 7) / 8 : n) + kMaskRowPadding;
    f.keep_mask.assign(static_cast<size_t>(m * f.keep_mask_stride), 0);
    for (int64_t r = 0; r < m; ++r) {
      Rng rng(in.seed, kMaskStreams + static_cast<uint64_t>(r));
      unsigned char* row = f.keep_mask.data() + r * f.keep_mask_stride;
      for (int64_t c = 0; c < n; ++c) {
        if (rng.uniform() < spec.dropout_p) continue;  // dropped: 0
        if (bits) row[c / 8] |= static_cast<unsigned char>(1u << (c % 8));
        else row[c] = static_cast<unsigned char>(1 + rng.below(255));
      }
      // Padding past the row (and a bit-packed row's last bits past N) hold garbage.
      for (int64_t b = bits ? (n + 7) / 8 : n; b < f.keep_mask_stride; ++b) row[b] = 0xA5;
      if (bits && n % 8 != 0) row[n / 8] |= static_cast<unsigned char>(0xFFu << (n % 8));
    }
  }
  f.dresidual_in = spec.dresidual_in && (p.rowscale || p.dropout != DropoutMask::None);
  if (p.gate != Gate::None) {
    f.z = HostTensor(p.x_dtype, m, n, spec.z_stride);
    parallel_for_rows(m, n, [&](int64_t, int64_t first, int64_t end) {
      for (int64_t r = first; r < end; ++r) {
        Rng rng(in.seed, kGateStreams + static_cast<uint64_t>(r));
        const double offset = rng.normal(), scale = log_uniform(rng, 1.0 / 2, 4.0);
        for (int64_t c = 0; c < n; ++c) f.z.set(r, c, offset + scale * rng.normal());
      }
    });
    poison_gaps(f.z);
    f.dz_stride = spec.dz_stride == 0 ? n : spec.dz_stride;
  }
  if (p.parallel) {
    f.dy1 = draw_gradient_rows(p.dy_dtype, m, n, spec.dy1_stride, in.seed, kSecondNormStreams);
    if (p.has_weight) f.weight1 = draw_weight(p, in.seed, kWeight1Stream);
  }
  if (p.recompute_from_output) {
    f.x_given = spec.recompute_with_x;
    f.y = HostTensor(p.x_dtype, m, n, spec.y_stride);  // filled by compute_forward_output
    if (p.has_bias) {
      f.bias = HostTensor(p.weight_dtype, 1, n);
      Rng rng(in.seed, kBiasStream);
      for (int64_t c = 0; c < n; ++c) f.bias.set(0, c, 0.5 * rng.normal());
    }
  }
}

}  // namespace

bool FusedInputs::kept(DropoutMask form, int64_t row, int64_t col) const {
  const unsigned char* mask = keep_mask.data() + row * keep_mask_stride;
  return form == DropoutMask::Bits ? (mask[col / 8] >> (col % 8)) & 1 : mask[col] != 0;
}

NormInputs make_inputs(const NormProblem& problem, int64_t m, uint64_t seed, RowStrides strides,
                       const FusedSpec& fused) {
  NormInputs in;
  in.problem = with_concrete_dtypes(problem);
  in.m = m;
  in.seed = seed;
  const NormProblem& p = in.problem;
  const int64_t n = p.n;
  in.x = HostTensor(p.x_dtype, m, n, strides.x);
  in.dy = HostTensor(p.dy_dtype, m, n, strides.dy);
  in.dx_stride = strides.dx == 0 ? n : strides.dx;

  parallel_for_rows(m, 2 * n, [&](int64_t, int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      Rng rng(seed, static_cast<uint64_t>(r));
      const double scale = log_uniform(rng, 1.0 / 8, 8.0);
      const double offset = scale * rng.normal();
      const double dy_scale = log_uniform(rng, 1.0 / 4, 4.0);
      for (int64_t c = 0; c < n; ++c) in.x.set(r, c, offset + scale * rng.normal());
      for (int64_t c = 0; c < n; ++c) in.dy.set(r, c, dy_scale * rng.normal());
    }
  });
  poison_gaps(in.x);
  poison_gaps(in.dy);

  // Zero-centred: the stored value is γ − 1, with the same γ as otherwise.
  if (p.has_weight) in.weight = draw_weight(p, seed, kWeightStream);
  draw_fused_inputs(in, fused);
  compute_saved_stats(in);
  if (p.recompute_from_output) compute_forward_output(in);
  return in;
}

void row_statistics(NormKind kind, const double* rows, int64_t m, int64_t n, std::vector<double>* mean,
                    std::vector<double>* rstd) {
  mean->assign(static_cast<size_t>(m), 0.0);
  rstd->assign(static_cast<size_t>(m), 0.0);
  for (int64_t r = 0; r < m; ++r) {
    const double* x = rows + r * n;
    double sum = 0;
    for (int64_t c = 0; c < n; ++c) sum += x[c];
    const double mu = kind == NormKind::LayerNorm ? sum / n : 0.0;
    double squares = 0;
    for (int64_t c = 0; c < n; ++c) squares += (x[c] - mu) * (x[c] - mu);
    (*mean)[r] = mu;
    (*rstd)[r] = 1.0 / std::sqrt(squares / n + kNormEps);
  }
}

void compute_saved_stats(NormInputs& in) {
  const bool layer_norm = in.problem.kind == NormKind::LayerNorm;
  const int64_t n = in.n();
  in.rstd.assign(static_cast<size_t>(in.m), 0.f);
  in.mean.assign(layer_norm ? static_cast<size_t>(in.m) : 0, 0.f);
  parallel_for_rows(in.m, n, [&](int64_t, int64_t first, int64_t end) {
    std::vector<double> row(static_cast<size_t>(n)), mean, rstd;
    for (int64_t r = first; r < end; ++r) {
      for (int64_t c = 0; c < n; ++c)
        row[c] = in.problem.gate == Gate::BeforeNorm ? in.x.get(r, c) * silu(in.fused.z.get(r, c)) : in.x.get(r, c);
      row_statistics(in.problem.kind, row.data(), 1, n, &mean, &rstd);
      if (layer_norm) in.mean[r] = static_cast<float>(mean[0]);
      in.rstd[r] = static_cast<float>(rstd[0]);
    }
  });
}

void compute_forward_output(NormInputs& in) {
  const NormProblem& p = in.problem;
  const int64_t n = p.n;
  FusedInputs& f = in.fused;
  const double shift = p.zero_centered_weight ? 1.0 : 0.0;
  // The forward's y from its saved statistics (compute_saved_stats), as a forward writes both.
  parallel_for_rows(in.m, n, [&](int64_t, int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      const double mean = p.kind == NormKind::LayerNorm ? in.mean[r] : 0.0, rstd = in.rstd[r];
      for (int64_t c = 0; c < n; ++c) {
        const double xhat = (in.x.get(r, c) - mean) * rstd;
        const double gamma = p.has_weight ? in.weight.get(0, c) + shift : 1.0;
        const double beta = p.has_bias ? f.bias.get(0, c) : 0.0;
        f.y.set(r, c, xhat * gamma + beta);
      }
    }
  });
  poison_gaps(f.y);
}

std::string describe_case(const NormInputs& in) {
  char seed[80];
  std::snprintf(seed, sizeof seed, "seed=0x%llx (replay: NORMJIT_TEST_SEED=0x%llx)",
                static_cast<unsigned long long>(in.seed), static_cast<unsigned long long>(in.seed));
  return describe_problem(in.problem) + " M=" + std::to_string(in.m) + " strides x=" +
         std::to_string(in.x.stride()) + " dy=" + std::to_string(in.dy.stride()) + " dx=" +
         std::to_string(in.dx_stride) +
         (in.problem.dropout != DropoutMask::None ? " dropout_p=" + std::to_string(in.fused.dropout_p) : "") +
         (in.fused.dresidual_in ? " +dresidual_in" : "") +
         (in.problem.gate != Gate::None ? " z_stride=" + std::to_string(in.fused.z.stride()) +
                                              " dz_stride=" + std::to_string(in.fused.dz_stride)
                                        : "") +
         (in.problem.recompute_from_output
              ? " y_stride=" + std::to_string(in.fused.y.stride()) + (in.fused.x_given ? " x given" : " without x")
              : "") +
         " " + seed;
}

}  // namespace normjit::test
