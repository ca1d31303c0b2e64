#include "runtime/kernel_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "codegen/norm_problem.h"
#include "normjit/normjit.hpp"

using namespace normjit;
namespace fs = std::filesystem;

namespace {

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
    dir_ = fs::temp_directory_path() / ("normjit-kc-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    target_ = {90, runtime::Nvrtc::get().version()};
  }
  void TearDown() override { fs::remove_all(dir_); }

  static codegen::KernelSource source(int64_t n) {
    NormProblem p;
    p.kind = NormKind::RMSNorm;
    p.n = n;
    p.x_dtype = DType::BF16;
    p = codegen::resolve_problem(p);
    return codegen::generate_backward_source(p, codegen::choose_launch_config(p));
  }

  fs::path dir_;
  codegen::CompileTarget target_;
};

TEST_F(KernelCacheTest, CompilesOnceWhenManyThreadsAskAtOnce) {
  runtime::DiskCache disk("", 0);
  runtime::KernelCache cache(disk);
  const auto src = source(33);
  std::vector<std::shared_ptr<const runtime::CompiledKernel>> got(16);
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) threads.emplace_back([&, i] { got[i] = cache.get(src, target_, "test"); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(cache.stats().compiles, 1u);
  for (const auto& k : got) EXPECT_EQ(k.get(), got[0].get());
}

TEST_F(KernelCacheTest, ANewProcessReadsTheCubinFromDisk) {
  runtime::DiskCache disk(dir_.string(), 1 << 30);
  const auto src = source(1000);
  auto first = runtime::KernelCache(disk).get(src, target_, "test");
  EXPECT_FALSE(first->from_disk);
  runtime::KernelCache fresh(disk);  // empty memory, as in a new process
  auto second = fresh.get(src, target_, "test");
  EXPECT_TRUE(second->from_disk);
  EXPECT_EQ(fresh.stats().compiles, 0u);
  EXPECT_EQ(second->cubin, first->cubin);
  EXPECT_EQ(second->resources.size(), first->resources.size());
}

TEST_F(KernelCacheTest, ACorruptDiskEntryIsRebuilt) {
  runtime::DiskCache disk(dir_.string(), 1 << 30);
  const auto src = source(1000);
  auto first = runtime::KernelCache(disk).get(src, target_, "test");
  const std::string path = disk.path_for(first->key);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));
    f.put('\x5a');
    f.put('\xa5');
  }
  runtime::KernelCache fresh(disk);
  auto again = fresh.get(src, target_, "test");
  EXPECT_FALSE(again->from_disk);
  EXPECT_EQ(fresh.stats().compiles, 1u);
  EXPECT_GE(disk.stats().corrupt, 1u);
  EXPECT_EQ(again->cubin, first->cubin);
}

TEST_F(KernelCacheTest, AFailedCompileIsNotCached) {
  runtime::DiskCache disk("", 0);
  runtime::KernelCache cache(disk);
  codegen::KernelSource broken;
  broken.text = "not cuda";
  broken.name = "broken.cu";
  for (int i = 0; i < 2; ++i) {
    try {
      cache.get(broken, target_, "broken");
      FAIL() << "compiled";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::Compile);
    }
  }
}

TEST_F(KernelCacheTest, ConcurrentProcessesShareOneDirectory) {
  const auto a = source(4096), b = source(4095);
  std::vector<pid_t> children;
  for (int i = 0; i < 6; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        runtime::DiskCache disk(dir_.string(), 1 << 30);
        runtime::KernelCache cache(disk);
        auto ka = cache.get(i % 2 ? a : b, target_, "child");
        auto kb = cache.get(i % 2 ? b : a, target_, "child");
        code = ka->cubin.empty() || kb->cubin.empty() ? 1 : 0;
      } catch (...) {
        code = 2;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed: " << status;
  }
  runtime::DiskCache disk(dir_.string(), 1 << 30);
  const auto entries = disk.list();
  EXPECT_EQ(entries.size(), 2u);
  for (const auto& e : entries) EXPECT_TRUE(e.valid) << e.path << ": " << e.problem;
  runtime::KernelCache reader(disk);
  EXPECT_TRUE(reader.get(a, target_, "reader")->from_disk);
  EXPECT_TRUE(reader.get(b, target_, "reader")->from_disk);
}

TEST_F(KernelCacheTest, AnUnwritableDirectoryFallsBackToMemory) {
  fs::create_directories(dir_);
  const fs::path file = dir_ / "not-a-directory";
  std::ofstream(file) << "x";
  runtime::DiskCache disk(file.string(), 1 << 30);
  EXPECT_FALSE(disk.enabled());
  runtime::KernelCache cache(disk);
  auto k = cache.get(source(33), target_, "test");
  EXPECT_FALSE(k->cubin.empty());
  EXPECT_EQ(cache.get(source(33), target_, "test").get(), k.get());
}

}  // namespace
