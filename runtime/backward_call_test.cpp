// Every invalid argument of a backward call is caught on the CPU, before anything is launched,
// with InvalidArgument and a message naming the argument. Table-driven: one row per mistake.
#include "runtime/backward_call.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "codegen/forward_config.h"
#include "codegen/kernel_source.h"
#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "normjit/normjit.hpp"

using namespace normjit;

namespace {

// Fake but well-aligned device addresses: nothing is dereferenced on the CPU. The tensors sit
// 1 MiB apart (0x100000, 0x200000, ...), more than any of them spans, so only a test's own
// aliasing overlaps.
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
  a.x = addr(0x100000);
  a.dy = addr(0x200000);
  a.mean = static_cast<const float*>(addr(0x300000));
  a.rstd = static_cast<const float*>(addr(0x400000));
  a.weight = addr(0x500000);
  a.dx = addr(0x600000);
  a.dweight = addr(0x700000);
  a.dbias = addr(0x800000);
  return a;
}

// Makes the call a gated RMSNorm that passes, for a mistake to spoil.
void gated(NormProblem& p, BackwardArgs& a, Gate gate = Gate::AfterNorm) {
  p.kind = NormKind::RMSNorm;
  p.has_bias = false;
  p.gate = gate;
  a.mean = nullptr;
  a.dbias = nullptr;
  a.z = addr(0xd00000);
  a.dz = addr(0xe00000);
}

// Makes the call parallel LayerNorms (γ and β each) that pass, for a mistake to spoil.
void parallel(NormProblem& p, BackwardArgs& a) {
  p.parallel = true;
  a.dy1 = addr(0xf00000);
  a.weight1 = addr(0x1000000);
  a.dweight1 = addr(0x1100000);
  a.dbias1 = addr(0x1200000);
}

