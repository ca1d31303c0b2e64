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

// Fake device addresses, never dereferenced: the tensors sit 1 MiB apart (0x100000,
// 0x200000, ...), more than any of them spans, so only a test's own aliasing overlaps.
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
  a.x = addr(0x100000);
  a.weight = addr(0x200000);
  a.bias = addr(0x300000);
  a.y = addr(0x400000);
  a.mean = faddr(0x500000);
  a.rstd = faddr(0x600000);
  a.eps = 1e-5;
  return a;
}

struct Mistake {
  const char* name;
  std::function<void(NormProblem&, ForwardArgs&)> spoil;
  const char* message;  // a piece of the error message
};

// The mistake, made on a valid (p, a), is an InvalidArgument naming it, in a forward's message.
void expect_rejected(NormProblem p, ForwardArgs a, const char* name,
                     const std::function<void(NormProblem&, ForwardArgs&)>& spoil, const char* message) {
  spoil(p, a);
  try {
    runtime::check_forward_call(p, a);
    ADD_FAILURE() << name << ": accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument) << name;
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << name << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("forward"), std::string::npos) << name << ": " << e.what();
  }
}

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
  a.x = addr(0x100004);
  EXPECT_EQ(runtime::check_forward_call(layer_norm(), a).problem.alignment, 4);
  a = valid_args();
  a.y_stride = 1001;  // odd bf16 rows: 2-byte rows
  EXPECT_EQ(runtime::check_forward_call(layer_norm(), a).problem.alignment, 2);
  a = valid_args();
  a.weight = addr(0x200008);
  EXPECT_EQ(runtime::check_forward_call(layer_norm(), a).problem.alignment, 8);
  a = valid_args();
  a.bias = addr(0x300004);
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
      {"x not aligned to its elements", [](NormProblem&, ForwardArgs& a) { a.x = addr(0x100001); },
       "is not aligned to its bf16 elements"},
      {"y not aligned to its elements", [](NormProblem&, ForwardArgs& a) { a.y = addr(0x400001); },
       "is not aligned to its bf16 elements"},
      {"weight not aligned", [](NormProblem&, ForwardArgs& a) { a.weight = addr(0x200002); },
       "weight = 0x200002 is not aligned to its 4-byte elements"},
      {"bias not aligned", [](NormProblem&, ForwardArgs& a) { a.bias = addr(0x300001); }, "bias = 0x300001"},
      {"mean not aligned", [](NormProblem&, ForwardArgs& a) { a.mean = faddr(0x500002); }, "mean = 0x500002"},
      {"rstd not aligned", [](NormProblem&, ForwardArgs& a) { a.rstd = faddr(0x600001); }, "rstd = 0x600001"},
      {"in place with another stride",
       [](NormProblem&, ForwardArgs& a) {
         a.y = const_cast<void*>(a.x);
         a.y_stride = 1024;
       },
       "y is x (in place)"},
  };
  for (const Mistake& m : mistakes) expect_rejected(layer_norm(), valid_args(), m.name, m.spoil, m.message);
}

