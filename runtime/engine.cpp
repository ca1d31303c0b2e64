#include <algorithm>
#include <mutex>
#include <optional>

#include "codegen/forward_config.h"
#include "codegen/kernel_source.h"
#include "codegen/norm_problem.h"
#include "codegen/search_space.h"
#include "runtime/backward_call.h"
#include "runtime/config.h"
#include "runtime/forward_call.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "runtime/kernel_launch.h"
#include "runtime/launch_params.h"
#include "runtime/log.h"
#include "runtime/tuner.h"

namespace normjit {

using runtime::driver;

namespace {

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

// A launch of `groups` row groups of config's blocks: plain blocks, clusters of
// config.blocks_per_group() blocks, or one grid cluster — a cooperative launch, which the driver
// refuses unless every block can be resident at once, as its blocks' waiting for each other needs.
runtime::KernelLaunch groups_launch(const codegen::LaunchConfig& config, int64_t groups, unsigned shared_bytes,
                                    CUstream stream) {
  runtime::KernelLaunch launch(static_cast<unsigned>(groups * config.blocks_per_group()), 1,
                               static_cast<unsigned>(config.threads), 1, shared_bytes, stream);
  if (config.blocks_per_group() > 1) {
    if (config.grid) launch.cooperative();
    else launch.in_clusters_of(static_cast<unsigned>(config.blocks_per_group()));
  }
  return launch;
}

// Whether a tuning may run now: tuning allocates and synchronises, so never while the caller's
// stream is being captured. Asked only when a tuning is due, so a loaded kernel costs no
// driver call on the launch path.
template <class What>
auto not_capturing(CUstream stream, const What& what) {
  return [stream, &what] {
    CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
    if (stream) NJ_CU(driver().cuStreamIsCapturing(stream, &capturing), what() + ": checking for stream capture");
    return capturing == CU_STREAM_CAPTURE_STATUS_NONE;
  };
}

// Row groups (blocks, or clusters of config.blocks_per_group() blocks) of `function` that fit
// on the device at once: the size of a persistent grid. Clusters above 8 blocks are opted in.
int64_t resident_groups(CUfunction function, const codegen::LaunchConfig& config, unsigned shared_bytes,
                        const runtime::DeviceLimits& limits, const std::string& what) {
  const auto& d = driver();
  if (config.blocks_per_group() == 1) {
    int per_sm = 0;
    NJ_CU(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, function, config.threads, shared_bytes), what);
    if (per_sm < 1)
      throw Error(Status::Unsupported, "normjit: " + what + ": a block of " + std::to_string(config.threads) +
                                           " threads cannot be resident on this device.");
    return int64_t{per_sm} * limits.sm_count;
  }
  if (config.blocks_per_group() > 8)
    NJ_CU(d.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1), what);
  runtime::KernelLaunch launch = groups_launch(config, 1, shared_bytes, nullptr);
  int clusters = 0;
  NJ_CU(d.cuOccupancyMaxActiveClusters(&clusters, function, &launch.config()), what);
  if (clusters < 1)
    throw Error(Status::Unsupported, "normjit: " + what + ": a cluster of " + std::to_string(config.blocks_per_group()) +
                                         " blocks of " + std::to_string(config.threads) +
                                         " threads cannot be resident on this device.");
  return clusters;
}

