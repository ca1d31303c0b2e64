// libFuzzer target: the shape file reader, runtime::parse_shape_text (`normjit compile --shapes`).
// A shape file comes from elsewhere (a model's repository, a fleet's config). Whatever the text,
// the reader returns problems or throws normjit::Error(ConfigError) whose message names the
// file; anything else escaping (another exception, a crash, a sanitizer report, a hang, an
// allocation over libFuzzer's limit) is a bug. What it returns must be usable as is:
// every problem passes codegen::validate_problem, in file order.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "codegen/norm_problem.h"
#include "normjit/normjit.hpp"
#include "runtime/shape_file.h"
#include "toml_known_bugs.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "shape_file_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

void check_problems(const std::vector<normjit::runtime::ShapeProblem>& shapes, const std::string& text) {
  if (shapes.empty()) fail("accepted a file that lists no problem", text);
  int last_entry = 0;
  for (const normjit::runtime::ShapeProblem& s : shapes) {
    if (s.entry < 1 || s.entry < last_entry) fail("entries out of file order", text);
    last_entry = s.entry;
    if (s.problem.n < 1) fail("accepted n < 1", text);
    const int a = s.problem.alignment;
    if (a != 1 && a != 2 && a != 4 && a != 8 && a != 16) fail("accepted an alignment outside 1..16", text);
    for (int64_t m : s.m)
      if (m < 1) fail("accepted an M bucket < 1", text);
    try {
      normjit::codegen::validate_problem(s.problem);
    } catch (const normjit::Error& e) {
      fail("returned a problem validate_problem rejects", e.what());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Inputs that reach the known toml++ 3.3.0 bug: not run, not added to the corpus.
  if (normjit_fuzz::hits_toml_whitespace_unreachable(text)) return -1;
  try {
    check_problems(normjit::runtime::parse_shape_text(text, "fuzz.toml"), text);
  } catch (const normjit::Error& e) {
    const std::string message = e.what();
    if (e.status() != normjit::Status::ConfigError) fail("status is not ConfigError", message);
    if (message.find("fuzz.toml") == std::string::npos) fail("message does not name the file", message);
  }
  // Any other exception escapes, std::terminate aborts, libFuzzer reports the input.
  return 0;
}
