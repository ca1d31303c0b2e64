// How a computed gradient is judged against the float64 reference.
//
// Error of a tensor: ‖out − ref‖₂ / max(‖ref‖₂, ‖terms‖₂) over the elements whose reference
// is finite. ‖terms‖ (see ReferenceGrads) is the size of what the result is summed from; it
// only matters when the result cancelled to far below its terms (LayerNorm with N = 2,
// RMSNorm with N = 1, a dγ column whose rows cancel), where relative accuracy is out of
// reach of any fp32 kernel, and it also serves as the floor for an all-zero reference.
//
// Finiteness must match exactly: an output that is NaN/Inf where the reference is finite
// (an element never written keeps its NaN poison) fails, and so does a finite output where
// the reference is NaN/Inf (a NaN input that did not propagate).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "normjit/norm_problem.hpp"
#include "support/host_tensor.h"

namespace normjit::test {

struct NormInputs;
struct ReferenceGrads;

// dx: fp32 output 1e-5. Each element takes a handful of fp32 roundings (≈6e-8 each); the two
// row means are fp32 sums over N, computed by many threads in parallel, so each thread adds
// at most a few thousand terms in sequence and their error stays ~1e-6 of the terms even at
// N = 2^20: no wider bound is needed for large N. fp16/bf16 output: 1e-2 (rounding the
// output alone costs up to 2^-9 ≈ 2e-3 per element).
double dx_tolerance(DType dx_dtype);
// dγ, dβ: fp32 output: M terms summed in fp32 (per-block partials, then across blocks), whose
// error grows like sqrt(M) ulps: 1e-5 · max(1, sqrt(M)/8), capped at 1e-4. fp16/bf16: 1e-2.
double param_grad_tolerance(DType weight_dtype, int64_t m);

struct TensorCheck {
  std::string name;
  double error = 0;
  double tolerance = 0;
  int64_t nonfinite_where_finite = 0;  // e.g. unwritten (still poisoned) elements
  int64_t finite_where_nonfinite = 0;  // a NaN/Inf that did not propagate
  int64_t first_mismatch_row = -1, first_mismatch_col = -1;  // first finiteness mismatch
  // Where a failure lies (a row's first or last chunk, one column, whole rows): the finite
  // element farthest from the reference, and, for a check that fails, the elements off by ten
  // times the tolerance relative to the tensor's root-mean-square element.
  int64_t worst_row = -1, worst_col = -1;
  double worst_got = 0, worst_want = 0;
  int64_t elements_off = 0;
  int64_t rows_off = 0;                   // rows with an element off
  std::vector<int64_t> first_rows_off;    // the first eight of them
  bool ok() const;
};
std::ostream& operator<<(std::ostream& os, const TensorCheck& check);

// out: [rows, cols] (gaps ignored); ref: [rows, cols] contiguous.
TensorCheck check_tensor(const std::string& name, const HostTensor& out, const std::vector<double>& ref,
                         double term_norm, double tolerance);

// What a backward call wrote, downloaded.
struct Gradients {
  HostTensor dx;       // [m, n], stride = the dx stride used
  HostTensor dweight;  // [1, n] when has_weight
  HostTensor dbias;    // [1, n] when has_bias
  HostTensor dresidual_in;  // [m, n] when the case asked for dh (fused rowscale or dropout)
  HostTensor dz;            // [m, n] with a gate, stride = the dz stride used
  HostTensor dweight1;      // [1, n] parallel norms with γ
  HostTensor dbias1;        // [1, n] parallel norms with β
};

// dx, and dγ/dβ, dresidual_in, dz and dγ1/dβ1 where the case has them, each against its tolerance.
std::vector<TensorCheck> check_gradients(const NormInputs& inputs, const Gradients& out, const ReferenceGrads& ref);

// For EXPECT_TRUE: success when every check passes; otherwise the case (with its seed) and
// every tensor's error, tolerance and finiteness mismatches.
::testing::AssertionResult gradients_match(const NormInputs& inputs, const Gradients& out, const ReferenceGrads& ref);

// Bit-for-bit equality of two outputs (determinism), naming the first element that differs.
::testing::AssertionResult same_bits(const char* name, const HostTensor& a, const HostTensor& b);
// dx, dγ and dβ each bit-for-bit equal.
::testing::AssertionResult same_bits(const Gradients& a, const Gradients& b);

// Each row's statistic (a forward's saved mean or rstd) within `tolerance` of the reference,
// relative to max(|ref|, floor[r]); NaN never passes.
::testing::AssertionResult statistics_match(const char* name, const std::vector<float>& out,
                                            const std::vector<double>& ref, const std::vector<double>& floor,
                                            double tolerance);

}  // namespace normjit::test
