// normjit tune: time the candidate launch configs of problems on this GPU and write the best
// per (device, problem, M bucket) into the tuning database (docs/TUNING.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "codegen/norm_problem.h"
#include "codegen/forward_config.h"
#include "codegen/launch_config.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "runtime/shape_file.h"
#include "runtime/tuner.h"
#include "runtime/tuner_timing.h"
#include "tools/cache_location.h"
#include "tools/problem_flags.h"
#include "tools/progress_line.h"
#include "tools/subcommands.h"

namespace normjit::tools {
namespace {

// Sessions in which `--exhaustive` re-times two different picks side by side (median ratio kept).
constexpr int kSideBySideSessions = 3;

void print_help() {
  std::printf(
      "usage: normjit tune [PROBLEM | --shapes FILE | --sweep] [--m LIST] [--forward] [--exhaustive]\n"
      "                    [--list] [--config CONFIG]... [--cache-dir DIR]\n"
      "Times every candidate launch config of each shape on this GPU (compiling them in parallel on\n"
      "the host's cores) and writes the fastest per (device, problem, M bucket) into the tuning\n"
      "database, <cache dir>/tuning.toml. Engines use it with tune.mode = cached (the default).\n"
      "\n"
      "  --shapes FILE   the problems of a TOML shape file, at each entry's m list (docs/CLI.md)\n"
      "  --sweep         the speed sweep: LayerNorm and RMSNorm, bf16 (fp32 weights) and fp32,\n"
      "                  N = 1024 .. 65536, M = elements / N and M = 1\n"
      "  --m LIST        rows to tune for, comma-separated (default 1,65536 for flags; each is a\n"
      "                  bucket: the next power of two)\n"
      "  --forward       tune the problems' forward kernels (docs/FORWARD.md) instead of their backward\n"
      "                  (--sweep then adds N = 32768 and 262144)\n"
      "  --exhaustive    time every candidate with the full repetitions too, and print heuristic,\n"
      "                  tuned and exhaustive-best per shape: the data a fitted heuristic needs\n"
      "  --list          print each shape's candidates and exit (no GPU needed)\n"
      "  --memory-rate B with --list: the device's peak memory bytes an SM cycle to list them for\n"
      "                  (default 0: the H100's rules; an H200 reads 18.4; a tuning run reads the GPU's)\n"
      "  --dry-run       list the shapes and exit\n"
      "  --config CONFIG time these launch configs (as --list prints them; repeatable) beside the\n"
      "                  heuristic's instead of the search space, print each one's time, and leave\n"
      "                  the tuning database as it is: configs the search space does not hold\n"
      "%s"
      "PROBLEM:\n%s"
      "\n"
      "Progress goes to stderr, the table to stdout. Exit 0 when every shape is tuned, 1 when any\n"
      "failed, 2 for bad usage, 3 without a GPU.\n",
      cache_dir_help(), problem_flags_help().c_str());
}

struct Shape {
  NormProblem problem;  // resolved (for the forward: resolve_forward_problem's)
  int64_t m = 1;
  codegen::Pass pass = codegen::Pass::Backward;
};

NormProblem resolve_for(const NormProblem& p, codegen::Pass pass) {
  return pass == codegen::Pass::Forward ? codegen::resolve_forward_problem(p) : codegen::resolve_problem(p);
}

std::vector<Shape> sweep_shapes(codegen::Pass pass) {
  std::vector<Shape> out;
  std::vector<int64_t> ns = {1024, 2048, 4096, 5120, 8192, 16384, 65536};
  if (pass == codegen::Pass::Forward) ns = {1024, 2048, 4096, 5120, 8192, 16384, 32768, 65536, 262144};
  for (DType dtype : {DType::BF16, DType::F32})
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (int64_t n : ns)
        for (int64_t m : {int64_t{1}, std::max<int64_t>(1, (int64_t{1} << 26) / n)}) {
          NormProblem p;
          p.kind = kind;
          p.n = n;
          p.x_dtype = dtype;
          p.weight_dtype = DType::F32;
          p.has_bias = kind == NormKind::LayerNorm;
          out.push_back({resolve_for(p, pass), m, pass});
        }
  return out;
}

std::string shape_label(const Shape& s) {
  return codegen::describe(s.problem, s.pass) + " M<=" + std::to_string(runtime::m_bucket(s.m));
}

// One line per candidate, "  TAG shape | config | µs" (or "failed: why"): --exhaustive's `fit`
// lines, the data a heuristic is fitted to, and --config's `config` lines.
void print_candidate_times(const char* tag, const Shape& s, const std::vector<runtime::CandidateTiming>& candidates) {
  for (const runtime::CandidateTiming& c : candidates)
    std::printf("  %s %s | %s | %s\n", tag, shape_label(s).c_str(), codegen::describe(c.config).c_str(),
                c.ok ? std::to_string(c.us()).c_str() : ("failed: " + c.error).c_str());
}

}  // namespace

int run_tune(std::vector<std::string> args) {
  if (take_flag(args, "--help")) {
    print_help();
    return kExitOk;
  }
  const bool exhaustive = take_flag(args, "--exhaustive");
  const bool list = take_flag(args, "--list");
  const double memory_rate = take_memory_rate(args);
  if (memory_rate > 0 && !list)
    throw std::invalid_argument("--memory-rate is for --list: a tuning run reads the GPU's own rate from the driver");
  const bool dry_run = take_flag(args, "--dry-run");
  const bool sweep = take_flag(args, "--sweep");
  const codegen::Pass pass = take_flag(args, "--forward") ? codegen::Pass::Forward : codegen::Pass::Backward;
  const std::string shapes_file = take_option(args, "--shapes");
  const std::string m_text = take_option(args, "--m");
  CacheLocation cache = take_cache_location(args);
  // --config: configs to time beside the heuristic's, parsed here so a typo fails before any GPU
  // work (parse_described_config's std::invalid_argument is bad usage, exit 2).
  std::vector<codegen::LaunchConfig> pinned;
  for (std::string text; !(text = take_option(args, "--config")).empty();)
    pinned.push_back(codegen::parse_described_config(text));
  if (!pinned.empty() && (exhaustive || list))
    throw std::invalid_argument("--config times the configs given; it does not go with --exhaustive or --list");
  const std::vector<int64_t> m_flag = m_text.empty() ? std::vector<int64_t>{1, 65536} : parse_integer_list("--m", m_text, 1);

  std::vector<Shape> shapes;
  if (sweep + !shapes_file.empty() > 1) throw std::invalid_argument("give --sweep or --shapes, not both");
  if (sweep) {
    if (!args.empty()) throw std::invalid_argument("'" + args.front() + "' given with --sweep");
    shapes = sweep_shapes(pass);
  } else if (!shapes_file.empty()) {
    if (!args.empty()) throw std::invalid_argument("'" + args.front() + "' given with --shapes: flags or a file, not both");
    std::vector<runtime::ShapeProblem> file;
    try {
      file = runtime::load_shape_file(shapes_file);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return kExitUsage;
    }
    for (const runtime::ShapeProblem& s : file)
      for (int64_t m : s.m.empty() ? m_flag : s.m) shapes.push_back({resolve_for(s.problem, pass), m, pass});
  } else {
    if (args.empty()) throw std::invalid_argument("no problem given: pass PROBLEM flags, --shapes FILE or --sweep");
    NormProblem p = parse_problem_flags(args);
    if (!args.empty()) throw std::invalid_argument("unexpected argument '" + args.front() + "'");
    try {
      if (pass == codegen::Pass::Forward)
        codegen::validate_forward_problem(p);
      else
        codegen::validate_problem(p);
    } catch (const Error& e) {
      throw std::invalid_argument(e.what());
    }
    for (int64_t m : m_flag) shapes.push_back({resolve_for(p, pass), m, pass});
  }
  // One shape per (problem, bucket).
  std::vector<Shape> unique;
  for (const Shape& s : shapes)
    if (std::none_of(unique.begin(), unique.end(), [&](const Shape& u) { return shape_label(u) == shape_label(s); }))
      unique.push_back(s);
  shapes = unique;

  if (dry_run || list) {
    for (const Shape& s : shapes) {
      std::printf("%s\n", shape_label(s).c_str());
      if (!list) continue;
      for (int sm : {80, 90}) {
        // The SM count is not known without a GPU: few rows are judged for an H100 (132).
        runtime::DeviceLimits limits;
        limits.sm = sm;
        limits.memory_bytes_per_sm_cycle = memory_rate;
        const auto space = runtime::candidate_configs(s.problem, limits, s.m, s.pass);
        std::printf("  sm_%d: %zu candidates\n", sm, space.size());
        for (const auto& c : space) std::printf("    %s\n", codegen::describe(c).c_str());
      }
    }
    return kExitOk;
  }

  std::string why;
  if (!runtime::cuda_available(&why)) {
    std::fprintf(stderr, "normjit tune needs a GPU: %s\n", why.c_str());
    return kExitNoGpu;
  }
  const auto& d = runtime::driver();
  CUdevice dev;
  CUcontext ctx;
  NJ_CU(d.cuDeviceGet(&dev, 0), "tune: device 0");
  NJ_CU(d.cuDevicePrimaryCtxRetain(&ctx, dev), "tune: context");
  NJ_CU(d.cuCtxSetCurrent(ctx), "tune: context");

  cache.config.tune_mode = TuneMode::Cached;  // load the database: tuning adds to it
  Engine engine(cache.config);
  Engine::Impl& impl = engine.impl();
  const runtime::DeviceLimits limits = Engine::Impl::query_limits(ctx);
  const runtime::TuningDevice device = impl.tuning_device(limits);
  std::printf("normjit %s tune on %s (sm_%d, %d SMs, %.1f memory bytes an SM cycle, NVRTC %s): %zu shape%s into %s\n",
              version_string(), device.name.c_str(), device.sm, device.sm_count, limits.memory_bytes_per_sm_cycle,
              device.nvrtc.c_str(), shapes.size(),
              shapes.size() == 1 ? "" : "s", impl.tuning.path().empty() ? "(no file)" : impl.tuning.path().c_str());
  // The wall time of the (non-exhaustive) tuning, then its parts: compiling every candidate on
  // host threads, and loading and timing them on the GPU.
  std::printf("\n%-82s %5s %10s %10s %8s %10s %8s %8s %8s %8s  %s\n", "shape", "cands", "heur us", "tuned us",
              "heur/tun", exhaustive ? "exh us" : "-", exhaustive ? "tun/exh" : "-", "wall s", "compile", "timing",
              "tuned config");

  size_t failed = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    const std::string label = "[" + std::to_string(i + 1) + "/" + std::to_string(shapes.size()) + "] " + shape_label(s);
    runtime::TuneOptions options;
    // Given configs are each timed with the final repetitions (as --exhaustive times them all).
    options.exhaustive = !pinned.empty();
    if (!pinned.empty()) {
      // The heuristic's config first (TuneResult::heuristic), then the given ones; each must fit
      // the shape's pass (check_config says why not: a forward's held weights are no backward's).
      options.only = {runtime::candidate_configs(s.problem, limits, runtime::timed_rows(s.problem, s.m, options), s.pass).front()};
      for (const codegen::LaunchConfig& c : pinned) {
        try {
          codegen::check_config(s.problem, c, s.pass);
        } catch (const std::invalid_argument& e) {  // what the checks throw
          ++failed;
          std::fprintf(stderr, "normjit tune: %s: --config %s does not fit: %s\n", shape_label(s).c_str(),
                       codegen::describe(c).c_str(), e.what());
          continue;
        }
        options.only.push_back(c);
      }
    }
    // Steps: compile and time each candidate, then the finalists (and the heuristic); with
    // --exhaustive each candidate again (compile, screen, final) and the two picks side by side.
    const size_t count = !options.only.empty() ? options.only.size()
                         : runtime::candidate_configs(s.problem, limits, runtime::timed_rows(s.problem, s.m, options), s.pass).size();
    ProgressLine progress(2 * count + static_cast<size_t>(options.max_finalists) + 1 +
                          (exhaustive ? 3 * count + 6 * kSideBySideSessions : 0));
    options.progress = [&](const std::string& step, const std::string& outcome) { progress.report(label + " " + step, outcome); };
    try {
      const runtime::TuneResult tuned = runtime::tune(impl, ctx, s.problem, s.m, options, s.pass);
      if (pinned.empty()) impl.tuning.put(runtime::make_tuning_key(device, s.problem, s.m, s.pass).text(), tuned.tuned());
      else print_candidate_times("config", s, tuned.candidates);
      double exhaustive_us = 0, tuned_over_exhaustive = 1;
      std::string exhaustive_config;
      if (exhaustive) {
        runtime::TuneOptions all = options;
        all.exhaustive = true;
        const runtime::TuneResult every = runtime::tune(impl, ctx, s.problem, s.m, all, s.pass);
        exhaustive_us = every.winner().us();
        exhaustive_config = codegen::describe(every.winner().config);
        // The same config is the exhaustive pick (1 by definition: its two runs' medians differ
        // by replay noise alone). Different picks are re-timed side by side, in turns: each
        // run's best is the lowest of many noisy medians, so comparing them across runs reads a
        // few percent against the tuner at µs-scale shapes even where its pick is as fast.
        if (!(tuned.winner().config == every.winner().config)) {
          runtime::TuneOptions pair = all;
          pair.only = {tuned.winner().config, every.winner().config};
          pair.final_reps = 4 * options.final_reps;
          pair.final_replay_us = 4 * options.final_replay_us;
          pair.max_final_reps = 4 * options.max_final_reps;
          // Three sessions of it (each its own buffers and graphs), the median ratio: at µs-scale
          // shapes one session's ratio still moves by a few percent from the next's.
          std::vector<double> ratios;
          for (int session = 0; session < kSideBySideSessions; ++session) {
            const runtime::TuneResult side_by_side = runtime::tune(impl, ctx, s.problem, s.m, pair, s.pass);
            if (side_by_side.candidates[0].ok && side_by_side.candidates[1].ok)
              ratios.push_back(side_by_side.candidates[0].us() / side_by_side.candidates[1].us());
          }
          if (!ratios.empty()) tuned_over_exhaustive = runtime::median(std::move(ratios));
        }
        // What a fitted heuristic needs: every candidate's time at this shape.
        print_candidate_times("fit", s, every.candidates);
      }
      const double heuristic_us = tuned.heuristic().us();
      std::printf("%-82s %5zu %10.2f %10.2f %8.3f %10s %8s %8.2f %8.2f %8.2f  %s%s\n", shape_label(s).c_str(),
                  tuned.candidates.size(), heuristic_us, tuned.winner().us(), heuristic_us / tuned.winner().us(),
                  exhaustive ? std::to_string(exhaustive_us).substr(0, 8).c_str() : "-",
                  exhaustive ? std::to_string(tuned_over_exhaustive).substr(0, 5).c_str() : "-",
                  tuned.wall_ms / 1000.0, tuned.compile_wall_ms / 1000.0, tuned.time_wall_ms / 1000.0,
                  codegen::describe(tuned.winner().config).c_str(),
                  exhaustive ? ("  (exhaustive best: " + exhaustive_config + ")").c_str() : "");
      std::fflush(stdout);
    } catch (const std::exception& e) {
      ++failed;
      std::fprintf(stderr, "normjit tune: %s failed: %s\n", shape_label(s).c_str(), e.what());
    }
  }
  std::string save_why;
  if (!impl.tuning.save(&save_why)) {
    std::fprintf(stderr, "normjit tune: cannot write the tuning database: %s\n", save_why.c_str());
    return kExitFailed;
  }
  std::printf("\ntuning database %s: %zu entries\n", impl.tuning.path().c_str(), impl.tuning.size());
  return failed ? kExitFailed : kExitOk;
}

}  // namespace normjit::tools
