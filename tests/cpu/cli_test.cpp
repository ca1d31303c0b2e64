// The normjit command, run as a user runs it (the built binary, NORMJIT_CLI_PATH, or NORMJIT_CLI), each test
// with its own cache directory: help and exit codes, `compile` without a GPU, and the disk
// cache's life cycle — ls, verify, export, clear, import — including damaged entries and bundles.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "normjit/normjit.hpp"
#include "runtime/cache_bundle.h"
#include "runtime/cuda_driver.h"
#include "runtime/nvrtc.h"
#include "support/cli_path.h"

namespace fs = std::filesystem;

namespace {
using normjit::test::cli_path;

const fs::path kSourceRoot = fs::path(__FILE__).parent_path().parent_path().parent_path();
// A small problem: compiles in a fraction of a second.
const char* kSmallProblem = "--kind rmsnorm --n 256 --dtype fp32";

struct CliRun {
  int code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `normjit ARGS` through the shell, with `env` ("NAME=value ...") in its environment, and
// returns its exit code and output.
CliRun normjit_cli(const std::string& args, const std::string& env = "") {
  const std::string command = (env.empty() ? "" : "env " + env + " ") + cli_path() + " " + args + " 2>&1";
  CliRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return run;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) run.output.append(buffer, n);
  const int status = ::pclose(pipe);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t count_lines(const std::string& text) {
  size_t n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) n += line.empty() ? 0 : 1;
  return n;
}

// Each test gets a fresh cache directory (NORMJIT_CACHE_DIR) and no user config file.
class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() / ("normjit-cli-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root_);
    fs::create_directories(root_ / "cache");
    fs::create_directories(root_ / "config");
    setenv("NORMJIT_CACHE_DIR", cache_dir().c_str(), 1);
    setenv("XDG_CONFIG_HOME", (root_ / "config").c_str(), 1);
    unsetenv("NORMJIT_CONFIG");
    unsetenv("NORMJIT_DISK_CACHE");
  }
  void TearDown() override {
    unsetenv("NORMJIT_CACHE_DIR");
    unsetenv("XDG_CONFIG_HOME");
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string cache_dir() const { return (root_ / "cache").string(); }
  std::string path(const std::string& name) const { return (root_ / name).string(); }

  std::vector<fs::path> entry_files() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(cache_dir()))
      if (e.path().extension() == ".njk") out.push_back(e.path());
    return out;
  }
  std::set<std::string> entry_keys() const {
    std::set<std::string> out;
    for (const fs::path& p : entry_files()) out.insert(p.stem().string());
    return out;
  }

  static void skip_without_nvrtc() {
    if (!normjit::runtime::Nvrtc::available()) GTEST_SKIP() << "NVRTC is not available here";
  }

  fs::path root_;
};

void flip_byte(const fs::path& file, std::streamoff from_end) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-from_end, std::ios::end);
  const char c = static_cast<char>(f.get());
  f.seekp(-from_end, std::ios::end);
  f.put(static_cast<char>(c ^ 0x01));
}

// --- help and exit codes -----------------------------------------------------------------

TEST_F(Cli, HelpListsEverySubcommand) {
  const CliRun run = normjit_cli("--help");
  EXPECT_EQ(run.code, 0) << run.output;
  for (const char* command : {"demo", "emit", "bench", "compile", "cache", "config", "doctor", "version"})
    EXPECT_TRUE(contains(run.output, "  " + std::string(command) + " ")) << command << " in:\n" << run.output;
  EXPECT_TRUE(contains(run.output, "exit codes: 0 ok, 1 the work failed, 2 bad usage, 3 no GPU")) << run.output;
}

TEST_F(Cli, EachSubcommandsHelpExitsZeroAndMentionsItsOptions) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
      {"compile", {"--arch", "--shapes", "--jobs", "--cache-dir", "--dry-run", "--kind", "--n", "--dtype"}},
      {"cache", {"ls", "stats", "verify", "clear", "export FILE", "import FILE", "--cache-dir"}},
      {"config", {"default", "file", "env"}},
      {"demo", {"--arch", "--cache-dir"}},
      {"emit", {"--arch", "--ptx", "--resources", "--kind", "--forward"}},
      {"bench", {"--quick"}},
      {"doctor", {"usage: normjit doctor"}},
  };
  for (const auto& [command, options] : commands) {
    const CliRun run = normjit_cli(command + " --help");
    EXPECT_EQ(run.code, 0) << command << ":\n" << run.output;
    for (const std::string& option : options)
      EXPECT_TRUE(contains(run.output, option)) << command << " --help should mention " << option << ":\n"
                                                << run.output;
  }
}

