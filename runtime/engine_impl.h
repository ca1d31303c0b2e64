// The inside of normjit::Engine: the caches, the tuning database, and the kernels loaded into
// each CUDA context. The launch path (launch_backward) takes a shared lock and one hash lookup
// when the kernel is already loaded; choosing the config (the tuning database, tuning on a
// miss, or the heuristic), generation, compilation and module loading happen once per
// (context, problem, M bucket), and a module is loaded once per (context, problem, config).
#pragma once
#include <cuda.h>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <utility>

#include "codegen/launch_config.h"
#include "codegen/pass.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "normjit/normjit.hpp"
#include "runtime/disk_cache.h"
#include "runtime/kernel_cache.h"
#include "runtime/launch_params.h"
#include "runtime/launch_plan.h"
#include "runtime/tuning_db.h"
#include "runtime/tuning_key.h"

namespace normjit {

struct LoadedKernel {
  NormProblem problem;  // resolved
  codegen::LaunchConfig config;
  runtime::DeviceLimits limits;
  int64_t resident_groups = 1;   // row groups (blocks or clusters) resident at once on the device
  int sm_margin = 0;             // Config::sm_margin: SMs its launches leave to other work
  unsigned shared_bytes = 0;     // dynamic shared memory per block (staged rows, shared sums, held weights)
  CUcontext context = nullptr;
  uint64_t context_id = 0;       // the driver's unique id of `context` (cuCtxGetId)
  CUmodule module = nullptr;
  CUfunction backward = nullptr;
  CUfunction reduce = nullptr;
  CUfunction row_sums = nullptr;  // the column pass's first kernel (config.column_pass > 0)
  CUfunction forward = nullptr;  // a forward kernel's module (docs/FORWARD.md): the only entry, the two above null
  std::shared_ptr<const runtime::CompiledKernel> compiled;
  bool tuned = false;            // config came from the tuning database (or a tuning just run)
};

struct Engine::Impl {
  explicit Impl(Config cfg);
  ~Impl();

  // The limits of ctx's device (made current for the query when it is not).
  static runtime::DeviceLimits query_limits(CUcontext ctx);
  // Bytes of local memory (spills and stack frame) a thread of the loaded function f takes, asked
  // of the driver, which knows it of any loaded cubin, whatever log came with it (NVRTC's own
  // cache used to answer without ptxas's report, fixed in Nvrtc::compile). `what` names f in an error.
  static int local_memory_bytes(CUfunction f, const std::string& what);
  codegen::CompileTarget target_for(int sm) const;
  // What a tuning key says of the device of ctx (current): name, arch, SM count, NVRTC.
  runtime::TuningDevice tuning_device(const runtime::DeviceLimits& limits) const;

  // Source, key and cubin of a problem for an arch: no GPU needed (normjit demo/compile).
  // Without a config, the heuristic's.
  std::shared_ptr<const runtime::CompiledKernel> compile(const NormProblem& resolved, int sm);
  // With Pass::Forward, the forward kernel of resolve_forward_problem's problem.
  std::shared_ptr<const runtime::CompiledKernel> compile(const NormProblem& resolved,
                                                         const codegen::LaunchConfig& config, int sm,
                                                         codegen::Pass pass = codegen::Pass::Backward);

  // The kernel of a resolved problem in ctx (current), loading it on first use. m < 0: the
  // heuristic's config, whatever the tuning mode. m >= 0: the config for m's bucket as
  // config.tune_mode says (database, tuning on a miss when may_tune, else the heuristic).
  // may_tune is asked only when on-miss tuning is due; none: not now.
  // pass: the backward's kernel, or the forward's (resolve_forward_problem's problem).
  const LoadedKernel& kernel_for(CUcontext ctx, const NormProblem& resolved, int64_t m = -1,
                                 llvm::function_ref<bool()> may_tune = nullptr,
                                 codegen::Pass pass = codegen::Pass::Backward);

  // Makes this engine use `config` for a resolved problem at m's bucket on the device of
  // `limits`: an entry in the in-memory tuning database, saved by nothing (tools and tests that
  // time or check one config; tune.mode must not be off, and before kernel_for loads that bucket).
  void pin_config(const runtime::DeviceLimits& limits, const NormProblem& resolved, int64_t m,
                  const codegen::LaunchConfig& config, codegen::Pass pass = codegen::Pass::Backward);

