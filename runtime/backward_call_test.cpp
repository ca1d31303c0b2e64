// Every invalid argument of a backward call is caught on the CPU, before anything is launched,
// with InvalidArgument and a message naming the argument. Table-driven: one row per mistake.
#include "runtime/backward_call.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "codegen/kernel_source.h"
#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "normjit/normjit.hpp"

using namespace normjit;

namespace {

// Fake but well-aligned device addresses: nothing is dereferenced on the CPU.
void* addr(uintptr_t a) { return reinterpret_cast<void*>(a); }

NormProblem layer_norm() {
  NormProblem p;
  p.kind = NormKind::LayerNorm;
  p.n = 1000;
  p.x_dtype = DType::BF16;
  p.weight_dtype = DType::F32;
  p.has_bias = true;
  return p;
}

BackwardArgs valid_args() {
  BackwardArgs a;
  a.m = 64;
  a.x = addr(0x10000);
  a.dy = addr(0x20000);
  a.mean = static_cast<const float*>(addr(0x30000));
  a.rstd = static_cast<const float*>(addr(0x40000));
  a.weight = addr(0x50000);
  a.dx = addr(0x60000);
  a.dweight = addr(0x70000);
  a.dbias = addr(0x80000);
  return a;
}

// Makes the call a gated RMSNorm that passes, for a mistake to spoil.
void gated(NormProblem& p, BackwardArgs& a, Gate gate = Gate::AfterNorm) {
  p.kind = NormKind::RMSNorm;
  p.has_bias = false;
  p.gate = gate;
  a.mean = nullptr;
  a.dbias = nullptr;
  a.z = addr(0xd0000);
  a.dz = addr(0xe0000);
}

// Makes the call parallel LayerNorms (γ and β each) that pass, for a mistake to spoil.
void parallel(NormProblem& p, BackwardArgs& a) {
  p.parallel = true;
  a.dy1 = addr(0xf0000);
  a.weight1 = addr(0x100000);
  a.dweight1 = addr(0x110000);
  a.dbias1 = addr(0x120000);
}

// Makes the call a LayerNorm (γ and β) recomputed from its output, without x and mean, that
// passes, for a mistake to spoil.
void recompute(NormProblem& p, BackwardArgs& a) {
  p.recompute_from_output = true;
  a.x = nullptr;
  a.mean = nullptr;
  a.y = addr(0x130000);
  a.bias = addr(0x140000);
}

struct Mistake {
  const char* name;
  std::function<void(NormProblem&, BackwardArgs&)> make;
  const char* message_names;  // what the message must mention
};

const Mistake kMistakes[] = {
    {"NegativeM", [](NormProblem&, BackwardArgs& a) { a.m = -1; }, "m = -1"},
    {"NullX", [](NormProblem&, BackwardArgs& a) { a.x = nullptr; }, "x is NULL"},
    {"NullDy", [](NormProblem&, BackwardArgs& a) { a.dy = nullptr; }, "dy is NULL"},
    {"NullRstd", [](NormProblem&, BackwardArgs& a) { a.rstd = nullptr; }, "rstd is NULL"},
    {"NullMeanForLayerNorm", [](NormProblem&, BackwardArgs& a) { a.mean = nullptr; }, "mean is NULL"},
    {"NullDx", [](NormProblem&, BackwardArgs& a) { a.dx = nullptr; }, "dx is NULL"},
    {"NullWeight", [](NormProblem&, BackwardArgs& a) { a.weight = nullptr; }, "weight is NULL"},
    {"NullDweight", [](NormProblem&, BackwardArgs& a) { a.dweight = nullptr; }, "dweight is NULL"},
    {"NullDbias", [](NormProblem&, BackwardArgs& a) { a.dbias = nullptr; }, "dbias is NULL"},
    {"XStrideBelowN", [](NormProblem&, BackwardArgs& a) { a.x_stride = 999; }, "x_stride = 999"},
    {"DyStrideNegative", [](NormProblem&, BackwardArgs& a) { a.dy_stride = -1000; }, "dy_stride"},
    {"DxStrideBelowN", [](NormProblem&, BackwardArgs& a) { a.dx_stride = 10; }, "dx_stride = 10"},
    {"XNotElementAligned", [](NormProblem&, BackwardArgs& a) { a.x = addr(0x10001); }, "x = "},
    {"RstdNotFloatAligned", [](NormProblem&, BackwardArgs& a) { a.rstd = static_cast<const float*>(addr(0x40002)); },
     "rstd"},
    {"WeightNotElementAligned", [](NormProblem&, BackwardArgs& a) { a.weight = addr(0x50002); }, "weight"},
    {"WeightWithoutHasWeight",
     [](NormProblem& p, BackwardArgs& a) {
       p.has_weight = false;
       a.dweight = nullptr;
     },
     "has_weight is false"},
    {"DbiasWithoutHasBias", [](NormProblem& p, BackwardArgs&) { p.has_bias = false; }, "has_bias is false"},
    {"MeanForRmsNorm",
     [](NormProblem& p, BackwardArgs& a) {
       p.kind = NormKind::RMSNorm;
       p.has_bias = false;
       a.dbias = nullptr;
     },
     "mean is given for RMSNorm"},
    // Fused options (docs/FUSED.md).
    {"ResidualWithoutDresidual", [](NormProblem& p, BackwardArgs&) { p.residual = true; },
     "dresidual is NULL but residual is on"},
    {"DresidualWithoutResidual", [](NormProblem&, BackwardArgs& a) { a.dresidual = addr(0x90000); },
     "residual is off"},
    {"DresidualStrideBelowN",
     [](NormProblem& p, BackwardArgs& a) {
       p.residual = true;
       a.dresidual = addr(0x90000);
       a.dresidual_stride = 999;
     },
     "dresidual_stride = 999"},
    {"DresidualNotElementAligned",
     [](NormProblem& p, BackwardArgs& a) {
       p.residual = true;
       a.dresidual = addr(0x90001);
     },
     "dresidual = "},
    {"InPlaceDxWithAnotherStride",
     [](NormProblem& p, BackwardArgs& a) {
       p.residual = true;
       a.dresidual = a.dx;
       a.dresidual_stride = 1024;
     },
     "dx is dresidual (in place)"},
    {"RowscaleWithoutPointer", [](NormProblem& p, BackwardArgs&) { p.rowscale = true; },
     "rowscale is NULL but rowscale is on"},
    {"RowscalePointerWithoutOption",
     [](NormProblem&, BackwardArgs& a) { a.rowscale = static_cast<const float*>(addr(0x90000)); },
     "rowscale option is off"},
    {"RowscaleNotFloatAligned",
     [](NormProblem& p, BackwardArgs& a) {
       p.rowscale = true;
       a.rowscale = static_cast<const float*>(addr(0x90002));
     },
     "rowscale = "},
    {"DropoutWithoutMask",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bytes;
       a.dropout_p = 0.1;
     },
     "dropout_mask is NULL but dropout is on"},
    {"MaskWithoutDropout", [](NormProblem&, BackwardArgs& a) { a.dropout_mask = addr(0x90000); },
     "dropout is off"},
    {"DropoutPWithoutDropout", [](NormProblem&, BackwardArgs& a) { a.dropout_p = 0.5; }, "dropout is off"},
    {"DropoutPOne",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bits;
       a.dropout_mask = addr(0x90000);
       a.dropout_p = 1.0;
     },
     "dropout_p = 1"},
    {"DropoutPNegative",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bits;
       a.dropout_mask = addr(0x90000);
       a.dropout_p = -0.1;
     },
     "is not in [0, 1)"},
    {"DropoutPNaN",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bytes;
       a.dropout_mask = addr(0x90000);
       a.dropout_p = std::nan("");
     },
     "is not in [0, 1)"},
    {"ByteMaskStrideBelowN",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bytes;
       a.dropout_mask = addr(0x90000);
       a.dropout_mask_stride = 125;  // a bit-packed row's length, not a byte row's
     },
     "dropout_mask_stride = 125 bytes is less than a byte mask row (1000 bytes)"},
    {"BitMaskStrideBelowRow",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bits;
       a.dropout_mask = addr(0x90000);
       a.dropout_mask_stride = 124;
     },
     "less than a bit-packed mask row (125 bytes)"},
    {"DresidualInWithoutRowscaleOrDropout",
     [](NormProblem& p, BackwardArgs& a) {
       p.residual = true;
       a.dresidual = addr(0x90000);
       a.dresidual_in = addr(0xa0000);
     },
     "neither rowscale nor dropout is on"},
    {"DresidualInIsDx",
     [](NormProblem& p, BackwardArgs& a) {
       p.rowscale = true;
       a.rowscale = static_cast<const float*>(addr(0x90000));
       a.dresidual_in = a.dx;
     },
     "dresidual_in and dx are the same buffer"},
    {"DresidualInStrideBelowN",
     [](NormProblem& p, BackwardArgs& a) {
       p.rowscale = true;
       a.rowscale = static_cast<const float*>(addr(0x90000));
       a.dresidual_in = addr(0xa0000);
       a.dresidual_in_stride = 64;
     },
     "dresidual_in_stride = 64"},
    {"ZeroCenteredWeightWithoutWeight",
     [](NormProblem& p, BackwardArgs& a) {
       p.has_weight = false;
       p.zero_centered_weight = true;
       a.weight = nullptr;
       a.dweight = nullptr;
     },
     "zero_centered_weight is set but has_weight is false"},
    // Gated RMSNorm.
    {"GateOnLayerNorm",
     [](NormProblem& p, BackwardArgs& a) {
       p.gate = Gate::BeforeNorm;
       a.z = addr(0xd0000);
       a.dz = addr(0xe0000);
     },
     "gate before-norm is set on a LayerNorm"},
    {"GateWithoutZ",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a);
       a.z = nullptr;
     },
     "z is NULL but gate is on"},
    {"GateWithoutDz",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a, Gate::BeforeNorm);
       a.dz = nullptr;
     },
     "dz is NULL but gate is on"},
    {"ZWithoutGate", [](NormProblem&, BackwardArgs& a) { a.z = addr(0xd0000); }, "z or dz is given but gate is off"},
    {"DzWithoutGate", [](NormProblem&, BackwardArgs& a) { a.dz = addr(0xe0000); }, "z or dz is given but gate is off"},
    {"ZStrideBelowN",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a);
       a.z_stride = 999;
     },
     "z_stride = 999"},
    {"DzStrideBelowN",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a);
       a.dz_stride = 5;
     },
     "dz_stride = 5"},
    {"ZNotElementAligned",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a);
       a.z = addr(0xd0001);
     },
     "z = "},
    {"DzIsDx",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a);
       a.dz = a.dx;
     },
     "dz and dx are the same buffer"},
    {"DzIsDresidual",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a);
       p.residual = true;
       a.dresidual = a.dz;
     },
     "dz and dresidual are the same buffer"},
    {"DzIsDresidualIn",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a, Gate::BeforeNorm);
       p.rowscale = true;
       a.rowscale = static_cast<const float*>(addr(0x90000));
       a.dresidual_in = a.dz;
     },
     "dz and dresidual_in are the same buffer"},
    // Parallel norms.
    {"ParallelWithoutDy1",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       a.dy1 = nullptr;
     },
     "dy1 is NULL but parallel is on"},
    {"ParallelWithoutWeight1",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       a.weight1 = nullptr;
     },
     "weight1 is NULL but parallel is on"},
    {"ParallelWithoutDweight1",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       a.dweight1 = nullptr;
     },
     "dweight1 is NULL but parallel is on"},
    {"ParallelWithoutDbias1",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       a.dbias1 = nullptr;
     },
     "dbias1 is NULL but parallel is on"},
    {"Dy1WithoutParallel", [](NormProblem&, BackwardArgs& a) { a.dy1 = addr(0xf0000); }, "parallel is off"},
    {"Dbias1WithoutParallel", [](NormProblem&, BackwardArgs& a) { a.dbias1 = addr(0x120000); }, "parallel is off"},
    {"Weight1WithoutHasWeight",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       p.has_weight = false;
       a.weight = a.dweight = nullptr;
     },
     "weight1 or dweight1 is given but has_weight is false"},
    {"Dbias1WithoutHasBias",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       p.has_bias = false;
       a.dbias = nullptr;
     },
     "dbias1 is given but has_bias is false"},
    {"Dy1StrideBelowN",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       a.dy1_stride = 999;
     },
     "dy1_stride = 999"},
    {"Weight1NotElementAligned",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       a.weight1 = addr(0x100002);
     },
     "weight1 = "},
    {"Dweight1IsDweight",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       a.dweight1 = a.dweight;
     },
     "dweight and dweight1 are the same buffer"},
    {"Dbias1IsDbias",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       a.dbias1 = a.dbias;
     },
     "dbias and dbias1 are the same buffer"},
    {"ParallelWithAGate",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a);
       p.parallel = true;
     },
     "parallel and gate are both set"},
    // Recompute from the output.
    {"RecomputeWithoutY",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.y = nullptr;
     },
     "y is NULL but recompute_from_output is on"},
    {"RecomputeWithoutBiasForLayerNormWithBias",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.bias = nullptr;
     },
     "bias is NULL but recompute_from_output is on and has_bias is set"},
    {"RecomputeWithXButWithoutMean",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.x = addr(0x10000);
     },
     "mean is NULL but x is given with recompute_from_output"},
    {"YWithoutRecompute", [](NormProblem&, BackwardArgs& a) { a.y = addr(0x130000); },
     "y is given but recompute_from_output is off"},
    {"BiasWithoutRecompute", [](NormProblem&, BackwardArgs& a) { a.bias = addr(0x140000); },
     "bias is given but recompute_from_output is off"},
    {"RecomputeBiasWithoutHasBias",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       p.has_bias = false;
       a.dbias = nullptr;
     },
     "bias is given but has_bias is false"},
    {"RecomputeBiasOnRmsNorm",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       p.kind = NormKind::RMSNorm;
       p.has_bias = false;
       a.dbias = nullptr;
     },
     "bias is given but has_bias is false"},
    {"YStrideBelowN",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.y_stride = 999;
     },
     "y_stride = 999"},
    {"YNotElementAligned",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.y = addr(0x130001);
     },
     "y = "},
    {"RecomputeBiasNotElementAligned",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.bias = addr(0x140002);
     },
     "bias = "},
    {"RecomputeFallbackXNotElementAligned",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.x = addr(0x10001);
       a.mean = static_cast<const float*>(addr(0x30000));
     },
     "x = "},
    {"RecomputeWithAGateAfterTheNorm",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a, Gate::AfterNorm);
       p.recompute_from_output = true;
       a.y = addr(0x130000);
     },
     "recompute_from_output and gate after-norm are both set"},
    {"RecomputeWithAGateBeforeTheNorm",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a, Gate::BeforeNorm);
       p.recompute_from_output = true;
       a.y = addr(0x130000);
     },
     "recompute_from_output and gate before-norm are both set"},
    {"RecomputeWithParallelNorms",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       recompute(p, a);
     },
     "recompute_from_output and parallel are both set"},
};