TEST(ForwardCall, TheEngineChecksFusedArgumentsBeforeAnyGpuCall) {
  Config config;
  config.disk_cache = false;
  Engine engine(config);
  NormProblem p = layer_norm();
  p.residual = true;  // taken now, but its pointer is missing
  try {
    engine.forward(p, valid_args(), nullptr);
    ADD_FAILURE() << "a forward with residual on and no residual was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("residual is NULL"), std::string::npos) << e.what();
  }
  p = layer_norm();
  p.gate = Gate::AfterNorm;  // the problem's own checks still run first
  try {
    engine.layer_norm_forward(p, valid_args(), nullptr);
    ADD_FAILURE() << "a gated LayerNorm was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("is set on a LayerNorm"), std::string::npos) << e.what();
  }
  p = layer_norm();
  ForwardArgs a = valid_args();
  a.z = addr(0x700000);
  try {
    engine.forward(p, a, nullptr);
    ADD_FAILURE() << "z without a gate was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("z is given but gate is off"), std::string::npos) << e.what();
  }
  // No rows: nothing to check against a GPU, and nothing to launch.
  p = layer_norm();
  p.residual = p.parallel = true;
  p.dropout = DropoutMask::Bits;
  EXPECT_NO_THROW(engine.forward(p, ForwardArgs{}, nullptr));
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

// ---- fused options (docs/FORWARD.md) -----------------------------------------------------------
namespace {

// LayerNorm N = 1000 bf16 with every option but the gate: residual, rowscale, dropout (bits),
// parallel norms; y in bf16 (dy_dtype default).
NormProblem fused_layer_norm() {
  NormProblem p = layer_norm();
  p.residual = true;
  p.rowscale = true;
  p.dropout = DropoutMask::Bits;
  p.parallel = true;
  return p;
}

ForwardArgs valid_fused_args() {
  ForwardArgs a = valid_args();
  a.residual = addr(0x700000);
  a.residual_out = addr(0x800000);
  a.rowscale = faddr(0x900000);
  a.dropout_mask = addr(0xA00000);
  a.dropout_p = 0.1;
  a.dropout_seed = 1234;
  a.dropout_offset = 5;
  a.weight1 = addr(0xB00000);
  a.bias1 = addr(0xC00000);
  a.y1 = addr(0xD00000);
  return a;
}

// RMSNorm N = 1000 bf16, the gate before the norm, with a residual.
NormProblem gated_rms_norm() {
  NormProblem p = layer_norm();
  p.kind = NormKind::RMSNorm;
  p.has_bias = false;
  p.gate = Gate::BeforeNorm;
  p.residual = true;
  return p;
}

ForwardArgs valid_gated_args() {
  ForwardArgs a = valid_args();
  a.bias = nullptr;
  a.mean = nullptr;
  a.residual = addr(0x700000);
  a.residual_out = addr(0x800000);
  a.z = addr(0xE00000);
  return a;
}

struct FusedMistake {
  const char* name;
  bool gated;  // starts from gated_rms_norm / valid_gated_args, else fused_layer_norm / valid_fused_args
  std::function<void(NormProblem&, ForwardArgs&)> spoil;
  const char* message;
};

void off_dropout(NormProblem& p, ForwardArgs& a) {
  p.dropout = DropoutMask::None;
  a.dropout_mask = nullptr;
  a.dropout_p = 0;
  a.dropout_seed = a.dropout_offset = 0;
}

void off_parallel(NormProblem& p, ForwardArgs& a) {
  p.parallel = false;
  a.weight1 = a.bias1 = nullptr;
  a.y1 = nullptr;
}

}  // namespace

TEST(ForwardCall, ValidFusedCallsPass) {
  EXPECT_NO_THROW(runtime::check_forward_call(fused_layer_norm(), valid_fused_args()));
  EXPECT_NO_THROW(runtime::check_forward_call(gated_rms_norm(), valid_gated_args()));
  // Each option alone with only its own pointers.
  NormProblem p = layer_norm();
  p.residual = true;
  ForwardArgs a = valid_args();
  a.residual = addr(0x700000);
  EXPECT_NO_THROW(runtime::check_forward_call(p, a));
  a.residual_out = addr(0x800000);
  EXPECT_NO_THROW(runtime::check_forward_call(p, a));
  p = layer_norm();
  p.rowscale = true;
  a = valid_args();
  a.rowscale = faddr(0x900000);
  EXPECT_NO_THROW(runtime::check_forward_call(p, a));
  for (DropoutMask form : {DropoutMask::Bytes, DropoutMask::Bits}) {
    p = layer_norm();
    p.dropout = form;
    a = valid_args();
    EXPECT_NO_THROW(runtime::check_forward_call(p, a));  // the mask is optional, p = 0 allowed
    a.dropout_p = 0.5;
    a.dropout_seed = ~uint64_t{0};
    a.dropout_offset = ~uint64_t{0};
    EXPECT_NO_THROW(runtime::check_forward_call(p, a));
    a.dropout_mask = addr(0xA00001);  // bytes: any address
    EXPECT_NO_THROW(runtime::check_forward_call(p, a));
    a.m = int64_t{1} << 32;  // rows 0 .. 2^32 − 1: 32-bit row indices
    // Terabytes of rows: each tensor gets 16 TiB of addresses of its own, or they would overlap.
    const auto slot = [](uintptr_t i) { return i << 44; };
    a.x = addr(slot(1));
    a.y = addr(slot(2));
    a.weight = addr(slot(3));
    a.bias = addr(slot(4));
    a.mean = faddr(slot(5));
    a.rstd = faddr(slot(6));
    a.dropout_mask = addr(slot(7) + 1);
    EXPECT_NO_THROW(runtime::check_forward_call(p, a));
  }
  p = layer_norm();
  p.kind = NormKind::RMSNorm;
  p.has_bias = false;
  p.gate = Gate::AfterNorm;
  a = valid_args();
  a.bias = nullptr;
  a.mean = nullptr;
  a.z = addr(0xE00000);
  EXPECT_NO_THROW(runtime::check_forward_call(p, a));
  // Parallel norms without γ and β: no weight1 or bias1.
  p = layer_norm();
  p.parallel = true;
  p.has_weight = p.has_bias = false;
  a = valid_args();
  a.weight = a.bias = nullptr;
  a.y1 = addr(0xD00000);
  EXPECT_NO_THROW(runtime::check_forward_call(p, a));
  // No rows: no pointers needed.
  ForwardArgs empty;
  EXPECT_NO_THROW(runtime::check_forward_call(fused_layer_norm(), empty));
  EXPECT_NO_THROW(runtime::check_forward_call(gated_rms_norm(), empty));
  // recompute_from_output is the backward's: ignored here.
  p = fused_layer_norm();
  p.parallel = false;
  p.recompute_from_output = true;
  a = valid_fused_args();
  a.weight1 = a.bias1 = nullptr;
  a.y1 = nullptr;
  const runtime::CheckedForwardCall c = runtime::check_forward_call(p, a);
  EXPECT_FALSE(c.problem.recompute_from_output);
}

TEST(ForwardCall, FusedStridesAreResolved) {
  const runtime::CheckedForwardCall c = runtime::check_forward_call(fused_layer_norm(), valid_fused_args());
  EXPECT_EQ(c.args.residual_stride, 1000);
  EXPECT_EQ(c.args.residual_out_stride, 1000);
  EXPECT_EQ(c.args.y1_stride, 1000);
  EXPECT_EQ(c.args.dropout_mask_stride, 125);  // 1000 bits
  EXPECT_EQ(c.problem.alignment, 16);
  const runtime::CheckedForwardCall g = runtime::check_forward_call(gated_rms_norm(), valid_gated_args());
  EXPECT_EQ(g.args.z_stride, 1000);
  EXPECT_EQ(g.args.residual_stride, 1000);
  // The mask's row: n bytes, or ceil(n/8) bytes of bits.
  for (int64_t n : {1, 7, 8, 9, 1000, 1001}) {
    for (DropoutMask form : {DropoutMask::Bytes, DropoutMask::Bits}) {
      NormProblem p = layer_norm();
      p.n = n;
      p.dropout = form;
      ForwardArgs a = valid_args();
      a.dropout_mask = addr(0xA00000);
      const int64_t row = form == DropoutMask::Bits ? (n + 7) / 8 : n;
      EXPECT_EQ(runtime::check_forward_call(p, a).args.dropout_mask_stride, row) << n;
      a.dropout_mask_stride = row;  // exactly a row: allowed
      EXPECT_EQ(runtime::check_forward_call(p, a).args.dropout_mask_stride, row) << n;
      a.dropout_mask_stride = row + 64;  // padded rows: kept
      EXPECT_EQ(runtime::check_forward_call(p, a).args.dropout_mask_stride, row + 64) << n;
    }
  }
  // Given strides are kept.
  ForwardArgs a = valid_fused_args();
  a.residual_stride = 1024;
  a.residual_out_stride = 2048;
  a.y1_stride = 1008;
  const runtime::CheckedForwardCall padded = runtime::check_forward_call(fused_layer_norm(), a);
  EXPECT_EQ(padded.args.residual_stride, 1024);
  EXPECT_EQ(padded.args.residual_out_stride, 2048);
  EXPECT_EQ(padded.args.y1_stride, 1008);
  EXPECT_EQ(padded.problem.alignment, 16);
}

TEST(ForwardCall, FusedRowsAndParametersLowerTheAlignment) {
  struct Case {
    const char* name;
    bool gated;
    std::function<void(NormProblem&, ForwardArgs&)> edit;
    int alignment;
  };
  const Case cases[] = {
      {"residual at 4 bytes", false, [](NormProblem&, ForwardArgs& a) { a.residual = addr(0x700004); }, 4},
      {"residual rows of odd length", false, [](NormProblem&, ForwardArgs& a) { a.residual_stride = 1001; }, 2},
      {"residual_out at 8 bytes", false, [](NormProblem&, ForwardArgs& a) { a.residual_out = addr(0x800008); }, 8},
      {"residual_out rows of 1004 elements", false,
       [](NormProblem&, ForwardArgs& a) { a.residual_out_stride = 1004; }, 8},
      {"y1 at 2 bytes", false, [](NormProblem&, ForwardArgs& a) { a.y1 = addr(0xD00002); }, 2},
      {"y1 rows of 1002 elements", false, [](NormProblem&, ForwardArgs& a) { a.y1_stride = 1002; }, 4},
      {"weight1 at 8 bytes", false, [](NormProblem&, ForwardArgs& a) { a.weight1 = addr(0xB00008); }, 8},
      {"bias1 at 4 bytes", false, [](NormProblem&, ForwardArgs& a) { a.bias1 = addr(0xC00004); }, 4},
      {"z at 2 bytes", true, [](NormProblem&, ForwardArgs& a) { a.z = addr(0xE00002); }, 2},
      {"z rows of 1004 elements", true, [](NormProblem&, ForwardArgs& a) { a.z_stride = 1004; }, 8},
      // fp32 y (and y1): 4-byte elements.
      {"fp32 y1 at 4 bytes", false,
       [](NormProblem& p, ForwardArgs& a) {
         p.dy_dtype = DType::F32;
         a.y1 = addr(0xD00004);
       },
       4},
      // Read one a row, not with the rows' vectors: no bound.
      {"rowscale at 4 bytes", false, [](NormProblem&, ForwardArgs& a) { a.rowscale = faddr(0x900004); }, 16},
      {"mask at an odd address", false, [](NormProblem&, ForwardArgs& a) { a.dropout_mask = addr(0xA00001); }, 16},
      {"no residual_out", false, [](NormProblem&, ForwardArgs& a) { a.residual_out = nullptr; a.residual_out_stride = 1001; }, 16},
  };
  for (const Case& c : cases) {
    NormProblem p = c.gated ? gated_rms_norm() : fused_layer_norm();
    ForwardArgs a = c.gated ? valid_gated_args() : valid_fused_args();
    c.edit(p, a);
    EXPECT_EQ(runtime::check_forward_call(p, a).problem.alignment, c.alignment) << c.name;
  }
}

TEST(ForwardCall, OutputsMayOverwriteTheirOwnInputsInPlace) {
  // y over x.
  ForwardArgs a = valid_fused_args();
  a.y = const_cast<void*>(a.x);
  EXPECT_NO_THROW(runtime::check_forward_call(fused_layer_norm(), a));
  // h over the residual (the residual stream updated in place), and over x.
  a = valid_fused_args();
  a.residual_out = const_cast<void*>(a.residual);
  EXPECT_NO_THROW(runtime::check_forward_call(fused_layer_norm(), a));
  a = valid_fused_args();
  a.residual_out = const_cast<void*>(a.x);
  EXPECT_NO_THROW(runtime::check_forward_call(fused_layer_norm(), a));
  // Both at once, with strides that resolve to the same rows (0 and n).
  a = valid_fused_args();
  a.y = const_cast<void*>(a.x);
  a.y_stride = 1000;
  a.residual_out = const_cast<void*>(a.residual);
  a.residual_stride = 0;
  a.residual_out_stride = 1000;
  EXPECT_NO_THROW(runtime::check_forward_call(fused_layer_norm(), a));
  // Padded rows in place: the same padding.
  a = valid_fused_args();
  a.residual_out = const_cast<void*>(a.residual);
  a.residual_stride = a.residual_out_stride = 1024;
  EXPECT_NO_THROW(runtime::check_forward_call(fused_layer_norm(), a));
  // The gated RMSNorm: y over x, h over the residual.
  a = valid_gated_args();
  a.y = const_cast<void*>(a.x);
  a.residual_out = const_cast<void*>(a.residual);
  EXPECT_NO_THROW(runtime::check_forward_call(gated_rms_norm(), a));
  // y in fp32 over fp32 x.
  NormProblem p = fused_layer_norm();
  p.x_dtype = DType::F32;
  p.dy_dtype = DType::F32;
  a = valid_fused_args();
  a.y = const_cast<void*>(a.x);
  EXPECT_NO_THROW(runtime::check_forward_call(p, a));
}

TEST(ForwardCall, EveryFusedMistakeIsAnInvalidArgumentNamingIt) {
  const FusedMistake mistakes[] = {
      // Pointers and values of options that are off.
      {"residual with residual off", false, [](NormProblem& p, ForwardArgs&) { p.residual = false; },
       "residual is given but the residual option is off"},
      {"residual_out without a pre-norm sum", false,
       [](NormProblem& p, ForwardArgs& a) {
         p.residual = p.rowscale = false;
         a.residual = nullptr;
         a.rowscale = nullptr;
         off_dropout(p, a);
       },
       "residual_out is given but none of residual, rowscale and dropout is on"},
      {"rowscale with rowscale off", false, [](NormProblem& p, ForwardArgs&) { p.rowscale = false; },
       "rowscale is given but the rowscale option is off"},
      {"dropout_mask with dropout off", false,
       [](NormProblem& p, ForwardArgs& a) {
         off_dropout(p, a);
         a.dropout_mask = addr(0xA00000);
       },
       "dropout_mask, dropout_p, dropout_seed or dropout_offset is given but dropout is off"},
      {"dropout_p with dropout off", false,
       [](NormProblem& p, ForwardArgs& a) {
         off_dropout(p, a);
         a.dropout_p = 0.1;
       },
       "is given but dropout is off"},
      {"dropout_seed with dropout off", false,
       [](NormProblem& p, ForwardArgs& a) {
         off_dropout(p, a);
         a.dropout_seed = 1;
       },
       "is given but dropout is off"},
      {"dropout_offset with dropout off", false,
       [](NormProblem& p, ForwardArgs& a) {
         off_dropout(p, a);
         a.dropout_offset = 1;
       },
       "is given but dropout is off"},
      {"z with the gate off", false, [](NormProblem&, ForwardArgs& a) { a.z = addr(0xE00000); },
       "z is given but gate is off"},
      {"weight1 with parallel off", false,
       [](NormProblem& p, ForwardArgs& a) {
         off_parallel(p, a);
         a.weight1 = addr(0xB00000);
       },
       "weight1, bias1 or y1 is given but parallel is off"},
      {"bias1 with parallel off", false,
       [](NormProblem& p, ForwardArgs& a) {
         off_parallel(p, a);
         a.bias1 = addr(0xC00000);
       },
       "weight1, bias1 or y1 is given but parallel is off"},
      {"y1 with parallel off", false,
       [](NormProblem& p, ForwardArgs& a) {
         off_parallel(p, a);
         a.y1 = addr(0xD00000);
       },
       "weight1, bias1 or y1 is given but parallel is off"},
      {"weight1 without has_weight", false,
       [](NormProblem& p, ForwardArgs& a) {
         p.has_weight = false;
         a.weight = nullptr;
       },
       "weight1 is given but has_weight is false"},
      {"bias1 without has_bias", false,
       [](NormProblem& p, ForwardArgs& a) {
         p.has_bias = false;
         a.bias = nullptr;
       },
       "bias1 is given but has_bias is false"},
      // dropout's values.
      {"dropout_p = 1", false, [](NormProblem&, ForwardArgs& a) { a.dropout_p = 1; }, "dropout_p = 1.000000 is not in [0, 1)"},
      {"dropout_p above 1", false, [](NormProblem&, ForwardArgs& a) { a.dropout_p = 1.5; }, "is not in [0, 1)"},
      {"negative dropout_p", false, [](NormProblem&, ForwardArgs& a) { a.dropout_p = -0.1; }, "is not in [0, 1)"},
      {"NaN dropout_p", false, [](NormProblem&, ForwardArgs& a) { a.dropout_p = std::nan(""); }, "is not in [0, 1)"},
      {"infinite dropout_p", false,
       [](NormProblem&, ForwardArgs& a) { a.dropout_p = std::numeric_limits<double>::infinity(); },
       "is not in [0, 1)"},
      {"dropout over more than 2^32 rows", false, [](NormProblem&, ForwardArgs& a) { a.m = (int64_t{1} << 32) + 1; },
       "dropout draws are indexed by 32-bit rows"},
      {"bit mask stride below a row", false, [](NormProblem&, ForwardArgs& a) { a.dropout_mask_stride = 124; },
       "dropout_mask_stride = 124 bytes is less than a bit-packed mask row (125 bytes)"},
      {"byte mask stride below a row", false,
       [](NormProblem& p, ForwardArgs& a) {
         p.dropout = DropoutMask::Bytes;
         a.dropout_mask_stride = 999;
       },
       "dropout_mask_stride = 999 bytes is less than a byte mask row (1000 bytes)"},
      {"negative mask stride", false, [](NormProblem&, ForwardArgs& a) { a.dropout_mask_stride = -1; },
       "dropout_mask_stride = -1"},
      // Required pointers.
      {"null residual", false, [](NormProblem&, ForwardArgs& a) { a.residual = nullptr; }, "residual is NULL"},
      {"null rowscale", false, [](NormProblem&, ForwardArgs& a) { a.rowscale = nullptr; }, "rowscale is NULL"},
      {"null y1", false, [](NormProblem&, ForwardArgs& a) { a.y1 = nullptr; }, "y1 is NULL"},
      {"null weight1", false, [](NormProblem&, ForwardArgs& a) { a.weight1 = nullptr; }, "weight1 is NULL"},
      {"null bias1", false, [](NormProblem&, ForwardArgs& a) { a.bias1 = nullptr; }, "bias1 is NULL"},
      {"null z", true, [](NormProblem&, ForwardArgs& a) { a.z = nullptr; }, "z is NULL"},
      // Strides.
      {"residual stride below N", false, [](NormProblem&, ForwardArgs& a) { a.residual_stride = 999; },
       "residual_stride = 999 is less than N"},
      {"residual_out stride below N", false, [](NormProblem&, ForwardArgs& a) { a.residual_out_stride = 500; },
       "residual_out_stride = 500 is less than N"},
      {"y1 stride below N", false, [](NormProblem&, ForwardArgs& a) { a.y1_stride = 1; }, "y1_stride = 1 is less than N"},
      {"z stride below N", true, [](NormProblem&, ForwardArgs& a) { a.z_stride = 998; }, "z_stride = 998 is less than N"},
      // Element alignment.
      {"residual not aligned", false, [](NormProblem&, ForwardArgs& a) { a.residual = addr(0x700001); },
       "residual = 0x700001 is not aligned to its bf16 elements"},
      {"residual_out not aligned", false, [](NormProblem&, ForwardArgs& a) { a.residual_out = addr(0x800001); },
       "residual_out = 0x800001 is not aligned to its bf16 elements"},
      {"y1 not aligned", false, [](NormProblem&, ForwardArgs& a) { a.y1 = addr(0xD00001); },
       "y1 = 0xd00001 is not aligned to its bf16 elements"},
      {"fp32 y1 at 2 bytes", false,
       [](NormProblem& p, ForwardArgs& a) {
         p.dy_dtype = DType::F32;
         a.y1 = addr(0xD00002);
       },
       "y1 = 0xd00002 is not aligned to its fp32 elements"},
      {"fp32 y at 2 bytes", false,
       [](NormProblem& p, ForwardArgs& a) {
         p.dy_dtype = DType::F32;
         a.y = addr(0x400002);
       },
       "y = 0x400002 is not aligned to its fp32 elements"},
      {"z not aligned", true, [](NormProblem&, ForwardArgs& a) { a.z = addr(0xE00001); },
       "z = 0xe00001 is not aligned to its bf16 elements"},
      {"weight1 not aligned", false, [](NormProblem&, ForwardArgs& a) { a.weight1 = addr(0xB00002); },
       "weight1 = 0xb00002 is not aligned to its 4-byte elements"},
      {"bias1 not aligned", false, [](NormProblem&, ForwardArgs& a) { a.bias1 = addr(0xC00001); },
       "bias1 = 0xc00001 is not aligned to its 4-byte elements"},
      {"rowscale not aligned", false, [](NormProblem&, ForwardArgs& a) { a.rowscale = faddr(0x900002); },
       "rowscale = 0x900002 is not aligned to its 4-byte elements"},
      // Outputs in one buffer.
      {"y is residual_out", false, [](NormProblem&, ForwardArgs& a) { a.residual_out = a.y; },
       "y and residual_out are the same buffer"},
      {"y is y1", false, [](NormProblem&, ForwardArgs& a) { a.y1 = a.y; }, "y and y1 are the same buffer"},
      {"the mask is y", false, [](NormProblem&, ForwardArgs& a) { a.dropout_mask = a.y; },
       "dropout_mask and y are the same buffer"},
      {"the mask is x", false, [](NormProblem&, ForwardArgs& a) { a.dropout_mask = const_cast<void*>(a.x); },
       "dropout_mask is x, which it may not overwrite"},
      {"residual_out is y1", false, [](NormProblem&, ForwardArgs& a) { a.y1 = a.residual_out; },
       "residual_out and y1 are the same buffer"},
      // Outputs over inputs they may not overwrite.
      {"y over the residual", false, [](NormProblem&, ForwardArgs& a) { a.y = const_cast<void*>(a.residual); },
       "y is residual, which it may not overwrite"},
      {"y1 over x", false, [](NormProblem&, ForwardArgs& a) { a.y1 = const_cast<void*>(a.x); },
       "y1 is x, which it may not overwrite"},
      {"y1 over the residual", false, [](NormProblem&, ForwardArgs& a) { a.y1 = const_cast<void*>(a.residual); },
       "y1 is residual, which it may not overwrite"},
      {"y over z", true, [](NormProblem&, ForwardArgs& a) { a.y = const_cast<void*>(a.z); },
       "y is z, which it may not overwrite"},
      {"residual_out over z", true, [](NormProblem&, ForwardArgs& a) { a.residual_out = const_cast<void*>(a.z); },
       "residual_out is z, which it may not overwrite"},
      // In place with other rows or another dtype.
      {"y over x with another stride", false,
       [](NormProblem&, ForwardArgs& a) {
         a.y = const_cast<void*>(a.x);
         a.y_stride = 1024;
       },
       "y is x (in place) but y_stride = 1024 and x_stride = 1000 differ"},
      {"fp32 y over bf16 x", false,
       [](NormProblem& p, ForwardArgs& a) {
         p.dy_dtype = DType::F32;
         a.y = const_cast<void*>(a.x);
       },
       "y is x (in place) but y is fp32 and x is bf16"},
      {"residual_out over the residual with another stride", false,
       [](NormProblem&, ForwardArgs& a) {
         a.residual_out = const_cast<void*>(a.residual);
         a.residual_stride = 1024;
       },
       "residual_out is residual (in place) but residual_out_stride = 1000 and residual_stride = 1024 differ"},
      {"residual_out over x with another stride", true,
       [](NormProblem&, ForwardArgs& a) {
         a.residual_out = const_cast<void*>(a.x);
         a.residual_out_stride = 1008;
       },
       "residual_out is x (in place) but residual_out_stride = 1008 and x_stride = 1000 differ"},
  };
  for (const FusedMistake& m : mistakes)
    expect_rejected(m.gated ? gated_rms_norm() : fused_layer_norm(), m.gated ? valid_gated_args() : valid_fused_args(),
                    m.name, m.spoil, m.message);
}

// ---- buffers that share bytes without being the same tensor -----------------------------------
namespace {

// `bytes` past `p`: a pointer into the middle of another tensor.
void* plus(const void* p, uintptr_t bytes) { return addr(reinterpret_cast<uintptr_t>(p) + bytes); }

constexpr uintptr_t kRow = 1000 * 2;  // one bf16 row of x, y, residual, z, y1 (N = 1000)
constexpr uintptr_t kRows = 64 * kRow;  // all of them (M = 64)

}  // namespace

// Comparing base pointers alone lets these through, and each one reads a value after it was
// overwritten. The messages name both tensors, in order, and the bytes each spans.
TEST(ForwardCall, PartlyOverlappingBuffersAreRejectedNamingBoth) {
  const FusedMistake mistakes[] = {
      {"y one element past x", false, [](NormProblem&, ForwardArgs& a) { a.y = plus(a.x, 2); },
       "y overlaps x without being it: y spans bytes [0x100002, 0x11f402) and x [0x100000, 0x11f400)"},
      {"y on x's last element", false, [](NormProblem&, ForwardArgs& a) { a.y = plus(a.x, kRows - 2); },
       "y overlaps x without being it"},
      {"y one row into x: y's row r is x's row r + 1", false,
       [](NormProblem&, ForwardArgs& a) { a.y = plus(a.x, kRow); }, "y overlaps x without being it"},
      {"contiguous y in the padding of x's rows (x stride 2N, y = x + N)", false,
       [](NormProblem&, ForwardArgs& a) {
         a.x_stride = 2000;
         a.y = plus(a.x, kRow);  // y's row 1 is x's row 1
       },
       "y overlaps x without being it: y spans bytes [0x1007d0, 0x11fbd0) and x [0x100000, 0x13e030)"},
      // Column slices of one [M, 2N] buffer touch no element of each other, but spans are what
      // is compared: rejected too (docs/RELIABILITY.md).
      {"y and x as column slices of one buffer (both stride 2N, y = x + N)", false,
       [](NormProblem&, ForwardArgs& a) {
         a.x_stride = a.y_stride = 2000;
         a.y = plus(a.x, kRow);
       },
       "y overlaps x without being it"},
      {"x's span past the address space (saturated, not wrapped)", false,
       [](NormProblem&, ForwardArgs& a) {
         a.dropout_mask = nullptr;
         a.x_stride = int64_t{1} << 62;
       },
       "y overlaps x without being it: y spans bytes [0x400000, 0x41f400) and x [0x100000, 0xffffffffffffffff)"},
      {"h a row into the residual it is computed from", false,
       [](NormProblem&, ForwardArgs& a) { a.residual_out = plus(a.residual, kRow); },
       "residual_out overlaps residual without being it"},
      {"h one element into x", false, [](NormProblem&, ForwardArgs& a) { a.residual_out = plus(a.x, 2); },
       "residual_out overlaps x without being it"},
      {"y1 a row into x", false, [](NormProblem&, ForwardArgs& a) { a.y1 = plus(a.x, kRow); },
       "y1 overlaps x without being it"},
      {"y over the end of γ", false, [](NormProblem&, ForwardArgs& a) { a.y = plus(a.weight, 4000 - 2); },
       "y overlaps weight without being it"},
      {"y1 over β1", false, [](NormProblem&, ForwardArgs& a) { a.y1 = plus(a.bias1, 2); },
       "y1 overlaps bias1 without being it"},
      {"h over rowscale", false, [](NormProblem&, ForwardArgs& a) { a.residual_out = plus(a.rowscale, 64 * 4 - 2); },
       "residual_out overlaps rowscale without being it"},
      {"mean inside x", false, [](NormProblem&, ForwardArgs& a) { a.mean = static_cast<float*>(plus(a.x, 4000)); },
       "mean overlaps x without being it"},
      {"rstd is γ", false,
       [](NormProblem&, ForwardArgs& a) { a.rstd = static_cast<float*>(const_cast<void*>(a.weight)); },
       "rstd is weight, which it may not overwrite"},
      {"y a row into z", true, [](NormProblem&, ForwardArgs& a) { a.y = plus(a.z, kRow); },
       "y overlaps z without being it"},
      // Two outputs.
      {"y1 half a row into y", false, [](NormProblem&, ForwardArgs& a) { a.y1 = plus(a.y, kRow / 2); },
       "y and y1 overlap: y spans bytes [0x400000, 0x41f400) and y1 [0x4003e8, 0x41f7e8)"},
      {"h on y's last element", false, [](NormProblem&, ForwardArgs& a) { a.residual_out = plus(a.y, kRows - 2); },
       "y and residual_out overlap"},
      {"mean and rstd sharing 32 rows", false,
       [](NormProblem&, ForwardArgs& a) { a.mean = static_cast<float*>(plus(a.rstd, 32 * 4)); },
       "mean and rstd overlap"},
      {"mean is rstd", false, [](NormProblem&, ForwardArgs& a) { a.mean = a.rstd; },
       "mean and rstd are the same buffer"},
      {"the keep-mask inside y", false, [](NormProblem&, ForwardArgs& a) { a.dropout_mask = plus(a.y, 1000); },
       "dropout_mask and y overlap"},
      {"the keep-mask's last row in y (its first row ends far before y)", false,
       [](NormProblem&, ForwardArgs& a) {
         a.dropout_mask_stride = 2000;  // 64 rows of 125 bytes, 2000 apart: 126125 bytes
         a.dropout_mask = addr(0x400000 - 126000);
       },
       "dropout_mask and y overlap"},
      {"h over the mean", false,
       [](NormProblem&, ForwardArgs& a) { a.mean = static_cast<float*>(plus(a.residual_out, 4)); },
       "residual_out and mean overlap"},
  };
  for (const FusedMistake& m : mistakes)
    expect_rejected(m.gated ? gated_rms_norm() : fused_layer_norm(), m.gated ? valid_gated_args() : valid_fused_args(),
                    m.name, m.spoil, m.message);
}

// What the overlap checks must let through: the exact in-place aliases, and tensors that only
// touch (one ends where the next begins).
TEST(ForwardCall, InPlaceAndTouchingBuffersPass) {
  struct Case {
    const char* name;
    std::function<void(ForwardArgs&)> edit;
  };
  const Case cases[] = {
      {"y over x in place", [](ForwardArgs& a) { a.y = const_cast<void*>(a.x); }},
      {"y over x in place, padded rows", [](ForwardArgs& a) {
         a.y = const_cast<void*>(a.x);
         a.x_stride = a.y_stride = 2000;
       }},
      {"h over the residual in place", [](ForwardArgs& a) { a.residual_out = const_cast<void*>(a.residual); }},
      {"h over x in place", [](ForwardArgs& a) { a.residual_out = const_cast<void*>(a.x); }},
      {"y right after x", [](ForwardArgs& a) { a.y = plus(a.x, kRows); }},
      {"x right after y", [](ForwardArgs& a) { a.x = plus(a.y, kRows); }},
      {"y right after γ", [](ForwardArgs& a) { a.y = plus(a.weight, 4000); }},
      {"y1 right after y", [](ForwardArgs& a) { a.y1 = plus(a.y, kRows); }},
      {"rstd right after mean", [](ForwardArgs& a) { a.rstd = static_cast<float*>(plus(a.mean, 64 * 4)); }},
      {"the keep-mask right after h", [](ForwardArgs& a) { a.dropout_mask = plus(a.residual_out, kRows); }},
      // Inputs may share bytes: nothing writes them.
      {"the residual is x", [](ForwardArgs& a) { a.residual = a.x; }},
      {"β1 is β", [](ForwardArgs& a) { a.bias1 = a.bias; }},
  };
  for (const Case& c : cases) {
    ForwardArgs a = valid_fused_args();
    c.edit(a);
    EXPECT_NO_THROW(runtime::check_forward_call(fused_layer_norm(), a)) << c.name;
  }
}

TEST(ForwardCall, ForwardParamsCarryTheArgumentsAndDropoutsThreshold) {
  const runtime::CheckedForwardCall c = runtime::check_forward_call(fused_layer_norm(), valid_fused_args());
  const runtime::ForwardParams f = runtime::forward_params(c.args);
  EXPECT_EQ(f.m, 64);
  EXPECT_EQ(f.x, c.args.x);
  EXPECT_EQ(f.x_stride, 1000);
  EXPECT_EQ(f.weight, c.args.weight);
  EXPECT_EQ(f.bias, c.args.bias);
  EXPECT_EQ(f.y, c.args.y);
  EXPECT_EQ(f.y_stride, 1000);
  EXPECT_EQ(f.mean, c.args.mean);
  EXPECT_EQ(f.rstd, c.args.rstd);
  EXPECT_EQ(f.eps, 1e-5);
  EXPECT_EQ(f.residual, c.args.residual);
  EXPECT_EQ(f.residual_stride, 1000);
  EXPECT_EQ(f.residual_out, c.args.residual_out);
  EXPECT_EQ(f.residual_out_stride, 1000);
  EXPECT_EQ(f.rowscale, c.args.rowscale);
  EXPECT_EQ(f.keep, c.args.dropout_mask);
  EXPECT_EQ(f.keep_stride, 125);
  EXPECT_EQ(f.seed, 1234u);
  EXPECT_EQ(f.offset, 5u);
  EXPECT_EQ(f.weight1, c.args.weight1);
  EXPECT_EQ(f.bias1, c.args.bias1);
  EXPECT_EQ(f.y1, c.args.y1);
  EXPECT_EQ(f.y1_stride, 1000);
  const runtime::CheckedForwardCall g = runtime::check_forward_call(gated_rms_norm(), valid_gated_args());
  const runtime::ForwardParams gf = runtime::forward_params(g.args);
  EXPECT_EQ(gf.z, g.args.z);
  EXPECT_EQ(gf.z_stride, 1000);

  struct Dropout {
    double p;
    double keep_scale;
    int64_t drop_below;
  };
  const Dropout cases[] = {{0, 1.0, 0},
                           {0.1, 1.0 / 0.9, 429496729},  // floor(0.1·2^32 = 429496729.6)
                           {0.5, 2.0, int64_t{1} << 31},
                           {0.25, 4.0 / 3.0, int64_t{1} << 30}};
  for (const Dropout& d : cases) {
    ForwardArgs a = valid_fused_args();
    a.dropout_p = d.p;
    const runtime::ForwardParams params = runtime::forward_params(runtime::check_forward_call(fused_layer_norm(), a).args);
    EXPECT_DOUBLE_EQ(params.keep_scale, d.keep_scale) << d.p;
    EXPECT_EQ(params.drop_below, d.drop_below) << d.p;
  }
  // Just below 1: every draw (< 2^32) is dropped but one, and the threshold fits 32 bits.
  ForwardArgs a = valid_fused_args();
  a.dropout_p = std::nextafter(1.0, 0.0);
  const runtime::ForwardParams high = runtime::forward_params(runtime::check_forward_call(fused_layer_norm(), a).args);
  EXPECT_LE(high.drop_below, int64_t{0xFFFFFFFF});
  EXPECT_EQ(high.drop_below, int64_t{0xFFFFFFFF});
  EXPECT_TRUE(std::isfinite(high.keep_scale));
  EXPECT_GT(high.keep_scale, 1e15);
  // The smallest p that drops anything: 2^-32.
  a.dropout_p = std::ldexp(1.0, -32);
  EXPECT_EQ(runtime::forward_params(runtime::check_forward_call(fused_layer_norm(), a).args).drop_below, 1);
  a.dropout_p = std::ldexp(1.0, -33);
  EXPECT_EQ(runtime::forward_params(runtime::check_forward_call(fused_layer_norm(), a).args).drop_below, 0);
  // Option-free: nothing dropped, nothing scaled.
  const runtime::ForwardParams plain = runtime::forward_params(runtime::check_forward_call(layer_norm(), valid_args()).args);
  EXPECT_EQ(plain.drop_below, 0);
  EXPECT_EQ(plain.keep_scale, 1.0);
  EXPECT_EQ(plain.keep, nullptr);
  EXPECT_EQ(plain.residual, nullptr);
  EXPECT_EQ(plain.y1, nullptr);
}

// Rows are in phase (NormProblem::rows_in_phase, which phased kernels need) where x and y start
// on 16-byte boundaries and their strides agree modulo 16 bytes; γ and β, read element by
// element by phased kernels, do not count.
TEST(ForwardCall, FindsWhetherXAndYAreInPhase) {
  auto checked = [](const ForwardArgs& a) { return runtime::check_forward_call(layer_norm(), a).problem; };
  ForwardArgs a = valid_args();
  a.x_stride = a.y_stride = 1001;  // odd bf16 rows, 2-byte aligned, in phase
  NormProblem p = checked(a);
  EXPECT_EQ(p.alignment, 2);
  EXPECT_TRUE(p.rows_in_phase);
  a.y_stride = 1009;  // 16 bytes more a row: still in phase
  EXPECT_TRUE(checked(a).rows_in_phase);
  a.weight = addr(0x200004);  // γ lowers the alignment, not the phase
  EXPECT_TRUE(checked(a).rows_in_phase);
  a = valid_args();
  a.x_stride = 1001;
  a.y_stride = 1002;
  EXPECT_FALSE(checked(a).rows_in_phase);
  a = valid_args();
  a.x_stride = a.y_stride = 1001;
  a.y = addr(0x400002);  // y's rows start one element later
  EXPECT_FALSE(checked(a).rows_in_phase);
  NormProblem asked = layer_norm();
  asked.rows_in_phase = false;  // a caller that knows better keeps it
  a = valid_args();
  a.x_stride = a.y_stride = 1001;
  EXPECT_FALSE(runtime::check_forward_call(asked, a).problem.rows_in_phase);
}
