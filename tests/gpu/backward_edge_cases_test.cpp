// The edges of the contract on a real GPU: an empty batch (M = 0) and a workspace that is too
// small. Neither may leave outputs half-written.
#include <gtest/gtest.h>

#include <string>

#include "support/device_run.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

::testing::AssertionResult all_bytes_are(const char* name, const std::vector<unsigned char>& bytes,
                                         unsigned char byte) {
  for (size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] != byte)
      return ::testing::AssertionFailure() << name << " byte " << i << " was overwritten (" << int(bytes[i]) << ")";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult all_bytes_are(const char* name, const HostTensor& t, unsigned char byte) {
  const auto* data = static_cast<const unsigned char*>(t.data());
  return all_bytes_are(name, std::vector<unsigned char>(data, data + t.size_bytes()), byte);
}

::testing::AssertionResult all_zero(const char* name, const DeviceBuffer& buffer, DType dtype, int64_t n) {
  HostTensor t(dtype, 1, n);
  buffer.download(t.data(), t.size_bytes());
  for (int64_t c = 0; c < n; ++c)
    if (t.get(0, c) != 0.0) return ::testing::AssertionFailure() << name << "[" << c << "] is " << t.get(0, c);
  return ::testing::AssertionSuccess();
}

const NormProblem kZeroRowProblems[] = {
    make_problem(NormKind::LayerNorm, 1000, DType::BF16, DType::F32, Affine::WeightAndBias),
    make_problem(NormKind::LayerNorm, 4096, DType::F16, DType::F16, Affine::WeightAndBias),
    make_problem(NormKind::LayerNorm, 131072, DType::BF16, DType::BF16, Affine::BiasOnly),
    make_problem(NormKind::LayerNorm, 33, DType::F32, DType::F32, Affine::None),
    make_problem(NormKind::RMSNorm, 33, DType::F32, DType::F32, Affine::WeightOnly),
    make_problem(NormKind::RMSNorm, 4096, DType::BF16, DType::BF16, Affine::None),
};

class BackwardZeroRows : public GpuTest {};

TEST_F(BackwardZeroRows, WritesZeroDweightAndDbiasAndLeavesDxUntouched) {
  Engine& engine = shared_engine();
  for (const NormProblem& p : kZeroRowProblems) {
    const int64_t n = p.n;
    // An empty batch may come with null row pointers or with real ones; both are valid.
    for (bool row_pointers : {false, true}) {
      SCOPED_TRACE(describe_problem(p) + (row_pointers ? ", row pointers given" : ", row pointers null"));
      auto vector_of = [&](DType dtype) {
        DeviceBuffer b(static_cast<size_t>(n * dtype_bytes(dtype)));
        b.poison();
        return b;
      };
      DeviceBuffer x = vector_of(p.x_dtype), dy = vector_of(p.dy_dtype), mean = vector_of(DType::F32),
                   rstd = vector_of(DType::F32), weight = vector_of(p.weight_dtype);
      DeviceBuffer dx = vector_of(p.dx_dtype), dweight = vector_of(p.weight_dtype), dbias = vector_of(p.weight_dtype);
      BackwardArgs args;
      args.m = 0;
      if (row_pointers) {
        args.x = x.ptr();
        args.dy = dy.ptr();
        args.rstd = static_cast<const float*>(rstd.ptr());
        if (p.kind == NormKind::LayerNorm) args.mean = static_cast<const float*>(mean.ptr());
        if (p.has_weight) args.weight = weight.ptr();
        args.dx = dx.ptr();
      }
      if (p.has_weight) args.dweight = dweight.ptr();
      if (p.has_bias) args.dbias = dbias.ptr();

      ASSERT_NO_THROW(engine.backward(p, args, stream()));
      synchronize();
      EXPECT_TRUE(all_bytes_are("dx", dx.download_all(), kPoisonByte));
      if (p.has_weight) {
        EXPECT_TRUE(all_zero("dweight", dweight, p.weight_dtype, n));
      }
      if (p.has_bias) {
        EXPECT_TRUE(all_zero("dbias", dbias, p.weight_dtype, n));
      }
    }
  }
}

class BackwardWorkspace : public GpuTest {};

TEST_F(BackwardWorkspace, TooSmallIsRejectedBeforeAnythingIsWritten) {
  Engine& engine = shared_engine();
  const NormProblem problems[] = {
      make_problem(NormKind::LayerNorm, 1024, DType::BF16, DType::F32, Affine::WeightAndBias),
      make_problem(NormKind::RMSNorm, 4096, DType::F16, DType::F16, Affine::WeightOnly),
  };
  for (const NormProblem& problem : problems) {
    const NormInputs inputs = make_inputs(problem, 4096, fresh_seed());
    DeviceCase device(inputs, RunOptions{});
    device.poison_outputs();
    const size_t needed = engine.workspace_size(problem, inputs.m);
    ASSERT_GT(needed, 0u) << "a problem with dγ needs a workspace for its partial sums";
    // A real buffer, but declared 4 bytes long: any launch needs at least one fp32 partial row
    // of N, so this is short whatever grid the engine picks.
    DeviceBuffer workspace(needed);
    BackwardArgs args = device.args();
    args.workspace = workspace.ptr();
    args.workspace_bytes = 4;
    try {
      engine.backward(problem, args, stream());
      ADD_FAILURE() << "a 4-byte workspace was accepted (workspace_size says " << needed << "), "
                    << describe_case(inputs);
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::Workspace) << e.what();
      EXPECT_NE(std::string(e.what()).find("workspace"), std::string::npos) << e.what();
    }
    synchronize();
    const Gradients out = device.download();
    EXPECT_TRUE(all_bytes_are("dx", out.dx, kPoisonByte)) << describe_case(inputs);
    EXPECT_TRUE(all_bytes_are("dweight", out.dweight, kPoisonByte)) << describe_case(inputs);
    EXPECT_TRUE(all_bytes_are("dbias", out.dbias, kPoisonByte)) << describe_case(inputs);
  }
}

TEST_F(BackwardWorkspace, ExactlyWorkspaceSizeBytesIsEnough) {
  Engine& engine = shared_engine();
  RunOptions caller_workspace;
  caller_workspace.caller_workspace = true;  // exactly workspace_size(problem, m) bytes
  for (int64_t m : {1, 199, 4096}) {
    const NormProblem problem = make_problem(NormKind::LayerNorm, 1000, DType::F16, DType::F32, Affine::WeightAndBias);
    EXPECT_TRUE(backward_matches_reference(engine, make_inputs(problem, m, fresh_seed()), stream(), caller_workspace));
  }
}

}  // namespace
}  // namespace normjit::test
