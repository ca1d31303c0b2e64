#include <algorithm>
#include <mutex>

#include "codegen/kernel_source.h"
#include "codegen/norm_problem.h"
#include "runtime/backward_call.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "runtime/launch_params.h"
#include "runtime/log.h"

namespace normjit {

using runtime::driver;

namespace {

// Makes ctx current for the scope when it is not already (the caller's stream may belong to
// a context other than the thread's current one).
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx) {
    CUcontext current = nullptr;
    driver().cuCtxGetCurrent(&current);
    if (current != ctx) {
      NJ_CU(driver().cuCtxPushCurrent(ctx), "making the stream's context current");
      pushed_ = true;
    }
  }
  ~ScopedContext() {
    CUcontext popped;
    if (pushed_) driver().cuCtxPopCurrent(&popped);
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  bool pushed_ = false;
};

template <class What>
CUcontext context_of(CUstream stream, const What& what) {
  CUcontext ctx = nullptr;
  if (stream) {
    NJ_CU(driver().cuStreamGetCtx(stream, &ctx), what() + ": finding the stream's context");
  } else {
    NJ_CU(driver().cuCtxGetCurrent(&ctx), what() + ": finding the current context");
  }
  if (!ctx)
    throw Error(Status::NoDevice, "normjit: " + what() +
                                      ": no current CUDA context. Make one current first "
                                      "(cudaSetDevice, cuCtxSetCurrent, or any PyTorch CUDA call).");
  return ctx;
}

// A launch of `groups` clusters of config.cluster blocks; `attribute` must outlive the result.
CUlaunchConfig cluster_launch(const codegen::LaunchConfig& config, int64_t groups, unsigned shared_bytes,
                              CUstream stream, CUlaunchAttribute& attribute) {
  attribute = CUlaunchAttribute{};
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = static_cast<unsigned>(config.cluster);
  attribute.value.clusterDim.y = attribute.value.clusterDim.z = 1;
  CUlaunchConfig launch{};
  launch.gridDimX = static_cast<unsigned>(groups * config.cluster);
  launch.gridDimY = launch.gridDimZ = 1;
  launch.blockDimX = static_cast<unsigned>(config.threads);
  launch.blockDimY = launch.blockDimZ = 1;
  launch.sharedMemBytes = shared_bytes;
  launch.hStream = stream;
  launch.attrs = &attribute;
  launch.numAttrs = 1;
  return launch;
}

// Frees a stream-ordered allocation on every way out.
struct StreamAllocation {
  CUdeviceptr ptr = 0;
  CUstream stream = nullptr;
  ~StreamAllocation() {
    if (ptr) driver().cuMemFreeAsync(ptr, stream);
  }
};

}  // namespace

Engine::Impl::Impl(Config cfg)
    : config(std::move(cfg)),
      disk(config.disk_cache ? config.cache_dir : std::string(), config.cache_max_bytes),
      kernels(disk) {
  runtime::set_log_level(config.log_level);
}

Engine::Impl::~Impl() {
  for (auto& entry : loaded_) {
    const LoadedKernel& k = *entry.second;
    CUcontext popped;
    // The context may already be gone at exit; then so is the module, and errors are moot.
    if (driver().cuCtxPushCurrent(k.context) == CUDA_SUCCESS) {
      driver().cuModuleUnload(k.module);
      driver().cuCtxPopCurrent(&popped);
    }
  }
}

runtime::DeviceLimits Engine::Impl::query_limits(CUcontext) {
  const auto& d = driver();
  CUdevice dev;
  NJ_CU(d.cuCtxGetDevice(&dev), "reading the context's device");
  auto attribute = [&](CUdevice_attribute a) {
    int v = 0;
    NJ_CU(d.cuDeviceGetAttribute(&v, a, dev), "reading device attributes");
    return v;
  };
  runtime::DeviceLimits l;
  l.sm = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
         attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  l.sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  l.max_threads_per_sm = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  l.max_blocks_per_sm = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  l.memory_pools = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
  if (l.sm < 70)
    throw Error(Status::Unsupported, "normjit: the device is sm_" + std::to_string(l.sm) +
                                         "; normjit needs compute capability 7.0 or newer.");
  return l;
}

