// normjit compile: build kernels into the disk cache ahead of time, on every host core, so that
// a node (or a fleet, through `normjit cache export/import`) finds them there instead of
// compiling at its first training step. Needs NVRTC, not a GPU.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <thread>

#include "codegen/norm_problem.h"
#include "runtime/engine_impl.h"
#include "runtime/shape_file.h"
#include "tools/cache_location.h"
#include "tools/default_problems.h"
#include "tools/problem_flags.h"
#include "tools/progress_line.h"
#include "tools/subcommands.h"
#include "tools/target_archs.h"

namespace normjit::tools {
namespace {

void print_help() {
  std::printf(
      "usage: normjit compile [PROBLEM | --shapes FILE] --arch sm_XY [--jobs N] [--cache-dir DIR] [--dry-run]\n"
      "Compiles backward kernels into the disk cache with NVRTC (no GPU needed), several at once.\n"
      "Problems: the PROBLEM flags below, or every problem of a shape file (--shapes), or, with\n"
      "neither, a default set: N = 2048 4096 5120 7168 8192 12288 16384, LayerNorm (+bias) and\n"
      "RMSNorm, bf16 and fp16, fp32 weights (examples/shapes/common.toml).\n"
      "\n"
      "  --arch sm_XY               target arch; repeat or comma-separate for several (sm_80,sm_90).\n"
      "                             Default: the archs of this machine's GPUs; required without a GPU\n"
      "  --shapes FILE              a TOML shape file (docs/CLI.md; examples in examples/shapes/)\n"
      "  --jobs N                   compile N problems at a time (default: the host's cores)\n"
      "%s"
      "  --dry-run                  list the (arch, problem) pairs and compile nothing\n"
      "PROBLEM:\n%s"
      "\n"
      "Progress goes to stderr, the summary to stdout. Exit 0 when every problem is compiled or\n"
      "already cached, 1 when any failed, 2 for bad usage (no --arch without a GPU, a bad shape file).\n",
      cache_dir_help(), problem_flags_help().c_str());
}

struct Job {
  NormProblem problem;  // resolved
  int sm = 0;
  std::string label;    // "sm_90 rmsnorm N=4096 ..."
};

enum class Outcome { Compiled, Cached, Failed };

struct Result {
  Outcome outcome = Outcome::Failed;
  std::string error;
};

int parse_jobs(const std::string& text) {
  if (text.empty()) return std::max(1u, std::thread::hardware_concurrency());
  size_t used = 0;
  int jobs = 0;
  try {
    jobs = std::stoi(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || jobs < 1)
    throw std::invalid_argument("--jobs '" + text + "' is not a positive number of compiles to run at once");
  return jobs;
}

// The problems asked for, unresolved. Throws std::invalid_argument for bad flags and
// normjit::Error(ConfigError) for a bad shape file.
std::vector<NormProblem> requested_problems(std::vector<std::string>& args, const std::string& shapes) {
  std::vector<NormProblem> out;
  if (!shapes.empty()) {
    if (!args.empty())
      throw std::invalid_argument("'" + args.front() + "' given with --shapes: take the problems from the file or "
                                  "from flags, not both");
    for (const runtime::ShapeProblem& s : runtime::load_shape_file(shapes)) out.push_back(s.problem);
    return out;
  }
  if (args.empty()) return default_problems();
  out.push_back(parse_problem_flags(args));
  if (!args.empty()) throw std::invalid_argument("unexpected argument '" + args.front() + "'");
  try {
    codegen::validate_problem(out.back());
  } catch (const Error& e) {
    throw std::invalid_argument(e.what());
  }
  return out;
}

// One job per (arch, problem), without repeats: two spellings of one problem are one kernel.
std::vector<Job> plan_jobs(const std::vector<NormProblem>& problems, const std::vector<int>& archs) {
  std::vector<Job> jobs;
  std::set<std::string> seen;
  for (int sm : archs)
    for (const NormProblem& p : problems) {
      Job job;
      job.problem = codegen::resolve_problem(p);
      job.sm = sm;
      job.label = "sm_" + std::to_string(sm) + " " + codegen::describe(job.problem);
      if (seen.insert(job.label).second) jobs.push_back(std::move(job));
    }
  return jobs;
}

// Runs every job on `threads` host threads; NVRTC and the kernel cache are thread-safe.
std::vector<Result> run_jobs(Engine::Impl& impl, const std::vector<Job>& jobs, int threads) {
  std::vector<Result> results(jobs.size());
  std::atomic<size_t> next{0};
  ProgressLine progress(jobs.size());
  auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      Result& r = results[i];
      const auto start = std::chrono::steady_clock::now();
      std::string how;
      try {
        const auto kernel = impl.compile(jobs[i].problem, jobs[i].sm);
        r.outcome = kernel->from_disk ? Outcome::Cached : Outcome::Compiled;
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        char text[48];
        std::snprintf(text, sizeof text, "%.0f ms", ms);
        how = kernel->from_disk ? "already cached" : text;
      } catch (const std::exception& e) {
        r.outcome = Outcome::Failed;
        r.error = e.what();
        how = "FAILED";
      }
      progress.report(jobs[i].label, how);
    }
  };
  std::vector<std::thread> pool;
  const size_t n = std::min(jobs.size(), static_cast<size_t>(threads));
  for (size_t t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();  // this thread works too
  for (std::thread& t : pool) t.join();
  return results;
}

std::string arch_names(const std::vector<int>& archs) {
  std::string out;
  for (int sm : archs) out += (out.empty() ? "sm_" : ", sm_") + std::to_string(sm);
  return out;
}

}  // namespace

int run_compile(std::vector<std::string> args) {
  if (take_flag(args, "--help")) {
    print_help();
    return kExitOk;
  }
  const bool dry_run = take_flag(args, "--dry-run");
  const int threads = parse_jobs(take_option(args, "--jobs"));
  const std::string shapes = take_option(args, "--shapes");
  std::vector<int> archs = parse_arch_list(take_repeated_option(args, "--arch"));
  CacheLocation cache = take_cache_location(args);

  std::vector<NormProblem> problems;
  try {
    problems = requested_problems(args, shapes);
  } catch (const Error& e) {  // a bad shape file is bad input, like a bad flag
    std::fprintf(stderr, "%s\n", e.what());
    return kExitUsage;
  }
  if (archs.empty()) {
    std::string why;
    archs = gpu_archs(&why);
    if (archs.empty())
      throw std::invalid_argument(
          "no --arch given and no GPU here to take it from: pass --arch sm_XY (e.g. --arch sm_90; several: "
          "--arch sm_80,sm_90). The GPU check said: " + why);
  }
  const std::vector<Job> jobs = plan_jobs(problems, archs);
  if (dry_run) {
    for (const Job& job : jobs) std::printf("%s\n", job.label.c_str());
    return kExitOk;
  }
  if (!cache.config.disk_cache)
    throw std::invalid_argument("the disk cache is off (cache.disk, " + cache.config.sources["cache.disk"] +
                                "), so compiled kernels would be thrown away; pass --cache-dir DIR or turn it on");

  Engine engine(cache.config);
  Engine::Impl& impl = engine.impl();
  if (!impl.disk.enabled()) {
    std::fprintf(stderr, "normjit compile: the cache directory %s (%s) cannot be written; nothing was compiled.\n",
                 cache.dir.c_str(), cache.from.c_str());
    return kExitFailed;
  }
  for (int sm : archs) impl.target_for(sm);  // an arch NVRTC cannot target fails here, before any work

  const auto start = std::chrono::steady_clock::now();
  const std::vector<Result> results = run_jobs(impl, jobs, threads);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  size_t compiled = 0, cached = 0, failed = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    switch (results[i].outcome) {
      case Outcome::Compiled: ++compiled; break;
      case Outcome::Cached: ++cached; break;
      case Outcome::Failed:
        ++failed;
        std::fprintf(stderr, "normjit compile: %s failed: %s\n", jobs[i].label.c_str(), results[i].error.c_str());
        break;
    }
  }
  // NVRTC runs counted by the kernel cache itself: never more than the kernels compiled, even
  // when several jobs ask for the same kernel at once.
  std::printf("compiled %zu, already cached %zu, failed %zu, nvrtc runs %llu: %zu kernel%s for %s into %s (%.1f s, %d jobs)\n",
              compiled, cached, failed, static_cast<unsigned long long>(impl.kernels.stats().compiles), jobs.size(),
              jobs.size() == 1 ? "" : "s", arch_names(archs).c_str(),
              cache.dir.c_str(), seconds,
              static_cast<int>(std::min(jobs.size(), static_cast<size_t>(threads))));
  return failed ? kExitFailed : kExitOk;
}

}  // namespace normjit::tools