// Makes the call a LayerNorm (γ and β) recomputed from its output, without x and mean, that
// passes, for a mistake to spoil.
void recompute(NormProblem& p, BackwardArgs& a) {
  p.recompute_from_output = true;
  a.x = nullptr;
  a.mean = nullptr;
  a.y = addr(0x1300000);
  a.bias = addr(0x1400000);
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
    {"XNotElementAligned", [](NormProblem&, BackwardArgs& a) { a.x = addr(0x100001); }, "x = "},
    {"RstdNotFloatAligned", [](NormProblem&, BackwardArgs& a) { a.rstd = static_cast<const float*>(addr(0x400002)); },
     "rstd"},
    {"WeightNotElementAligned", [](NormProblem&, BackwardArgs& a) { a.weight = addr(0x500002); }, "weight"},
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
    {"DresidualWithoutResidual", [](NormProblem&, BackwardArgs& a) { a.dresidual = addr(0x900000); },
     "residual is off"},
    {"DresidualStrideBelowN",
     [](NormProblem& p, BackwardArgs& a) {
       p.residual = true;
       a.dresidual = addr(0x900000);
       a.dresidual_stride = 999;
     },
     "dresidual_stride = 999"},
    {"DresidualNotElementAligned",
     [](NormProblem& p, BackwardArgs& a) {
       p.residual = true;
       a.dresidual = addr(0x900001);
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
     [](NormProblem&, BackwardArgs& a) { a.rowscale = static_cast<const float*>(addr(0x900000)); },
     "rowscale option is off"},
    {"RowscaleNotFloatAligned",
     [](NormProblem& p, BackwardArgs& a) {
       p.rowscale = true;
       a.rowscale = static_cast<const float*>(addr(0x900002));
     },
     "rowscale = "},
    {"DropoutWithoutMask",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bytes;
       a.dropout_p = 0.1;
     },
     "dropout_mask is NULL but dropout is on"},
    {"MaskWithoutDropout", [](NormProblem&, BackwardArgs& a) { a.dropout_mask = addr(0x900000); },
     "dropout is off"},
    {"DropoutPWithoutDropout", [](NormProblem&, BackwardArgs& a) { a.dropout_p = 0.5; }, "dropout is off"},
    {"DropoutPOne",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bits;
       a.dropout_mask = addr(0x900000);
       a.dropout_p = 1.0;
     },
     "dropout_p = 1"},
    {"DropoutPNegative",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bits;
       a.dropout_mask = addr(0x900000);
       a.dropout_p = -0.1;
     },
     "is not in [0, 1)"},
    {"DropoutPNaN",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bytes;
       a.dropout_mask = addr(0x900000);
       a.dropout_p = std::nan("");
     },
     "is not in [0, 1)"},
    {"ByteMaskStrideBelowN",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bytes;
       a.dropout_mask = addr(0x900000);
       a.dropout_mask_stride = 125;  // a bit-packed row's length, not a byte row's
     },
     "dropout_mask_stride = 125 bytes is less than a byte mask row (1000 bytes)"},
    {"BitMaskStrideBelowRow",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bits;
       a.dropout_mask = addr(0x900000);
       a.dropout_mask_stride = 124;
     },
     "less than a bit-packed mask row (125 bytes)"},
    {"DresidualInWithoutRowscaleOrDropout",
     [](NormProblem& p, BackwardArgs& a) {
       p.residual = true;
       a.dresidual = addr(0x900000);
       a.dresidual_in = addr(0xa00000);
     },
     "neither rowscale nor dropout is on"},
    {"DresidualInIsDx",
     [](NormProblem& p, BackwardArgs& a) {
       p.rowscale = true;
       a.rowscale = static_cast<const float*>(addr(0x900000));
       a.dresidual_in = a.dx;
     },
     "dresidual_in and dx are the same buffer"},
    {"DresidualInStrideBelowN",
     [](NormProblem& p, BackwardArgs& a) {
       p.rowscale = true;
       a.rowscale = static_cast<const float*>(addr(0x900000));
       a.dresidual_in = addr(0xa00000);
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
       a.z = addr(0xd00000);
       a.dz = addr(0xe00000);
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
    {"ZWithoutGate", [](NormProblem&, BackwardArgs& a) { a.z = addr(0xd00000); }, "z or dz is given but gate is off"},
    {"DzWithoutGate", [](NormProblem&, BackwardArgs& a) { a.dz = addr(0xe00000); }, "z or dz is given but gate is off"},
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
       a.z = addr(0xd00001);
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
       a.rowscale = static_cast<const float*>(addr(0x900000));
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
    {"Dy1WithoutParallel", [](NormProblem&, BackwardArgs& a) { a.dy1 = addr(0xf00000); }, "parallel is off"},
    {"Dbias1WithoutParallel", [](NormProblem&, BackwardArgs& a) { a.dbias1 = addr(0x1200000); }, "parallel is off"},
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
       a.weight1 = addr(0x1000002);
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
       a.x = addr(0x100000);
     },
     "mean is NULL but x is given with recompute_from_output"},
    {"YWithoutRecompute", [](NormProblem&, BackwardArgs& a) { a.y = addr(0x1300000); },
     "y is given but recompute_from_output is off"},
    {"BiasWithoutRecompute", [](NormProblem&, BackwardArgs& a) { a.bias = addr(0x1400000); },
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
       a.y = addr(0x1300001);
     },
     "y = "},
    {"RecomputeBiasNotElementAligned",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.bias = addr(0x1400002);
     },
     "bias = "},
    {"RecomputeFallbackXNotElementAligned",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.x = addr(0x100001);
       a.mean = static_cast<const float*>(addr(0x300000));
     },
     "x = "},
    {"RecomputeWithAGateAfterTheNorm",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a, Gate::AfterNorm);
       p.recompute_from_output = true;
       a.y = addr(0x1300000);
     },
     "recompute_from_output and gate after-norm are both set"},
    {"RecomputeWithAGateBeforeTheNorm",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a, Gate::BeforeNorm);
       p.recompute_from_output = true;
       a.y = addr(0x1300000);
     },
     "recompute_from_output and gate before-norm are both set"},
    {"RecomputeWithParallelNorms",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       recompute(p, a);
     },
     "recompute_from_output and parallel are both set"},
};

// `bytes` past `p`: a pointer into the middle of another tensor.
void* plus(const void* p, uintptr_t bytes) { return addr(reinterpret_cast<uintptr_t>(p) + bytes); }