class BadArgument : public ::testing::TestWithParam<Mistake> {};

TEST_P(BadArgument, IsRejectedWithAMessageNamingIt) {
  NormProblem p = layer_norm();
  BackwardArgs a = valid_args();
  GetParam().make(p, a);
  try {
    codegen::validate_problem(p);
    runtime::check_backward_call(p, a);
    FAIL() << GetParam().name << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find(GetParam().message_names), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(EveryMistake, BadArgument, ::testing::ValuesIn(kMistakes),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(BackwardCall, ValidArgumentsPassAndStridesResolve) {
  const runtime::CheckedCall c = runtime::check_backward_call(layer_norm(), valid_args());
  EXPECT_EQ(c.args.x_stride, 1000);
  EXPECT_EQ(c.args.dy_stride, 1000);
  EXPECT_EQ(c.args.dx_stride, 1000);
  EXPECT_EQ(c.problem.alignment, 16);
}

TEST(BackwardCall, ZeroRowsNeedNoRowPointers) {
  BackwardArgs a;
  a.m = 0;
  a.dweight = addr(0x70000);
  a.dbias = addr(0x80000);
  EXPECT_NO_THROW(runtime::check_backward_call(layer_norm(), a));
}

TEST(BackwardCall, AlignmentFollowsThePointersAndStrides) {
  BackwardArgs a = valid_args();
  a.x = addr(0x10002);  // bf16: 2-byte aligned only
  EXPECT_EQ(runtime::check_backward_call(layer_norm(), a).problem.alignment, 2);
  a = valid_args();
  a.dy_stride = 1002;  // 2004-byte rows: 4-byte aligned
  EXPECT_EQ(runtime::check_backward_call(layer_norm(), a).problem.alignment, 4);
  a = valid_args();
  a.weight = addr(0x50004);  // fp32 weight read with the row's vectors
  EXPECT_EQ(runtime::check_backward_call(layer_norm(), a).problem.alignment, 4);
}

TEST(BackwardCall, OneRowIgnoresTheStrideForAlignment) {
  BackwardArgs a = valid_args();
  a.m = 1;
  a.x_stride = 1001;
  EXPECT_EQ(runtime::check_backward_call(layer_norm(), a).problem.alignment, 16);
}

TEST(BackwardCall, EveryFusedOptionTogetherPassesAndResolvesItsStrides) {
  NormProblem p = layer_norm();
  p.residual = p.zero_centered_weight = p.rowscale = true;
  p.dropout = DropoutMask::Bits;
  BackwardArgs a = valid_args();
  a.dresidual = a.dx;  // in place
  a.rowscale = static_cast<const float*>(addr(0x90000));
  a.dropout_mask = addr(0xa0000);
  a.dropout_p = 0.5;
  a.dresidual_in = addr(0xb0000);
  codegen::validate_problem(p);
  const runtime::CheckedCall c = runtime::check_backward_call(p, a);
  EXPECT_EQ(c.args.dresidual_stride, 1000);
  EXPECT_EQ(c.args.dresidual_in_stride, 1000);
  EXPECT_EQ(c.args.dropout_mask_stride, 125);  // ceil(1000 / 8) bytes
  p.dropout = DropoutMask::Bytes;
  EXPECT_EQ(runtime::check_backward_call(p, a).args.dropout_mask_stride, 1000);
}

// Every combination of the fused options, with and without γ and dresidual_in, for both
// kinds: accepted (and given a kernel source) or rejected naming the conflict, nothing else.
TEST(BackwardCall, EveryFusedCombinationWorksOrNamesItsConflict) {
  int accepted = 0;
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (int bits = 0; bits < 2 * 2 * 2 * 2 * 3 * 3 * 2 * 2; ++bits) {
      NormProblem p = layer_norm();
      p.kind = kind;
      p.has_bias = kind == NormKind::LayerNorm;
      p.has_weight = bits & 1;
      p.residual = bits & 2;
      p.zero_centered_weight = bits & 4;
      p.rowscale = bits & 8;
      const bool want_dresidual_in = bits & 16;
      p.dropout = static_cast<DropoutMask>(bits / 32 % 3);
      p.gate = static_cast<Gate>(bits / 96 % 3);
      p.parallel = bits / 288 % 2;
      p.recompute_from_output = bits / 576;
      BackwardArgs a = valid_args();
      if (kind == NormKind::RMSNorm) {
        a.mean = nullptr;
        a.dbias = nullptr;
      }
      if (!p.has_weight) a.weight = a.dweight = nullptr;
      if (p.residual) a.dresidual = addr(0x90000);
      if (p.rowscale) a.rowscale = static_cast<const float*>(addr(0xa0000));
      if (p.dropout != DropoutMask::None) {
        a.dropout_mask = addr(0xb0000);
        a.dropout_p = 0.25;
      }
      if (want_dresidual_in) a.dresidual_in = addr(0xc0000);
      if (p.gate != Gate::None) {
        a.z = addr(0xd0000);
        a.dz = addr(0xe0000);
      }
      if (p.parallel) {
        a.dy1 = addr(0xf0000);
        if (p.has_weight) a.weight1 = addr(0x100000), a.dweight1 = addr(0x110000);
        if (p.has_bias) a.dbias1 = addr(0x120000);
      }
      if (p.recompute_from_output) {
        a.y = addr(0x130000);
        if (p.has_bias) a.bias = addr(0x140000);
        if (bits % 3 == 0) a.x = nullptr, a.mean = nullptr;  // without x in a third of the calls
      }

      const char* conflict = nullptr;
      // In the order validate_problem and check_backward_call test them.
      if (p.zero_centered_weight && !p.has_weight) conflict = "zero_centered_weight";
      else if (p.gate != Gate::None && kind == NormKind::LayerNorm) conflict = "is set on a LayerNorm";
      else if (p.parallel && p.gate != Gate::None) conflict = "parallel and gate are both set";
      else if (p.recompute_from_output && p.gate != Gate::None) conflict = "recompute_from_output and gate";
      else if (p.recompute_from_output && p.parallel) conflict = "recompute_from_output and parallel are both set";
      else if (want_dresidual_in && !p.rowscale && p.dropout == DropoutMask::None) conflict = "dresidual_in";
      const std::string what = codegen::describe(p) + (want_dresidual_in ? " +dresidual_in" : "");
      try {
        codegen::validate_problem(p);
        const runtime::CheckedCall c = runtime::check_backward_call(p, a);
        EXPECT_EQ(conflict, nullptr) << what << " was accepted";
        EXPECT_FALSE(codegen::generate_backward_source(c.problem, codegen::choose_launch_config(c.problem)).text.empty());
        ++accepted;
      } catch (const Error& e) {
        ASSERT_NE(conflict, nullptr) << what << " was rejected: " << e.what();
        EXPECT_EQ(e.status(), Status::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find(conflict), std::string::npos) << e.what();
      }
    }
  EXPECT_GT(accepted, 350);
}

TEST(BackwardCall, FusedRowsBoundTheAlignment) {
  NormProblem p = layer_norm();
  p.residual = true;
  BackwardArgs a = valid_args();
  a.dresidual = addr(0x90004);  // bf16 rows read with dx's vectors
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 4);
  p.residual = false;
  p.rowscale = true;
  a = valid_args();
  a.rowscale = static_cast<const float*>(addr(0x90000));
  a.dresidual_in = addr(0xa0002);
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 2);
}

TEST(BackwardCall, GateRowsResolveTheirStridesAndBoundTheAlignment) {
  NormProblem p = layer_norm();
  BackwardArgs a = valid_args();
  gated(p, a, Gate::BeforeNorm);
  const runtime::CheckedCall c = runtime::check_backward_call(p, a);
  EXPECT_EQ(c.args.z_stride, 1000);
  EXPECT_EQ(c.args.dz_stride, 1000);
  EXPECT_EQ(c.problem.alignment, 16);
  a.z = addr(0xd0004);  // bf16 z read with x's vectors
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 4);
  a.z = addr(0xd0000);
  a.dz_stride = 1001;  // 2002-byte rows of dz: 2-byte aligned
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 2);
}

