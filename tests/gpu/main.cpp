// The GPU test binary's main: says on which GPU the tests run, or that there is none and every
// test will be reported SKIPPED (each test checks with NJ_REQUIRE_GPU, so none can pass
// without having run on a GPU).
#include <gtest/gtest.h>

#include <exception>
#include <iostream>

#include "support/gpu.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Test discovery (--gtest_list_tests) parses stdout: print nothing else then.
  if (!GTEST_FLAG_GET(list_tests)) {
    try {
      if (const auto* gpu = normjit::test::GpuContext::get())
        std::cout << "normjit GPU tests: running on " << gpu->description() << std::endl;
      else
        std::cout << "normjit GPU tests: no CUDA GPU (" << normjit::test::GpuContext::why_unavailable()
                  << "): every test will be SKIPPED" << std::endl;
    } catch (const std::exception& e) {
      std::cout << "normjit GPU tests: a GPU is present but could not be opened (" << e.what()
                << "): every test will FAIL" << std::endl;
    }
  }
  return RUN_ALL_TESTS();
}
