// KernelLaunch describes launches on the CPU: the grid, the block and the attributes each kind
// of launch carries, and a copy pointing at its own attributes, not the original's.
#include "runtime/kernel_launch.h"

#include <gtest/gtest.h>

namespace normjit::runtime {
namespace {

CUstream fake_stream() { return reinterpret_cast<CUstream>(0x1234); }

TEST(KernelLaunch, APlainLaunchHasItsShapeAndNoAttributes) {
  KernelLaunch launch(7, 2, 32, 8, 4096, fake_stream());
  const CUlaunchConfig& c = launch.config();
  EXPECT_EQ(c.gridDimX, 7u);
  EXPECT_EQ(c.gridDimY, 2u);
  EXPECT_EQ(c.gridDimZ, 1u);
  EXPECT_EQ(c.blockDimX, 32u);
  EXPECT_EQ(c.blockDimY, 8u);
  EXPECT_EQ(c.blockDimZ, 1u);
  EXPECT_EQ(c.sharedMemBytes, 4096u);
  EXPECT_EQ(c.hStream, fake_stream());
  EXPECT_EQ(c.numAttrs, 0u);
}

TEST(KernelLaunch, DependsOnThePreviousKernelFromSm90Only) {
  KernelLaunch old_device(4, 1, 256, 1, 0, nullptr);
  EXPECT_EQ(old_device.dependent_on_previous_kernel(80).config().numAttrs, 0u);
  KernelLaunch hopper(4, 1, 256, 1, 0, nullptr);
  const CUlaunchConfig& c = hopper.dependent_on_previous_kernel(90).config();
  ASSERT_EQ(c.numAttrs, 1u);
  EXPECT_EQ(c.attrs[0].id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
  EXPECT_EQ(c.attrs[0].value.programmaticStreamSerializationAllowed, 1);
}

TEST(KernelLaunch, ClustersAndCooperationComeBeforeDependence) {
  KernelLaunch clusters(64, 1, 512, 1, 0, nullptr);
  const CUlaunchConfig& c = clusters.in_clusters_of(8).dependent_on_previous_kernel(90).config();
  ASSERT_EQ(c.numAttrs, 2u);
  EXPECT_EQ(c.attrs[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  EXPECT_EQ(c.attrs[0].value.clusterDim.x, 8u);
  EXPECT_EQ(c.attrs[0].value.clusterDim.y, 1u);
  EXPECT_EQ(c.attrs[0].value.clusterDim.z, 1u);
  EXPECT_EQ(c.attrs[1].id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
  KernelLaunch grid(132, 1, 512, 1, 0, nullptr);
  const CUlaunchConfig& g = grid.cooperative().config();
  ASSERT_EQ(g.numAttrs, 1u);
  EXPECT_EQ(g.attrs[0].id, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
  EXPECT_EQ(g.attrs[0].value.cooperative, 1);
}

TEST(KernelLaunch, ACopyPointsAtItsOwnAttributes) {
  KernelLaunch original(2, 1, 64, 1, 0, nullptr);
  original.in_clusters_of(2);
  KernelLaunch copy = original;
  const CUlaunchConfig& c = copy.config();
  const CUlaunchConfig& o = original.config();
  EXPECT_NE(c.attrs, o.attrs);
  ASSERT_EQ(c.numAttrs, 1u);
  EXPECT_EQ(c.attrs[0].value.clusterDim.x, 2u);
}

}  // namespace
}  // namespace normjit::runtime
