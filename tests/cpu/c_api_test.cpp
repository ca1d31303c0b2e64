// The C API on a machine without a GPU: engines are created, bad arguments are reported with
// a status and a message, and a GPU call says clearly that there is no driver or device.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "normjit/normjit.h"
#include "normjit/norm_problem.hpp"
#include "runtime/cuda_driver.h"
#include "support/c_problem.h"

namespace {

using normjit::test::rms_problem;

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

// The fused options' fields were appended: the fields before them keep their offsets (a
// program built against the older header passes a struct that ends at eps).
static_assert(offsetof(nj_forward_args, eps) == 72, "nj_forward_args' older fields keep their offsets");
static_assert(offsetof(nj_forward_args, residual) == 80, "the fused fields follow eps");
static_assert(offsetof(nj_forward_args, y1_stride) == 80 + 15 * 8, "16 fused fields of 8 bytes");
static_assert(sizeof(nj_forward_args) == 80 + 16 * 8, "nothing after y1_stride");
// Field for field the C++ ForwardArgs (runtime/c_api.cpp copies them by name).
static_assert(sizeof(normjit::ForwardArgs) == sizeof(nj_forward_args), "ForwardArgs and nj_forward_args differ");
#define NJ_EXPECT_SAME_OFFSET(field)                                                              \
  static_assert(offsetof(nj_forward_args, field) == offsetof(normjit::ForwardArgs, field), \
                #field " is elsewhere in ForwardArgs")
NJ_EXPECT_SAME_OFFSET(eps);
NJ_EXPECT_SAME_OFFSET(residual);
NJ_EXPECT_SAME_OFFSET(residual_stride);
NJ_EXPECT_SAME_OFFSET(residual_out);
NJ_EXPECT_SAME_OFFSET(residual_out_stride);
NJ_EXPECT_SAME_OFFSET(rowscale);
NJ_EXPECT_SAME_OFFSET(dropout_mask);
NJ_EXPECT_SAME_OFFSET(dropout_mask_stride);
NJ_EXPECT_SAME_OFFSET(dropout_p);
NJ_EXPECT_SAME_OFFSET(dropout_seed);
NJ_EXPECT_SAME_OFFSET(dropout_offset);
NJ_EXPECT_SAME_OFFSET(z);
NJ_EXPECT_SAME_OFFSET(z_stride);
NJ_EXPECT_SAME_OFFSET(weight1);
NJ_EXPECT_SAME_OFFSET(bias1);
NJ_EXPECT_SAME_OFFSET(y1);
NJ_EXPECT_SAME_OFFSET(y1_stride);
#undef NJ_EXPECT_SAME_OFFSET

namespace {

// A valid RMSNorm forward of 4 rows (no GPU needed to check it).
nj_forward_args rms_forward_args() {
  nj_forward_args a{};
  a.m = 4;
  a.x = reinterpret_cast<void*>(0x10000);
  a.y = reinterpret_cast<void*>(0x50000);
  a.rstd = reinterpret_cast<float*>(0x20000);
  a.weight = reinterpret_cast<void*>(0x30000);
  a.eps = 1e-6;
  return a;
}

std::string last_error() { return nj_last_error(); }

}  // namespace

TEST_F(CApi, ForwardPassesTheFusedFieldsThrough) {
  // Each field reaches the checks: a rule that reads it fails, naming it.
  struct Case {
    const char* name;
    void (*set)(nj_problem&, nj_forward_args&);
    const char* message;
  };
  const Case cases[] = {
      {"residual on, residual NULL", [](nj_problem& p, nj_forward_args&) { p.residual = 1; }, "residual is NULL"},
      {"residual_stride",
       [](nj_problem& p, nj_forward_args& a) {
         p.residual = 1;
         a.residual = reinterpret_cast<void*>(0x60000);
         a.residual_stride = 4095;
       },
       "residual_stride = 4095 is less than N"},
      {"residual_out without a pre-norm sum",
       [](nj_problem&, nj_forward_args& a) { a.residual_out = reinterpret_cast<void*>(0x70000); },
       "residual_out is given but none of residual, rowscale and dropout is on"},
      {"residual_out_stride",
       [](nj_problem& p, nj_forward_args& a) {
         p.rowscale = 1;
         a.rowscale = reinterpret_cast<float*>(0x80000);
         a.residual_out = reinterpret_cast<void*>(0x70000);
         a.residual_out_stride = 7;
       },
       "residual_out_stride = 7 is less than N"},
      {"rowscale on, rowscale NULL", [](nj_problem& p, nj_forward_args&) { p.rowscale = 1; }, "rowscale is NULL"},
      {"dropout_mask without dropout",
       [](nj_problem&, nj_forward_args& a) { a.dropout_mask = reinterpret_cast<void*>(0x90000); },
       "is given but dropout is off"},
      {"dropout_mask_stride",
       [](nj_problem& p, nj_forward_args& a) {
         p.dropout = NJ_DROPOUT_BITS;
         a.dropout_mask = reinterpret_cast<void*>(0x90000);
         a.dropout_mask_stride = 511;
       },
       "dropout_mask_stride = 511 bytes is less than a bit-packed mask row (512 bytes)"},
      {"dropout_p",
       [](nj_problem& p, nj_forward_args& a) {
         p.dropout = NJ_DROPOUT_BYTES;
         a.dropout_p = 1.5;
       },
       "dropout_p = 1.5"},
      {"dropout_seed without dropout", [](nj_problem&, nj_forward_args& a) { a.dropout_seed = 7; },
       "is given but dropout is off"},
      {"dropout_offset without dropout", [](nj_problem&, nj_forward_args& a) { a.dropout_offset = 7; },
       "is given but dropout is off"},
      {"gate on, z NULL", [](nj_problem& p, nj_forward_args&) { p.gate = NJ_GATE_AFTER_NORM; }, "z is NULL"},
      {"z_stride",
       [](nj_problem& p, nj_forward_args& a) {
         p.gate = NJ_GATE_BEFORE_NORM;
         a.z = reinterpret_cast<void*>(0xA0000);
         a.z_stride = 100;
       },
       "z_stride = 100 is less than N"},
      {"parallel on, y1 NULL",
       [](nj_problem& p, nj_forward_args& a) {
         p.parallel = 1;
         a.weight1 = reinterpret_cast<void*>(0xB0000);
       },
       "y1 is NULL"},
      {"parallel on, weight1 NULL",
       [](nj_problem& p, nj_forward_args& a) {
         p.parallel = 1;
         a.y1 = reinterpret_cast<void*>(0xC0000);
       },
       "weight1 is NULL"},
      {"bias1 without has_bias",
       [](nj_problem& p, nj_forward_args& a) {
         p.parallel = 1;
         a.y1 = reinterpret_cast<void*>(0xC0000);
         a.weight1 = reinterpret_cast<void*>(0xB0000);
         a.bias1 = reinterpret_cast<void*>(0xD0000);
       },
       "bias1 is given but has_bias is false"},
      {"y1_stride",
       [](nj_problem& p, nj_forward_args& a) {
         p.parallel = 1;
         a.y1 = reinterpret_cast<void*>(0xC0000);
         a.weight1 = reinterpret_cast<void*>(0xB0000);
         a.y1_stride = 1;
       },
       "y1_stride = 1 is less than N"},
      {"y1 over y",
       [](nj_problem& p, nj_forward_args& a) {
         p.parallel = 1;
         a.y1 = a.y;
         a.weight1 = reinterpret_cast<void*>(0xB0000);
       },
       "y and y1 are the same buffer"},
      {"gate on a LayerNorm",
       [](nj_problem& p, nj_forward_args&) {
         p.kind = NJ_LAYERNORM;
         p.gate = NJ_GATE_AFTER_NORM;
       },
       "is set on a LayerNorm"},
  };
  for (const Case& c : cases) {
    nj_problem p = rms_problem();
    nj_forward_args a = rms_forward_args();
    c.set(p, a);
    const nj_status s = p.kind == NJ_LAYERNORM ? nj_layer_norm_forward(engine_, &p, &a, nullptr)
                                               : nj_rms_norm_forward(engine_, &p, &a, nullptr);
    EXPECT_EQ(s, NJ_ERR_INVALID_ARGUMENT) << c.name << ": " << nj_status_name(s) << ": " << last_error();
    EXPECT_NE(last_error().find(c.message), std::string::npos) << c.name << ": " << last_error();
  }
  // Fused options are taken: no rows is a valid call that does nothing, without a GPU too.
  nj_problem p = rms_problem();
  p.residual = p.rowscale = p.parallel = 1;
  p.dropout = NJ_DROPOUT_BITS;
  p.dy_dtype = NJ_F32;
  nj_forward_args none{};
  EXPECT_EQ(nj_rms_norm_forward(engine_, &p, &none, nullptr), NJ_OK) << last_error();
  p.parallel = 0;
  p.recompute_from_output = 1;  // the backward's: ignored
  EXPECT_EQ(nj_rms_norm_forward(engine_, &p, &none, nullptr), NJ_OK) << last_error();
  p = rms_problem();
  p.gate = NJ_GATE_BEFORE_NORM;
  p.zero_centered_weight = 1;
  EXPECT_EQ(nj_rms_norm_forward(engine_, &p, &none, nullptr), NJ_OK) << last_error();
}

TEST_F(CApi, WithoutAGpuAValidFusedForwardSaysSoLikeAPlainOne) {
  std::string why;
  if (normjit::runtime::cuda_available(&why)) GTEST_SKIP() << "a GPU is present; the GPU suite covers real calls";
  nj_problem plain = rms_problem();
  nj_forward_args a = rms_forward_args();
  const nj_status expected = nj_rms_norm_forward(engine_, &plain, &a, nullptr);
  ASSERT_TRUE(expected == NJ_ERR_NO_DRIVER || expected == NJ_ERR_NO_DEVICE) << nj_status_name(expected);
  struct Case {
    const char* name;
    void (*set)(nj_problem&, nj_forward_args&);
  };
  const Case cases[] = {
      {"residual with residual_out over it",
       [](nj_problem& p, nj_forward_args& a) {
         p.residual = 1;
         a.residual = a.residual_out = reinterpret_cast<void*>(0x60000);
       }},
      {"rowscale",
       [](nj_problem& p, nj_forward_args& a) {
         p.rowscale = 1;
         a.rowscale = reinterpret_cast<float*>(0x80000);
       }},
      {"dropout bits with its mask",
       [](nj_problem& p, nj_forward_args& a) {
         p.dropout = NJ_DROPOUT_BITS;
         a.dropout_mask = reinterpret_cast<void*>(0x90000);
         a.dropout_p = 0.1;
         a.dropout_seed = 42;
         a.dropout_offset = 1;
       }},
      {"gate after the norm",
       [](nj_problem& p, nj_forward_args& a) {
         p.gate = NJ_GATE_AFTER_NORM;
         a.z = reinterpret_cast<void*>(0xA0000);
       }},
      {"parallel, y in fp32",
       [](nj_problem& p, nj_forward_args& a) {
         p.parallel = 1;
         p.dy_dtype = NJ_F32;
         a.weight1 = reinterpret_cast<void*>(0xB0000);
         a.y1 = reinterpret_cast<void*>(0xC0000);
       }},
  };
  for (const Case& c : cases) {
    nj_problem p = rms_problem();
    nj_forward_args f = rms_forward_args();
    c.set(p, f);
    const nj_status s = nj_rms_norm_forward(engine_, &p, &f, nullptr);
    EXPECT_EQ(s, expected) << c.name << ": " << nj_status_name(s) << ": " << last_error();
    EXPECT_NE(last_error().find("no CUDA"), std::string::npos) << c.name << ": " << last_error();
  }
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
