#include "runtime/tuning_key.h"

#include "codegen/cache_key.h"
#include "codegen/forward_config.h"
#include "codegen/norm_problem.h"

namespace normjit::runtime {

int m_bucket_log2(int64_t m) {
  if (m <= 1) return 0;
  if (m > (int64_t{1} << 62)) return 63;
  return 64 - __builtin_clzll(static_cast<unsigned long long>(m - 1));
}

int64_t m_bucket(int64_t m) { return int64_t{1} << m_bucket_log2(m); }

std::string TuningKey::text() const {
  // " | " separates the parts; none of them contains it (device names are plain words).
  return device.name + " | sm_" + std::to_string(device.sm) + " | " + std::to_string(device.sm_count) +
         " SMs | nvrtc " + device.nvrtc + " | normjit " + normjit + " | " +
         codegen::describe(problem, pass) +
         " | M<=" + std::to_string(m_bucket);
}

TuningKey make_tuning_key(const TuningDevice& device, const NormProblem& resolved, int64_t m, codegen::Pass pass) {
  TuningKey k;
  k.pass = pass;
  k.device = device;
  k.normjit = codegen::normjit_version();
  k.problem = resolved;
  k.m_bucket = m_bucket(m);
  return k;
}

}  // namespace normjit::runtime