TEST_F(Cli, EmitTakesTheFusedOptionsAndRejectsAnUnknownMaskForm) {
  const CliRun fused = normjit_cli(std::string("emit ") + kSmallProblem + " --residual --rowscale --dropout bits");
  EXPECT_EQ(fused.code, 0) << fused.output;
  EXPECT_TRUE(contains(fused.output, "+residual +rowscale +dropout=bits")) << fused.output.substr(0, 200);
  EXPECT_TRUE(contains(fused.output, "constexpr int kDropoutMask = 2;"));
  const CliRun plain = normjit_cli(std::string("emit ") + kSmallProblem);
  EXPECT_FALSE(contains(plain.output, "kResidual"));
  const CliRun bad = normjit_cli(std::string("emit ") + kSmallProblem + " --dropout sometimes");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--dropout 'sometimes'")) << bad.output;
  const CliRun conflict = normjit_cli(std::string("emit ") + kSmallProblem + " --no-weight --zero-centered-weight");
  EXPECT_NE(conflict.code, 0) << conflict.output;
  EXPECT_TRUE(contains(conflict.output, "zero_centered_weight")) << conflict.output;
}

// --fused SET names the options as bench --fused does (scripts/tune-compare.sh passes them to
// tune so): the same problem as the flags one by one, and bench's errors.
TEST_F(Cli, EmitTakesAFusedSetAsBenchNamesIt) {
  const CliRun set = normjit_cli(std::string("emit ") + kSmallProblem + " --fused all");
  const CliRun flags = normjit_cli(std::string("emit ") + kSmallProblem +
                                   " --residual --zero-centered-weight --rowscale --dropout bits");
  EXPECT_EQ(set.code, 0) << set.output;
  EXPECT_EQ(set.output, flags.output);
  const CliRun gated = normjit_cli("emit --kind rmsnorm --n 256 --dtype bf16 --fused gate-before+residual");
  EXPECT_EQ(gated.code, 0) << gated.output;
  EXPECT_TRUE(contains(gated.output, "+residual")) << gated.output.substr(0, 200);
  EXPECT_TRUE(contains(gated.output, "+gate=before-norm")) << gated.output.substr(0, 200);
  const CliRun bad = normjit_cli(std::string("emit ") + kSmallProblem + " --fused residual+gated");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--fused 'residual+gated': 'gated' is not an option")) << bad.output;
}

TEST_F(Cli, EmitForwardPrintsTheForwardSourceWithAndWithoutFusedOptions) {
  const CliRun fwd = normjit_cli(std::string("emit ") + kSmallProblem + " --forward");
  EXPECT_EQ(fwd.code, 0) << fwd.output;
  EXPECT_TRUE(contains(fwd.output, "rmsnorm forward N=256 x=fp32 y=fp32")) << fwd.output.substr(0, 200);
  EXPECT_TRUE(contains(fwd.output, "nj_norm_forward"));
  EXPECT_TRUE(contains(fwd.output, "typedef float TY;"));
  EXPECT_FALSE(contains(fwd.output, "nj_norm_backward"));
  EXPECT_FALSE(contains(fwd.output, "kResidual"));
  EXPECT_FALSE(contains(fwd.output, "philox4x32_10"));
  const CliRun fused = normjit_cli(std::string("emit ") + kSmallProblem + " --forward --residual --dropout bits");
  EXPECT_EQ(fused.code, 0) << fused.output;
  EXPECT_TRUE(contains(fused.output, "rmsnorm forward N=256 x=fp32 y=fp32")) << fused.output.substr(0, 200);
  EXPECT_TRUE(contains(fused.output, "+residual +dropout=bits")) << fused.output.substr(0, 200);
  EXPECT_TRUE(contains(fused.output, "constexpr bool kResidual = true;")) << fused.output.substr(0, 2000);
  EXPECT_TRUE(contains(fused.output, "constexpr int kDropoutMask = 2;"));
  EXPECT_TRUE(contains(fused.output, "constexpr bool kRowScale = false;"));
  EXPECT_TRUE(contains(fused.output, "philox4x32_10"));
  EXPECT_TRUE(contains(fused.output, "nj_norm_forward"));
  EXPECT_FALSE(contains(fused.output, "nj_norm_backward"));
  EXPECT_FALSE(contains(fused.output, "\n// fused:end\n"));  // markers are dropped
  // y's dtype is the problem's dy dtype.
  const CliRun y32 = normjit_cli("emit --forward --kind rmsnorm --n 256 --dtype bf16 --dy-dtype fp32");
  EXPECT_EQ(y32.code, 0) << y32.output;
  EXPECT_TRUE(contains(y32.output, "x=bf16 y=fp32")) << y32.output.substr(0, 200);
  EXPECT_TRUE(contains(y32.output, "typedef float TY;"));
  // The problem's own rules still hold for the forward.
  const CliRun layer_norm = normjit_cli("emit --forward --kind layernorm --n 256 --gate after-norm");
  EXPECT_NE(layer_norm.code, 0) << layer_norm.output;
  EXPECT_TRUE(contains(layer_norm.output, "is set on a LayerNorm")) << layer_norm.output;
}