constexpr uintptr_t kRow = 1000 * 2;  // one bf16 row (N = 1000)

// Outputs that share bytes with another tensor without being it exactly as in place allows:
// comparing base pointers alone lets each through, and each reads a value after it was
// overwritten (or keeps only one of two outputs). The message names both tensors.
const Mistake kOverlaps[] = {
    {"DweightOverlapsDbias", [](NormProblem&, BackwardArgs& a) { a.dbias = plus(a.dweight, 2000); },
     "dweight and dbias overlap: dweight spans bytes [0x700000, 0x700fa0) and dbias [0x7007d0, 0x701770)"},
    {"DbiasIsDweight", [](NormProblem&, BackwardArgs& a) { a.dbias = a.dweight; },
     "dweight and dbias are the same buffer"},
    {"DxOneElementPastDy", [](NormProblem&, BackwardArgs& a) { a.dx = plus(a.dy, 2); },
     "dx overlaps dy without being it: dx spans bytes [0x200002, 0x21f402) and dy [0x200000, 0x21f400)"},
    {"DxARowIntoDy", [](NormProblem&, BackwardArgs& a) { a.dx = plus(a.dy, kRow); }, "dx overlaps dy without being it"},
    {"ContiguousDxInThePaddingOfDysRows",
     [](NormProblem&, BackwardArgs& a) {
       a.dy_stride = 2000;  // dx's row 1 is dy's row 1
       a.dx = plus(a.dy, kRow);
     },
     "dx overlaps dy without being it: dx spans bytes [0x2007d0, 0x21fbd0) and dy [0x200000, 0x23e030)"},
    {"DxOneElementPastX", [](NormProblem&, BackwardArgs& a) { a.dx = plus(a.x, 2); }, "dx overlaps x without being it"},
    {"DxOverXWithAnotherStride",
     [](NormProblem&, BackwardArgs& a) {
       a.dx = const_cast<void*>(a.x);
       a.x_stride = 1024;
     },
     "dx is x (in place) but dx_stride = 1000 and x_stride = 1024 differ"},
    {"FloatDxOverBf16Dy",
     [](NormProblem& p, BackwardArgs& a) {
       p.dx_dtype = DType::F32;
       a.dx = const_cast<void*>(a.dy);
     },
     "dx is dy (in place) but dx is fp32 and dy is bf16"},
    {"DxIsRstd", [](NormProblem&, BackwardArgs& a) { a.dx = const_cast<float*>(a.rstd); },
     "dx is rstd, which it may not overwrite"},
    {"DweightIsWeight", [](NormProblem&, BackwardArgs& a) { a.dweight = const_cast<void*>(a.weight); },
     "dweight is weight, which it may not overwrite"},
    {"DweightOverTheMean", [](NormProblem&, BackwardArgs& a) { a.dweight = plus(a.mean, 40); },
     "dweight overlaps mean without being it"},
    {"DxARowIntoDresidual",
     [](NormProblem& p, BackwardArgs& a) {
       p.residual = true;
       a.dresidual = plus(a.dx, kRow);
     },
     "dx overlaps dresidual without being it"},
    {"DresidualInARowIntoDx",
     [](NormProblem& p, BackwardArgs& a) {
       p.rowscale = true;
       a.rowscale = static_cast<const float*>(addr(0x900000));
       a.dresidual_in = plus(a.dx, kRow);
     },
     "dx and dresidual_in overlap"},
    {"DxOverTheKeepMask",
     [](NormProblem& p, BackwardArgs& a) {
       p.dropout = DropoutMask::Bits;
       a.dropout_mask = addr(0x900000);
       a.dropout_p = 0.1;
       a.dx = plus(a.dropout_mask, 2);
     },
     "dx overlaps dropout_mask without being it"},
    {"WorkspaceInDx",
     [](NormProblem&, BackwardArgs& a) {
       a.workspace = plus(a.dx, 4096);
       a.workspace_bytes = 4096;
     },
     "dx and workspace overlap"},
    {"DzOneElementIntoDx",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a);
       a.dz = plus(a.dx, 2);
     },
     "dx and dz overlap"},
    {"DzOneElementIntoZ",
     [](NormProblem& p, BackwardArgs& a) {
       gated(p, a, Gate::BeforeNorm);
       a.dz = plus(a.z, 2);
     },
     "dz overlaps z without being it"},
    {"Dweight1OverlapsDbias",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       a.dweight1 = plus(a.dbias, 4);
     },
     "dbias and dweight1 overlap"},
    {"DxIsDy1",
     [](NormProblem& p, BackwardArgs& a) {
       parallel(p, a);
       a.dx = const_cast<void*>(a.dy1);
     },
     "dx is dy1, which it may not overwrite"},
    {"DxIsY",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.dx = const_cast<void*>(a.y);
     },
     "dx is y, which it may not overwrite"},
    {"DbiasOverBeta",
     [](NormProblem& p, BackwardArgs& a) {
       recompute(p, a);
       a.dbias = plus(a.bias, 4);
     },
     "dbias overlaps bias without being it"},
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
INSTANTIATE_TEST_SUITE_P(EveryOverlap, BadArgument, ::testing::ValuesIn(kOverlaps),
                         [](const auto& info) { return std::string(info.param.name); });

