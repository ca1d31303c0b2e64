// Many processes, one cache directory, as a fleet's build box or a node's ranks use it: the
// `normjit compile` command (NORMJIT_CLI_PATH or NORMJIT_CLI, NVRTC, no GPU) run as separate processes that
// race, get killed with SIGKILL, or hit a full file system. What must hold afterwards:
// every entry a reader would use is valid (`normjit cache verify`), a later run hits or
// rebuilds, and a failure to write is a warning, never a failed compile.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/nvrtc.h"
#include "support/cli_path.h"

namespace fs = std::filesystem;

namespace {
using normjit::test::cli_path;

// Small problems: each compiles in well under a second on one core.
const char* kShared = R"([[problem]]
kind = "rmsnorm"
n = [256, 512]
dtype = "fp32"
)";
const std::vector<std::string> kOwn = {
    "--kind layernorm --n 256 --dtype fp32",
    "--kind layernorm --n 128 --dtype fp16",
    "--kind rmsnorm --n 384 --dtype bf16",
    "--kind layernorm --n 64 --dtype fp32",
};

std::string read_text(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One `normjit ARGS` process: stdout and stderr to files, started now, reaped by wait().
class CliProcess {
 public:
  // fsize_limit > 0: RLIMIT_FSIZE in the child, with SIGXFSZ ignored, so that a write past the
  // limit fails with EFBIG as on a full disk instead of killing the process.
  CliProcess(const fs::path& dir, const std::string& name, const std::string& args, rlim_t fsize_limit = 0)
      : out_(dir / (name + ".out")), err_(dir / (name + ".err")) {
    const std::string command = cli_path() + " " + args;
    pid_ = fork();
    if (pid_ == 0) {
      if (fsize_limit > 0) {
        const rlimit limit{fsize_limit, fsize_limit};
        if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(120);
        signal(SIGXFSZ, SIG_IGN);  // ignored dispositions survive exec
      }
      // The shell opens the output files before the limit could matter: they are tiny anyway.
      const std::string shell = "exec " + command + " >" + out_.string() + " 2>" + err_.string();
      execl("/bin/sh", "sh", "-c", shell.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  pid_t pid() const { return pid_; }
  void kill_now() { ::kill(pid_, SIGKILL); }
  // Exit status, or 128 + signal.
  int wait() {
    int status = 0;
    if (waitpid(pid_, &status, 0) != pid_) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string out() const { return read_text(out_); }
  std::string err() const { return read_text(err_); }

 private:
  fs::path out_, err_;
  pid_t pid_ = -1;
};

struct Summary {
  bool found = false;
  int compiled = 0, cached = 0, failed = 0, nvrtc_runs = 0, kernels = 0;
};

// "compiled C, already cached K, failed F, nvrtc runs R: J kernel(s) for ..." (tools/compile.cpp).
Summary parse_summary(const std::string& out) {
  static const std::regex line(
      R"(compiled (\d+), already cached (\d+), failed (\d+), nvrtc runs (\d+): (\d+) kernels? for)");
  std::smatch m;
  Summary s;
  if (!std::regex_search(out, m, line)) return s;
  s.found = true;
  s.compiled = std::stoi(m[1]);
  s.cached = std::stoi(m[2]);
  s.failed = std::stoi(m[3]);
  s.nvrtc_runs = std::stoi(m[4]);
  s.kernels = std::stoi(m[5]);
  return s;
}

// The progress lines on stderr ("[i/J] sm_90 rmsnorm N=256 ...: 312 ms" or ": already cached"):
// how often each kernel was reported done in this process.
std::map<std::string, int> kernels_done(const std::string& err) {
  static const std::regex line(R"(^\[\d+/\d+\] (.*): (\d+ ms|already cached)$)");
  std::map<std::string, int> out;
  std::istringstream lines(err);
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_match(l, m, line)) out[m[1]]++;
  }
  return out;
}

class CacheProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!normjit::runtime::Nvrtc::available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() / ("normjit-procs-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root_);
    fs::create_directories(root_ / "logs");
    fs::create_directories(root_ / "config");
    std::ofstream(root_ / "shared.toml") << kShared;
    // No user config file, no cache location from the environment: --cache-dir says it all.
    setenv("XDG_CONFIG_HOME", (root_ / "config").c_str(), 1);
    unsetenv("NORMJIT_CONFIG");
    unsetenv("NORMJIT_CACHE_DIR");
    unsetenv("NORMJIT_DISK_CACHE");
  }
  void TearDown() override {
    unsetenv("XDG_CONFIG_HOME");
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string cache() const { return (root_ / "cache").string(); }
  fs::path logs() const { return root_ / "logs"; }
  std::string shared_args() const { return "--shapes " + (root_ / "shared.toml").string(); }

  CliProcess start(const std::string& name, const std::string& args, rlim_t fsize_limit = 0) {
    return CliProcess(logs(), name, args + " --cache-dir " + cache(), fsize_limit);
  }
  // Runs `normjit cache verify` on the cache: its exit status and stdout.
  std::pair<int, std::string> verify() {
    CliProcess p(logs(), "verify", "cache verify --cache-dir " + cache());
    const int code = p.wait();
    return {code, p.out() + p.err()};
  }
  std::vector<fs::path> files(const std::string& marker) const {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& f : fs::directory_iterator(cache(), ec))
      if (contains(f.path().filename().string(), marker)) out.push_back(f.path());
    return out;
  }
  size_t entries() const {
    size_t n = 0;
    for (const fs::path& p : files(".njk"))
      if (p.extension() == ".njk") ++n;
    return n;
  }
  std::vector<fs::path> temp_files() const { return files(".njk.tmp."); }

  fs::path root_;
};

// 16 processes at once into one fresh directory: 8 compile the same two kernels (2 threads
// each, so threads race inside a process too), 8 compile one of 4 other kernels (2 each).
TEST_F(CacheProcesses, SixteenProcessesCompilingIntoOneDirectoryAllSucceedAndLeaveOnlyValidEntries) {
  std::vector<CliProcess> procs;
  std::vector<int> expected_kernels;
  for (int i = 0; i < 16; ++i) {
    const bool shared = i % 2 == 0;
    const std::string args = shared ? "compile --arch sm_90 --jobs 2 " + shared_args()
                                    : "compile --arch sm_90 --jobs 1 " + kOwn[(i / 2) % kOwn.size()];
    procs.push_back(start("p" + std::to_string(i), args));
    expected_kernels.push_back(shared ? 2 : 1);
  }
  int compiled_total = 0;
  for (size_t i = 0; i < procs.size(); ++i) {
    SCOPED_TRACE("process " + std::to_string(i) + ": stdout:\n" + procs[i].out() + "stderr:\n" + procs[i].err());
    const int code = procs[i].wait();
    EXPECT_EQ(code, 0);
    const Summary s = parse_summary(procs[i].out());
    ASSERT_TRUE(s.found);
    EXPECT_EQ(s.failed, 0);
    EXPECT_EQ(s.kernels, expected_kernels[i]);
    EXPECT_EQ(s.compiled + s.cached, s.kernels) << "each kernel is either compiled or found, once";
    EXPECT_EQ(s.nvrtc_runs, s.compiled) << "NVRTC ran once per kernel compiled, never twice for one";
    compiled_total += s.compiled;
    // At most once per process: each kernel is reported done exactly once, compiled or cached.
    const auto done = kernels_done(procs[i].err());
    EXPECT_EQ(done.size(), static_cast<size_t>(expected_kernels[i]));
    for (const auto& [kernel, times] : done) EXPECT_EQ(times, 1) << kernel;
    EXPECT_FALSE(contains(procs[i].err(), "warning")) << "no disk trouble here";
  }
  // 6 distinct kernels; processes that raced may each have compiled one (no cross-process
  // lock, by design), but never more often than there were processes asking for it.
  EXPECT_GE(compiled_total, 6);
  EXPECT_LE(compiled_total, 8 * 2 + 8);

  const auto [code, report] = verify();
  EXPECT_EQ(code, 0) << report;
  EXPECT_TRUE(contains(report, "6 valid, 0 invalid")) << report;
  EXPECT_EQ(entries(), 6u);
  EXPECT_TRUE(temp_files().empty()) << "every writer renamed or removed its temp file";

  // And a reader finds them all: a second run of everything compiles nothing.
  CliProcess again = start("again", "compile --arch sm_90 " + shared_args());
  ASSERT_EQ(again.wait(), 0) << again.err();
  const Summary s = parse_summary(again.out());
  EXPECT_EQ(s.compiled, 0) << again.out();
  EXPECT_EQ(s.cached, 2) << again.out();
}

// SIGKILL at random moments of a compile run (most land in NVRTC, some between compiles or in a
// store): an entry that is there is whole, because entries appear only by rename. What a killed
// writer can leave is its temp file (*.njk.tmp.<pid>.<random>): never read as an entry, listed
// by no command, removed by `cache clear`, and swept by the next store once an hour old.
TEST_F(CacheProcesses, WritersKilledAtRandomMomentsLeaveNoEntryAReaderWouldUse) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> delay_ms(0, 1500);
  const std::string all = "compile --arch sm_90 --jobs 2 " + shared_args();
  for (int round = 0; round < 6; ++round) {
    const int ms = delay_ms(rng);
    SCOPED_TRACE("round " + std::to_string(round) + ": killed after " + std::to_string(ms) + " ms");
    CliProcess writer = start("killed" + std::to_string(round), all);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    writer.kill_now();
    const int code = writer.wait();
    EXPECT_TRUE(code == 128 + SIGKILL || code == 0) << "exit " << code << ": " << writer.err();
    const auto [verify_code, report] = verify();
    EXPECT_EQ(verify_code, 0) << report;
    EXPECT_TRUE(contains(report, " 0 invalid")) << report;
    if (round % 2 == 1) {  // now and then a fresh cache, so that kills land in early writes too
      for (const fs::path& p : files(".njk")) fs::remove(p);
    }
  }
  // A leftover temp file is never used: even a complete entry written under a temp name.
  const fs::path fake_temp = fs::path(cache()) / "0123abcd.njk.tmp.1.0000000000000000";
  fs::create_directories(cache());
  std::ofstream(fake_temp) << "half an entry";
  fs::last_write_time(fake_temp, fs::file_time_type::clock::now() - std::chrono::hours(2));
  for (const fs::path& p : temp_files())  // as if every killed writer had died two hours ago
    fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::hours(2));
  for (const fs::path& p : files(".njk"))
    if (p.extension() == ".njk") fs::remove(p);  // the next run must store, which sweeps

  CliProcess after = start("after", all);
  ASSERT_EQ(after.wait(), 0) << after.err();
  const Summary s = parse_summary(after.out());
  EXPECT_EQ(s.compiled, 2) << after.out();
  EXPECT_TRUE(temp_files().empty()) << "stale temp files are swept by a store";
  const auto [verify_code, report] = verify();
  EXPECT_EQ(verify_code, 0) << report;
  EXPECT_TRUE(contains(report, "2 valid, 0 invalid")) << report;
}