TEST_F(Cli, EmitTakesTheGateAndRejectsItOnLayerNorm) {
  const CliRun gated = normjit_cli(std::string("emit ") + kSmallProblem + " --gate before-norm");
  EXPECT_EQ(gated.code, 0) << gated.output;
  EXPECT_TRUE(contains(gated.output, "+gate=before-norm")) << gated.output.substr(0, 200);
  EXPECT_TRUE(contains(gated.output, "constexpr int kGate = 2;"));
  const CliRun bad = normjit_cli(std::string("emit ") + kSmallProblem + " --gate sideways");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--gate 'sideways'")) << bad.output;
  const CliRun layer_norm = normjit_cli("emit --kind layernorm --n 256 --gate after-norm");
  EXPECT_NE(layer_norm.code, 0) << layer_norm.output;
  EXPECT_TRUE(contains(layer_norm.output, "is set on a LayerNorm")) << layer_norm.output;
}

// Without a GPU the device's memory rate is not known: --memory-rate names it, so the config a
// memory-rich device (an H200) gets can be emitted and compiled anywhere.
TEST_F(Cli, EmitTakesTheDevicesMemoryRate) {
  const std::string problem = "emit --kind layernorm --n 4096 --dtype bf16 --weight-dtype fp32";
  const CliRun h100 = normjit_cli(problem);
  ASSERT_EQ(h100.code, 0) << h100.output.substr(0, 300);
  EXPECT_TRUE(contains(h100.output, "// launch: threads=256 threads_per_row=256 vec=4 registers\n"))
      << h100.output.substr(0, 300);
  const CliRun h200 = normjit_cli(problem + " --memory-rate 18.4");
  ASSERT_EQ(h200.code, 0) << h200.output.substr(0, 300);
  EXPECT_TRUE(contains(h200.output, "// launch: threads=512 threads_per_row=512 vec=8 registers prefetch min_blocks=2\n"))
      << h200.output.substr(0, 300);
  const CliRun bad = normjit_cli(problem + " --memory-rate fast");
  EXPECT_NE(bad.code, 0);
  EXPECT_TRUE(contains(bad.output, "--memory-rate takes the device's peak memory bytes an SM cycle")) << bad.output;
}

// tune --list lists a memory-rich device's candidates too, the heuristic's first (at LN bf16
// 5120 on an H200, a cluster of two blocks of paired rows); a tuning run reads the GPU's own rate.
TEST_F(Cli, TuneListTakesTheDevicesMemoryRate) {
  const std::string problem = "tune --list --kind layernorm --n 5120 --dtype bf16 --weight-dtype fp32 --m 13107";
  const std::string rich = "threads=320 threads_per_row=320 vec=8 registers cluster=2 paired_rows min_blocks=3 "
                           "shared_sums shared_weights";
  // The first candidate listed for sm_90.
  auto first_sm90 = [](const std::string& out) {
    const size_t at = out.find('\n', out.find("sm_90:"));
    return at == std::string::npos ? std::string() : out.substr(at + 5, out.find('\n', at + 1) - at - 5);
  };
  const CliRun h200 = normjit_cli(problem + " --memory-rate 18.4");
  ASSERT_EQ(h200.code, 0) << h200.output.substr(0, 300);
  EXPECT_EQ(first_sm90(h200.output), rich) << h200.output;
  const CliRun h100 = normjit_cli(problem);
  ASSERT_EQ(h100.code, 0) << h100.output.substr(0, 300);
  EXPECT_NE(first_sm90(h100.output), rich) << h100.output;
  const CliRun tuning = normjit_cli("tune --kind layernorm --n 5120 --memory-rate 18.4");
  EXPECT_EQ(tuning.code, 2) << tuning.output;
  EXPECT_TRUE(contains(tuning.output, "--memory-rate is for --list")) << tuning.output;
}