// Launches `groups` row groups of `function` (plain blocks, or clusters, or one grid cluster),
// on sm_90 as a dependent launch of the stream's previous kernel (not a grid cluster: its blocks
// wait for each other, so all of them must be placed, not some early).
// On the launch path: `what` (for the error message) is built only when the launch fails.
void launch_groups(CUfunction function, const codegen::LaunchConfig& config, int64_t groups, unsigned shared_bytes,
                   CUstream stream, void** kernel_args, const runtime::DeviceLimits& limits,
                   llvm::function_ref<std::string()> what) {
  runtime::KernelLaunch launch = groups_launch(config, groups, shared_bytes, stream);
  if (!config.grid) launch.dependent_on_previous_kernel(limits.sm);
  NJ_CU(driver().cuLaunchKernelEx(&launch.config(), function, kernel_args, nullptr), what());
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
      kernels(disk),
      tuning(config.disk_cache ? runtime::TuningDb::default_path(config.cache_dir) : std::string()) {
  runtime::set_log_level(config.log_level);
  // Read once here, so a database hit on the launch path is a memory lookup, never file I/O.
  if (config.tune_mode != TuneMode::Off) tuning.load();
}

Engine::Impl::~Impl() {
  for (auto& entry : modules_) {
    const LoadedKernel& k = *entry.second;
    CUcontext popped;
    // The context may already be gone (at exit, or destroyed by its owner); then so is the
    // module. Its handle may now name another context: unload only from the one it was loaded in.
    unsigned long long id = 0;
    if (driver().cuCtxGetId(k.context, &id) == CUDA_SUCCESS && id == k.context_id &&
        driver().cuCtxPushCurrent(k.context) == CUDA_SUCCESS) {
      driver().cuModuleUnload(k.module);
      driver().cuCtxPopCurrent(&popped);
    }
  }
}

uint64_t Engine::Impl::context_id(CUcontext ctx) {
  unsigned long long id = 0;
  NJ_CU(driver().cuCtxGetId(ctx, &id), "normjit: identifying the CUDA context");
  return id;
}

runtime::DeviceLimits Engine::Impl::query_limits(CUcontext ctx) {
  const auto& d = driver();
  const runtime::ScopedContext current(ctx);  // ctx's device, whichever context is current
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
  // A driver that does not report the clocks (CUDA 13 dropped them from cudaDeviceProp) leaves
  // the rate 0, and the heuristic takes the device as an H100.
  auto reported = [&](CUdevice_attribute a) {
    int v = 0;
    return d.cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS ? v : 0;
  };
  l.memory_bytes_per_sm_cycle = codegen::memory_bytes_per_sm_cycle(
      reported(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE), reported(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH),
      l.sm_count, reported(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
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
  return compile(p, codegen::choose_launch_config(p, sm), sm);  // no device: the default grid size
}

std::shared_ptr<const runtime::CompiledKernel> Engine::Impl::compile(const NormProblem& p,
                                                                     const codegen::LaunchConfig& config, int sm,
                                                                     codegen::Pass pass) {
  const codegen::KernelSource source = pass == codegen::Pass::Forward ? codegen::generate_forward_source(p, config)
                                                                      : codegen::generate_backward_source(p, config);
  return kernels.get(source, target_for(sm), codegen::describe(p, pass));
}

runtime::TuningDevice Engine::Impl::tuning_device(const runtime::DeviceLimits& limits) const {
  CUdevice dev;
  NJ_CU(driver().cuCtxGetDevice(&dev), "reading the context's device");
  char name[256] = {};
  NJ_CU(driver().cuDeviceGetName(name, sizeof name, dev), "reading the device's name");
  return runtime::TuningDevice{name, limits.sm, limits.sm_count, runtime::Nvrtc::get().version()};
}

static uint64_t fused_option_bits(const NormProblem& p) {
  return uint64_t(p.residual) | uint64_t(p.zero_centered_weight) << 1 | uint64_t(p.rowscale) << 2 |
         uint64_t(p.dropout) << 3 | uint64_t(p.gate) << 5 | uint64_t(p.parallel) << 7;
}

uint64_t Engine::Impl::problem_code(const NormProblem& p, codegen::Pass pass) {
  int log2_alignment = 0;
  while ((1 << log2_alignment) < p.alignment) ++log2_alignment;
  return static_cast<uint64_t>(p.n - 1) | uint64_t(p.alignment < 16 && !p.rows_in_phase) << 31 |
         uint64_t(p.kind == NormKind::RMSNorm) << 32 | uint64_t(p.x_dtype) << 33 | uint64_t(p.dy_dtype) << 35 |
         uint64_t(p.dx_dtype) << 37 | uint64_t(p.weight_dtype) << 39 | uint64_t(p.has_weight) << 41 |
         uint64_t(p.has_bias) << 42 | uint64_t(log2_alignment) << 43 | uint64_t(p.recompute_from_output) << 46 |
         uint64_t(pass == codegen::Pass::Forward) << 47 | fused_option_bits(p) << 56;
}

void Engine::Impl::pin_config(const runtime::DeviceLimits& limits, const NormProblem& resolved, int64_t m,
                              const codegen::LaunchConfig& config, codegen::Pass pass) {
  runtime::TunedConfig entry;
  entry.config = config;
  entry.us = 1;  // kept over anything measured: put keeps the faster entry
  tuning.put(runtime::make_tuning_key(tuning_device(limits), resolved, m, pass).text(), entry);
}

std::optional<codegen::LaunchConfig> Engine::Impl::database_config(const NormProblem& p, int64_t m,
                                                                    const runtime::TuningDevice& device,
                                                                    codegen::Pass pass) {
  const std::string key = runtime::make_tuning_key(device, p, m, pass).text();
  const auto hit = tuning.find(key);
  if (!hit) return std::nullopt;
  // A hand-edited or foreign entry is checked like any config; a bad one is not used.
  std::string why;
  try {
    if (pass == codegen::Pass::Forward) {
      codegen::check_forward_config(p, hit->config);
      if (hit->config.cluster > 1 && device.sm < 90) why = "clusters need sm_90";
    } else {
      codegen::check_launch_config(p, hit->config);
      why = codegen::prune_reason(p, hit->config, device.sm);
    }
  } catch (const std::invalid_argument& e) {
    why = e.what();
  }
  if (why.empty()) return hit->config;
  runtime::warn_once("tuning-entry:" + key, "the tuning database " + tuning.path() + " holds a config for \"" + key +
                                                "\" that cannot run (" + why +
                                                "): using the heuristic; tune the shape again to replace it.");
  return std::nullopt;
}

codegen::LaunchConfig Engine::Impl::config_for(CUcontext ctx, const NormProblem& p, int64_t m,
                                               const runtime::DeviceLimits& limits,
                                               llvm::function_ref<bool()> may_tune, bool& tuned, bool& settled,
                                               codegen::Pass pass) {
  tuned = false;
  settled = true;
  const codegen::LaunchConfig heuristic = pass == codegen::Pass::Forward
                                              ? codegen::choose_forward_config(p, limits.sm, m, limits.sm_count,
                                                                                   limits.memory_bytes_per_sm_cycle)
                                              : codegen::choose_launch_config(p, limits.sm, limits.sm_count, m,
                                                                                  limits.memory_bytes_per_sm_cycle);
  if (m < 0 || config.tune_mode == TuneMode::Off) return heuristic;
  const runtime::TuningDevice device = tuning_device(limits);
  if (const std::optional<codegen::LaunchConfig> hit = database_config(p, m, device, pass)) {
    tuning_hits++;
    tuned = true;
    return *hit;
  }
  if (config.tune_mode != TuneMode::OnMiss) return heuristic;
  const std::string key = runtime::make_tuning_key(device, p, m, pass).text();
  if (tuning.find(key)) return heuristic;  // an entry that cannot run: warned about, not retuned
  if (!may_tune || !may_tune()) {
    settled = false;  // tuned at the next call that may
    return heuristic;
  }
  const runtime::TuneResult result = runtime::tune(*this, ctx, p, m, {}, pass);
  tunings++;
  tuning.put(key, result.tuned());
  std::string why;
  if (!tuning.save(&why))
    runtime::warn_once("tuning-save:" + tuning.path(), "cannot save the tuning database (" + why +
                                                           "): tuned configs are kept for this process only.");
  tuned = true;
  return result.winner().config;
}

const LoadedKernel& Engine::Impl::kernel_for(CUcontext ctx, const NormProblem& p, int64_t m,
                                             llvm::function_ref<bool()> may_tune, codegen::Pass pass) {
  const bool forward = pass == codegen::Pass::Forward;
  // Without tuning, buckets matter only where the heuristic may look at m: few rows (the
  // backward's families for them; the forward's streamed rows shared by clusters).
  const bool by_bucket = m >= 0 && (config.tune_mode != TuneMode::Off || codegen::may_be_few_rows(m));
  const uint64_t code = problem_code(p, pass);
  // Buckets are 1 + log2: 0 stands for "the heuristic's kernel, whatever m".
  const uint64_t ctx_id = context_id(ctx);
  const Key key{ctx_id, code | (by_bucket ? uint64_t(1 + runtime::m_bucket_log2(m)) << 48 : 0)};
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = loaded_.find(key);
    if (it != loaded_.end()) {
      loaded_hits++;
      return *it->second;
    }
  }
  const runtime::DeviceLimits limits = query_limits(ctx);
  bool tuned = false, settled = true;
  const codegen::LaunchConfig config = config_for(ctx, p, by_bucket ? m : -1, limits, may_tune, tuned, settled, pass);
  // Tuned or not is part of the key: a bucket whose database config happens to equal the
  // heuristic's still reports itself tuned, and a heuristic bucket never does.
  const auto module_key = std::make_tuple(ctx_id, code, codegen::describe(config), tuned);
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = modules_.find(module_key);
    if (it != modules_.end()) {
      LoadedKernel* k = it->second.get();
      lock.unlock();
      std::unique_lock<std::shared_mutex> write(mu_);
      if (settled) loaded_.try_emplace(key, k);
      return *k;
    }
  }
  std::unique_ptr<LoadedKernel> k;  // loaded outside the lock: may take a while
  try {
    k = load(ctx, p, config, limits, pass);
  } catch (const Error& e) {
    // A grid cluster larger than the device can hold at once (a smaller GPU, MPS limits):
    // rows streamed twice run anywhere.
    if (!config.grid || e.status() != Status::Unsupported) throw;
    runtime::warn_once("grid:" + codegen::describe(p), std::string(e.what()) + " Streaming the rows instead.");
    k = load(ctx, p, codegen::streamed_launch_config(p), limits);
  }
  if (forward && !tuned) k = unless_spilling(std::move(k), ctx, p, limits);
  k->tuned = tuned;
  std::unique_lock<std::shared_mutex> lock(mu_);
  auto inserted = modules_.try_emplace(module_key, std::move(k));  // another thread may have loaded it meanwhile
  LoadedKernel* kernel = inserted.first->second.get();
  if (!inserted.second) driver().cuModuleUnload(k->module);  // lost a race: keep the other thread's
  if (settled) loaded_.try_emplace(key, kernel);
  return *kernel;
}

int Engine::Impl::local_memory_bytes(CUfunction f, const std::string& what) {
  int bytes = 0;
  NJ_CU(driver().cuFuncGetAttribute(&bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f), "reading the local memory of " + what);
  return bytes;
}

// The heuristic's forward blocks bounded to fill the SM are what ptxas holds without spilling
// at some N only (codegen::unfilled_forward_config): where this one takes local memory (spills),
// the same block bounded to 64 registers a thread.
std::unique_ptr<LoadedKernel> Engine::Impl::unless_spilling(std::unique_ptr<LoadedKernel> k, CUcontext ctx,
                                                            const NormProblem& p, const runtime::DeviceLimits& limits) {
  const std::optional<codegen::LaunchConfig> unfilled = codegen::unfilled_forward_config(p, k->config);
  if (!unfilled) return k;
  if (local_memory_bytes(k->forward, "the " + codegen::describe_forward(p) + " kernel") == 0) return k;
  driver().cuModuleUnload(k->module);  // first: nothing is left loaded should the next load throw
  return load(ctx, p, *unfilled, limits, codegen::Pass::Forward);
}

std::unique_ptr<LoadedKernel> Engine::Impl::load(CUcontext ctx, const NormProblem& p,
                                                 const codegen::LaunchConfig& config,
                                                 const runtime::DeviceLimits& limits, codegen::Pass pass) {
  auto k = std::make_unique<LoadedKernel>();
  k->problem = p;
  k->context = ctx;
  k->context_id = context_id(ctx);
  k->limits = limits;
  k->config = config;
  k->sm_margin = this->config.sm_margin;
  k->compiled = compile(p, config, limits.sm, pass);
  const auto& d = driver();
  const std::string what =
      "loading the " + codegen::describe(p, pass) + " kernel (" + codegen::describe(config) + ")";
  NJ_CU(d.cuModuleLoadData(&k->module, k->compiled->cubin.data()), what);
  // From here the module is ours to unload should anything below fail.
  struct UnloadOnError {
    LoadedKernel* k;
    ~UnloadOnError() {
      if (k) driver().cuModuleUnload(k->module);
    }
  } guard{k.get()};
  // The pass's main entry point (the forward has only that one).
  const bool forward = pass == codegen::Pass::Forward;
  CUfunction& entry = forward ? k->forward : k->backward;
  NJ_CU(d.cuModuleGetFunction(&entry, k->module,
                              forward ? codegen::KernelSource::kForwardEntry : codegen::KernelSource::kBackwardEntry),
        what);
  // Dynamic shared memory (staged rows, shared sums, held weights). Beyond 48 KB in all (dynamic
  // plus the kernel's static reduction buffers) a kernel must opt in; opting in whenever it has
  // any keeps that sum out of the host's arithmetic.
  k->shared_bytes = static_cast<unsigned>(codegen::dynamic_shared_bytes(p, k->config, pass));
  if (k->shared_bytes > 0)
    NJ_CU(d.cuFuncSetAttribute(entry, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(k->shared_bytes)),
          what);
  if (forward) {
    k->resident_groups = resident_groups(k->forward, config, k->shared_bytes, limits, what);
    guard.k = nullptr;
    return k;
  }
  NJ_CU(d.cuModuleGetFunction(&k->reduce, k->module, codegen::KernelSource::kReduceEntry), what);
  if (k->config.column_pass > 0)
    NJ_CU(d.cuModuleGetFunction(&k->row_sums, k->module, codegen::KernelSource::kRowSumsEntry), what);
  if (k->config.grid) {
    codegen::LaunchConfig block = k->config;
    block.grid = false;
    block.cluster = 1;
    const int64_t resident = resident_groups(k->backward, block, k->shared_bytes, k->limits, what);
    if (resident < k->config.cluster)
      throw Error(Status::Unsupported, "normjit: " + what + ": the " + std::to_string(k->config.cluster) +
                                           " blocks of a grid cluster cannot all be resident on this device (" +
                                           std::to_string(resident) + " can).");
    k->resident_groups = 1;
  } else {
    k->resident_groups = resident_groups(k->backward, k->config, k->shared_bytes, k->limits, what);
  }
  guard.k = nullptr;
  return k;
}

void Engine::Impl::launch_backward(const NormProblem& problem, const BackwardArgs& args, CUstream stream) {
  codegen::validate_problem(problem);
  const runtime::CheckedCall call = runtime::check_backward_call(problem, args);
  const NormProblem& p = call.problem;
  const BackwardArgs& a = call.args;
  if (a.m == 0 && !(p.has_weight || p.has_bias)) return;

  const auto what = [&p] { return "the " + codegen::describe(p) + " backward"; };  // for errors only
  const CUcontext ctx = context_of(stream, what);
  runtime::ScopedContext scope(ctx);
  const LoadedKernel* k = &kernel_for(ctx, p, a.m, not_capturing(stream, what));
  // A caller's workspace is sized by workspace_size; should a tuned config launch more row
  // groups than it allows (a database that changed since), the heuristic's kernel fits it.
  if (k->tuned && a.workspace && a.m > 0) {
    const int64_t groups = runtime::row_groups(k->config, k->limits, a.m, k->resident_groups);
    if (runtime::launch_workspace_bytes(p, k->config, groups) > a.workspace_bytes) k = &kernel_for(ctx, p);
  }
  launch(*k, p, a, stream);
}

void Engine::Impl::launch(const LoadedKernel& k, const NormProblem& p, const BackwardArgs& a, CUstream stream) {
  const bool accumulate = p.has_weight || p.has_bias;
  const auto what = [&p] { return "the " + codegen::describe(p) + " backward"; };  // for errors only
  const auto& d = driver();
  const int64_t groups = a.m > 0 ? runtime::row_groups(k.config, k.limits, a.m, k.resident_groups) : 0;
  const size_t need = runtime::launch_workspace_bytes(p, k.config, groups);
  StreamAllocation owned;
  CUdeviceptr partial = need == 0 ? 0 : reinterpret_cast<CUdeviceptr>(a.workspace);
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

  runtime::BackwardParams params{a.m,      a.x,        a.x_stride, a.dy,   a.dy_stride,
                                 a.mean,   a.rstd,     a.weight,   a.dx,   a.dx_stride,
                                 reinterpret_cast<float*>(partial), groups, 0, a.dweight, a.dbias,
                                 a.dresidual, a.dresidual_stride, a.rowscale, a.dropout_mask,
                                 a.dropout_mask_stride, runtime::dropout_keep_scale(a.dropout_p), a.dresidual_in,
                                 a.dresidual_in_stride, a.z, a.z_stride, a.dz, a.dz_stride,
                                 a.dy1, a.dy1_stride, a.weight1, a.dweight1, a.dbias1,
                                 nullptr, 0, nullptr};  // fallback_x, its stride, β: below
  if (p.recompute_from_output) {
    // Every kernel family reads its rows through x: here they are y's, from which the kernel
    // recovers x̂; x itself, when given, is only read where γ = 0.
    params.x = a.y;
    params.x_stride = a.y_stride;
    params.fallback_x = a.x;
    params.fallback_x_stride = a.x_stride;
    params.bias = a.bias;
    // LayerNorm kernels load each row's mean (used only to normalise the fallback x): without
    // x the caller need not pass it, and rstd's m floats stand in for a buffer never used.
    if (!params.mean && p.kind == NormKind::LayerNorm) params.mean = a.rstd;
  }
  if (a.m > 0)
    launch_kernels(k, p, params, groups, stream);
  else if (accumulate)  // no rows: dγ/dβ are sums over none, which the reduction writes as zeros
    launch_reductions(k, p, params, 0, stream);
}

void Engine::Impl::launch_kernels(const LoadedKernel& k, const NormProblem& p, runtime::BackwardParams& params,
                                  int64_t groups, CUstream stream) {
  const auto what = [&p] { return "the " + codegen::describe(p) + " backward"; };  // for errors only
  const auto& d = driver();
  void* kernel_args[] = {&params};
  if (k.config.column_pass > 0) {
    // Row sums into the workspace, then the column blocks, which write dx, dγ and dβ (groups is m).
    const unsigned sum_blocks = static_cast<unsigned>((params.m + k.config.rows_per_block() - 1) / k.config.rows_per_block());
    // Both are dependent launches on sm_90: the column blocks start loading rows while the sums
    // are made, and wait for them only before reading them (templates/column_pass.cuh).
    const unsigned threads = static_cast<unsigned>(k.config.threads);
    runtime::KernelLaunch sums(sum_blocks, 1, threads, 1, 0, stream);
    NJ_CU(d.cuLaunchKernelEx(&sums.dependent_on_previous_kernel(k.limits.sm).config(), k.row_sums, kernel_args, nullptr),
          what() + ": launching the row sums");
    runtime::KernelLaunch columns(static_cast<unsigned>(runtime::column_blocks(p, k.config)), 1, threads, 1, 0, stream);
    NJ_CU(d.cuLaunchKernelEx(&columns.dependent_on_previous_kernel(k.limits.sm).config(), k.backward, kernel_args,
                             nullptr),
          what() + ": launching the column pass");
    return;
  }
  if (k.config.grid)  // the blocks count their arrivals from zero
    NJ_CU(d.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(params.partial) + runtime::grid_counters_offset(k.config),
                             0, static_cast<size_t>(runtime::grid_ring_slots(k.config)), stream),
          what() + ": clearing the grid cluster's arrival counters");
  // With an SM margin, a share of the row groups at a time (runtime/launch_plan.h).
  const int64_t per_launch = runtime::groups_per_launch(k.config, k.limits, groups, k.sm_margin);
  for (params.first_group = 0; params.first_group < groups; params.first_group += per_launch)
    launch_groups(k.backward, k.config, std::min(per_launch, groups - params.first_group), k.shared_bytes, stream,
                  kernel_args, k.limits, [&] { return what() + ": launching"; });
  if ((p.has_weight || p.has_bias) && !runtime::writes_gradients_directly(k.config, groups))
    launch_reductions(k, p, params, groups, stream);
}

