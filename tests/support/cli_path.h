// The normjit command the CPU tests run as separate processes.
#pragma once
#include <cstdlib>
#include <string>

namespace normjit::test {

// NORMJIT_CLI where it is set: a build folder copied to another machine (scripts/gpu-run.sh
// runs the CPU tests from the folder the GPU machine receives) no longer has the binary at the
// path it was built at. Else the binary this build made (NORMJIT_CLI_PATH).
inline std::string cli_path() {
  const char* path = std::getenv("NORMJIT_CLI");
  return path && *path ? path : NORMJIT_CLI_PATH;
}

}  // namespace normjit::test