// emit --config takes a candidate as tune --list prints it, whole: flags it leaves out are off
// (the single-field overrides only turn flags on, so they cannot drop the heuristic's prefetch).
TEST_F(Cli, EmitTakesAWholeConfigAsTuneListPrintsIt) {
  const std::string problem = "emit --kind layernorm --n 7001 --align 4 --memory-rate 18.4";
  const std::string config = "threads=896 threads_per_row=896 vec=1 registers shared_sums";
  const CliRun run = normjit_cli(problem + " --config '" + config + "'");
  ASSERT_EQ(run.code, 0) << run.output.substr(0, 300);
  EXPECT_TRUE(contains(run.output, "// launch: " + config + "\n")) << run.output.substr(0, 300);
  const CliRun bad = normjit_cli(problem + " --config 'threads=896 threads_per_row=896 vec=1 turbo'");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "'turbo' is no flag of a launch config")) << bad.output;
}

// tune --config parses its configs before anything needs a GPU: a word it does not know, or a
// config beside --list or --exhaustive, is bad usage; good ones then need the GPU (exit 3 here).
TEST_F(Cli, TuneConfigIsCheckedBeforeTheGpu) {
  const std::string problem = "tune --kind rmsnorm --n 14002 --align 8 --m 4792";
  const CliRun bad = normjit_cli(problem + " --config 'threads=448 threads_per_row=448 vec=2 turbo'");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "'turbo' is no flag of a launch config")) << bad.output;
  const CliRun listed = normjit_cli(problem + " --list --config 'threads=448 threads_per_row=448 vec=2 registers'");
  EXPECT_EQ(listed.code, 2) << listed.output;
  EXPECT_TRUE(contains(listed.output, "does not go with --exhaustive or --list")) << listed.output;
  const CliRun good = normjit_cli(problem + " --config 'threads=448 threads_per_row=448 vec=2 registers cluster=4' "
                                  "--config 'threads=512 threads_per_row=512 vec=2 registers cluster=4 min_blocks=2'");
  EXPECT_EQ(good.code, 3) << good.output;
  EXPECT_TRUE(contains(good.output, "needs a GPU")) << good.output;
}

TEST_F(Cli, EmitTakesParallelNorms) {
  const CliRun parallel = normjit_cli("emit --kind layernorm --n 256 --parallel");
  EXPECT_EQ(parallel.code, 0) << parallel.output;
  EXPECT_TRUE(contains(parallel.output, "+parallel")) << parallel.output.substr(0, 200);
  EXPECT_TRUE(contains(parallel.output, "constexpr bool kParallel = true;"));
}

TEST_F(Cli, EmitTakesRecomputeFromOutputAndRejectsItWithAGate) {
  const CliRun recompute = normjit_cli("emit --kind layernorm --n 256 --recompute-from-output");
  EXPECT_EQ(recompute.code, 0) << recompute.output;
  EXPECT_TRUE(contains(recompute.output, "+recompute")) << recompute.output.substr(0, 200);
  EXPECT_TRUE(contains(recompute.output, "constexpr bool kRecompute = true;"));
  const CliRun gated = normjit_cli("emit --kind rmsnorm --n 256 --recompute-from-output --gate after-norm");
  EXPECT_NE(gated.code, 0) << gated.output;
  EXPECT_TRUE(contains(gated.output, "recompute_from_output and gate after-norm are both set")) << gated.output;
}

// `emit --sass` hands the compiled cubin to nvdisasm (NORMJIT_NVDISASM, else PATH, else the
// toolkit's) and passes its output on; here a stand-in prints what it was given, so the
// plumbing is tested where no nvdisasm is installed.
TEST_F(Cli, EmitSassRunsTheDisassemblerOnTheCubinAndSaysWhenThereIsNone) {
  skip_without_nvrtc();
  const std::string fake = path("nvdisasm");
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\necho \"stand-in $1\"; head -c 4 \"$2\" | od -An -c | tr -d ' '\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  const CliRun run = normjit_cli(std::string("emit ") + kSmallProblem + " --sass", "NORMJIT_NVDISASM=" + fake);
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "// rmsnorm N=256 x=fp32")) << run.output;
  EXPECT_TRUE(contains(run.output, "stand-in -c")) << run.output;
  EXPECT_TRUE(contains(run.output, "177ELF")) << "the file it was given is the cubin (an ELF): " << run.output;

  {
    std::ofstream script(fake);
    script << "#!/bin/sh\nexit 3\n";
  }
  const CliRun failed = normjit_cli(std::string("emit ") + kSmallProblem + " --sass", "NORMJIT_NVDISASM=" + fake);
  EXPECT_EQ(failed.code, 1) << failed.output;
  EXPECT_TRUE(contains(failed.output, "failed on the cubin (exit status 3)")) << failed.output;

  const CliRun missing = normjit_cli(std::string("emit ") + kSmallProblem + " --sass",
                                     "NORMJIT_NVDISASM=" + path("no-such-tool"));
  EXPECT_EQ(missing.code, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, "NORMJIT_NVDISASM names '" + path("no-such-tool") + "'")) << missing.output;

  if (!fs::exists("/usr/local/cuda/bin/nvdisasm")) {
    const CliRun none = normjit_cli(std::string("emit ") + kSmallProblem + " --sass", "-u NORMJIT_NVDISASM PATH=");
    EXPECT_EQ(none.code, 1) << none.output;
    EXPECT_TRUE(contains(none.output, "no nvdisasm found")) << none.output;
    EXPECT_TRUE(contains(none.output, "pip install nvidia-cuda-nvdisasm")) << none.output;
  }
  const CliRun both = normjit_cli(std::string("emit ") + kSmallProblem + " --sass --ptx");
  EXPECT_EQ(both.code, 2) << both.output;
}

