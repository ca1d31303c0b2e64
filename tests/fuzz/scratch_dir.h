// A private directory for one fuzz run, removed at exit: under $TMPDIR when set (scripts/fuzz.sh
// sets it to a directory it removes itself, since a crash skips the atexit clean-up).
#pragma once
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace normjit_fuzz {

// `name` goes into the directory's name ("normjit-fuzz-<name>-XXXXXX"). Aborts if none can be made.
inline std::filesystem::path make_scratch_dir(const char* name) {
  static std::filesystem::path dir;
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/normjit-fuzz-" + name + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    std::fprintf(stderr, "%s fuzz: mkdtemp(%s) failed\n", name, tmpl.c_str());
    std::abort();
  }
  dir = tmpl;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  });
  return dir;
}

}  // namespace normjit_fuzz
