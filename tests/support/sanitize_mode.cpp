#include "support/sanitize_mode.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

namespace normjit::test {

bool sanitize_matrix() {
  const char* v = std::getenv("NORMJIT_TEST_MATRIX");
  const std::string mode = v ? v : "";
  if (mode.empty() || mode == "full") return false;
  if (mode == "sanitize") return true;
  std::cerr << "NORMJIT_TEST_MATRIX=" << mode << " is not a matrix: use \"full\" (or leave it unset) or \"sanitize\""
            << std::endl;
  std::exit(2);
}

int64_t sanitize_rows(int64_t m, int64_t n) {
  if (m <= 5 || !sanitize_matrix()) return m;
  return std::clamp<int64_t>(sanitize_max_elements(int64_t{1} << 20) / n, 3, m);
}

int64_t sanitize_max_elements(int64_t fallback) {
  const char* v = std::getenv("NORMJIT_TEST_MAX_ELEMENTS");
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long long cap = std::strtoll(v, &end, 10);
  if (*end != '\0' || cap < 1) {
    std::cerr << "NORMJIT_TEST_MAX_ELEMENTS=" << v << " is not a positive number of elements (M*N)" << std::endl;
    std::exit(2);
  }
  return cap;
}

}  // namespace normjit::test