// What the overlap checks must let through: the in-place aliases, tensors that only touch (one
// ends where the next begins), and inputs sharing bytes (nothing writes them).
TEST(BackwardCall, InPlaceAndTouchingBuffersPass) {
  struct Case {
    const char* name;
    std::function<void(NormProblem&, BackwardArgs&)> edit;
  };
  const Case cases[] = {
      {"dx is dresidual (docs/FUSED.md)",
       [](NormProblem& p, BackwardArgs& a) {
         p.residual = true;
         a.dresidual = a.dx;
       }},
      {"dx is dresidual, padded rows",
       [](NormProblem& p, BackwardArgs& a) {
         p.residual = true;
         a.dresidual = a.dx;
         a.dx_stride = a.dresidual_stride = 2000;
       }},
      // Accepted before the overlap checks, and tests/cpu/c_api_test.cpp passes them.
      {"dx is x", [](NormProblem&, BackwardArgs& a) { a.dx = const_cast<void*>(a.x); }},
      {"dx is dy", [](NormProblem&, BackwardArgs& a) { a.dx = const_cast<void*>(a.dy); }},
      {"dx right after dy", [](NormProblem&, BackwardArgs& a) { a.dx = plus(a.dy, 64 * kRow); }},
      {"dy right after dx", [](NormProblem&, BackwardArgs& a) { a.dy = plus(a.dx, 64 * kRow); }},
      {"dbias right after dweight", [](NormProblem&, BackwardArgs& a) { a.dbias = plus(a.dweight, 4000); }},
      {"dweight right after rstd", [](NormProblem&, BackwardArgs& a) { a.dweight = plus(a.rstd, 64 * 4); }},
      {"the workspace right after dx",
       [](NormProblem&, BackwardArgs& a) {
         a.workspace = plus(a.dx, 64 * kRow);
         a.workspace_bytes = 4096;
       }},
      {"dy is x", [](NormProblem&, BackwardArgs& a) { a.dy = a.x; }},
      {"rstd inside mean", [](NormProblem&, BackwardArgs& a) { a.rstd = static_cast<const float*>(plus(a.mean, 4)); }},
      {"no rows: dx anywhere", [](NormProblem&, BackwardArgs& a) {
         a.m = 0;
         a.dx = a.dweight;
       }},
  };
  for (const Case& c : cases) {
    NormProblem p = layer_norm();
    BackwardArgs a = valid_args();
    c.edit(p, a);
    EXPECT_NO_THROW(runtime::check_backward_call(p, a)) << c.name;
  }
}

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
  a.dweight = addr(0x700000);
  a.dbias = addr(0x800000);
  EXPECT_NO_THROW(runtime::check_backward_call(layer_norm(), a));
}

