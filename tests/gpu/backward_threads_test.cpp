// Issue 7: 16 host threads, each on its own stream, launch a mix of problems (LayerNorm and
// RMSNorm, bf16 and fp32, N in {1000, 4096, 8192, 65536}, M in {1, 199, 4096}, fused options on
// some) through ONE fresh Engine whose disk cache is an empty temporary directory. The threads
// move in rounds that start on a barrier, and several threads ask for the same problem in the
// same round (four at a time in the first round, two at a time after), so the engine sees the
// same kernel requested at the same moment from different threads before anyone compiled it.
// Every result is checked against the float64 reference; then the engine's statistics must
// show each distinct kernel compiled by NVRTC exactly once.
//
// Counting the distinct kernels: with tune mode `cached` and no tuning database (the cache
// directory is empty), every M bucket gets the heuristic's launch config, which depends on the
// resolved problem (the problem with the alignment the call's pointers and strides allow, as
// runtime::check_backward_call derives it for the engine) and on whether M is few rows
// (codegen::choose_launch_config(problem, sm, sm_count, m)): one kernel per (resolved problem,
// config), the config read back from the engine after the run.
//
// Filter: --gtest_filter='BackwardThreads.*'
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codegen/norm_problem.h"
#include "runtime/backward_call.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "support/device_run.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

using runtime::driver;

constexpr int kThreads = 16;
// M·N above this only with M = 1: keeps the host's input generation and float64 reference
// (16 threads at once) within the test's time (4096 x 1000 is the largest multi-row case).
constexpr int64_t kMaxElements = int64_t{1} << 22;

struct Case {
  NormProblem problem;
  int64_t m;
  FusedSpec spec;
  std::string label;  // "#12 RMSNorm x=bf16 ... N=4096 +residual M=199"
};

// A reusable barrier (C++17 has none): the last of `count` threads to arrive releases the rest.
class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const int count_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

// Which fused options a case turns on (rotating over the fused cases).
NormProblem with_fused(NormProblem p, int which) {
  switch (which % 3) {
    case 0:  // residual alone
      p.residual = true;
      break;
    case 1:  // row scale and a bit mask
      p.rowscale = true;
      p.dropout = DropoutMask::Bits;
      break;
    default:  // all four, byte mask
      p.residual = true;
      p.zero_centered_weight = true;
      p.rowscale = true;
      p.dropout = DropoutMask::Bytes;
      break;
  }
  return p;
}

std::vector<Case> make_cases() {
  std::vector<Case> cases;
  int fused = 0;
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType x : {DType::BF16, DType::F32})
      for (int64_t n : {1000, 4096, 8192, 65536}) {
        const NormProblem plain = make_problem(kind, n, x, DType::F32,
                                               kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly);
        for (int64_t m : {1, 199, 4096})
          if (m == 1 || m * n <= kMaxElements) cases.push_back({plain, m, FusedSpec{}, ""});
        // One fused case per (kind, dtype, N): its own kernel.
        Case c{with_fused(plain, fused), n * 199 <= kMaxElements ? 199 : 1, FusedSpec{}, ""};
        c.spec.dropout_p = 0.1;
        c.spec.dresidual_in = fused % 2 == 0;
        cases.push_back(c);
        ++fused;
      }
  for (size_t i = 0; i < cases.size(); ++i)
    cases[i].label = "#" + std::to_string(i) + " " + describe_problem(cases[i].problem) + " M=" +
                     std::to_string(cases[i].m);
  return cases;
}

// The case thread t runs in round r: round 0 gives the first four cases to four threads each;
// later rounds walk the list with two threads on each case.
size_t case_index(int t, int round, size_t case_count) {
  if (round == 0) return static_cast<size_t>(t / 4) % case_count;
  return (4 + static_cast<size_t>(round - 1) * (kThreads / 2) + static_cast<size_t>(t / 2)) % case_count;
}

int round_count(size_t case_count) {
  const size_t rest = case_count > 4 ? case_count - 4 : 0;
  return 1 + static_cast<int>((rest + kThreads / 2 - 1) / (kThreads / 2));
}

class BackwardThreads : public GpuTest {};

