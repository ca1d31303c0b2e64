// The normjit command's subcommands. Each takes the arguments after its name and returns the
// process exit code: 0 success, 1 failure of the work, 2 bad usage, 3 no GPU where one is needed.
#pragma once
#include <string>
#include <vector>

namespace normjit::tools {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoGpu = 3;

int run_demo(std::vector<std::string> args);
int run_emit(std::vector<std::string> args);
int run_bench(std::vector<std::string> args);
int run_doctor(std::vector<std::string> args);
int run_compile(std::vector<std::string> args);
int run_cache(std::vector<std::string> args);
int run_config(std::vector<std::string> args);
int run_tune(std::vector<std::string> args);

}  // namespace normjit::tools
