#include "support/scratch_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

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

}  // namespace normjit::test
