// Compiles and loads many problems' kernels at once from a pool of threads. Engine::prepare
// is documented thread-safe; warming from a pool both saves wall time (NVRTC runs in parallel)
// and puts the kernel cache under concurrent use.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "normjit/normjit.hpp"

namespace normjit::test {

// Calls engine.prepare for every problem from `threads` threads, each with the test context
// current. Returns one line per failure ("<problem>: <message>"); empty when all succeeded.
std::vector<std::string> prepare_in_parallel(Engine& engine, const std::vector<NormProblem>& problems,
                                             int threads = 8);

// The kernels the engine picks for each resolved problem at each of `rows` (kernel_for with
// that M's bucket: the tuning database's config, else the heuristic's for that M), loaded the
// same way. Returns one line per failure.
std::vector<std::string> load_in_parallel(Engine& engine, const std::vector<NormProblem>& resolved,
                                          const std::vector<int64_t>& rows, int threads = 8);

// The problems a call of `problem` may use: the 16-byte aligned one (single rows, whose
// base pointers are aligned) and, if lower, the one contiguous multi-row tensors are aligned to.
std::vector<NormProblem> alignment_variants(const NormProblem& problem);

}  // namespace normjit::test