TEST_F(BackwardThreads, SixteenThreadsOnTheirOwnStreamsGetCorrectResultsAndEachKernelIsCompiledOnce) {
  const std::vector<Case> cases = make_cases();
  const int rounds = round_count(cases.size());
  const std::string cache_dir = make_temp_dir();
  Config config;
  config.cache_dir = cache_dir;
  config.disk_cache = true;
  config.tune_mode = TuneMode::Cached;  // and no database in the empty directory: heuristic configs
  Engine engine(config);

  std::mutex mu;
  std::vector<std::string> failures;   // "thread 3, round 2, case #12 ...: why"
  std::set<std::string> kernels;       // each resolved problem launched, with the config it ran (M-dependent)
  int runs = 0;
  Barrier barrier(kThreads);

  auto worker = [&](int t) {
    auto fail = [&](int round, const std::string& what) {
      std::lock_guard<std::mutex> lock(mu);
      failures.push_back("thread " + std::to_string(t) + ", round " + std::to_string(round) + ": " + what);
    };
    CUstream stream = nullptr;
    try {
      GpuContext::get()->make_current();
      NJ_CU(driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "test: a thread's stream");
    } catch (const std::exception& e) {
      fail(-1, std::string("setting up the thread: ") + e.what());
    }
    for (int round = 0; round < rounds; ++round) {
      const Case& c = cases[case_index(t, round, cases.size())];
      // Inputs and device buffers first, so the engine calls of one round meet at the barrier.
      std::unique_ptr<NormInputs> inputs;
      std::unique_ptr<DeviceCase> device;
      BackwardArgs args;
      NormProblem resolved_problem;
      try {
        if (stream) {
          inputs = std::make_unique<NormInputs>(make_inputs(c.problem, c.m, fresh_seed(), {}, c.spec));
          device = std::make_unique<DeviceCase>(*inputs, RunOptions{});
          device->poison_outputs();
          args = device->args();
          resolved_problem = runtime::check_backward_call(inputs->problem, args).problem;
        }
      } catch (const std::exception& e) {
        fail(round, "case " + c.label + ": preparing the inputs threw: " + e.what());
        device.reset();
      }
      barrier.wait();  // every thread waits, even one that failed, or the others would hang
      if (!device) continue;
      try {
        engine.backward(inputs->problem, args, stream);
        NJ_CU(driver().cuStreamSynchronize(stream), "test: waiting for the backward");
        const ::testing::AssertionResult match =
            gradients_match(*inputs, device->download(), reference_backward(*inputs));
        std::lock_guard<std::mutex> lock(mu);
        // The kernel that ran: a cache hit now. The heuristic may pick another config for few
        // rows than for many (codegen::few_rows), and each is its own compile.
        const codegen::LaunchConfig ran =
            engine.impl().kernel_for(GpuContext::get()->context(), resolved_problem, c.m).config;
        kernels.insert(codegen::describe(resolved_problem) + " | " + codegen::describe(ran));
        ++runs;
        if (!match)
          failures.push_back("thread " + std::to_string(t) + ", round " + std::to_string(round) + ", case " +
                             c.label + ": " + match.message());
      } catch (const std::exception& e) {
        fail(round, "case " + c.label + " (" + describe_case(*inputs) + "): threw: " + e.what());
      }
    }
    if (stream) driver().cuStreamDestroy(stream);
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& th : threads) th.join();

  const CacheStats stats = engine.cache_stats();
  std::error_code ignored;
  std::filesystem::remove_all(cache_dir, ignored);

  for (const std::string& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(runs, kThreads * rounds) << "runs that completed (of " << kThreads << " threads x " << rounds
                                     << " rounds)";
  std::set<std::string> problems;
  for (const Case& c : cases) problems.insert(describe_problem(c.problem));
  EXPECT_GE(kernels.size(), problems.size()) << "every case should have run at least once";
  std::ostringstream list;
  for (const std::string& k : kernels) list << "\n  " << k;
  EXPECT_EQ(stats.compiles, kernels.size())
      << "NVRTC compilations vs distinct kernels launched (one per resolved problem and heuristic config, no database);"
      << " disk hits " << stats.disk_hits << ", memory hits " << stats.memory_hits << "; kernels:" << list.str();
  EXPECT_EQ(stats.disk_hits, 0u) << "the cache directory started empty";
}

}  // namespace
}  // namespace normjit::test
