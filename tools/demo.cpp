// normjit demo: the JIT pipeline without a GPU. Generates and compiles a set of real problems
// for one arch, then asks a fresh in-memory cache for each again to show the disk-cache hit.
#include <cstdio>

#include "codegen/kernel_source.h"
#include "codegen/norm_problem.h"
#include "runtime/config.h"
#include "runtime/engine_impl.h"
#include "runtime/nvrtc.h"
#include "tools/problem_flags.h"
#include "tools/target_archs.h"
#include "tools/subcommands.h"

namespace normjit::tools {
namespace {

std::vector<NormProblem> demo_problems() {
  std::vector<NormProblem> out;
  auto add = [&](NormKind kind, int64_t n, DType x, DType w, bool bias) {
    NormProblem p;
    p.kind = kind;
    p.n = n;
    p.x_dtype = x;
    p.weight_dtype = w;
    p.has_bias = bias;
    out.push_back(p);
  };
  add(NormKind::LayerNorm, 1, DType::F32, DType::F32, true);
  add(NormKind::LayerNorm, 1000, DType::BF16, DType::F32, true);
  add(NormKind::LayerNorm, 4096, DType::BF16, DType::F32, true);
  add(NormKind::LayerNorm, 8192, DType::F16, DType::F16, true);
  add(NormKind::LayerNorm, 65536, DType::BF16, DType::F32, true);
  add(NormKind::RMSNorm, 4095, DType::F32, DType::F32, false);
  add(NormKind::RMSNorm, 5120, DType::BF16, DType::BF16, false);
  add(NormKind::RMSNorm, 7168, DType::BF16, DType::F32, false);
  add(NormKind::RMSNorm, 1048576, DType::BF16, DType::F32, false);
  return out;
}

}  // namespace

int run_demo(std::vector<std::string> args) {
  if (take_flag(args, "--help")) {
    std::printf(
        "usage: normjit demo [--arch sm_XY] [--cache-dir DIR]\n"
        "Generates and compiles a set of problems with NVRTC (no GPU needed) and prints each\n"
        "kernel's source size, registers, spills and compile time, then asks a fresh memory\n"
        "cache for it again to show the disk-cache hit. Default arch: the GPU's, else sm_90.\n");
    return kExitOk;
  }
  std::string arch = take_option(args, "--arch");
  const std::string cache_dir = take_option(args, "--cache-dir");
  if (!args.empty()) throw std::invalid_argument("unexpected argument '" + args.front() + "'");

  Config config = runtime::load_config();
  if (!cache_dir.empty()) {
    config.cache_dir = cache_dir;
    config.disk_cache = true;
  }
  Engine engine(config);
  Engine::Impl& impl = engine.impl();
  int sm = 90;
  std::string where = "no GPU here; compiling for sm_90";
  std::string why;
  if (!arch.empty()) {
    sm = parse_arch_list({arch}).front();
    where = "compiling for sm_" + std::to_string(sm);
  } else if (const std::vector<int> present = gpu_archs(&why); !present.empty()) {
    sm = present.front();
    where = "compiling for this machine's GPU, sm_" + std::to_string(sm);
  }
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  std::printf("normjit %s demo: NVRTC %s (%s), %s\n", version_string(), nvrtc.version().c_str(),
              nvrtc.library_path().c_str(), where.c_str());
  std::printf("disk cache: %s\n\n", impl.disk.enabled() ? impl.disk.dir().c_str() : "off (memory only)");
  std::printf("%-72s %-42s %8s %5s %10s %10s %10s\n", "problem", "launch config", "source", "regs", "spills(B)",
              "compile", "2nd run");

  runtime::KernelCache fresh(impl.disk);  // an empty memory cache, as in a new process
  for (const NormProblem& problem : demo_problems()) {
    const NormProblem p = codegen::resolve_problem(problem);
    const codegen::LaunchConfig config = codegen::choose_launch_config(p, sm);
    const codegen::KernelSource source = codegen::generate_backward_source(p, config);
    auto first = impl.compile(p, sm);
    auto second = fresh.get(source, impl.target_for(sm), codegen::describe(p));
    int regs = 0, spills = 0;
    for (const runtime::KernelResources& r : first->resources)
      if (r.function == codegen::KernelSource::kBackwardEntry) {
        regs = r.registers;
        spills = r.spill_stores + r.spill_loads;
      }
    char compile[32];
    if (first->from_disk)
      std::snprintf(compile, sizeof compile, "disk hit");
    else
      std::snprintf(compile, sizeof compile, "%.0f ms", first->compile_ms);
    std::printf("%-72s %-42s %7zuB %5d %10d %10s %10s\n", codegen::describe(p).c_str(),
                codegen::describe(config).c_str(), source.text.size(), regs, spills, compile,
                second->from_disk ? "disk hit" : (impl.disk.enabled() ? "MISS" : "n/a"));
  }
  const runtime::KernelCacheStats s = impl.kernels.stats();
  // A cache directory kept from an earlier run (the user-level one is shared) already holds them.
  if (s.compiles == 0)
    std::printf("\n0 compiled, %llu read from disk: every kernel came from the disk cache (an earlier run's); point "
                "NORMJIT_CACHE_DIR at an empty directory to see them compiled.\n",
                static_cast<unsigned long long>(s.disk_hits));
  else
    std::printf("\n%llu compiled, %llu read from disk; run again to see every kernel come from the disk cache.\n",
                static_cast<unsigned long long>(s.compiles), static_cast<unsigned long long>(s.disk_hits));
  return kExitOk;
}

}  // namespace normjit::tools