void Engine::Impl::launch_reductions(const LoadedKernel& k, const NormProblem& p, const runtime::BackwardParams& params,
                                     int64_t groups, CUstream stream) {
  // Parallel norms: the second norm's partial rows follow the first's, reduced by a second
  // launch of the same kernel into dγ1/dβ1.
  const int norms = p.parallel ? 2 : 1;
  const codegen::ReduceShape shape = codegen::reduce_shape(p);
  const unsigned blocks = static_cast<unsigned>(shape.blocks_per_gradient(p.n));
  const unsigned gradients = (p.has_weight ? 1 : 0) + (p.has_bias ? 1 : 0);
  // A dependent launch on sm_90: its blocks are placed as the backward's finish.
  runtime::KernelLaunch launch(blocks, gradients, static_cast<unsigned>(shape.across),
                               static_cast<unsigned>(shape.lanes), 0, stream);
  launch.dependent_on_previous_kernel(k.limits.sm);
  for (int norm = 0; norm < norms; ++norm) {
    const float* partial_ptr = params.partial ? params.partial + norm * runtime::partial_floats(p, groups) : nullptr;
    int64_t groups_arg = groups;
    void* dweight = norm == 0 ? params.dweight : params.dweight1;
    void* dbias = norm == 0 ? params.dbias : params.dbias1;
    void* reduce_args[] = {&partial_ptr, &groups_arg, &dweight, &dbias};
    NJ_CU(driver().cuLaunchKernelEx(&launch.config(), k.reduce, reduce_args, nullptr),
          "the " + codegen::describe(p) + " backward: launching the dgamma/dbeta reduction");
  }
}