codegen::CompileTarget Engine::Impl::target_for(int sm) const {
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  const std::vector<int> archs = nvrtc.supported_archs();
  // A cubin runs on later minor versions of its major arch: take the newest NVRTC offers.
  int best = 0;
  for (int a : archs)
    if (a / 10 == sm / 10 && a <= sm) best = std::max(best, a);
  if (best == 0)
    throw Error(Status::Unsupported, "normjit: NVRTC " + nvrtc.version() + " (" + nvrtc.library_path() +
                                         ") cannot compile for sm_" + std::to_string(sm) +
                                         ": use an NVRTC that supports this GPU (set NORMJIT_LIBNVRTC).");
  return codegen::CompileTarget{best, nvrtc.version()};
}

std::shared_ptr<const runtime::CompiledKernel> Engine::Impl::compile(const NormProblem& p, int sm) {
  const codegen::LaunchConfig config = codegen::choose_launch_config(p, sm);
  const codegen::KernelSource source = codegen::generate_backward_source(p, config);
  return kernels.get(source, target_for(sm), codegen::describe(p));
}

uint64_t Engine::Impl::problem_code(const NormProblem& p) {
  int log2_alignment = 0;
  while ((1 << log2_alignment) < p.alignment) ++log2_alignment;
  return static_cast<uint64_t>(p.n) | uint64_t(p.kind == NormKind::RMSNorm) << 32 |
         uint64_t(p.x_dtype) << 33 | uint64_t(p.dy_dtype) << 35 | uint64_t(p.dx_dtype) << 37 |
         uint64_t(p.weight_dtype) << 39 | uint64_t(p.has_weight) << 41 | uint64_t(p.has_bias) << 42 |
         uint64_t(log2_alignment) << 43;
}

const LoadedKernel& Engine::Impl::kernel_for(CUcontext ctx, const NormProblem& p) {
  const Key key{ctx, problem_code(p)};
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = loaded_.find(key);
    if (it != loaded_.end()) {
      loaded_hits++;
      return *it->second;
    }
  }
  auto k = std::make_unique<LoadedKernel>();
  k->problem = p;
  k->context = ctx;
  k->limits = query_limits(ctx);
  k->config = codegen::choose_launch_config(p, k->limits.sm);
  k->compiled = compile(p, k->limits.sm);  // outside the lock: may take a while

  std::unique_lock<std::shared_mutex> lock(mu_);
  auto it = loaded_.find(key);
  if (it != loaded_.end()) return *it->second;  // another thread loaded it meanwhile
  const auto& d = driver();
  const std::string what = "loading the " + codegen::describe(p) + " kernel";
  NJ_CU(d.cuModuleLoadData(&k->module, k->compiled->cubin.data()), what);
  NJ_CU(d.cuModuleGetFunction(&k->backward, k->module, codegen::KernelSource::kBackwardEntry), what);
  NJ_CU(d.cuModuleGetFunction(&k->reduce, k->module, codegen::KernelSource::kReduceEntry), what);
  k->shared_bytes = static_cast<unsigned>(codegen::dynamic_shared_bytes(p, k->config));
  // Beyond 48 KB in all (dynamic plus the kernel's static reduction buffers) a kernel must opt
  // in; opting in whenever it stages rows keeps that sum out of the host's arithmetic.
  if (k->shared_bytes > 0)
    NJ_CU(d.cuFuncSetAttribute(k->backward, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               static_cast<int>(k->shared_bytes)),
          what);
  if (k->config.cluster == 1) {
    int per_sm = 0;
    NJ_CU(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->backward, k->config.threads, k->shared_bytes),
          what);
    k->resident_groups = int64_t{per_sm} * k->limits.sm_count;
  } else {
    if (k->config.cluster > 8)
      NJ_CU(d.cuFuncSetAttribute(k->backward, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), what);
    CUlaunchAttribute cluster;
    const CUlaunchConfig launch = cluster_launch(k->config, 1, k->shared_bytes, nullptr, cluster);
    int clusters = 0;
    NJ_CU(d.cuOccupancyMaxActiveClusters(&clusters, k->backward, &launch), what);
    if (clusters < 1)
      throw Error(Status::Unsupported, "normjit: " + what + ": a cluster of " + std::to_string(k->config.cluster) +
                                           " blocks of " + std::to_string(k->config.threads) +
                                           " threads cannot be resident on this device.");
    k->resident_groups = clusters;
  }
  return *(loaded_[key] = std::move(k));
}

