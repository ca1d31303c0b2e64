#include "codegen/norm_problem.h"

#include <gtest/gtest.h>

#include "normjit/normjit.hpp"

using namespace normjit;
using codegen::describe;
using codegen::resolve_problem;
using codegen::validate_problem;

namespace {
NormProblem layer_norm(int64_t n, DType x = DType::BF16) {
  NormProblem p;
  p.kind = NormKind::LayerNorm;
  p.n = n;
  p.x_dtype = x;
  p.has_bias = true;
  return p;
}

// The message validate_problem rejects p with (InvalidArgument), or a failure when it accepts it.
std::string rejection_of(const NormProblem& p) {
  try {
    validate_problem(p);
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << describe(p) << " was accepted";
  return "";
}

Status status_of(const NormProblem& p) {
  try {
    validate_problem(p);
  } catch (const Error& e) {
    return e.status();
  }
  return Status::Ok;
}
}  // namespace

TEST(NormProblem, DefaultsResolveToTheDtypeOfX) {
  const NormProblem r = resolve_problem(layer_norm(4096, DType::F16));
  EXPECT_EQ(r.dy_dtype, DType::F16);
  EXPECT_EQ(r.dx_dtype, DType::F16);
  EXPECT_EQ(r.weight_dtype, DType::F16);
  EXPECT_EQ(r.alignment, 16);
}

TEST(NormProblem, EveryListedDtypeCombinationIsAccepted) {
  for (DType x : {DType::F32, DType::F16, DType::BF16})
    for (DType dx : {DType::Default, DType::F32, DType::F16, DType::BF16})
      for (DType w : {DType::Default, DType::F32, x}) {
        NormProblem p = layer_norm(1000, x);
        p.dx_dtype = dx;
        p.weight_dtype = w;
        EXPECT_EQ(status_of(p), Status::Ok) << describe(p);
      }
}

TEST(NormProblem, EveryNFromOneUpIsAccepted) {
  for (int64_t n : {1, 2, 3, 5, 31, 33, 4095, 5003, 1048576}) EXPECT_EQ(status_of(layer_norm(n)), Status::Ok) << n;
}

TEST(NormProblem, RejectsZeroAndNegativeN) {
  EXPECT_EQ(status_of(layer_norm(0)), Status::InvalidArgument);
  EXPECT_EQ(status_of(layer_norm(-5)), Status::InvalidArgument);
}

TEST(NormProblem, RejectsAWeightDtypeThatIsNeitherFp32NorX) {
  NormProblem p = layer_norm(64, DType::BF16);
  p.weight_dtype = DType::F16;
  EXPECT_EQ(status_of(p), Status::Unsupported);
}

TEST(NormProblem, RejectsUnknownDtypesAndKinds) {
  NormProblem p = layer_norm(64);
  p.x_dtype = static_cast<DType>(17);
  EXPECT_EQ(status_of(p), Status::InvalidArgument);
  p = layer_norm(64);
  p.x_dtype = DType::Default;
  EXPECT_EQ(status_of(p), Status::InvalidArgument);
  p = layer_norm(64);
  p.dx_dtype = static_cast<DType>(9);
  EXPECT_EQ(status_of(p), Status::InvalidArgument);
  p = layer_norm(64);
  p.kind = static_cast<NormKind>(3);
  EXPECT_EQ(status_of(p), Status::InvalidArgument);
}

TEST(NormProblem, RejectsRmsNormWithBias) {
  NormProblem p = layer_norm(64);
  p.kind = NormKind::RMSNorm;
  p.has_bias = true;
  EXPECT_EQ(status_of(p), Status::InvalidArgument);
}

TEST(NormProblem, RejectsAnAlignmentThatIsNotAPowerOfTwo) {
  NormProblem p = layer_norm(64);
  p.alignment = 12;
  EXPECT_EQ(status_of(p), Status::InvalidArgument);
}

TEST(NormProblem, ErrorsNameTheProblemAndWhatToDo) {
  try {
    validate_problem(layer_norm(0));
    FAIL() << "N=0 was accepted";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("layernorm"), std::string::npos) << msg;
    EXPECT_NE(msg.find("N=0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Pass"), std::string::npos) << msg;
  }
}

TEST(NormProblem, WithoutWeightOrBiasTheWeightDtypeDoesNotSplitKernels) {
  NormProblem a = layer_norm(64, DType::BF16), b = a;
  a.has_weight = b.has_weight = false;
  a.has_bias = b.has_bias = false;
  a.weight_dtype = DType::F32;
  b.weight_dtype = DType::BF16;
  EXPECT_TRUE(resolve_problem(a) == resolve_problem(b));
}

TEST(NormProblem, DescribeNamesEveryField) {
  NormProblem p = layer_norm(4096, DType::BF16);
  p.weight_dtype = DType::F32;
  EXPECT_EQ(describe(p), "layernorm N=4096 x=bf16 dy=bf16 dx=bf16 weight=fp32 +weight +bias align=16");
}

// ---- fused options (docs/FUSED.md) -------------------------------------------------------------

TEST(NormProblem, FusedOptionsAreAcceptedAlone) {
  NormProblem p = layer_norm(4096, DType::BF16);
  p.residual = true;
  p.zero_centered_weight = true;
  p.rowscale = true;
  p.dropout = DropoutMask::Bits;
  EXPECT_NO_THROW(validate_problem(p));
  EXPECT_TRUE(codegen::has_fused_options(p));
  EXPECT_FALSE(codegen::has_fused_options(layer_norm(4096, DType::BF16)));
}

