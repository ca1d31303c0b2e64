// The C API tests' problem, shared by tests/cpu/c_api_test.cpp and tests/cpu/c_abi_test.cpp.
#pragma once
#include "normjit/normjit.h"

namespace normjit::test {

// RMSNorm, N = 4096, bf16 x, fp32 γ, in the C struct P: nj_problem, or one of its earlier
// layouts (c_abi_test), whose every field this sets.
template <class P = nj_problem>
P rms_problem() {
  P p{};
  p.kind = NJ_RMSNORM;
  p.n = 4096;
  p.x_dtype = NJ_BF16;
  p.weight_dtype = NJ_F32;
  p.has_weight = 1;
  return p;
}

}  // namespace normjit::test
