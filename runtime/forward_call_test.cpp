// Every invalid argument of a forward call is caught on the CPU, before anything is launched,
// with InvalidArgument and a message naming the argument. Table-driven: one row per mistake.
#include "runtime/forward_call.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "codegen/forward_config.h"
#include "normjit/normjit.hpp"

using namespace normjit;

namespace {

void* addr(uintptr_t a) { return reinterpret_cast<void*>(a); }
float* faddr(uintptr_t a) { return static_cast<float*>(addr(a)); }

NormProblem layer_norm() {
  NormProblem p;
  p.kind = NormKind::LayerNorm;
  p.n = 1000;
  p.x_dtype = DType::BF16;
  p.weight_dtype = DType::F32;
  p.has_bias = true;
  return p;
}

ForwardArgs valid_args() {
  ForwardArgs a;
  a.m = 64;
  a.x = addr(0x10000);
  a.weight = addr(0x20000);
  a.bias = addr(0x30000);
  a.y = addr(0x40000);
  a.mean = faddr(0x50000);
  a.rstd = faddr(0x60000);
  a.eps = 1e-5;
  return a;
}

struct Mistake {
  const char* name;
  std::function<void(NormProblem&, ForwardArgs&)> spoil;
  const char* message;  // a piece of the error message
};

}  // namespace

TEST(ForwardCall, AValidCallPasses) {
  const runtime::CheckedForwardCall c = runtime::check_forward_call(layer_norm(), valid_args());
  EXPECT_EQ(c.args.x_stride, 1000);
  EXPECT_EQ(c.args.y_stride, 1000);
  EXPECT_EQ(c.problem.alignment, 16);  // 1000 bf16 = 2000 bytes a row: 16-byte rows
  EXPECT_EQ(c.problem.dx_dtype, DType::BF16);
}

TEST(ForwardCall, StatisticsAreOptionalAndZeroRowsNeedNoPointers) {
  ForwardArgs a = valid_args();
  a.mean = nullptr;
  a.rstd = nullptr;
  EXPECT_NO_THROW(runtime::check_forward_call(layer_norm(), a));
  ForwardArgs empty;
  empty.m = 0;
  EXPECT_NO_THROW(runtime::check_forward_call(layer_norm(), empty));
  a = valid_args();
  a.y = const_cast<void*>(a.x);  // in place, same stride
  EXPECT_NO_THROW(runtime::check_forward_call(layer_norm(), a));
  a.eps = 0;
  EXPECT_NO_THROW(runtime::check_forward_call(layer_norm(), a));
}

TEST(ForwardCall, LowersTheAlignmentToWhatThePointersGive) {
  ForwardArgs a = valid_args();
  a.x = addr(0x10004);
  EXPECT_EQ(runtime::check_forward_call(layer_norm(), a).problem.alignment, 4);
  a = valid_args();
  a.y_stride = 1001;  // odd bf16 rows: 2-byte rows
  EXPECT_EQ(runtime::check_forward_call(layer_norm(), a).problem.alignment, 2);
  a = valid_args();
  a.weight = addr(0x20008);
  EXPECT_EQ(runtime::check_forward_call(layer_norm(), a).problem.alignment, 8);
  a = valid_args();
  a.bias = addr(0x30004);
  EXPECT_EQ(runtime::check_forward_call(layer_norm(), a).problem.alignment, 4);
}

