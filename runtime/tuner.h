// The autotuner: times every candidate of codegen::search_space for one problem and one M
// bucket on the current GPU and picks the fastest.
//
//   1. Compile every candidate on host threads at once (NVRTC and the kernel cache are
//      thread-safe; cubins land in the disk cache too).
//   2. Load each and time the whole backward (the main kernel and the dγ/dβ reduction), or the
//      forward, with
//      CUDA events on a private stream over private buffers of random data — never the
//      caller's — flushing L2 before every repetition. Screening: `screen_reps` each.
//   3. The fastest `finalists` (and those screening cannot tell from the fastest, and always
//      the heuristic's config) are timed again with `final_reps` or more (TuneOptions), in
//      turns; the lowest median wins. With `exhaustive`, every candidate gets the final
//      repetitions: the reference a tuned pick is checked against.
// Needs a GPU: without one it throws normjit::Error(NoDriver or NoDevice) saying so.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/launch_config.h"
#include "codegen/pass.h"
#include "normjit/normjit.hpp"
#include "runtime/launch_plan.h"  // DeviceLimits
#include "runtime/tuning_db.h"

namespace normjit::runtime {

struct TuneOptions {
  // Screening repetitions: screen_reps, then for short backwards more, up to screen_replay_us
  // of replays in all (at most max_screen_reps), so the finalists of a µs-scale shape are not
  // picked by noise.
  int screen_reps = 5;
  double screen_replay_us = 250;
  int max_screen_reps = 40;
  // Final repetitions: at least final_reps, and more for short backwards, enough to replay for
  // final_replay_us in all (at most max_final_reps): a 5 µs backward varies by a few hundred ns
  // from replay to replay, as much as its candidates differ (bench/NOTES.md, entry 25).
  int final_reps = 15;
  double final_replay_us = 1500;
  int max_final_reps = 150;
  // Finalists: the `finalists` fastest by screening, and any other within finalist_margin of
  // the fastest (screening cannot tell those apart), at most max_finalists.
  int finalists = 3;
  double finalist_margin = 0.05;
  int max_finalists = 8;
  bool exhaustive = false;
  // Time these configs instead of codegen's search space (each must pass check_launch_config):
  // `normjit tune --exhaustive` re-times the tuned and the exhaustive picks side by side.
  std::vector<codegen::LaunchConfig> only;
  int compile_threads = 0;               // 0: the host's cores
  int64_t max_elements = int64_t{1} << 27;  // M·N timed at most (bigger buckets behave alike)
  // Called on the tuning thread as work finishes: ("compile 3/24", "12 ms"), ("time 5/24", ...).
  std::function<void(const std::string& what, const std::string& outcome)> progress;
};

struct CandidateTiming {
  codegen::LaunchConfig config;
  bool ok = false;
  std::string error;        // why it could not be compiled, loaded or run
  double compile_ms = 0;    // 0 when it came from a cache
  double screen_us = 0;     // median of the screening repetitions
  double final_us = 0;      // median of the final repetitions (0: not a finalist)
  double us() const { return final_us > 0 ? final_us : screen_us; }
};

struct TuneResult {
  NormProblem problem;      // resolved
  int64_t m_timed = 0;      // rows timed: the bucket, capped by max_elements
  std::vector<CandidateTiming> candidates;  // search_space order: [0] is the heuristic's config
  size_t best = 0;          // index into candidates
  double compile_wall_ms = 0, time_wall_ms = 0, wall_ms = 0;

  const CandidateTiming& heuristic() const { return candidates.front(); }
  const CandidateTiming& winner() const { return candidates[best]; }
  // The database entry for the winner.
  TunedConfig tuned() const;
};

// The rows tune() times for m: m's bucket, capped by options.max_elements.
int64_t timed_rows(const NormProblem& resolved, int64_t m, const TuneOptions& options);

// The candidates tune() times for m rows of a resolved problem on a device with these limits:
// codegen::search_space, or with Pass::Forward codegen::forward_search_space, for the device's
// compute capability, SMs and memory rate.
std::vector<codegen::LaunchConfig> candidate_configs(const NormProblem& resolved, const DeviceLimits& limits,
                                                     int64_t m, codegen::Pass pass);

// Tunes a resolved problem for m's bucket in ctx, which is made current for the call: its
// backward, or with Pass::Forward its forward (resolve_forward_problem's problem; the
// candidates of codegen::forward_search_space, each timed writing y, mean and rstd).
TuneResult tune(Engine::Impl& engine, CUcontext ctx, const NormProblem& resolved, int64_t m,
                const TuneOptions& options = {}, codegen::Pass pass = codegen::Pass::Backward);

}  // namespace normjit::runtime
