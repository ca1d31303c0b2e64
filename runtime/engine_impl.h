// The inside of normjit::Engine: the caches, and the kernels loaded into each CUDA context.
// The launch path (launch_backward) takes a shared lock and one hash lookup when the kernel
// is already loaded; generation, compilation and module loading happen once per
// (context, problem).
#pragma once
#include <cuda.h>

#include <atomic>
#include <memory>
#include <shared_mutex>
#include <utility>

#include "codegen/launch_config.h"
#include "llvm/ADT/DenseMap.h"
#include "normjit/normjit.hpp"
#include "runtime/disk_cache.h"
#include "runtime/kernel_cache.h"
#include "runtime/launch_plan.h"

namespace normjit {

struct LoadedKernel {
  NormProblem problem;  // resolved
  codegen::LaunchConfig config;
  runtime::DeviceLimits limits;
  int64_t resident_groups = 1;
  unsigned shared_bytes = 0;     // dynamic shared memory per block (staged rows)  // row groups (blocks or clusters) resident at once on the device
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction backward = nullptr;
  CUfunction reduce = nullptr;
  std::shared_ptr<const runtime::CompiledKernel> compiled;
};

struct Engine::Impl {
  explicit Impl(Config cfg);
  ~Impl();

  // The device's compile target and limits for ctx (which must be current).
  static runtime::DeviceLimits query_limits(CUcontext ctx);
  codegen::CompileTarget target_for(int sm) const;

  // Source, key and cubin of a problem for an arch: no GPU needed (normjit demo/compile).
  std::shared_ptr<const runtime::CompiledKernel> compile(const NormProblem& resolved, int sm);

  // The kernel of a resolved problem in ctx (current), loading it on first use.
  const LoadedKernel& kernel_for(CUcontext ctx, const NormProblem& resolved);

  void launch_backward(const NormProblem& problem, const BackwardArgs& args, CUstream stream);
  size_t workspace_size(const NormProblem& problem, int64_t m);

  Config config;
  runtime::DiskCache disk;
  runtime::KernelCache kernels;
  std::atomic<uint64_t> loaded_hits{0};  // kernel_for calls served by an already loaded kernel

 private:
  using Key = std::pair<CUcontext, uint64_t>;
  static uint64_t problem_code(const NormProblem& resolved);

  std::shared_mutex mu_;
  llvm::DenseMap<Key, std::unique_ptr<LoadedKernel>> loaded_;
};


}  // namespace normjit
