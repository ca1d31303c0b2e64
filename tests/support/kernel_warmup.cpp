#include "support/kernel_warmup.h"

#include <atomic>
#include <mutex>
#include <thread>

#include "support/gpu.h"
#include "support/problem_variants.h"

namespace normjit::test {

std::vector<std::string> prepare_in_parallel(Engine& engine, const std::vector<NormProblem>& problems, int threads) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto fail = [&](const NormProblem& p, const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    failures.push_back(describe_problem(p) + " align=" + std::to_string(p.alignment) + ": " + why);
  };
  auto worker = [&] {
    GpuContext::get()->make_current();
    for (size_t i; (i = next++) < problems.size();) {
      try {
        engine.prepare(problems[i]);
      } catch (const std::exception& e) {
        fail(problems[i], e.what());
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&] {
    try {
      worker();
    } catch (const std::exception& e) {  // make_current failed
      std::lock_guard<std::mutex> lock(mu);
      failures.push_back(std::string("warm-up thread: ") + e.what());
    }
  });
  for (std::thread& t : pool) t.join();
  return failures;
}

std::vector<NormProblem> alignment_variants(const NormProblem& problem) {
  NormProblem aligned = problem;
  aligned.alignment = 16;
  std::vector<NormProblem> variants{aligned};
  const int contiguous = contiguous_row_alignment(problem);
  if (contiguous < 16) {
    NormProblem lower = problem;
    lower.alignment = contiguous;
    variants.push_back(lower);
  }
  return variants;
}

}  // namespace normjit::test