  // A module of `config` for a resolved problem loaded into ctx (current), kept in no map: the
  // tuner's candidates. Throws normjit::Error when it cannot be compiled, loaded or resident.
  // With Pass::Forward, the forward kernel (its one entry, `forward`).
  std::unique_ptr<LoadedKernel> load(CUcontext ctx, const NormProblem& resolved, const codegen::LaunchConfig& config,
                                     const runtime::DeviceLimits& limits,
                                     codegen::Pass pass = codegen::Pass::Backward);
  // k, or where it is a forward block bounded to fill the SM that takes local memory (spills),
  // the same block at 64 registers a thread (codegen::unfilled_forward_config), loaded instead.
  std::unique_ptr<LoadedKernel> unless_spilling(std::unique_ptr<LoadedKernel> k, CUcontext ctx,
                                                const NormProblem& resolved, const runtime::DeviceLimits& limits);
  // Launches k over a checked call (runtime::check_backward_call's problem and args) on stream.
  static void launch(const LoadedKernel& k, const NormProblem& checked, const BackwardArgs& args, CUstream stream);

  // The kernels of one launch of k over `groups` row groups (params.m > 0): the backward, then,
  // unless it writes dγ/dβ itself, the reduction of its partial rows (one per norm). No checks.
  static void launch_kernels(const LoadedKernel& k, const NormProblem& checked, runtime::BackwardParams& params,
                             int64_t groups, CUstream stream);
  // The reductions alone: `groups` partial rows at params.partial into params' dγ/dβ (and dγ1/dβ1).
  static void launch_reductions(const LoadedKernel& k, const NormProblem& checked, const runtime::BackwardParams& params,
                                int64_t groups, CUstream stream);
  void launch_backward(const NormProblem& problem, const BackwardArgs& args, CUstream stream);

  // The forward (docs/FORWARD.md): the same caches and tuning database, its own entries
  // (problem_code of Pass::Forward, tuning keys of Pass::Forward): kernel_for(..., Pass::Forward).
  const LoadedKernel& forward_kernel_for(CUcontext ctx, const NormProblem& resolved, int64_t m = -1,
                                         llvm::function_ref<bool()> may_tune = nullptr);
  // Launches a forward kernel over a checked call (runtime::check_forward_call's, m > 0).
  static void launch_forward_kernel(const LoadedKernel& k, const NormProblem& checked, const ForwardArgs& args,
                                    CUstream stream);
  void launch_forward(const NormProblem& problem, const ForwardArgs& args, CUstream stream);
  size_t workspace_size(const NormProblem& problem, int64_t m);
  // The code of a resolved problem's kernel for one pass, in the kernel maps' keys: two problems
  // that compile differently never share one. Bits 0-30 N − 1 (N ≤ 2^31), 31 rows out of phase
  // (aligned to less than 16 bytes), 32 RMSNorm, 33-40 the dtypes, 41-42 γ and β, 43-45 log2 of
  // the alignment, 46 recompute_from_output, 47 the forward, 48-55 zero (kernel_for's M bucket),
  // 56-63 the other fused options. (Until session 42 rows out of phase took bit 47 too: their
  // backward and every forward of their shape shared a key, and the forward then launched the
  // backward's kernel, which has no forward entry point.)
  static uint64_t problem_code(const NormProblem& resolved, codegen::Pass pass);

  Config config;
  runtime::DiskCache disk;
  runtime::KernelCache kernels;
  runtime::TuningDb tuning;               // loaded once at construction unless tune.mode is off
  std::atomic<uint64_t> loaded_hits{0};   // kernel_for calls served by an already loaded kernel
  std::atomic<uint64_t> tuning_hits{0};   // (context, problem, M bucket)s given a config from the database
  std::atomic<uint64_t> tunings{0};       // shapes tuned by this engine (on-miss)

 private:
  // (context id, problem code with the M bucket in bits 48..55, fused options in 56..63 and 46) ->
  // kernel. Contexts are told apart by the driver's unique id, not their handle: a context
  // made after one was destroyed may get its handle, and must not get its modules.
  using Key = std::pair<uint64_t, uint64_t>;
  static uint64_t context_id(CUcontext ctx);
  // The config for (problem, m) on this device, as tune.mode says; tuned: from the database or
  // a tuning. Sets `settled` false when the answer is provisional (a tuning was due but not
  // allowed now): the caller then does not remember it for the bucket.
  codegen::LaunchConfig config_for(CUcontext ctx, const NormProblem& resolved, int64_t m,
                                   const runtime::DeviceLimits& limits, llvm::function_ref<bool()> may_tune,
                                   bool& tuned, bool& settled, codegen::Pass pass);
  // The database's config for (problem, m's bucket) on `device`, if it holds one that can run
  // (checked like any config; a bad entry is warned about once and ignored).
  std::optional<codegen::LaunchConfig> database_config(const NormProblem& resolved, int64_t m,
                                                       const runtime::TuningDevice& device, codegen::Pass pass);

  std::shared_mutex mu_;
  llvm::DenseMap<Key, LoadedKernel*> loaded_;
  // Owns the modules: one per (context, problem code, config, tuned), shared by the buckets that use it.
  std::map<std::tuple<uint64_t, uint64_t, std::string, bool>, std::unique_ptr<LoadedKernel>> modules_;
};

}  // namespace normjit