TEST_F(Cli, AnUnknownSubcommandExitsTwo) {
  const CliRun run = normjit_cli("frobnicate");
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "unknown command 'frobnicate'")) << run.output;
}

TEST_F(Cli, AnUnknownCacheActionExitsTwo) {
  const CliRun run = normjit_cli("cache frobnicate");
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "frobnicate")) << run.output;
}

TEST_F(Cli, CompileWithoutArchOnAMachineWithoutAGpuExitsTwoNamingArch) {
  if (normjit::runtime::cuda_available()) GTEST_SKIP() << "a GPU is present: its arch is the default";
  const CliRun run = normjit_cli(std::string("compile ") + kSmallProblem);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "--arch")) << run.output;
  EXPECT_TRUE(entry_files().empty());
}

TEST_F(Cli, CompileRejectsABadArchOrJobCountAsBadUsage) {
  EXPECT_EQ(normjit_cli(std::string("compile --arch 90 ") + kSmallProblem).code, 2);
  EXPECT_EQ(normjit_cli(std::string("compile --arch sm_90 --jobs 0 ") + kSmallProblem).code, 2);
  EXPECT_EQ(normjit_cli(std::string("compile --arch sm_90 --bogus ") + kSmallProblem).code, 2);
}

// --- compile -----------------------------------------------------------------------------

TEST_F(Cli, CompileForAnArchWorksWithoutAGpuAndLeavesOneValidEntry) {
  skip_without_nvrtc();
  const CliRun run = normjit_cli("compile --arch sm_90 --kind rmsnorm --n 4096 --dtype bf16");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "compiled 1, already cached 0, failed 0")) << run.output;
  EXPECT_TRUE(contains(run.output, "[1/1] sm_90 rmsnorm N=4096 x=bf16")) << run.output;

  const CliRun verify = normjit_cli("cache verify");
  EXPECT_EQ(verify.code, 0) << verify.output;
  const CliRun ls = normjit_cli("cache ls");
  EXPECT_EQ(ls.code, 0) << ls.output;
  EXPECT_EQ(count_lines(ls.output), 1u) << ls.output;
  EXPECT_TRUE(contains(ls.output, "sm_90")) << ls.output;
  EXPECT_TRUE(contains(ls.output, "valid")) << ls.output;
}

TEST_F(Cli, ASecondCompileReportsTheKernelAsAlreadyCached) {
  skip_without_nvrtc();
  ASSERT_EQ(normjit_cli(std::string("compile --arch sm_90 ") + kSmallProblem).code, 0);
  const CliRun again = normjit_cli(std::string("compile --arch sm_90 ") + kSmallProblem);
  EXPECT_EQ(again.code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "compiled 0, already cached 1, failed 0")) << again.output;
}

TEST_F(Cli, CompileTakesItsProblemsFromAShapeFile) {
  skip_without_nvrtc();
  std::ofstream(path("shapes.toml")) << "[[problem]]\nkind = \"rmsnorm\"\nn = [128, 256]\ndtype = \"fp32\"\n";
  const CliRun run = normjit_cli("compile --arch sm_90 --jobs 2 --shapes " + path("shapes.toml"));
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "compiled 2, already cached 0, failed 0")) << run.output;
  EXPECT_EQ(entry_files().size(), 2u);
}

TEST_F(Cli, ABadShapeFileExitsTwoNamingTheKey) {
  std::ofstream(path("shapes.toml")) << "[[problem]]\nkind = \"rmsnorm\"\nn = 64\ndtype = \"fp8\"\n";
  const CliRun run = normjit_cli("compile --arch sm_90 --shapes " + path("shapes.toml"));
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "dtype")) << run.output;
  EXPECT_TRUE(contains(run.output, "\"fp8\"")) << run.output;
}

