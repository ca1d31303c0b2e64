// Under compute-sanitizer a kernel runs 10 to 1000 times slower, so scripts/gpu-sanitize.sh
// asks the GPU tests for smaller shapes through two environment variables, read here so that
// every test that sizes its cases reads them the same way.
#pragma once

#include <cstdint>

namespace normjit::test {

// NORMJIT_TEST_MATRIX: unset or "full" (the default shapes) or "sanitize". Anything else stops
// the binary: a typo must not quietly run the wrong shapes under a sanitizer.
bool sanitize_matrix();

// NORMJIT_TEST_MAX_ELEMENTS: the M·N cap in sanitize mode, a positive integer; `fallback` when
// unset. A malformed value stops the binary.
int64_t sanitize_max_elements(int64_t fallback);

// The rows a case of m rows of n columns runs: m in the full matrix, and for 5 rows or fewer (one
// row group, fewer rows than groups); under a sanitizer M·N within NORMJIT_TEST_MAX_ELEMENTS
// (1 Mi when unset), but at least 3 rows.
int64_t sanitize_rows(int64_t m, int64_t n);

}  // namespace normjit::test
