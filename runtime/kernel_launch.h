// One kernel launch as cuLaunchKernelEx takes it, keeping the attributes it points at inside
// itself (a cluster's shape or a grid's cooperation, and on sm_90 the programmatic dependent
// launch), so a launch description never points at an attribute that is gone. Built on the
// launch path: no allocation, no driver call.
#pragma once
#include <cuda.h>

#include <cassert>

namespace normjit::runtime {

class KernelLaunch {
 public:
  KernelLaunch(unsigned grid_x, unsigned grid_y, unsigned block_x, unsigned block_y, unsigned shared_bytes,
               CUstream stream) {
    config_.gridDimX = grid_x;
    config_.gridDimY = grid_y;
    config_.gridDimZ = 1;
    config_.blockDimX = block_x;
    config_.blockDimY = block_y;
    config_.blockDimZ = 1;
    config_.sharedMemBytes = shared_bytes;
    config_.hStream = stream;
  }

  // The blocks in clusters of `blocks` along x (sm_90).
  KernelLaunch& in_clusters_of(unsigned blocks) {
    CUlaunchAttribute& a = add(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    a.value.clusterDim.x = blocks;
    a.value.clusterDim.y = a.value.clusterDim.z = 1;
    return *this;
  }
  // One cooperative grid: the driver refuses it unless every block can be resident at once.
  KernelLaunch& cooperative() {
    add(CU_LAUNCH_ATTRIBUTE_COOPERATIVE).value.cooperative = 1;
    return *this;
  }
  // On sm_90 and later (`sm` as 90), a programmatic dependent launch of the stream's previous
  // kernel: its blocks may be placed while that kernel's finish, so the launch's own latency is
  // not added to the stream's; the kernel waits for that one's completion and writes where it
  // calls wait_for_prerequisite_grid (templates/common.cuh) — at its top, unless what comes
  // before reads nothing an earlier kernel writes. Nothing on older devices.
  KernelLaunch& dependent_on_previous_kernel(int sm) {
    if (sm >= 90) add(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION).value.programmaticStreamSerializationAllowed = 1;
    return *this;
  }

  // For cuLaunchKernelEx and cuOccupancyMaxActiveClusters, while this object lives.
  const CUlaunchConfig& config() {
    config_.attrs = attributes_;
    return config_;
  }

 private:
  static constexpr unsigned kMaxAttributes = 2;  // a cluster shape or cooperation, and dependence
  CUlaunchAttribute& add(CUlaunchAttributeID id) {
    assert(config_.numAttrs < kMaxAttributes);
    CUlaunchAttribute& a = attributes_[config_.numAttrs++];
    a = CUlaunchAttribute{};
    a.id = id;
    return a;
  }
  CUlaunchConfig config_{};
  CUlaunchAttribute attributes_[kMaxAttributes]{};
};

}  // namespace normjit::runtime
