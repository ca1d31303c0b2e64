// A full file system under an engine that launches: the cache's writes fail, the backward is
// still right, one warning says the cache went memory-only, and no entry or temp file is left.
// The full disk is RLIMIT_FSIZE = 1 KiB (SIGXFSZ ignored) in a child process: this test binary
// again, exec'd so that CUDA starts fresh there, running the Child test below.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/device_run.h"
#include "support/gpu.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/scratch_cache.h"

namespace normjit::test {
namespace {
namespace fs = std::filesystem;

constexpr const char* kChildDir = "NORMJIT_TEST_FULL_DISK_DIR";

// Runs this binary's FullDisk.Child in a child with a 1 KiB file-size limit; returns its exit
// status and everything it printed (through a pipe, which the limit does not apply to).
std::pair<int, std::string> run_child_on_a_full_disk(const fs::path& dir) {
  int out[2];
  if (pipe(out) != 0) return {-1, "pipe failed"};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(out[0]);
    close(out[1]);
    rlimit limit{1024, 1024};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(120);
    signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing
    setenv(kChildDir, dir.c_str(), 1);
    // A sharded parent (GTEST_TOTAL_SHARDS, scripts/gpu-run.sh) would pass its shard on, and
    // the child's one test might not be in it: the child runs unsharded.
    unsetenv("GTEST_TOTAL_SHARDS");
    unsetenv("GTEST_SHARD_INDEX");
    execl("/proc/self/exe", "normjit_gpu_tests", "--gtest_filter=FullDisk.Child", static_cast<char*>(nullptr));
    _exit(121);
  }
  close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), text};
}

class FullDisk : public ScratchCacheGpuTest {};

TEST_F(FullDisk, TheBackwardIsRightTheCacheGoesMemoryOnlyAndNothingPartialIsLeft) {
  NJ_REQUIRE_GPU();
  if (std::getenv(kChildDir)) GTEST_SKIP() << "this is the child's process";
  fs::create_directories(cache_dir());
  const auto [code, output] = run_child_on_a_full_disk(cache_dir());
  SCOPED_TRACE("the child printed:\n" + output);
  EXPECT_EQ(code, 0) << "the child's backward must match the reference";
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << "the child test ran and passed";
  EXPECT_NE(output.find("memory-only caching"), std::string::npos) << "one warning says so";
  EXPECT_NE(output.find("File too large"), std::string::npos) << "and says what went wrong";
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(cache_dir())) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".njk"), std::string::npos) << "an entry or temp file was left: " << e.path();
  }
}

// Only as the child of the test above (it skips otherwise): an engine on the full disk runs
// a backward that compiles a kernel, whose cache entry cannot be written.
TEST_F(FullDisk, Child) {
  NJ_REQUIRE_GPU();
  const char* dir = std::getenv(kChildDir);
  if (!dir) GTEST_SKIP() << "runs only as the child process of FullDisk.TheBackwardIsRight...";
  Config config;
  config.cache_dir = dir;
  Engine engine(config);
  const NormProblem problem = make_problem(NormKind::LayerNorm, 3000, DType::BF16, DType::F32, Affine::WeightAndBias);
  EXPECT_TRUE(backward_matches_reference(engine, make_inputs(problem, 37, fresh_seed()), stream()));
}

}  // namespace
}  // namespace normjit::test