// A full file system, simulated with RLIMIT_FSIZE: the probe byte at start-up fits, the entry
// (tens of KB) does not. The kernel is still compiled, the run succeeds, one warning says the
// cache is memory-only, and nothing partial is left.
TEST_F(CacheProcesses, AFullFileSystemIsAWarningNotAFailureAndLeavesNoPartialEntry) {
  CliProcess p = start("full", "compile --arch sm_90 " + shared_args(), /*fsize_limit=*/1024);
  const int code = p.wait();
  SCOPED_TRACE("stdout:\n" + p.out() + "stderr:\n" + p.err());
  EXPECT_EQ(code, 0);
  const Summary s = parse_summary(p.out());
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.compiled, 2);
  EXPECT_TRUE(contains(p.err(), "memory-only caching")) << "a warning on stderr";
  EXPECT_TRUE(contains(p.err(), "File too large")) << "the warning says what went wrong";
  EXPECT_EQ(entries(), 0u);
  EXPECT_TRUE(temp_files().empty()) << "the failed write removed its temp file";
  const auto [verify_code, report] = verify();
  EXPECT_EQ(verify_code, 0) << report;
  EXPECT_TRUE(contains(report, "0 valid, 0 invalid")) << report;
}

// `compile` exists to fill the disk cache: a cache directory that is a file is a failed run
// (exit 1) with a message that names the directory, not a crash and not a silent success.
TEST_F(CacheProcesses, ACacheDirThatIsAFileFailsCompileWithAMessageAndTouchesNothing) {
  std::ofstream(cache()) << "not a directory";
  CliProcess p = start("file", "compile --arch sm_90 " + kOwn[0]);
  EXPECT_EQ(p.wait(), 1) << p.err();
  EXPECT_TRUE(contains(p.err(), cache())) << p.err();
  EXPECT_TRUE(contains(p.err(), "cannot be written")) << p.err();
  EXPECT_EQ(read_text(cache()), "not a directory");
}