void Engine::Impl::launch_backward(const NormProblem& problem, const BackwardArgs& args, CUstream stream) {
  codegen::validate_problem(problem);
  const runtime::CheckedCall call = runtime::check_backward_call(problem, args);
  const NormProblem& p = call.problem;
  const BackwardArgs& a = call.args;
  const bool accumulate = p.has_weight || p.has_bias;
  if (a.m == 0 && !accumulate) return;

  const auto what = [&p] { return "the " + codegen::describe(p) + " backward"; };  // for errors only
  const auto& d = driver();
  const CUcontext ctx = context_of(stream, what);
  ScopedContext scope(ctx);
  const LoadedKernel& k = kernel_for(ctx, p);

  const int64_t groups = a.m > 0 ? runtime::row_groups(k.config, k.limits, a.m, k.resident_groups) : 0;
  // One row group holding its rows in registers writes dγ/dβ itself: no partials, no second
  // launch (the small-M latency case). Streamed rows always go through partials.
  const bool direct = groups == 1 && k.config.row_in_registers;
  const size_t need = direct ? 0 : runtime::partial_bytes(p, groups);
  StreamAllocation owned;
  CUdeviceptr partial = direct ? 0 : reinterpret_cast<CUdeviceptr>(a.workspace);
  if (need > 0 && a.workspace) {
    if (a.workspace_bytes < need)
      throw Error(Status::Workspace, "normjit: " + what() + " over m=" + std::to_string(a.m) + " rows needs " +
                                         std::to_string(need) + " bytes of workspace, " +
                                         std::to_string(a.workspace_bytes) +
                                         " were given. Size it with workspace_size(problem, m), or pass none.");
    if (reinterpret_cast<uintptr_t>(a.workspace) % 16 != 0)
      throw Error(Status::InvalidArgument, "normjit: " + what() + ": the workspace must be 16-byte aligned.");
  } else if (need > 0) {
    if (!k.limits.memory_pools)
      throw Error(Status::Unsupported, "normjit: " + what() + ": this device has no stream-ordered allocator "
                                       "(cuMemAllocAsync); pass a workspace of workspace_size(problem, m) bytes.");
    owned.stream = stream;
    NJ_CU(d.cuMemAllocAsync(&owned.ptr, need, stream), what() + ": allocating " + std::to_string(need) +
                                                           " bytes of workspace");
    partial = owned.ptr;
  }

  if (a.m > 0) {
    runtime::BackwardParams params{a.m,      a.x,        a.x_stride, a.dy,   a.dy_stride,
                                   a.mean,   a.rstd,     a.weight,   a.dx,   a.dx_stride,
                                   reinterpret_cast<float*>(partial), a.dweight, a.dbias};
    void* kernel_args[] = {&params};
    if (k.config.cluster == 1) {
      NJ_CU(d.cuLaunchKernel(k.backward, static_cast<unsigned>(groups), 1, 1, static_cast<unsigned>(k.config.threads),
                             1, 1, k.shared_bytes, stream, kernel_args, nullptr),
            what() + ": launching");
    } else {
      CUlaunchAttribute cluster;
      const CUlaunchConfig launch = cluster_launch(k.config, groups, k.shared_bytes, stream, cluster);
      NJ_CU(d.cuLaunchKernelEx(&launch, k.backward, kernel_args, nullptr), what() + ": launching");
    }
  }
  if (accumulate && !direct) {
    const float* partial_ptr = reinterpret_cast<const float*>(partial);
    int64_t groups_arg = groups;
    void* dweight = a.dweight;
    void* dbias = a.dbias;
    void* reduce_args[] = {&partial_ptr, &groups_arg, &dweight, &dbias};
    const unsigned blocks = static_cast<unsigned>((p.n + runtime::kReduceColumns - 1) / runtime::kReduceColumns);
    NJ_CU(d.cuLaunchKernel(k.reduce, blocks, 1, 1, runtime::kReduceColumns, runtime::kReduceLanes, 1, 0, stream,
                           reduce_args, nullptr),
          what() + ": launching the dgamma/dbeta reduction");
  }
}