TEST_F(Cli, TheDefaultSetIsTheCommonShapeFile) {
  const CliRun defaults = normjit_cli("compile --arch sm_90 --dry-run");
  const CliRun common =
      normjit_cli("compile --arch sm_90 --dry-run --shapes " + (kSourceRoot / "examples/shapes/common.toml").string());
  ASSERT_EQ(defaults.code, 0) << defaults.output;
  ASSERT_EQ(common.code, 0) << common.output;
  EXPECT_EQ(defaults.output, common.output);
  EXPECT_EQ(count_lines(defaults.output), 7u * 2 * 2) << "7 widths x LN/RMS x bf16/fp16";
  EXPECT_TRUE(entry_files().empty()) << "--dry-run compiles nothing";
}

TEST_F(Cli, CompileIntoANamedCacheDirectory) {
  skip_without_nvrtc();
  const std::string other = path("other-cache");
  const CliRun run = normjit_cli(std::string("compile --arch sm_90 --cache-dir ") + other + " " + kSmallProblem);
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(entry_files().empty()) << "the configured directory is left alone";
  EXPECT_EQ(count_lines(normjit_cli("cache ls --cache-dir " + other).output), 1u);
}

// --- cache -------------------------------------------------------------------------------

TEST_F(Cli, ExportClearImportRestoresTheSameKeysAndLeavesNothingToCompile) {
  skip_without_nvrtc();
  ASSERT_EQ(normjit_cli(std::string("compile --arch sm_90,sm_80 ") + kSmallProblem).code, 0);
  const std::set<std::string> keys = entry_keys();
  ASSERT_EQ(keys.size(), 2u);

  const CliRun exported = normjit_cli("cache export " + path("fleet.njbundle"));
  ASSERT_EQ(exported.code, 0) << exported.output;
  EXPECT_TRUE(contains(exported.output, "exported 2 entries")) << exported.output;
  ASSERT_EQ(normjit_cli("cache clear").code, 0);
  ASSERT_TRUE(entry_files().empty());

  const CliRun imported = normjit_cli("cache import " + path("fleet.njbundle"));
  ASSERT_EQ(imported.code, 0) << imported.output;
  EXPECT_TRUE(contains(imported.output, "installed 2")) << imported.output;
  EXPECT_EQ(entry_keys(), keys);
  EXPECT_EQ(normjit_cli("cache verify").code, 0);

  const CliRun again = normjit_cli(std::string("compile --arch sm_90,sm_80 ") + kSmallProblem);
  EXPECT_EQ(again.code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "compiled 0, already cached 2, failed 0")) << again.output;
}

TEST_F(Cli, VerifyNamesAnEntryWithAFlippedByteAndExitsOne) {
  skip_without_nvrtc();
  ASSERT_EQ(normjit_cli(std::string("compile --arch sm_90 ") + kSmallProblem).code, 0);
  ASSERT_EQ(entry_files().size(), 1u);
  const fs::path entry = entry_files()[0];
  flip_byte(entry, 100);  // inside the cubin
  const CliRun run = normjit_cli("cache verify");
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_TRUE(contains(run.output, entry.string())) << run.output;
  EXPECT_TRUE(contains(run.output, "checksum")) << run.output;
  EXPECT_TRUE(contains(normjit_cli("cache ls").output, "INVALID"));
}

TEST_F(Cli, ImportOfABundleWithOneFlippedByteFailsAndInstallsNothing) {
  skip_without_nvrtc();
  ASSERT_EQ(normjit_cli(std::string("compile --arch sm_90 ") + kSmallProblem).code, 0);
  ASSERT_EQ(normjit_cli("cache export " + path("fleet.njbundle")).code, 0);
  ASSERT_EQ(normjit_cli("cache clear").code, 0);
  flip_byte(path("fleet.njbundle"), 1000);
  const CliRun run = normjit_cli("cache import " + path("fleet.njbundle"));
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_TRUE(contains(run.output, "not a usable bundle")) << run.output;
  EXPECT_TRUE(contains(run.output, "Nothing was installed")) << run.output;
  EXPECT_TRUE(entry_files().empty());
}

TEST_F(Cli, ImportSkipsEntriesForAnotherNvrtcVersionAndSaysHowMany) {
  skip_without_nvrtc();
  normjit::runtime::Bundle bundle;
  bundle.nvrtc_version = "12.8";  // not this machine's
  bundle.normjit_version = normjit::version_string();
  for (char c : {'a', 'b', 'c'}) bundle.entries.push_back({std::string(64, c), "sm_90", {'x'}});
  normjit::runtime::write_bundle_file(path("old.njbundle"), normjit::runtime::encode_bundle(bundle));
  const CliRun run = normjit_cli("cache import " + path("old.njbundle"));
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "skipped 3 entries for NVRTC 12.8")) << run.output;
  EXPECT_TRUE(entry_files().empty());
}

