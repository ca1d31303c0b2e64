// libFuzzer target: the configuration file parser, runtime::parse_config_text.
// Whatever the text, the parser returns a Config or throws normjit::Error(ConfigError) whose
// message names the origin; anything else escaping (another exception, a crash, a sanitizer
// report, a hang) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "normjit/normjit.hpp"
#include "runtime/config.h"
#include "toml_known_bugs.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "config_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // parse_config_text applies no environment, but the defaults read HOME / XDG_CACHE_HOME:
  // make them fixed so a run does not depend on who runs it.
  setenv("HOME", "/nonexistent-normjit-fuzz", 1);
  unsetenv("XDG_CACHE_HOME");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Inputs that reach the known toml++ 3.3.0 bug above: not run, not added to the corpus.
  if (normjit_fuzz::hits_toml_whitespace_unreachable(text)) return -1;
  try {
    const normjit::Config c = normjit::runtime::parse_config_text(text, "fuzz.toml");
    if (c.config_file != "fuzz.toml") fail("config_file", c.config_file);
    if (c.cache_max_bytes == 0) fail("accepted a zero cache.max_bytes", text);
    if (c.sources.size() != 6) fail("sources has other keys than the six known ones", text);
    if (c.sm_margin < 0 || c.sm_margin > 4096) fail("accepted an sm_margin outside 0..4096", text);
    for (const auto& [key, source] : c.sources)
      if (source != "default" && source != "file fuzz.toml") fail("odd source", key + " = " + source);
  } catch (const normjit::Error& e) {
    const std::string message = e.what();
    if (e.status() != normjit::Status::ConfigError) fail("status is not ConfigError", message);
    if (message.find("fuzz.toml") == std::string::npos) fail("message does not name the file", message);
  }
  // Any other exception escapes, std::terminate aborts, libFuzzer reports the input.
  return 0;
}
