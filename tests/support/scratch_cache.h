// A GPU test with a cache directory of its own (a fresh tuning database and disk cache),
// removed after the test, and engine configs that use it.
#pragma once
#include <filesystem>

#include "normjit/normjit.hpp"
#include "support/gpu.h"

namespace normjit::test {

class ScratchCacheGpuTest : public GpuTest {
 protected:
  void SetUp() override;
  void TearDown() override;
  // An engine config on the scratch directory with this tuning mode.
  Config config(TuneMode mode) const;
  const std::filesystem::path& cache_dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace normjit::test