size_t Engine::Impl::workspace_size(const NormProblem& problem, int64_t m) {
  codegen::validate_problem(problem);
  if (m < 0) throw Error(Status::InvalidArgument, "normjit: workspace_size: m = " + std::to_string(m) + " is negative.");
  const CUcontext ctx = context_of(nullptr, [&] { return "workspace_size for " + codegen::describe(problem); });
  return runtime::workspace_bound(codegen::resolve_problem(problem), query_limits(ctx), m);
}

// ---- the public Engine -----------------------------------------------------------------------

Engine::Engine() : Engine(runtime::load_config()) {}
Engine::Engine(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Engine::~Engine() = default;

size_t Engine::workspace_size(const NormProblem& problem, int64_t m) { return impl_->workspace_size(problem, m); }

void Engine::layer_norm_backward(const NormProblem& problem, const BackwardArgs& args, Stream stream) {
  if (problem.kind != NormKind::LayerNorm)
    throw Error(Status::InvalidArgument, "normjit: layer_norm_backward was given a " +
                                             std::string(codegen::kind_name(problem.kind)) +
                                             " problem: set problem.kind to LayerNorm or call rms_norm_backward.");
  impl_->launch_backward(problem, args, stream);
}

void Engine::rms_norm_backward(const NormProblem& problem, const BackwardArgs& args, Stream stream) {
  if (problem.kind != NormKind::RMSNorm)
    throw Error(Status::InvalidArgument, "normjit: rms_norm_backward was given a " +
                                             std::string(codegen::kind_name(problem.kind)) +
                                             " problem: set problem.kind to RMSNorm or call layer_norm_backward.");
  impl_->launch_backward(problem, args, stream);
}

void Engine::backward(const NormProblem& problem, const BackwardArgs& args, Stream stream) {
  impl_->launch_backward(problem, args, stream);
}

void Engine::prepare(const NormProblem& problem) {
  codegen::validate_problem(problem);
  const NormProblem p = codegen::resolve_problem(problem);
  const CUcontext ctx = context_of(nullptr, [&] { return "prepare for " + codegen::describe(p); });
  impl_->kernel_for(ctx, p);
}

const Config& Engine::config() const { return impl_->config; }

CacheStats Engine::cache_stats() const {
  const runtime::KernelCacheStats k = impl_->kernels.stats();
  const runtime::DiskCacheStats d = impl_->disk.stats();
  CacheStats s;
  s.memory_hits = impl_->loaded_hits.load();
  s.compiles = k.compiles;
  s.disk_hits = k.disk_hits;
  s.disk_writes = d.writes;
  s.disk_corrupt = d.corrupt;
  return s;
}

const char* version_string() { return codegen::normjit_version(); }

}  // namespace normjit
