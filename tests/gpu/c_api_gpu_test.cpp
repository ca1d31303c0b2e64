// The C API on a GPU: the same kernels behind nj_layer_norm_backward / nj_rms_norm_backward,
// with workspace sizing and error reporting through status codes and nj_last_error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "normjit/normjit.h"
#include "support/device_run.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/reference.h"

namespace normjit::test {
namespace {

nj_problem to_c(const NormProblem& p) {
  nj_problem c{};
  c.kind = static_cast<nj_norm_kind>(p.kind);
  c.n = p.n;
  c.x_dtype = static_cast<nj_dtype>(p.x_dtype);
  c.dy_dtype = static_cast<nj_dtype>(p.dy_dtype);
  c.dx_dtype = static_cast<nj_dtype>(p.dx_dtype);
  c.weight_dtype = static_cast<nj_dtype>(p.weight_dtype);
  c.has_weight = p.has_weight;
  c.has_bias = p.has_bias;
  c.alignment = 0;  // 16
  return c;
}

nj_backward_args to_c(const BackwardArgs& a) {
  nj_backward_args c{};
  c.m = a.m;
  c.x = a.x;
  c.x_stride = a.x_stride;
  c.dy = a.dy;
  c.dy_stride = a.dy_stride;
  c.mean = a.mean;
  c.rstd = a.rstd;
  c.weight = a.weight;
  c.dx = a.dx;
  c.dx_stride = a.dx_stride;
  c.dweight = a.dweight;
  c.dbias = a.dbias;
  c.workspace = a.workspace;
  c.workspace_bytes = a.workspace_bytes;
  return c;
}

class CApiOnGpu : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    setenv("NORMJIT_DISK_CACHE", "0", 1);  // never touch the user's cache directory
    ASSERT_EQ(nj_engine_create(nullptr, &engine_), NJ_OK) << nj_last_error();
  }
  void TearDown() override {
    if (engine_) nj_engine_destroy(engine_);
    unsetenv("NORMJIT_DISK_CACHE");
    GpuTest::TearDown();
  }

  using CBackward = nj_status (*)(nj_engine*, const nj_problem*, const nj_backward_args*, nj_stream);

  // One case through the C API; with_workspace: sized by nj_workspace_size, else NULL.
  void expect_matches_reference(CBackward backward, const NormProblem& problem, int64_t m, bool with_workspace) {
    const NormInputs inputs = make_inputs(problem, m, fresh_seed());
    DeviceCase device(inputs, RunOptions{});
    device.poison_outputs();
    const nj_problem c_problem = to_c(problem);
    nj_backward_args args = to_c(device.args());
    DeviceBuffer workspace;
    if (with_workspace) {
      size_t bytes = 0;
      ASSERT_EQ(nj_workspace_size(engine_, &c_problem, m, &bytes), NJ_OK) << nj_last_error();
      workspace = DeviceBuffer(bytes);
      args.workspace = workspace.ptr();
      args.workspace_bytes = bytes;
    }
    ASSERT_EQ(backward(engine_, &c_problem, &args, stream()), NJ_OK) << nj_last_error() << "\n" << describe_case(inputs);
    synchronize();
    EXPECT_TRUE(gradients_match(inputs, device.download(), reference_backward(inputs)))
        << "workspace: " << (with_workspace ? "nj_workspace_size bytes" : "NULL");
  }

  nj_engine* engine_ = nullptr;
};

TEST_F(CApiOnGpu, LayerNormBackwardMatchesReference) {
  const NormProblem bf16 = make_problem(NormKind::LayerNorm, 1000, DType::BF16, DType::F32, Affine::WeightAndBias);
  expect_matches_reference(nj_layer_norm_backward, bf16, 37, /*with_workspace=*/true);
  const NormProblem f32 = make_problem(NormKind::LayerNorm, 4096, DType::F32, DType::F32, Affine::None);
  expect_matches_reference(nj_layer_norm_backward, f32, 1, /*with_workspace=*/false);
}

TEST_F(CApiOnGpu, RmsNormBackwardMatchesReference) {
  const NormProblem f16 = make_problem(NormKind::RMSNorm, 4096, DType::F16, DType::F16, Affine::WeightOnly);
  expect_matches_reference(nj_rms_norm_backward, f16, 199, /*with_workspace=*/false);
  const NormProblem bf16 = make_problem(NormKind::RMSNorm, 33, DType::BF16, DType::F32, Affine::WeightOnly);
  expect_matches_reference(nj_rms_norm_backward, bf16, 4, /*with_workspace=*/true);
}

TEST_F(CApiOnGpu, TooSmallWorkspaceIsReportedAsAWorkspaceError) {
  const NormProblem problem = make_problem(NormKind::RMSNorm, 2048, DType::BF16, DType::F32, Affine::WeightOnly);
  const NormInputs inputs = make_inputs(problem, 64, fresh_seed());
  DeviceCase device(inputs, RunOptions{});
  const nj_problem c_problem = to_c(problem);
  size_t bytes = 0;
  ASSERT_EQ(nj_workspace_size(engine_, &c_problem, inputs.m, &bytes), NJ_OK) << nj_last_error();
  DeviceBuffer workspace(bytes);
  nj_backward_args args = to_c(device.args());
  args.workspace = workspace.ptr();
  args.workspace_bytes = 4;  // less than one fp32 partial row of N
  EXPECT_EQ(nj_rms_norm_backward(engine_, &c_problem, &args, stream()), NJ_ERR_WORKSPACE);
  EXPECT_NE(std::string(nj_last_error()).find("workspace"), std::string::npos) << nj_last_error();
}

}  // namespace
}  // namespace normjit::test
