#include "support/kernel_warmup.h"

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

#include "runtime/engine_impl.h"
#include "support/gpu.h"
#include "support/problem_variants.h"

namespace normjit::test {

namespace {

// Calls load(i) for i in [0, count) from `threads` threads, each with the test context current.
// Returns one line per failure ("<label(i)>: <message>").
std::vector<std::string> in_parallel(size_t count, int threads, const std::function<void(size_t)>& load,
                                     const std::function<std::string(size_t)>& label) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto worker = [&] {
    GpuContext::get()->make_current();
    for (size_t i; (i = next++) < count;) {
      try {
        load(i);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        failures.push_back(label(i) + ": " + e.what());
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

std::string describe_aligned(const NormProblem& p) { return describe_problem(p) + " align=" + std::to_string(p.alignment); }

}  // namespace

std::vector<std::string> prepare_in_parallel(Engine& engine, const std::vector<NormProblem>& problems, int threads) {
  return in_parallel(
      problems.size(), threads, [&](size_t i) { engine.prepare(problems[i]); },
      [&](size_t i) { return describe_aligned(problems[i]); });
}

std::vector<std::string> load_in_parallel(Engine& engine, const std::vector<NormProblem>& resolved,
                                          const std::vector<int64_t>& rows, int threads) {
  const size_t count = resolved.size() * rows.size();
  return in_parallel(
      count, threads,
      [&](size_t i) {
        engine.impl().kernel_for(GpuContext::get()->context(), resolved[i / rows.size()], rows[i % rows.size()]);
      },
      [&](size_t i) { return describe_aligned(resolved[i / rows.size()]) + " M=" + std::to_string(rows[i % rows.size()]); });
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