size_t Engine::Impl::workspace_size(const NormProblem& problem, int64_t m) {
  codegen::validate_problem(problem);
  if (m < 0) throw Error(Status::InvalidArgument, "normjit: workspace_size: m = " + std::to_string(m) + " is negative.");
  const CUcontext ctx = context_of(nullptr, [&] { return "workspace_size for " + codegen::describe(problem); });
  const NormProblem resolved = codegen::resolve_problem(problem);
  const runtime::DeviceLimits limits = query_limits(ctx);
  if (config.tune_mode == TuneMode::Off) return runtime::workspace_bound(resolved, limits, m);
  // Tuned configs may launch more row groups than the heuristic: cover those the database
  // holds for m's bucket, at every alignment the call's pointers may turn out to have.
  const runtime::TuningDevice device = tuning_device(limits);
  return runtime::workspace_bound(resolved, limits, m,
                                  [&](const NormProblem& p) { return database_config(p, m, device, codegen::Pass::Backward); });
}

// ---- the forward (docs/FORWARD.md) -----------------------------------------------------------

const LoadedKernel& Engine::Impl::forward_kernel_for(CUcontext ctx, const NormProblem& p, int64_t m,
                                                     llvm::function_ref<bool()> may_tune) {
  return kernel_for(ctx, p, m, may_tune, codegen::Pass::Forward);
}