TEST(BackwardCall, ParallelRowsResolveTheirStrideAndBoundTheAlignment) {
  NormProblem p = layer_norm();
  BackwardArgs a = valid_args();
  parallel(p, a);
  EXPECT_EQ(runtime::check_backward_call(p, a).args.dy1_stride, 1000);
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 16);
  a.weight1 = addr(0x100004);  // fp32 γ1 read with the rows' vectors
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 4);
  a.weight1 = addr(0x100000);
  a.dy1 = addr(0xf0002);
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 2);
  // Zero rows: only the parameter gradients (zeros) are written.
  BackwardArgs none;
  none.dweight = addr(0x70000);
  none.dbias = addr(0x80000);
  none.dweight1 = addr(0x110000);
  none.dbias1 = addr(0x120000);
  EXPECT_NO_THROW(runtime::check_backward_call(p, none));
}

TEST(BackwardCall, RecomputeNeedsNeitherXNorMeanAndResolvesYsStride) {
  NormProblem p = layer_norm();
  BackwardArgs a = valid_args();
  recompute(p, a);
  codegen::validate_problem(p);
  runtime::CheckedCall c = runtime::check_backward_call(p, a);
  EXPECT_EQ(c.args.y_stride, 1000);
  EXPECT_EQ(c.problem.alignment, 16);
  // Without x, mean may still be given (the forward saved it); with x it is needed.
  a.mean = static_cast<const float*>(addr(0x30000));
  EXPECT_NO_THROW(runtime::check_backward_call(p, a));
  a.x = addr(0x10000);
  a.x_stride = 1024;
  c = runtime::check_backward_call(p, a);
  EXPECT_EQ(c.args.x_stride, 1024);
  // RMSNorm and a LayerNorm without β need no bias; neither does γ only or no affine at all.
  p.has_bias = false;
  a.bias = a.dbias = nullptr;
  EXPECT_NO_THROW(runtime::check_backward_call(p, a));
  p.has_weight = false;
  a.weight = a.dweight = nullptr;
  EXPECT_NO_THROW(runtime::check_backward_call(p, a));
  p.kind = NormKind::RMSNorm;
  a.mean = nullptr;
  a.x = nullptr;
  EXPECT_NO_THROW(runtime::check_backward_call(p, a));
  // Zero rows: only the parameter gradients (zeros) are written; y and β are not needed.
  p = layer_norm();
  p.recompute_from_output = true;
  BackwardArgs none;
  none.dweight = addr(0x70000);
  none.dbias = addr(0x80000);
  EXPECT_NO_THROW(runtime::check_backward_call(p, none));
}

TEST(BackwardCall, RecomputeYAndBetaBoundTheAlignmentButTheFallbackXDoesNot) {
  NormProblem p = layer_norm();
  BackwardArgs a = valid_args();
  recompute(p, a);
  a.y = addr(0x130004);  // bf16 rows read where x's are, with their vectors
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 4);
  a.y = addr(0x130000);
  a.y_stride = 1001;  // 2002-byte rows: 2-byte aligned
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 2);
  a.y_stride = 0;
  a.bias = addr(0x140008);  // fp32 β read with the rows' vectors
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 8);
  a.bias = addr(0x140000);
  a.x = addr(0x10002);  // read an element at a time, where γ = 0
  a.mean = static_cast<const float*>(addr(0x30000));
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 16);
}

TEST(BackwardCall, NeverRaisesTheAlignmentTheCallerPromised) {
  NormProblem p = layer_norm();
  p.alignment = 4;
  EXPECT_EQ(runtime::check_backward_call(p, valid_args()).problem.alignment, 4);
}

}  // namespace
