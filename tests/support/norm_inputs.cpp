#include "support/norm_inputs.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "support/parallel.h"
#include "support/problem_variants.h"
#include "support/random.h"

namespace normjit::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Streams of the seed: one per row for x and dy, one for γ.
constexpr uint64_t kWeightStream = ~0ull;

double log_uniform(Rng& rng, double lo, double hi) { return std::exp(rng.uniform(std::log(lo), std::log(hi))); }

void poison_gaps(HostTensor& t) {
  for (int64_t r = 0; r < t.rows(); ++r)
    for (int64_t c = t.cols(); c < t.stride(); ++c) t.set(r, c, kNaN);
}

}  // namespace

NormInputs make_inputs(const NormProblem& problem, int64_t m, uint64_t seed, RowStrides strides) {
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

  if (p.has_weight) {
    in.weight = HostTensor(p.weight_dtype, 1, n);
    Rng rng(seed, kWeightStream);
    for (int64_t c = 0; c < n; ++c) in.weight.set(0, c, 1.0 + 0.25 * rng.normal());
  }
  compute_saved_stats(in);
  return in;
}

void compute_saved_stats(NormInputs& in) {
  const bool layer_norm = in.problem.kind == NormKind::LayerNorm;
  const int64_t n = in.n();
  in.rstd.assign(static_cast<size_t>(in.m), 0.f);
  in.mean.assign(layer_norm ? static_cast<size_t>(in.m) : 0, 0.f);
  parallel_for_rows(in.m, n, [&](int64_t, int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) {
      double sum = 0;
      for (int64_t c = 0; c < n; ++c) sum += in.x.get(r, c);
      const double mean = layer_norm ? sum / n : 0.0;
      double squares = 0;
      for (int64_t c = 0; c < n; ++c) {
        const double d = in.x.get(r, c) - mean;
        squares += d * d;
      }
      if (layer_norm) in.mean[r] = static_cast<float>(mean);
      in.rstd[r] = static_cast<float>(1.0 / std::sqrt(squares / n + kNormEps));
    }
  });
}

std::string describe_case(const NormInputs& in) {
  char seed[80];
  std::snprintf(seed, sizeof seed, "seed=0x%llx (replay: NORMJIT_TEST_SEED=0x%llx)",
                static_cast<unsigned long long>(in.seed), static_cast<unsigned long long>(in.seed));
  return describe_problem(in.problem) + " M=" + std::to_string(in.m) + " strides x=" +
         std::to_string(in.x.stride()) + " dy=" + std::to_string(in.dy.stride()) + " dx=" +
         std::to_string(in.dx_stride) + " " + seed;
}

}  // namespace normjit::test
