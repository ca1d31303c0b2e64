// What a tuned launch config is valid for: the GPU (name, compute capability, SM count), the
// compilers (NVRTC and normjit versions), the problem, and a bucket of M. The best config for
// M = 1 and for M = 65536 differ, so each power of two of M is tuned on its own; a different
// GPU, driver-visible SM count or compiler is a different key, never a stale hit.
#pragma once
#include <cstdint>
#include <string>

#include "codegen/pass.h"
#include "normjit/norm_problem.hpp"

namespace normjit::runtime {

struct TuningDevice {
  std::string name;     // "NVIDIA H100 80GB HBM3"
  int sm = 0;           // compute capability major*10+minor
  int sm_count = 0;
  std::string nvrtc;    // NVRTC version, "13.0"
};

// The bucket of m rows: the next power of two >= m (1 for m <= 1).
int64_t m_bucket(int64_t m);
// log2 of m_bucket(m), in [0, 63]: cheap enough for the launch path.
int m_bucket_log2(int64_t m);

struct TuningKey {
  TuningDevice device;
  std::string normjit;  // normjit version
  NormProblem problem;  // resolved (the forward's: resolve_forward_problem)
  int64_t m_bucket = 1;
  codegen::Pass pass = codegen::Pass::Backward;

  // The key as one line, the table name in the database file:
  // "NVIDIA H100 80GB HBM3 | sm_90 | 132 SMs | nvrtc 13.0 | normjit 0.1.0 | layernorm N=4096 ... | M<=65536"
  // A forward's problem part is describe_forward's ("layernorm forward N=4096 ..."), which no
  // backward's is.
  std::string text() const;
};

// The key for a resolved problem over m rows on `device`, with this build's normjit version.
TuningKey make_tuning_key(const TuningDevice& device, const NormProblem& resolved, int64_t m,
                          codegen::Pass pass = codegen::Pass::Backward);

}  // namespace normjit::runtime
