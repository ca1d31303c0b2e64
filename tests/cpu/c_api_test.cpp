// The C API on a machine without a GPU: engines are created, bad arguments are reported with
// a status and a message, and a GPU call says clearly that there is no driver or device.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "normjit/normjit.h"
#include "runtime/cuda_driver.h"

namespace {

nj_problem rms_problem() {
  nj_problem p{};
  p.kind = NJ_RMSNORM;
  p.n = 4096;
  p.x_dtype = NJ_BF16;
  p.weight_dtype = NJ_F32;
  p.has_weight = 1;
  return p;
}

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("NORMJIT_DISK_CACHE", "0", 1);
    ASSERT_EQ(nj_engine_create(nullptr, &engine_), NJ_OK) << nj_last_error();
  }
  void TearDown() override {
    nj_engine_destroy(engine_);
    unsetenv("NORMJIT_DISK_CACHE");
  }
  nj_engine* engine_ = nullptr;
};

TEST_F(CApi, NullEngineIsAnInvalidArgument) {
  nj_problem p = rms_problem();
  nj_backward_args a{};
  EXPECT_EQ(nj_rms_norm_backward(nullptr, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("engine is NULL"), std::string::npos) << nj_last_error();
}

TEST_F(CApi, NullProblemAndArgsAreInvalidArguments) {
  nj_backward_args a{};
  nj_problem p = rms_problem();
  EXPECT_EQ(nj_rms_norm_backward(engine_, nullptr, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, nullptr, nullptr), NJ_ERR_INVALID_ARGUMENT);
  size_t bytes = 0;
  EXPECT_EQ(nj_workspace_size(engine_, nullptr, 4, &bytes), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(nj_workspace_size(engine_, &p, 4, nullptr), NJ_ERR_INVALID_ARGUMENT);
}

TEST_F(CApi, ZeroNIsRejectedBeforeAnyGpuCall) {
  nj_problem p = rms_problem();
  p.n = 0;
  nj_backward_args a{};
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("N=0"), std::string::npos) << nj_last_error();
}

TEST_F(CApi, UnknownDtypeIsRejected) {
  nj_problem p = rms_problem();
  p.x_dtype = static_cast<nj_dtype>(42);
  nj_backward_args a{};
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
}

TEST_F(CApi, KindMismatchIsRejected) {
  nj_problem p = rms_problem();
  nj_backward_args a{};
  EXPECT_EQ(nj_layer_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("rms_norm_backward"), std::string::npos) << nj_last_error();
}

// The fused fields appended to nj_problem and nj_backward_args reach the checks.
TEST_F(CApi, FusedOptionsReachTheChecks) {
  nj_problem p = rms_problem();
  p.has_weight = 0;
  p.zero_centered_weight = 1;
  nj_backward_args a{};
  a.m = 4;
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("zero_centered_weight"), std::string::npos) << nj_last_error();

  p = rms_problem();
  p.dropout = NJ_DROPOUT_BITS;
  a.dropout_mask = reinterpret_cast<const void*>(uintptr_t{0x10000});
  a.dropout_p = 1.5;
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("dropout_p = 1.5"), std::string::npos) << nj_last_error();

  p = rms_problem();
  a = nj_backward_args{};
  a.m = 4;
  a.dresidual = reinterpret_cast<const void*>(uintptr_t{0x10000});
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("residual is off"), std::string::npos) << nj_last_error();

  p.dropout = static_cast<nj_dropout_mask>(7);
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("dropout mask form 7"), std::string::npos) << nj_last_error();

  // The gate's fields, appended after the earlier options'.
  p = rms_problem();
  p.gate = static_cast<nj_gate>(5);
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("gate 5 is unknown"), std::string::npos) << nj_last_error();
  p = rms_problem();
  a = nj_backward_args{};
  a.m = 4;
  a.dz = reinterpret_cast<void*>(uintptr_t{0x10000});
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("z or dz is given but gate is off"), std::string::npos)
      << nj_last_error();

  // And the parallel norms' fields, after the gate's.
  p = rms_problem();
  a = nj_backward_args{};
  a.m = 4;
  a.dbias1 = reinterpret_cast<void*>(uintptr_t{0x10000});
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("parallel is off"), std::string::npos) << nj_last_error();
  p.parallel = 1;
  p.gate = NJ_GATE_AFTER_NORM;
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("parallel and gate are both set"), std::string::npos)
      << nj_last_error();

  // And recompute from the output, after the parallel norms'.
  p = rms_problem();
  a = nj_backward_args{};
  a.m = 4;
  a.y = reinterpret_cast<const void*>(uintptr_t{0x10000});
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("y is given but recompute_from_output is off"), std::string::npos)
      << nj_last_error();
  a = nj_backward_args{};
  a.m = 4;
  a.bias = reinterpret_cast<const void*>(uintptr_t{0x10000});
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("bias is given but recompute_from_output is off"), std::string::npos)
      << nj_last_error();
  p.recompute_from_output = 1;
  a = nj_backward_args{};
  a.m = 4;
  a.dy = a.dx = reinterpret_cast<void*>(uintptr_t{0x10000});
  a.rstd = reinterpret_cast<const float*>(uintptr_t{0x20000});
  a.weight = reinterpret_cast<void*>(uintptr_t{0x30000});
  a.dweight = reinterpret_cast<void*>(uintptr_t{0x40000});
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("y is NULL but recompute_from_output is on"), std::string::npos)
      << nj_last_error();
  p.gate = NJ_GATE_BEFORE_NORM;
  EXPECT_EQ(nj_rms_norm_backward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("recompute_from_output and gate before-norm are both set"),
            std::string::npos)
      << nj_last_error();
}

