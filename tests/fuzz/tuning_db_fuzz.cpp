// libFuzzer target: the tuning-database reader, runtime::parse_tuning_entries.
// Whatever the text, the reader returns entries or throws normjit::Error(ConfigError) whose
// message names the origin; and what it returns survives a round trip through
// format_tuning_entries unchanged (so a database normjit rewrites after a merge keeps every
// entry it accepted). Anything else (another exception, a crash, a sanitizer report, a hang)
// is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "codegen/launch_config.h"
#include "normjit/normjit.hpp"
#include "runtime/tuning_db.h"
#include "toml_known_bugs.h"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "tuning_db_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace normjit::runtime;
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Inputs that reach the known toml++ 3.3.0 bug: not run, not added to the corpus.
  if (normjit_fuzz::hits_toml_whitespace_unreachable(text)) return -1;
  TuningEntries entries;
  try {
    entries = parse_tuning_entries(text, "fuzz.toml");
  } catch (const normjit::Error& e) {
    const std::string message = e.what();
    if (e.status() != normjit::Status::ConfigError) fail("status is not ConfigError", message);
    if (message.find("fuzz.toml") == std::string::npos) fail("message does not name the file", message);
    return 0;
  }
  TuningEntries again;
  try {
    again = parse_tuning_entries(format_tuning_entries(entries), "round-trip.toml");
  } catch (const normjit::Error& e) {
    fail("what it accepted does not read back", e.what());
  }
  if (again.size() != entries.size()) fail("round trip changed the entry count", text);
  for (const auto& [key, e] : entries) {
    const auto it = again.find(key);
    if (it == again.end()) fail("round trip lost a key", key);
    if (!(it->second.config == e.config) || it->second.us != e.us) fail("round trip changed an entry", key);
  }
  return 0;
}