TEST(NormProblem, RejectsZeroCenteredWeightWithoutWeight) {
  NormProblem p = layer_norm(4096, DType::BF16);
  p.has_weight = false;
  p.zero_centered_weight = true;
  const std::string message = rejection_of(p);
  EXPECT_NE(message.find("zero_centered_weight"), std::string::npos) << message;
  EXPECT_NE(message.find("has_weight"), std::string::npos) << message;
}

TEST(NormProblem, RejectsAnUnknownDropoutMaskForm) {
  NormProblem p = layer_norm(4096, DType::BF16);
  p.dropout = static_cast<DropoutMask>(3);
  EXPECT_EQ(status_of(p), Status::InvalidArgument);
}

TEST(NormProblem, DescribeNamesTheFusedOptionsOnlyWhenOn) {
  NormProblem p = layer_norm(4096, DType::BF16);
  p.weight_dtype = DType::F32;
  const std::string base = describe(p);
  p.residual = true;
  p.zero_centered_weight = true;
  p.rowscale = true;
  p.dropout = DropoutMask::Bytes;
  EXPECT_EQ(describe(p), base + " +residual +zero-centered-weight +rowscale +dropout=bytes");
  NormProblem q = p;
  q.dropout = DropoutMask::Bits;
  EXPECT_FALSE(resolve_problem(p) == resolve_problem(q));
}

// ---- gated RMSNorm ----------------------------------------------------------------------------

TEST(NormProblem, GatedRmsNormIsAFusedOptionInBothOrders) {
  NormProblem p = layer_norm(4096, DType::BF16);
  p.kind = NormKind::RMSNorm;
  p.has_bias = false;
  const std::string base = describe(p);
  for (Gate gate : {Gate::AfterNorm, Gate::BeforeNorm}) {
    p.gate = gate;
    EXPECT_NO_THROW(validate_problem(p));
    EXPECT_TRUE(codegen::has_fused_options(p));
    EXPECT_EQ(describe(p), base + " +gate=" + codegen::gate_name(gate));
  }
  NormProblem after = p, before = p;
  after.gate = Gate::AfterNorm;
  EXPECT_FALSE(resolve_problem(after) == resolve_problem(before));
  EXPECT_STREQ(codegen::gate_name(Gate::AfterNorm), "after-norm");
  EXPECT_STREQ(codegen::gate_name(Gate::BeforeNorm), "before-norm");
}

TEST(NormProblem, RejectsAGateOnLayerNorm) {
  NormProblem p = layer_norm(4096, DType::BF16);
  p.gate = Gate::AfterNorm;
  const std::string message = rejection_of(p);
  EXPECT_NE(message.find("gate after-norm is set on a LayerNorm"), std::string::npos) << message;
  EXPECT_NE(message.find("Use kind RMSNorm"), std::string::npos) << message;
}

TEST(NormProblem, ParallelNormsAreAFusedOptionButNotWithAGate) {
  NormProblem p = layer_norm(4096, DType::BF16);
  p.weight_dtype = DType::F32;
  const std::string base = describe(p);
  p.parallel = true;
  EXPECT_NO_THROW(validate_problem(p));
  EXPECT_TRUE(codegen::has_fused_options(p));
  EXPECT_EQ(describe(p), base + " +parallel");
  EXPECT_FALSE(resolve_problem(p) == resolve_problem(layer_norm(4096, DType::BF16)));
  p.kind = NormKind::RMSNorm;
  p.has_bias = false;
  p.gate = Gate::BeforeNorm;
  const std::string message = rejection_of(p);
  EXPECT_NE(message.find("parallel and gate are both set"), std::string::npos) << message;
}

TEST(NormProblem, RecomputeFromOutputIsAFusedOptionButNotWithAGateOrParallelNorms) {
  NormProblem p = layer_norm(4096, DType::BF16);
  p.weight_dtype = DType::F32;
  const std::string base = describe(p);
  p.recompute_from_output = true;
  EXPECT_NO_THROW(validate_problem(p));
  EXPECT_TRUE(codegen::has_fused_options(p));
  EXPECT_EQ(describe(p), base + " +recompute");
  NormProblem plain = p;
  plain.recompute_from_output = false;
  EXPECT_FALSE(resolve_problem(p) == resolve_problem(plain));
  // Every affine form: γ and β, γ only, β only, neither.
  for (int affine = 0; affine < 4; ++affine) {
    NormProblem q = p;
    q.has_weight = affine & 1;
    q.has_bias = affine & 2;
    EXPECT_NO_THROW(validate_problem(q)) << describe(q);
  }
  NormProblem parallel = p;
  parallel.parallel = true;
  std::string message = rejection_of(parallel);
  EXPECT_NE(message.find("recompute_from_output and parallel are both set"), std::string::npos) << message;
  p.kind = NormKind::RMSNorm;
  p.has_bias = false;
  for (Gate gate : {Gate::AfterNorm, Gate::BeforeNorm}) {
    p.gate = gate;
    message = rejection_of(p);
    EXPECT_NE(message.find(std::string("recompute_from_output and gate ") + codegen::gate_name(gate) +
                           " are both set"),
              std::string::npos)
        << message;
  }
}

TEST(NormProblem, RejectsAnUnknownGate) {
  NormProblem p = layer_norm(4096, DType::BF16);
  p.kind = NormKind::RMSNorm;
  p.has_bias = false;
  p.gate = static_cast<Gate>(3);
  const std::string message = rejection_of(p);
  EXPECT_NE(message.find("gate 3 is unknown"), std::string::npos) << message;
}