TEST_F(Cli, ImportOfAFileThatDoesNotExistExitsOneNamingIt) {
  const CliRun run = normjit_cli("cache import " + path("missing.njbundle"));
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_TRUE(contains(run.output, path("missing.njbundle"))) << run.output;
}

TEST_F(Cli, StatsCountsEntriesAndBytes) {
  skip_without_nvrtc();
  ASSERT_EQ(normjit_cli(std::string("compile --arch sm_90 ") + kSmallProblem).code, 0);
  const CliRun run = normjit_cli("cache stats");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "entries:   1 (1 valid, 0 invalid)")) << run.output;
  EXPECT_TRUE(contains(run.output, "sm_90: 1")) << run.output;
}

// --- config ------------------------------------------------------------------------------

TEST_F(Cli, ConfigPrintsEveryKeyItsValueAndWhereItCameFrom) {
  setenv("NORMJIT_LOG_LEVEL", "info", 1);
  const CliRun run = normjit_cli("config");
  unsetenv("NORMJIT_LOG_LEVEL");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "config file: none")) << run.output;
  for (const char* key : {"cache.dir", "cache.disk", "cache.max_bytes", "log.level", "tune.mode"})
    EXPECT_TRUE(contains(run.output, key)) << key << " in:\n" << run.output;
  std::istringstream lines(run.output);
  bool log_line = false, dir_line = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("log.level", 0) == 0)
      log_line = contains(line, "info") && contains(line, "env NORMJIT_LOG_LEVEL");
    if (line.rfind("cache.dir", 0) == 0)
      dir_line = contains(line, cache_dir()) && contains(line, "env NORMJIT_CACHE_DIR");
  }
  EXPECT_TRUE(log_line) << run.output;
  EXPECT_TRUE(dir_line) << run.output;
}

TEST_F(Cli, ConfigNamesTheFileItReadAndTheKeysItSet) {
  std::ofstream(path("config/normjit.toml")) << "[tune]\nmode = \"off\"\n";
  setenv("NORMJIT_CONFIG", path("config/normjit.toml").c_str(), 1);
  const CliRun run = normjit_cli("config");
  unsetenv("NORMJIT_CONFIG");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "config file: " + path("config/normjit.toml"))) << run.output;
  EXPECT_TRUE(contains(run.output, "file " + path("config/normjit.toml"))) << run.output;
}

}  // namespace

// --- tune ----------------------------------------------------------------------------------

TEST_F(Cli, TuneIsListedAndItsHelpNamesItsOptions) {
  EXPECT_TRUE(contains(normjit_cli("--help").output, "  tune ")) << "tune in the command list";
  const CliRun run = normjit_cli("tune --help");
  EXPECT_EQ(run.code, 0) << run.output;
  for (const char* option : {"--shapes", "--sweep", "--m", "--exhaustive", "--list", "--cache-dir", "--kind"})
    EXPECT_TRUE(contains(run.output, option)) << option << " in:\n" << run.output;
}

TEST_F(Cli, TuneListShowsTheCandidatesWithoutAGpu) {
  const CliRun run = normjit_cli(std::string("tune --list --m 1,3000 ") + kSmallProblem);
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "M<=1\n")) << run.output;
  EXPECT_TRUE(contains(run.output, "M<=4096\n")) << "3000 rows are the 4096 bucket:\n" << run.output;
  EXPECT_TRUE(contains(run.output, "sm_90: ")) << run.output;
  EXPECT_TRUE(contains(run.output, "threads=")) << run.output;
}

TEST_F(Cli, TuneWithoutAProblemOrWithABadMIsBadUsage) {
  EXPECT_EQ(normjit_cli("tune").code, 2);
  const CliRun bad_m = normjit_cli(std::string("tune --m 0 ") + kSmallProblem);
  EXPECT_EQ(bad_m.code, 2) << bad_m.output;
  EXPECT_TRUE(contains(bad_m.output, "--m '0'")) << bad_m.output;
}

