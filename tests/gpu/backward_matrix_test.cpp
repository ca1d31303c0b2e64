// The full matrix against the float64 reference: every kind × x dtype × weight dtype × affine
// variant is one test, which loops over every hidden size N and row count M.
//
// To keep the whole run to a few minutes, (M, N) pairs with M·N > 2^24 elements are left out,
// except M = 1, which runs every N (up to 2^20) on a single row.
//
// NORMJIT_TEST_MATRIX=sanitize selects the smaller matrix that scripts/gpu-sanitize.sh runs
// under compute-sanitizer, where a kernel runs 10 to 1000 times slower: LayerNorm (γ, β) and
// RMSNorm (γ) x fp32, fp16, bf16 x N in {1, 33, 1000, 4096, 8192, 65536, 262144} x M in
// {1, 199, 4096}, pairs with M·N above NORMJIT_TEST_MAX_ELEMENTS (default 2^20) left out, M = 1
// included. The test names stay the same, so one gtest filter serves both matrices.
#include <gtest/gtest.h>

#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "support/device_run.h"
#include "support/kernel_warmup.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/sanitize_mode.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

const std::vector<int64_t> kRowCounts = {1, 37, 199, 4096};
// 5003: the speed issue's odd size beyond 4096 (odd-row fp32 rules start there).
// 320, 1536, 3072: model sizes that rules for many rows of their own cover (half a warp a row;
// one block of 8 or 16 elements a thread). 16388: the dγ/dβ reduction's 16-byte slices with a
// part-filled last block, partial rows not aligned to its 128-byte lines.
const std::vector<int64_t> kHiddenSizes = {1,    2,    3,     31,    32,    33,    127,   320,    1000,  1024,   1536,
                                           3072, 4095, 4096,  5003,  5120,  7168,  8192,   12288,  16384, 16388,
                                           32768, 65536, 131072, 262144, 1048576};
constexpr int64_t kMaxElements = int64_t{1} << 24;
const std::vector<int64_t> kSanitizeRowCounts = {1, 199, 4096};
const std::vector<int64_t> kSanitizeHiddenSizes = {1, 33, 1000, 4096, 8192, 65536, 262144};
constexpr int64_t kSanitizeMaxElements = int64_t{1} << 20;

const std::vector<int64_t>& row_counts() { return sanitize_matrix() ? kSanitizeRowCounts : kRowCounts; }
const std::vector<int64_t>& hidden_sizes() { return sanitize_matrix() ? kSanitizeHiddenSizes : kHiddenSizes; }
int64_t max_elements() { return sanitize_matrix() ? sanitize_max_elements(kSanitizeMaxElements) : kMaxElements; }
// A systematically broken kernel would fail hundreds of cases; the first few tell the story.
constexpr int kFailedCasesReported = 5;
// Every third case passes a workspace of workspace_size bytes; the others let the engine
// allocate one on the stream.
constexpr int kCallerWorkspaceEvery = 3;

bool in_matrix(int64_t m, int64_t n) { return m == 1 || m * n <= max_elements(); }

std::vector<Variant> all_variants() { return sanitize_matrix() ? sanitize_variants() : every_variant(); }

std::string variant_name(const ::testing::TestParamInfo<Variant>& info) { return variant_label(info.param); }

int cases_per_variant() {
  int cases = 0;
  for (int64_t n : hidden_sizes())
    for (int64_t m : row_counts()) cases += in_matrix(m, n);
  return cases;
}

class BackwardMatrix : public GpuTest, public ::testing::WithParamInterface<Variant> {
 public:
  static void SetUpTestSuite() {
    if (!GpuContext::get()) return;
    std::cout << "BackwardMatrix (" << (sanitize_matrix() ? "sanitize" : "full") << "): N in {";
    for (int64_t n : hidden_sizes()) std::cout << (n == hidden_sizes().front() ? "" : ", ") << n;
    std::cout << "} x M in {";
    for (int64_t m : row_counts()) std::cout << (m == row_counts().front() ? "" : ", ") << m;
    std::cout << "}; pairs with M*N > " << max_elements() << " elements are skipped except M = 1: "
              << cases_per_variant() << " cases per variant, " << all_variants().size() << " variants" << std::endl;
  }

 protected:
  NormProblem problem(int64_t n) const { return GetParam().problem(n); }
};

TEST_P(BackwardMatrix, MatchesFloat64ReferenceForEveryShape) {
  Engine& engine = shared_engine();

  std::vector<NormProblem> kernels;
  for (int64_t n : hidden_sizes())
    for (const NormProblem& p : alignment_variants(problem(n))) kernels.push_back(p);
  const std::vector<std::string> failures = prepare_in_parallel(engine, kernels);
  ASSERT_TRUE(failures.empty()) << failures.size() << " kernels failed to prepare, the first: " << failures.front();

  int case_index = 0, failed_cases = 0;
  for (int64_t n : hidden_sizes())
    for (int64_t m : row_counts()) {
      if (!in_matrix(m, n)) continue;
      RunOptions options;
      options.caller_workspace = case_index++ % kCallerWorkspaceEvery == 0;
      const NormInputs inputs = make_inputs(problem(n), m, fresh_seed());
      const ::testing::AssertionResult match = backward_matches_reference(engine, inputs, stream(), options);
      EXPECT_TRUE(match) << "workspace: " << (options.caller_workspace ? "the caller's" : "the engine's");
      if (!match && ++failed_cases == kFailedCasesReported)
        FAIL() << "stopping this variant after " << kFailedCasesReported << " failed cases";
    }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, BackwardMatrix, ::testing::ValuesIn(all_variants()), variant_name);

}  // namespace
}  // namespace normjit::test
