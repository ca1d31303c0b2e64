#include "support/scratch_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "runtime/engine_impl.h"
#include "support/device_run.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"

namespace normjit::test {

void ScratchCacheGpuTest::SetUp() {
  GpuTest::SetUp();
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(test->test_suite_name()) + "-" + test->name();
  for (char& ch : name)
    if (ch == '/') ch = '-';  // parameterized names
  dir_ = std::filesystem::temp_directory_path() / ("normjit-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir_);
}

void ScratchCacheGpuTest::TearDown() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  GpuTest::TearDown();
}

Config ScratchCacheGpuTest::config(TuneMode mode) const {
  Config c;
  c.cache_dir = dir_.string();
  c.tune_mode = mode;
  return c;
}

std::unique_ptr<Engine> ScratchCacheGpuTest::pinned_engine(const runtime::DeviceLimits& limits,
                                                           const NormProblem& resolved, int64_t m,
                                                           const codegen::LaunchConfig& c) const {
  auto engine = std::make_unique<Engine>(config(TuneMode::Cached));
  engine->impl().pin_config(limits, resolved, m, c);
  return engine;
}

void ScratchCacheGpuTest::each_config_matches_reference(const runtime::DeviceLimits& limits,
                                                        const NormProblem& problem, const NormProblem& resolved,
                                                        int64_t m,
                                                        const std::vector<codegen::LaunchConfig>& configs) const {
  const CUcontext ctx = GpuContext::get()->context();
  for (const codegen::LaunchConfig& c : configs) {
    const std::unique_ptr<Engine> engine = pinned_engine(limits, resolved, m, c);
    EXPECT_EQ(engine->impl().kernel_for(ctx, resolved, m).config, c) << codegen::describe(c);
    EXPECT_TRUE(backward_matches_reference(*engine, make_inputs(problem, m, fresh_seed()), stream()))
        << describe_problem(problem) << " M=" << m << " with " << codegen::describe(c);
  }
}

}  // namespace normjit::test