// The same for a directory this user cannot write (run as "nobody" when the tests run as root,
// since root writes anywhere).
TEST_F(CacheProcesses, AReadOnlyCacheDirFailsCompileWithAMessageAndStaysEmpty) {
  fs::create_directories(cache());
  fs::permissions(cache(), fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                               fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  std::string prefix;
  if (geteuid() == 0) {
    // setpriv is util-linux; without it (or a binary nobody can reach) there is nothing to test.
    if (std::system("command -v setpriv >/dev/null 2>&1") != 0) GTEST_SKIP() << "no setpriv to drop root";
    prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    const std::string probe = prefix + cli_path() + " --help >/dev/null 2>&1";
    if (std::system(probe.c_str()) != 0) GTEST_SKIP() << "the normjit binary is not reachable by nobody here";
    fs::permissions(root_, fs::perms::others_read | fs::perms::others_exec, fs::perm_options::add);
  }
  const fs::path out = logs() / "ro.out", err = logs() / "ro.err";
  fs::permissions(logs(), fs::perms::all, fs::perm_options::add);
  const std::string command = prefix + cli_path() + " compile --arch sm_90 " + kOwn[0] + " --cache-dir " +
                              cache() + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << read_text(err);
  EXPECT_TRUE(contains(read_text(err), "cannot be written")) << read_text(err);
  EXPECT_TRUE(fs::is_empty(cache()));
}

}  // namespace