TEST(BackwardCall, AlignmentFollowsThePointersAndStrides) {
  BackwardArgs a = valid_args();
  a.x = addr(0x100002);  // bf16: 2-byte aligned only
  EXPECT_EQ(runtime::check_backward_call(layer_norm(), a).problem.alignment, 2);
  a = valid_args();
  a.dy_stride = 1002;  // 2004-byte rows: 4-byte aligned
  EXPECT_EQ(runtime::check_backward_call(layer_norm(), a).problem.alignment, 4);
  a = valid_args();
  a.weight = addr(0x500004);  // fp32 weight read with the row's vectors
  EXPECT_EQ(runtime::check_backward_call(layer_norm(), a).problem.alignment, 4);
}

// Addresses aligned to 2^31 and beyond (a GPU's virtual addresses can be) are as aligned as
// any: the lowest set bit must not be narrowed to an int before it is capped (it read as 0,
// and the problem fell to alignment 1, the scalar kernels).
TEST(BackwardCall, AddressesAlignedBeyondAnIntAreFullyAligned) {
  for (int shift : {31, 32, 40, 47}) {
    const uintptr_t base = uintptr_t{1} << shift;
    EXPECT_EQ(runtime::row_alignment(reinterpret_cast<void*>(base), 1000, 2, 37), 16) << "2^" << shift;
    EXPECT_EQ(runtime::row_alignment(reinterpret_cast<void*>(base + 4), 1000, 2, 37), 4) << "2^" << shift;
    EXPECT_EQ(runtime::row_alignment(reinterpret_cast<void*>(base), int64_t{1} << 33, 2, 37), 16) << "2^" << shift;
  }
}

// Rows in phase (NormProblem::rows_in_phase): every row tensor's base on a 16-byte boundary and
// its stride x's modulo 16 bytes, so that row r starts at the same offset in each.
TEST(BackwardCall, RowsAreInPhaseWhereEveryRowTensorStartsAlike) {
  NormProblem p = layer_norm();
  p.n = 1001;  // 2002-byte rows: 2-byte aligned
  BackwardArgs a = valid_args();
  runtime::CheckedCall c = runtime::check_backward_call(p, a);
  EXPECT_EQ(c.problem.alignment, 2);
  EXPECT_TRUE(c.problem.rows_in_phase) << "contiguous rows from aligned bases";
  a.dx_stride = 1009;  // the same modulo 8 elements: still in phase
  EXPECT_TRUE(runtime::check_backward_call(p, a).problem.rows_in_phase);
  a = valid_args();
  a.dy = addr(0x200002);  // dy's rows start 2 bytes later than x's
  EXPECT_FALSE(runtime::check_backward_call(p, a).problem.rows_in_phase);
  a = valid_args();
  a.dx_stride = 1002;  // dx's row 1 starts at another offset than x's
  EXPECT_FALSE(runtime::check_backward_call(p, a).problem.rows_in_phase);
  a = valid_args();
  a.x = addr(0x100008);  // every tensor offset alike, but not from a boundary
  a.dy = addr(0x200008);
  a.dx = addr(0x600008);
  EXPECT_FALSE(runtime::check_backward_call(p, a).problem.rows_in_phase);
  p.rows_in_phase = false;  // the caller's word is kept
  EXPECT_FALSE(runtime::check_backward_call(p, valid_args()).problem.rows_in_phase);
  NormProblem wider = layer_norm();
  wider.n = 1001;
  wider.dx_dtype = DType::F32;  // dx of another element size
  EXPECT_FALSE(runtime::check_backward_call(wider, valid_args()).problem.rows_in_phase);
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
  a.rowscale = static_cast<const float*>(addr(0x900000));
  a.dropout_mask = addr(0xa00000);
  a.dropout_p = 0.5;
  a.dresidual_in = addr(0xb00000);
  codegen::validate_problem(p);
  const runtime::CheckedCall c = runtime::check_backward_call(p, a);
  EXPECT_EQ(c.args.dresidual_stride, 1000);
  EXPECT_EQ(c.args.dresidual_in_stride, 1000);
  EXPECT_EQ(c.args.dropout_mask_stride, 125);  // ceil(1000 / 8) bytes
  p.dropout = DropoutMask::Bytes;
  EXPECT_EQ(runtime::check_backward_call(p, a).args.dropout_mask_stride, 1000);
}