TEST_F(CApi, WithoutAGpuAValidCallSaysSo) {
  std::string why;
  if (normjit::runtime::cuda_available(&why)) GTEST_SKIP() << "a GPU is present; the GPU suite covers real calls";
  nj_problem p = rms_problem();
  nj_backward_args a{};
  a.m = 4;
  a.x = a.dy = a.dx = reinterpret_cast<void*>(0x10000);
  a.rstd = reinterpret_cast<const float*>(0x20000);
  a.weight = reinterpret_cast<void*>(0x30000);
  a.dweight = reinterpret_cast<void*>(0x40000);
  const nj_status s = nj_rms_norm_backward(engine_, &p, &a, nullptr);
  EXPECT_TRUE(s == NJ_ERR_NO_DRIVER || s == NJ_ERR_NO_DEVICE) << nj_status_name(s) << ": " << nj_last_error();
  EXPECT_NE(std::string(nj_last_error()).find("no CUDA"), std::string::npos) << nj_last_error();
}

TEST_F(CApi, LastErrorIsClearedBySuccess) {
  nj_problem p = rms_problem();
  p.n = 0;
  nj_backward_args a{};
  nj_rms_norm_backward(engine_, &p, &a, nullptr);
  ASSERT_STRNE(nj_last_error(), "");
  nj_engine* other = nullptr;
  ASSERT_EQ(nj_engine_create(nullptr, &other), NJ_OK);
  EXPECT_STREQ(nj_last_error(), "");
  nj_engine_destroy(other);
}

// ---- the forward (docs/FORWARD.md) -----------------------------------------------------------

TEST_F(CApi, ForwardNullsAreInvalidArguments) {
  nj_problem p = rms_problem();
  nj_forward_args a{};
  EXPECT_EQ(nj_rms_norm_forward(nullptr, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("nj_rms_norm_forward: engine is NULL"), std::string::npos)
      << nj_last_error();
  EXPECT_EQ(nj_layer_norm_forward(engine_, nullptr, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(nj_rms_norm_forward(engine_, &p, nullptr, nullptr), NJ_ERR_INVALID_ARGUMENT);
  a.m = 4;
  a.eps = 1e-6;
  EXPECT_EQ(nj_rms_norm_forward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("x is NULL"), std::string::npos) << nj_last_error();
}

TEST_F(CApi, ForwardArgumentsReachTheChecks) {
  nj_problem p = rms_problem();
  nj_forward_args a{};
  a.m = 4;
  a.x = a.y = reinterpret_cast<void*>(0x10000);
  a.weight = reinterpret_cast<void*>(0x30000);
  a.rstd = reinterpret_cast<float*>(0x20000);
  a.eps = -1;
  EXPECT_EQ(nj_rms_norm_forward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("eps = -1"), std::string::npos) << nj_last_error();
  a.eps = 1e-6;
  a.y_stride = 100;
  EXPECT_EQ(nj_rms_norm_forward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("y_stride = 100 is less than N"), std::string::npos) << nj_last_error();
  a.y_stride = 0;
  a.mean = reinterpret_cast<float*>(0x40000);
  EXPECT_EQ(nj_rms_norm_forward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("mean is given for RMSNorm"), std::string::npos) << nj_last_error();
  EXPECT_EQ(nj_layer_norm_forward(engine_, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("layer_norm_forward was given a rmsnorm"), std::string::npos)
      << nj_last_error();
}

TEST_F(CApi, ForwardRejectsFusedOptionsAsUnsupported) {
  nj_problem p = rms_problem();
  p.gate = NJ_GATE_AFTER_NORM;
  nj_forward_args a{};
  EXPECT_EQ(nj_rms_norm_forward(engine_, &p, &a, nullptr), NJ_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(nj_last_error()).find("forward does not take the fused option gate"), std::string::npos)
      << nj_last_error();
  p = rms_problem();
  p.zero_centered_weight = 1;  // supported: a valid call of no rows does nothing
  EXPECT_EQ(nj_rms_norm_forward(engine_, &p, &a, nullptr), NJ_OK) << nj_last_error();
}

TEST_F(CApi, WithoutAGpuAValidForwardSaysSo) {
  std::string why;
  if (normjit::runtime::cuda_available(&why)) GTEST_SKIP() << "a GPU is present; the GPU suite covers real calls";
  nj_problem p = rms_problem();
  nj_forward_args a{};
  a.m = 4;
  a.x = a.y = reinterpret_cast<void*>(0x10000);
  a.rstd = reinterpret_cast<float*>(0x20000);
  a.weight = reinterpret_cast<void*>(0x30000);
  a.eps = 1e-6;
  const nj_status s = nj_rms_norm_forward(engine_, &p, &a, nullptr);
  EXPECT_TRUE(s == NJ_ERR_NO_DRIVER || s == NJ_ERR_NO_DEVICE) << nj_status_name(s) << ": " << nj_last_error();
}

TEST(CApiNames, EveryStatusHasAName) {
  for (int s = NJ_OK; s <= NJ_ERR_INTERNAL; ++s)
    EXPECT_EQ(std::string(nj_status_name(static_cast<nj_status>(s))).rfind("NJ_", 0), 0u);
  EXPECT_STRNE(nj_version_string(), "");
}

TEST(CApiConfig, AMissingConfigFileIsAConfigError) {
  nj_engine* e = nullptr;
  EXPECT_EQ(nj_engine_create("/nonexistent/normjit.toml", &e), NJ_ERR_CONFIG);
  EXPECT_EQ(e, nullptr);
  EXPECT_NE(std::string(nj_last_error()).find("/nonexistent/normjit.toml"), std::string::npos) << nj_last_error();
}

}  // namespace
