// The smallest useful embedding: one LayerNorm backward through the C++ API, with buffers from
// the CUDA runtime, checked against a plain CPU computation of the same formulas.
#include <cuda_runtime.h>
#include <normjit/normjit.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: nothing to run (normjit demo shows code generation without one)\n");
    return 0;
  }
  const int64_t m = 256, n = 4096;
  std::mt19937 rng(42);
  std::normal_distribution<float> normal;
  std::vector<float> x(m * n), dy(m * n), gamma(n), mean(m), rstd(m);
  for (auto& v : x) v = normal(rng);
  for (auto& v : dy) v = normal(rng);
  for (auto& v : gamma) v = 1.0f + 0.1f * normal(rng);
  for (int64_t r = 0; r < m; ++r) {  // the statistics the forward pass would have saved
    double s = 0, s2 = 0;
    for (int64_t c = 0; c < n; ++c) s += x[r * n + c];
    const double mu = s / n;
    for (int64_t c = 0; c < n; ++c) s2 += (x[r * n + c] - mu) * (x[r * n + c] - mu);
    mean[r] = static_cast<float>(mu);
    rstd[r] = static_cast<float>(1.0 / std::sqrt(s2 / n + 1e-5));
  }

  float *d_x, *d_dy, *d_gamma, *d_mean, *d_rstd, *d_dx, *d_dgamma, *d_dbeta;
  for (auto* p : {&d_x, &d_dy, &d_dx}) cudaMalloc(p, m * n * sizeof(float));
  for (auto* p : {&d_gamma, &d_dgamma, &d_dbeta}) cudaMalloc(p, n * sizeof(float));
  for (auto* p : {&d_mean, &d_rstd}) cudaMalloc(p, m * sizeof(float));
  cudaMemcpy(d_x, x.data(), x.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(d_dy, dy.data(), dy.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(d_gamma, gamma.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(d_mean, mean.data(), m * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(d_rstd, rstd.data(), m * 4, cudaMemcpyHostToDevice);

  normjit::Engine engine;
  normjit::NormProblem problem;
  problem.kind = normjit::NormKind::LayerNorm;
  problem.n = n;
  problem.x_dtype = normjit::DType::F32;
  problem.has_bias = true;
  normjit::BackwardArgs args;
  args.m = m;
  args.x = d_x;
  args.dy = d_dy;
  args.mean = d_mean;
  args.rstd = d_rstd;
  args.weight = d_gamma;
  args.dx = d_dx;
  args.dweight = d_dgamma;
  args.dbias = d_dbeta;
  try {
    engine.layer_norm_backward(problem, args, nullptr);
  } catch (const normjit::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::vector<float> dx(m * n);
  cudaMemcpy(dx.data(), d_dx, dx.size() * 4, cudaMemcpyDeviceToHost);

  double worst = 0;
  for (int64_t r = 0; r < m; ++r) {
    double mean_g = 0, mean_gx = 0;
    for (int64_t c = 0; c < n; ++c) {
      const double xhat = (x[r * n + c] - mean[r]) * rstd[r], g = dy[r * n + c] * gamma[c];
      mean_g += g / n;
      mean_gx += g * xhat / n;
    }
    for (int64_t c = 0; c < n; ++c) {
      const double xhat = (x[r * n + c] - mean[r]) * rstd[r], g = dy[r * n + c] * gamma[c];
      worst = std::fmax(worst, std::fabs(rstd[r] * (g - mean_g - xhat * mean_gx) - dx[r * n + c]));
    }
  }
  std::printf("layernorm backward, M=%lld N=%lld fp32: max |dx - reference| = %.2e\n", static_cast<long long>(m),
              static_cast<long long>(n), worst);
  return worst < 1e-4 ? 0 : 1;
}