TEST_F(Cli, BenchFusedTakesTheGateParallelAndRecomputeSets) {
  const CliRun help = normjit_cli("bench --help");
  for (const char* name : {"--fused", "gate,gate-before,parallel,recompute", "RMSNorm shapes only"})
    EXPECT_TRUE(contains(help.output, name)) << name << " in:\n" << help.output;
  // The list is parsed before a GPU is looked for: a good one gets as far as that (with a GPU it
  // would run the sweep, which is the GPU suite's business).
  const bool gpu = normjit::runtime::cuda_available();
  for (const char* list :
       {"gate,gate-before,parallel", "gate_before+residual,parallel+all", "none,gate+rowscale", "recompute+residual"}) {
    if (gpu) break;
    const CliRun run = normjit_cli(std::string("bench --quick --fused ") + list);
    EXPECT_EQ(run.code, 3) << list << ":\n" << run.output;
    EXPECT_TRUE(contains(run.output, "needs a GPU")) << run.output;
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"gate+parallel", "a gate and parallel norms cannot be combined"},
      {"gate-before+gate", "one gate per set"},
      {"recompute+parallel", "recompute cannot be combined with a gate or parallel norms"},
      {"gate+recompute", "recompute cannot be combined with a gate or parallel norms"},
      {"gated", "'gated' is not an option (use none, residual, zero-centered, rowscale, dropout-bytes, "
                "dropout-bits, all, gate, gate-before, parallel or recompute"},
  };
  for (const auto& [list, message] : bad) {
    const CliRun run = normjit_cli("bench --fused " + list);
    EXPECT_EQ(run.code, 2) << list << ":\n" << run.output;
    EXPECT_TRUE(contains(run.output, message)) << list << ":\n" << run.output;
  }
}

// bench --config pins launch configs beside the engine's choice; a bad one is bad usage before any
// GPU work, and a good one gets as far as looking for the GPU.
TEST_F(Cli, BenchConfigIsParsedBeforeTheGpuIsLookedFor) {
  const CliRun help = normjit_cli("bench --help");
  EXPECT_TRUE(contains(help.output, "--config CONFIG")) << help.output;
  const CliRun bad = normjit_cli("bench --n 4096 --config \"threads=abc\"");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "'threads=abc' wants a positive whole number")) << bad.output;
  if (normjit::runtime::cuda_available()) return;  // a good one would run the sweep
  const CliRun good = normjit_cli(
      "bench --forward --n 4096 --config \"threads=256 threads_per_row=256 vec=8 registers\" "
      "--config \"threads=512 threads_per_row=512 vec=8 registers prefetch\"");
  EXPECT_EQ(good.code, 3) << good.output;
  EXPECT_TRUE(contains(good.output, "needs a GPU")) << good.output;
}

// Missing pieces, on any machine: the driver or NVRTC named by their variables but absent. Each
// gives one clear error where it is needed, and what does not need it keeps working.
TEST_F(Cli, WithoutNvrtcCompileFailsSayingSoAndEmitStillWorks) {
  const std::string no_nvrtc = "NORMJIT_LIBNVRTC=/nonexistent/libnvrtc.so.13";
  const CliRun compile = normjit_cli(std::string("compile --arch sm_90 ") + kSmallProblem, no_nvrtc);
  EXPECT_NE(compile.code, 0) << compile.output;
  EXPECT_TRUE(contains(compile.output, "NVRTC (the CUDA run-time compiler) could not be loaded")) << compile.output;
  EXPECT_TRUE(contains(compile.output, "/nonexistent/libnvrtc.so.13")) << compile.output;
  EXPECT_TRUE(contains(compile.output, "NORMJIT_LIBNVRTC names that library")) << compile.output;
  EXPECT_TRUE(entry_files().empty());
  const CliRun emit = normjit_cli(std::string("emit ") + kSmallProblem, no_nvrtc);
  EXPECT_EQ(emit.code, 0) << emit.output;
  EXPECT_TRUE(contains(emit.output, "nj_norm_backward")) << emit.output;
}

TEST_F(Cli, WithoutADriverTuneExitsThreeAndCompileForAnArchStillWorks) {
  const std::string no_driver = "NORMJIT_LIBCUDA=/nonexistent/libcuda.so.1";
  const CliRun tune = normjit_cli(std::string("tune ") + kSmallProblem, no_driver);
  EXPECT_EQ(tune.code, 3) << tune.output;
  EXPECT_TRUE(contains(tune.output, "no CUDA driver")) << tune.output;
  EXPECT_TRUE(contains(tune.output, "/nonexistent/libcuda.so.1")) << tune.output;
  skip_without_nvrtc();
  const CliRun compile = normjit_cli(std::string("compile --arch sm_90 ") + kSmallProblem, no_driver);
  EXPECT_EQ(compile.code, 0) << compile.output;
  EXPECT_EQ(entry_files().size(), 1u);
}

TEST_F(Cli, TuneWithoutAGpuExitsThree) {
  if (normjit::runtime::cuda_available()) GTEST_SKIP() << "a GPU is present";
  const CliRun run = normjit_cli(std::string("tune ") + kSmallProblem);
  EXPECT_EQ(run.code, 3) << run.output;
  EXPECT_TRUE(contains(run.output, "needs a GPU")) << run.output;
}