void Engine::Impl::launch_forward_kernel(const LoadedKernel& k, const NormProblem& p, const ForwardArgs& a,
                                         CUstream stream) {
  // A persistent grid: no more row groups than are resident at once, each with a row at least.
  const int64_t groups = runtime::row_groups(k.config, k.limits, a.m, k.resident_groups);
  runtime::ForwardParams params = runtime::forward_params(a);
  void* kernel_args[] = {&params};
  launch_groups(k.forward, k.config, runtime::groups_per_launch(k.config, k.limits, groups, k.sm_margin), k.shared_bytes,
                stream, kernel_args, k.limits, [&] { return "the " + codegen::describe_forward(p) + ": launching"; });
}

void Engine::Impl::launch_forward(const NormProblem& problem, const ForwardArgs& args, CUstream stream) {
  codegen::validate_forward_problem(problem);
  const runtime::CheckedForwardCall call = runtime::check_forward_call(problem, args);
  const NormProblem& p = call.problem;
  const ForwardArgs& a = call.args;
  if (a.m == 0) return;
  const auto what = [&p] { return "the " + codegen::describe_forward(p); };  // for errors only
  const CUcontext ctx = context_of(stream, what);
  runtime::ScopedContext scope(ctx);
  launch_forward_kernel(forward_kernel_for(ctx, p, a.m, not_capturing(stream, what)), p, a, stream);
}

