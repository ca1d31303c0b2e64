// A GPU test with a cache directory of its own (a fresh tuning database and disk cache),
// removed after the test, and engine configs that use it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "codegen/launch_config.h"
#include "normjit/normjit.hpp"
#include "runtime/launch_plan.h"
#include "support/gpu.h"

namespace normjit::test {

class ScratchCacheGpuTest : public GpuTest {
 protected:
  void SetUp() override;
  void TearDown() override;
  // An engine config on the scratch directory with this tuning mode.
  Config config(TuneMode mode) const;
  // An engine on the scratch directory (TuneMode::Cached) that runs `c` for the resolved
  // problem at m's bucket on the device of `limits` (Engine::Impl::pin_config).
  std::unique_ptr<Engine> pinned_engine(const runtime::DeviceLimits& limits, const NormProblem& resolved, int64_t m,
                                        const codegen::LaunchConfig& c) const;
  // Each of `configs`, pinned for `resolved` (the problem as contiguous inputs resolve it) at m
  // rows in an engine of its own, runs the backward of fresh inputs of `problem` and matches the
  // float64 reference (gtest failures otherwise, naming the config).
  void each_config_matches_reference(const runtime::DeviceLimits& limits, const NormProblem& problem,
                                     const NormProblem& resolved, int64_t m,
                                     const std::vector<codegen::LaunchConfig>& configs) const;
  const std::filesystem::path& cache_dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace normjit::test
