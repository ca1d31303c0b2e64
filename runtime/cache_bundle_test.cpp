// Cache bundles: what export writes, import reads back unchanged; any damage to the file is
// found before anything is installed; entries this machine could never look up (another NVRTC
// or normjit version, an arch its NVRTC cannot target) are skipped and counted.
#include "runtime/cache_bundle.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "normjit/normjit.hpp"
#include "runtime/kernel_cache.h"

using namespace normjit::runtime;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kNoCap = uint64_t{1} << 40;

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / ("normjit-bundle-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

// A payload as the kernel cache stores it: a compile log, then an ELF cubin.
std::vector<char> kernel_payload(const std::string& tag) {
  CompiledKernel k;
  k.log = "ptxas info    : Used 32 registers (" + tag + ")";
  const std::string cubin = "\x7f" "ELF fake cubin " + tag;
  k.cubin.assign(cubin.begin(), cubin.end());
  return KernelCache::pack(k);
}

std::string key_of(char c) { return std::string(64, c); }

Bundle sample_bundle(const std::string& nvrtc = "13.0") {
  Bundle b;
  b.nvrtc_version = nvrtc;
  b.normjit_version = normjit::version_string();
  b.entries.push_back({key_of('a'), "sm_90", kernel_payload("a")});
  b.entries.push_back({key_of('b'), "sm_80", kernel_payload("b")});
  b.entries.push_back({key_of('c'), "sm_90", kernel_payload("c")});
  return b;
}

ImportTarget here(const std::string& nvrtc = "13.0") {
  ImportTarget t;
  t.nvrtc_version = nvrtc;
  t.archs = {75, 80, 86, 89, 90, 100};
  t.normjit_version = normjit::version_string();
  return t;
}

TEST(CacheBundle, DecodeGivesBackWhatEncodeWrote) {
  const Bundle in = sample_bundle();
  Bundle out;
  std::string why;
  ASSERT_TRUE(decode_bundle(encode_bundle(in), out, why)) << why;
  EXPECT_EQ(out.nvrtc_version, "13.0");
  EXPECT_EQ(out.normjit_version, normjit::version_string());
  ASSERT_EQ(out.entries.size(), in.entries.size());
  for (size_t i = 0; i < in.entries.size(); ++i) {
    EXPECT_EQ(out.entries[i].key, in.entries[i].key);
    EXPECT_EQ(out.entries[i].arch, in.entries[i].arch);
    EXPECT_EQ(out.entries[i].payload, in.entries[i].payload);
  }
}

TEST(CacheBundle, AnEmptyBundleRoundTrips) {
  Bundle in;
  in.nvrtc_version = "13.0";
  in.normjit_version = "0.1.0";
  Bundle out;
  std::string why;
  ASSERT_TRUE(decode_bundle(encode_bundle(in), out, why)) << why;
  EXPECT_TRUE(out.entries.empty());
}

TEST(CacheBundle, StartsWithTheMagicAndFormatVersion) {
  const std::vector<char> bytes = encode_bundle(sample_bundle());
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(std::string(bytes.data(), 8), "NJBUNDLE");
  EXPECT_EQ(bytes[8], static_cast<char>(Bundle::kFormatVersion));
}

TEST(CacheBundle, EveryFlippedByteIsRejected) {
  const std::vector<char> good = encode_bundle(sample_bundle());
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<char> bad = good;
    bad[i] ^= 0x01;
    Bundle out;
    std::string why;
    EXPECT_FALSE(decode_bundle(bad, out, why)) << "byte " << i;
    EXPECT_FALSE(why.empty()) << "byte " << i;
    EXPECT_TRUE(out.entries.empty()) << "byte " << i;
  }
}

TEST(CacheBundle, EveryTruncationIsRejected) {
  const std::vector<char> good = encode_bundle(sample_bundle());
  for (size_t size = 0; size < good.size(); ++size) {
    Bundle out;
    std::string why;
    EXPECT_FALSE(decode_bundle(llvm::ArrayRef<char>(good.data(), size), out, why)) << size << " bytes";
  }
}

TEST(CacheBundle, AFileThatIsNotABundleIsNamedAsSuch) {
  const std::string text = "this is a text file, long enough to hold a header and a hash........";
  Bundle out;
  std::string why;
  EXPECT_FALSE(decode_bundle(llvm::ArrayRef<char>(text.data(), text.size()), out, why));
  EXPECT_NE(why.find("not a normjit cache bundle"), std::string::npos) << why;
}

TEST(CacheBundle, ANewerFormatVersionIsReportedAsSuchNotAsCorruption) {
  std::vector<char> bytes = encode_bundle(sample_bundle());
  bytes[8] = 2;
  Bundle out;
  std::string why;
  EXPECT_FALSE(decode_bundle(bytes, out, why));
  EXPECT_NE(why.find("format version 2"), std::string::npos) << why;
}

TEST(CacheBundle, AKeyThatCouldNameAFileOutsideTheCacheIsRejected) {
  Bundle b = sample_bundle();
  b.entries[1].key = "../../etc/evil";
  Bundle out;
  std::string why;
  EXPECT_FALSE(decode_bundle(encode_bundle(b), out, why));
  EXPECT_NE(why.find("entry 2 of 3"), std::string::npos) << why;
}