// ---- the public Engine -----------------------------------------------------------------------

namespace {

// The kind-specific entry points take only their kind.
void require_kind(const NormProblem& problem, NormKind kind, const char* entry, const char* other_entry) {
  if (problem.kind != kind)
    throw Error(Status::InvalidArgument, std::string("normjit: ") + entry + " was given a " +
                                             codegen::kind_name(problem.kind) + " problem: set problem.kind to " +
                                             (kind == NormKind::LayerNorm ? "LayerNorm" : "RMSNorm") + " or call " +
                                             other_entry + ".");
}

}  // namespace

Engine::Engine() : Engine(runtime::load_config()) {}
Engine::Engine(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Engine::~Engine() = default;

size_t Engine::workspace_size(const NormProblem& problem, int64_t m) { return impl_->workspace_size(problem, m); }

void Engine::layer_norm_backward(const NormProblem& problem, const BackwardArgs& args, Stream stream) {
  require_kind(problem, NormKind::LayerNorm, "layer_norm_backward", "rms_norm_backward");
  impl_->launch_backward(problem, args, stream);
}

void Engine::rms_norm_backward(const NormProblem& problem, const BackwardArgs& args, Stream stream) {
  require_kind(problem, NormKind::RMSNorm, "rms_norm_backward", "layer_norm_backward");
  impl_->launch_backward(problem, args, stream);
}

void Engine::backward(const NormProblem& problem, const BackwardArgs& args, Stream stream) {
  impl_->launch_backward(problem, args, stream);
}

void Engine::layer_norm_forward(const NormProblem& problem, const ForwardArgs& args, Stream stream) {
  require_kind(problem, NormKind::LayerNorm, "layer_norm_forward", "rms_norm_forward");
  impl_->launch_forward(problem, args, stream);
}

void Engine::rms_norm_forward(const NormProblem& problem, const ForwardArgs& args, Stream stream) {
  require_kind(problem, NormKind::RMSNorm, "rms_norm_forward", "layer_norm_forward");
  impl_->launch_forward(problem, args, stream);
}

void Engine::forward(const NormProblem& problem, const ForwardArgs& args, Stream stream) {
  impl_->launch_forward(problem, args, stream);
}

void Engine::prepare_forward(const NormProblem& problem) {
  codegen::validate_forward_problem(problem);
  const NormProblem p = codegen::resolve_forward_problem(problem);
  const CUcontext ctx = context_of(nullptr, [&] { return "prepare_forward for " + codegen::describe_forward(p); });
  impl_->forward_kernel_for(ctx, p);  // the heuristic's kernel (m unknown)
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