TEST(ForwardCall, EveryMistakeIsAnInvalidArgumentNamingIt) {
  const Mistake mistakes[] = {
      {"negative m", [](NormProblem&, ForwardArgs& a) { a.m = -1; }, "m = -1"},
      {"null x", [](NormProblem&, ForwardArgs& a) { a.x = nullptr; }, "x is NULL"},
      {"null y", [](NormProblem&, ForwardArgs& a) { a.y = nullptr; }, "y is NULL"},
      {"null weight", [](NormProblem&, ForwardArgs& a) { a.weight = nullptr; }, "weight is NULL"},
      {"null bias", [](NormProblem&, ForwardArgs& a) { a.bias = nullptr; }, "bias is NULL"},
      {"weight without has_weight",
       [](NormProblem& p, ForwardArgs&) { p.has_weight = false; }, "weight is given but has_weight is false"},
      {"bias without has_bias", [](NormProblem& p, ForwardArgs&) { p.has_bias = false; },
       "bias is given but has_bias is false"},
      {"mean for RMSNorm",
       [](NormProblem& p, ForwardArgs& a) {
         p.kind = NormKind::RMSNorm;
         p.has_bias = false;
         a.bias = nullptr;
       },
       "mean is given for RMSNorm"},
      {"negative eps", [](NormProblem&, ForwardArgs& a) { a.eps = -1e-5; }, "eps = "},
      {"NaN eps", [](NormProblem&, ForwardArgs& a) { a.eps = std::nan(""); }, "eps = "},
      {"infinite eps", [](NormProblem&, ForwardArgs& a) { a.eps = std::numeric_limits<double>::infinity(); }, "eps = "},
      {"x stride below N", [](NormProblem&, ForwardArgs& a) { a.x_stride = 999; }, "x_stride = 999 is less than N"},
      {"y stride below N", [](NormProblem&, ForwardArgs& a) { a.y_stride = 10; }, "y_stride = 10 is less than N"},
      {"x not aligned to its elements", [](NormProblem&, ForwardArgs& a) { a.x = addr(0x10001); },
       "is not aligned to its bf16 elements"},
      {"y not aligned to its elements", [](NormProblem&, ForwardArgs& a) { a.y = addr(0x40001); },
       "is not aligned to its bf16 elements"},
      {"weight not aligned", [](NormProblem&, ForwardArgs& a) { a.weight = addr(0x20002); },
       "weight = 0x20002 is not aligned to its 4-byte elements"},
      {"bias not aligned", [](NormProblem&, ForwardArgs& a) { a.bias = addr(0x30001); }, "bias = 0x30001"},
      {"mean not aligned", [](NormProblem&, ForwardArgs& a) { a.mean = faddr(0x50002); }, "mean = 0x50002"},
      {"rstd not aligned", [](NormProblem&, ForwardArgs& a) { a.rstd = faddr(0x60001); }, "rstd = 0x60001"},
      {"in place with another stride",
       [](NormProblem&, ForwardArgs& a) {
         a.y = const_cast<void*>(a.x);
         a.y_stride = 1024;
       },
       "y is x (in place)"},
  };
  for (const Mistake& m : mistakes) {
    NormProblem p = layer_norm();
    ForwardArgs a = valid_args();
    m.spoil(p, a);
    try {
      runtime::check_forward_call(p, a);
      ADD_FAILURE() << m.name << ": accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::InvalidArgument) << m.name;
      EXPECT_NE(std::string(e.what()).find(m.message), std::string::npos) << m.name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("forward"), std::string::npos) << m.name << ": " << e.what();
    }
  }
}

TEST(ForwardCall, TheEngineRejectsFusedOptionsBeforeAnyGpuCall) {
  Config config;
  config.disk_cache = false;
  Engine engine(config);
  NormProblem p = layer_norm();
  p.residual = true;
  try {
    engine.forward(p, valid_args(), nullptr);
    ADD_FAILURE() << "a forward with residual was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::Unsupported);
    EXPECT_NE(std::string(e.what()).find("forward does not take the fused option residual"), std::string::npos)
        << e.what();
  }
  p = layer_norm();
  try {
    engine.rms_norm_forward(p, valid_args(), nullptr);
    ADD_FAILURE() << "a LayerNorm problem was accepted by rms_norm_forward";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("rms_norm_forward was given a layernorm problem"), std::string::npos)
        << e.what();
  }
}
