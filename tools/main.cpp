// normjit: generate, compile, inspect and benchmark LayerNorm/RMSNorm backward kernels.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "normjit/normjit.hpp"
#include "tools/subcommands.h"

namespace {

const char* kUsage =
    "usage: normjit <command> [options]\n"
    "\n"
    "commands:\n"
    "  demo     generate and compile a set of real problems (no GPU needed) and show, for each,\n"
    "           the source size, registers, spills, compile time and the disk-cache hit of a\n"
    "           second run\n"
    "  emit     print the generated CUDA source of one problem (--ptx: its PTX; --resources:\n"
    "           registers, shared memory and spills; --forward: the forward kernel's)\n"
    "  bench    time the backward over a sweep of shapes on the GPU, against the device's own\n"
    "           copy bandwidth measured in the same run\n"
    "  compile  compile problems (flags, a --shapes file, or a default set) into the disk cache\n"
    "           ahead of time, on every host core; --arch sm_XY works without a GPU\n"
    "  cache    ls | stats | verify | clear | export FILE | import FILE: look after the disk\n"
    "           cache, and carry it to other machines as one bundle file\n"
    "  tune     time the candidate launch configs of problems (flags, --shapes, --sweep) on the\n"
    "           GPU and write the fastest per device, problem and M bucket to the tuning database\n"
    "  config   print the effective configuration: every key, its value and where it came from\n"
    "  doctor   what normjit sees: driver, device, NVRTC, cache directory, config\n"
    "  version  print the version\n"
    "\n"
    "Run 'normjit <command> --help' for a command's options.\n"
    "exit codes: 0 ok, 1 the work failed, 2 bad usage, 3 no GPU where one is needed\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? normjit::tools::kExitUsage : normjit::tools::kExitOk;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "demo") return normjit::tools::run_demo(args);
    if (command == "emit") return normjit::tools::run_emit(args);
    if (command == "bench") return normjit::tools::run_bench(args);
    if (command == "doctor") return normjit::tools::run_doctor(args);
    if (command == "compile") return normjit::tools::run_compile(args);
    if (command == "cache") return normjit::tools::run_cache(args);
    if (command == "config") return normjit::tools::run_config(args);
    if (command == "tune") return normjit::tools::run_tune(args);
    if (command == "version" || command == "--version") {
      std::printf("normjit %s\n", normjit::version_string());
      return normjit::tools::kExitOk;
    }
  } catch (const normjit::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.status() == normjit::Status::NoDriver || e.status() == normjit::Status::NoDevice
               ? normjit::tools::kExitNoGpu
               : normjit::tools::kExitFailed;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "normjit %s: %s\n", command.c_str(), e.what());
    return normjit::tools::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "normjit %s: %s\n", command.c_str(), e.what());
    return normjit::tools::kExitFailed;
  }
  std::fprintf(stderr, "normjit: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return normjit::tools::kExitUsage;
}