// Every combination of the fused options, with and without γ and dresidual_in, for both
// kinds: accepted (and given backward and forward source) or rejected naming the conflict,
// nothing else.
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
      if (p.residual) a.dresidual = addr(0x900000);
      if (p.rowscale) a.rowscale = static_cast<const float*>(addr(0xa00000));
      if (p.dropout != DropoutMask::None) {
        a.dropout_mask = addr(0xb00000);
        a.dropout_p = 0.25;
      }
      if (want_dresidual_in) a.dresidual_in = addr(0xc00000);
      if (p.gate != Gate::None) {
        a.z = addr(0xd00000);
        a.dz = addr(0xe00000);
      }
      if (p.parallel) {
        a.dy1 = addr(0xf00000);
        if (p.has_weight) a.weight1 = addr(0x1000000), a.dweight1 = addr(0x1100000);
        if (p.has_bias) a.dbias1 = addr(0x1200000);
      }
      if (p.recompute_from_output) {
        a.y = addr(0x1300000);
        if (p.has_bias) a.bias = addr(0x1400000);
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
        // The forward of the same problem (it leaves out the recompute, the backward's choice).
        EXPECT_NO_THROW(codegen::validate_forward_problem(p)) << what;
        const NormProblem f = codegen::resolve_forward_problem(p);
        EXPECT_FALSE(codegen::generate_forward_source(f, codegen::choose_forward_config(f)).text.empty()) << what;
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
  a.dresidual = addr(0x900004);  // bf16 rows read with dx's vectors
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 4);
  p.residual = false;
  p.rowscale = true;
  a = valid_args();
  a.rowscale = static_cast<const float*>(addr(0x900000));
  a.dresidual_in = addr(0xa00002);
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
  a.z = addr(0xd00004);  // bf16 z read with x's vectors
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 4);
  a.z = addr(0xd00000);
  a.dz_stride = 1001;  // 2002-byte rows of dz: 2-byte aligned
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 2);
}

TEST(BackwardCall, ParallelRowsResolveTheirStrideAndBoundTheAlignment) {
  NormProblem p = layer_norm();
  BackwardArgs a = valid_args();
  parallel(p, a);
  EXPECT_EQ(runtime::check_backward_call(p, a).args.dy1_stride, 1000);
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 16);
  a.weight1 = addr(0x1000004);  // fp32 γ1 read with the rows' vectors
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 4);
  a.weight1 = addr(0x1000000);
  a.dy1 = addr(0xf00002);
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 2);
  // Zero rows: only the parameter gradients (zeros) are written.
  BackwardArgs none;
  none.dweight = addr(0x700000);
  none.dbias = addr(0x800000);
  none.dweight1 = addr(0x1100000);
  none.dbias1 = addr(0x1200000);
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
  a.mean = static_cast<const float*>(addr(0x300000));
  EXPECT_NO_THROW(runtime::check_backward_call(p, a));
  a.x = addr(0x100000);
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
  none.dweight = addr(0x700000);
  none.dbias = addr(0x800000);
  EXPECT_NO_THROW(runtime::check_backward_call(p, none));
}

TEST(BackwardCall, RecomputeYAndBetaBoundTheAlignmentButTheFallbackXDoesNot) {
  NormProblem p = layer_norm();
  BackwardArgs a = valid_args();
  recompute(p, a);
  a.y = addr(0x1300004);  // bf16 rows read where x's are, with their vectors
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 4);
  a.y = addr(0x1300000);
  a.y_stride = 1001;  // 2002-byte rows: 2-byte aligned
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 2);
  a.y_stride = 0;
  a.bias = addr(0x1400008);  // fp32 β read with the rows' vectors
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 8);
  a.bias = addr(0x1400000);
  a.x = addr(0x100002);  // read an element at a time, where γ = 0
  a.mean = static_cast<const float*>(addr(0x300000));
  EXPECT_EQ(runtime::check_backward_call(p, a).problem.alignment, 16);
}

TEST(BackwardCall, NeverRaisesTheAlignmentTheCallerPromised) {
  NormProblem p = layer_norm();
  p.alignment = 4;
  EXPECT_EQ(runtime::check_backward_call(p, valid_args()).problem.alignment, 4);
}

}  // namespace