TEST(CacheBundle, ImportInstallsEveryEntryThroughTheDiskCache) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  const Bundle b = sample_bundle();
  const ImportReport r = import_bundle(cache, b, here());
  EXPECT_EQ(r.installed, 3u);
  EXPECT_EQ(r.skipped(), 0u);
  for (const BundleEntry& e : b.entries) {
    const auto payload = cache.load(e.key, e.arch);
    ASSERT_TRUE(payload) << e.key;
    EXPECT_EQ(*payload, e.payload);
  }
}

TEST(CacheBundle, ImportCountsEntriesAlreadyPresent) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  import_bundle(cache, sample_bundle(), here());
  const ImportReport again = import_bundle(cache, sample_bundle(), here());
  EXPECT_EQ(again.installed, 0u);
  EXPECT_EQ(again.already_present, 3u);
}

TEST(CacheBundle, ImportSkipsEntriesForAnotherNvrtcVersionWithACount) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  Bundle decoded;
  std::string why;
  ASSERT_TRUE(decode_bundle(encode_bundle(sample_bundle("12.8")), decoded, why)) << why;
  const ImportReport r = import_bundle(cache, decoded, here("13.0"));
  EXPECT_EQ(r.installed, 0u);
  EXPECT_EQ(r.skipped_nvrtc, 3u);
  EXPECT_EQ(r.skipped(), 3u);
  EXPECT_TRUE(cache.list().empty());
}

TEST(CacheBundle, ImportSkipsEntriesForAnotherNormjitVersion) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  Bundle b = sample_bundle();
  b.normjit_version = "0.0.1";
  const ImportReport r = import_bundle(cache, b, here());
  EXPECT_EQ(r.skipped_normjit, 3u);
  EXPECT_EQ(r.installed, 0u);
}

TEST(CacheBundle, ImportSkipsArchsThisNvrtcCannotTargetAndCountsThemByArch) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ImportTarget target = here();
  target.archs = {90};
  const ImportReport r = import_bundle(cache, sample_bundle(), target);
  EXPECT_EQ(r.installed, 2u);
  ASSERT_EQ(r.skipped_arch.count("sm_80"), 1u);
  EXPECT_EQ(r.skipped_arch.at("sm_80"), 1u);
}

TEST(CacheBundle, WithoutNvrtcHereImportCannotJudgeAndInstallsEveryEntry) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ImportTarget unknown;
  unknown.normjit_version = normjit::version_string();
  const ImportReport r = import_bundle(cache, sample_bundle("12.8"), unknown);
  EXPECT_EQ(r.installed, 3u);
}

TEST(CacheBundle, CollectTakesEveryValidEntryAndLeavesOutTheInvalidOnes) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ASSERT_TRUE(cache.store(key_of('a'), "sm_90", kernel_payload("a")));
  ASSERT_TRUE(cache.store(key_of('b'), "sm_90", kernel_payload("b")));
  ASSERT_TRUE(cache.store(key_of('c'), "sm_90", std::vector<char>{'n', 'o', 't', ' ', 'a', ' ', 'k'}));
  {  // flip the last payload byte of b
    std::fstream f(cache.path_for(key_of('b')), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-1, std::ios::end);
    const char c = static_cast<char>(f.get());
    f.seekp(-1, std::ios::end);
    f.put(static_cast<char>(c ^ 0x40));
  }
  std::vector<DiskCacheEntryInfo> invalid;
  const Bundle b = collect_bundle(cache, "13.0", &invalid);
  ASSERT_EQ(b.entries.size(), 1u);
  EXPECT_EQ(b.entries[0].key, key_of('a'));
  EXPECT_EQ(b.entries[0].payload, kernel_payload("a"));
  EXPECT_EQ(b.nvrtc_version, "13.0");
  ASSERT_EQ(invalid.size(), 2u);
  EXPECT_EQ(invalid[0].key, key_of('b'));
  EXPECT_NE(invalid[0].problem.find("checksum"), std::string::npos) << invalid[0].problem;
  EXPECT_EQ(invalid[1].key, key_of('c'));
  EXPECT_NE(invalid[1].problem.find("payload"), std::string::npos) << invalid[1].problem;
}

TEST(CacheBundle, VerifyRejectsAPayloadWhoseCubinIsNotElf) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  CompiledKernel k;
  k.log = "log";
  k.cubin = {'n', 'o', 't', 'e', 'l', 'f'};
  ASSERT_TRUE(cache.store(key_of('d'), "sm_90", KernelCache::pack(k)));
  const auto entries = cache.list();
  ASSERT_EQ(entries.size(), 1u);
  std::vector<char> payload;
  std::string why;
  EXPECT_FALSE(verify_cache_entry(entries[0], payload, why));
  EXPECT_NE(why.find("ELF"), std::string::npos) << why;
}

TEST(CacheBundle, ABundleFileRoundTripsThroughTheDisk) {
  TempDir dir;
  const std::string path = (dir / "fleet.njbundle").string();
  const std::vector<char> bytes = encode_bundle(sample_bundle());
  write_bundle_file(path, bytes);
  EXPECT_EQ(read_bundle_file(path), bytes);
  for (const auto& e : fs::directory_iterator(dir.str()))
    EXPECT_EQ(e.path().filename(), "fleet.njbundle") << "no temporary file left behind";
}

TEST(CacheBundle, ReadingAMissingBundleNamesThePath) {
  try {
    read_bundle_file("/nonexistent/fleet.njbundle");
    FAIL() << "no error";
  } catch (const normjit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/fleet.njbundle"), std::string::npos) << e.what();
  }
}

}  // namespace
