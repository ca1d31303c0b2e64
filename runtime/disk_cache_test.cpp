#include "runtime/disk_cache.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <thread>

#include "llvm/Support/xxhash.h"

using normjit::runtime::DiskCache;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kNoCap = uint64_t{1} << 40;
constexpr size_t kHeaderBytes = 44;  // the layout documented in disk_cache.cpp
constexpr size_t kPayloadLenAt = 20, kHeaderHashAt = 36;

// A fresh directory per test, removed afterwards (read-only bits restored first).
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("normjit-dc-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

std::vector<char> payload_of(size_t size, unsigned seed) {
  std::vector<char> p(size);
  for (size_t i = 0; i < size; ++i) p[i] = static_cast<char>((i * 131 + seed * 7919) >> 3);
  return p;
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void put_le(std::vector<char>& bytes, size_t at, uint64_t v, int width) {
  for (int i = 0; i < width; ++i) bytes[at + i] = static_cast<char>(v >> (8 * i));
}

// Rewrites the header checksum, so a test can forge a header that passes it.
void reseal_header(std::vector<char>& bytes) {
  put_le(bytes, kHeaderHashAt, llvm::xxHash64(llvm::StringRef(bytes.data(), kHeaderHashAt)), 8);
}

void set_age(const std::string& path, std::chrono::seconds age) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - age);
}

const std::string kKey = "0123456789abcdef";
const std::string kArch = "sm_90";

// ---------------------------------------------------------------------------------------
// Round trips and misses

TEST(DiskCache, StoredPayloadLoadsBack) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ASSERT_TRUE(cache.enabled());
  const auto payload = payload_of(5000, 1);
  ASSERT_TRUE(cache.store(kKey, kArch, payload));
  EXPECT_TRUE(fs::exists(cache.path_for(kKey)));
  EXPECT_EQ(cache.path_for(kKey), (dir.path() / (kKey + ".njk")).string());
  const auto got = cache.load(kKey, kArch);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, payload);
  EXPECT_EQ(cache.stats().writes, 1u);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().corrupt, 0u);
}

TEST(DiskCache, AnEmptyPayloadRoundTrips) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ASSERT_TRUE(cache.store(kKey, kArch, {}));
  const auto got = cache.load(kKey, kArch);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->empty());
}

TEST(DiskCache, ASecondStoreReplacesTheEntry) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ASSERT_TRUE(cache.store(kKey, kArch, payload_of(100, 1)));
  ASSERT_TRUE(cache.store(kKey, kArch, payload_of(300, 2)));
  EXPECT_EQ(cache.load(kKey, kArch), payload_of(300, 2));
}

TEST(DiskCache, AnAbsentKeyIsAMiss) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  EXPECT_FALSE(cache.load(kKey, kArch).has_value());
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_EQ(cache.stats().corrupt, 0u);
}

TEST(DiskCache, AnEmptyDirectoryMeansMemoryOnly) {
  DiskCache cache("", kNoCap);
  EXPECT_FALSE(cache.enabled());
  EXPECT_FALSE(cache.store(kKey, kArch, payload_of(10, 1)));
  EXPECT_FALSE(cache.load(kKey, kArch).has_value());
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(cache.clear(), 0u);
}

TEST(DiskCache, TheDirectoryIsCreatedWithItsParents) {
  TempDir dir;
  const fs::path nested = dir.path() / "a" / "b" / "c";
  DiskCache cache(nested.string(), kNoCap);
  EXPECT_TRUE(cache.enabled());
  EXPECT_TRUE(fs::is_directory(nested));
}

TEST(DiskCache, KeysThatAreNotPlainNamesAreNeitherStoredNorLoaded) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  const std::string too_long(201, 'a');
  for (const std::string& key : {std::string(), std::string("../escape"), std::string("UPPER"), std::string("a/b"),
                                 std::string("with space"), std::string("dot.dot"), too_long}) {
    EXPECT_FALSE(cache.store(key, kArch, payload_of(10, 1))) << key;
    EXPECT_FALSE(cache.load(key, kArch).has_value()) << key;
  }
  EXPECT_TRUE(cache.enabled()) << "a bad key is the caller's bug, not a reason to stop caching";
  EXPECT_TRUE(fs::is_empty(dir.path()));
  EXPECT_FALSE(fs::exists(dir.path().parent_path() / "escape.njk"));
}

// ---------------------------------------------------------------------------------------
// Corrupt entries: detected, counted, removed, rebuilt

TEST(DiskCache, TruncatedEntryIsRebuilt) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  const auto payload = payload_of(4000, 3);
  ASSERT_TRUE(cache.store(kKey, kArch, payload));
  const std::string path = cache.path_for(kKey);
  fs::resize_file(path, fs::file_size(path) - 100);

  EXPECT_FALSE(cache.load(kKey, kArch).has_value());
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(fs::exists(path)) << "a corrupt entry must be removed";

  ASSERT_TRUE(cache.store(kKey, kArch, payload));
  EXPECT_EQ(cache.load(kKey, kArch), payload);
  EXPECT_EQ(cache.stats().corrupt, 1u);
}

TEST(DiskCache, FlippedPayloadBitIsDetected) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ASSERT_TRUE(cache.store(kKey, kArch, payload_of(4000, 4)));
  const std::string path = cache.path_for(kKey);
  auto bytes = read_bytes(path);
  bytes[bytes.size() - 1000] ^= 0x10;
  write_bytes(path, bytes);

  EXPECT_FALSE(cache.load(kKey, kArch).has_value());
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(fs::exists(path));
}

TEST(DiskCache, FlippedHeaderBitIsDetected) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ASSERT_TRUE(cache.store(kKey, kArch, payload_of(4000, 5)));
  const std::string path = cache.path_for(kKey);
  auto bytes = read_bytes(path);
  bytes[kPayloadLenAt] ^= 0x01;  // the payload length, one smaller: the rest would still parse
  write_bytes(path, bytes);

  std::vector<char> out;
  std::string why;
  EXPECT_FALSE(DiskCache::decode(bytes, kKey, kArch, out, why));
  EXPECT_EQ(why, "header checksum mismatch");
  EXPECT_FALSE(cache.load(kKey, kArch).has_value());
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(fs::exists(path));
}

TEST(DiskCache, OtherFormatVersionIsDetected) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  auto bytes = DiskCache::encode(kKey, kArch, payload_of(100, 6));
  put_le(bytes, 8, 7, 4);
  reseal_header(bytes);
  std::vector<char> out;
  std::string why;
  EXPECT_FALSE(DiskCache::decode(bytes, kKey, kArch, out, why));
  EXPECT_EQ(why, "format version 7, expected 1");

  write_bytes(cache.path_for(kKey), bytes);
  EXPECT_FALSE(cache.load(kKey, kArch).has_value());
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(fs::exists(cache.path_for(kKey)));
}

// The arch is part of the key: an entry of another arch under this key means the key
// scheme is broken, so it is treated as corrupt rather than as an ordinary miss.
TEST(DiskCache, AnEntryOfAnotherArchIsTreatedAsCorrupt) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ASSERT_TRUE(cache.store(kKey, "sm_80", payload_of(100, 7)));
  std::vector<char> out;
  std::string why;
  EXPECT_FALSE(DiskCache::decode(read_bytes(cache.path_for(kKey)), kKey, "sm_90", out, why));
  EXPECT_EQ(why, "arch mismatch (sm_80 entry, sm_90 wanted)");

  EXPECT_FALSE(cache.load(kKey, "sm_90").has_value());
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_FALSE(fs::exists(cache.path_for(kKey)));
}

TEST(DiskCache, AnEntryUnderAnotherKeysNameIsTreatedAsCorrupt) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  write_bytes(cache.path_for("bbbb"), DiskCache::encode("aaaa", kArch, payload_of(10, 8)));
  EXPECT_FALSE(cache.load("bbbb", kArch).has_value());
  EXPECT_EQ(cache.stats().corrupt, 1u);
}

TEST(DiskCache, ADirectoryInPlaceOfAnEntryIsAMissNotACrash) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  fs::create_directories(cache.path_for(kKey));
  EXPECT_FALSE(cache.load(kKey, kArch).has_value());
  EXPECT_EQ(cache.stats().corrupt, 1u);
}

// ---------------------------------------------------------------------------------------
// The encoding itself

TEST(DiskCacheEncoding, DecodeReportsWhatFailed) {
  const auto good = DiskCache::encode(kKey, kArch, payload_of(64, 9));
  std::vector<char> out;
  std::string why;
  ASSERT_TRUE(DiskCache::decode(good, kKey, kArch, out, why)) << why;
  EXPECT_EQ(out, payload_of(64, 9));

  auto bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_FALSE(DiskCache::decode(bad_magic, kKey, kArch, out, why));
  EXPECT_NE(why.find("bad magic"), std::string::npos) << why;

  EXPECT_FALSE(DiskCache::decode(good, "fedcba9876543210", kArch, out, why));
  EXPECT_EQ(why, "key mismatch");

  auto padded = good;
  padded.push_back('\0');
  EXPECT_FALSE(DiskCache::decode(padded, kKey, kArch, out, why));
  EXPECT_NE(why.find("trailing bytes"), std::string::npos) << why;
}

// Every prefix of a valid entry is rejected as truncated. Each prefix is copied into a
// buffer of exactly its size, so a read past the end is one a sanitizer build would catch.
TEST(DiskCacheEncoding, DecodeNeverReadsPastAnyTruncation) {
  const auto good = DiskCache::encode(kKey, kArch, payload_of(300, 10));
  for (size_t n = 0; n < good.size(); ++n) {
    std::unique_ptr<char[]> prefix(new char[n + 1]);
    std::memcpy(prefix.get(), good.data(), n);
    std::vector<char> out;
    std::string why;
    EXPECT_FALSE(DiskCache::decode(llvm::ArrayRef<char>(prefix.get(), n), kKey, kArch, out, why)) << n;
    EXPECT_NE(why.find("truncated"), std::string::npos) << n << ": " << why;
    EXPECT_TRUE(out.empty()) << n;
  }
}

// A header whose checksum vouches for absurd lengths must not make decode add them up
// (overflow) or allocate them.
TEST(DiskCacheEncoding, HugeLengthsInAValidHeaderAreRejected) {
  const auto good = DiskCache::encode(kKey, kArch, payload_of(50, 11));
  for (uint64_t payload_len : {~uint64_t{0}, ~uint64_t{0} - kKey.size(), uint64_t{1} << 62}) {
    auto bytes = good;
    put_le(bytes, kPayloadLenAt, payload_len, 8);
    reseal_header(bytes);
    std::vector<char> out;
    std::string why;
    EXPECT_FALSE(DiskCache::decode(bytes, kKey, kArch, out, why));
    EXPECT_NE(why.find("truncated"), std::string::npos) << why;
  }
  for (size_t length_at : {size_t{12}, size_t{16}}) {  // key and arch lengths
    auto bytes = good;
    put_le(bytes, length_at, 0xffffffffu, 4);
    reseal_header(bytes);
    std::vector<char> out;
    std::string why;
    EXPECT_FALSE(DiskCache::decode(bytes, kKey, kArch, out, why));
    EXPECT_NE(why.find("truncated"), std::string::npos) << why;
  }
}

TEST(DiskCacheEncoding, TheLayoutIsAsDocumented) {
  const auto bytes = DiskCache::encode("ab", "sm_80", {'x', 'y', 'z'});
  ASSERT_EQ(bytes.size(), kHeaderBytes + 2 + 5 + 3);
  EXPECT_EQ(std::string(bytes.data(), 8), "NJKCUBIN");
  EXPECT_EQ(bytes[8], 1);   // version, little-endian
  EXPECT_EQ(bytes[12], 2);  // key length
  EXPECT_EQ(bytes[16], 5);  // arch length
  EXPECT_EQ(bytes[20], 3);  // payload length
  EXPECT_EQ(std::string(bytes.data() + kHeaderBytes, 10), "absm_80xyz");
}

// ---------------------------------------------------------------------------------------
// Unusable directories: memory-only caching, one warning, no exceptions

TEST(DiskCache, ACacheDirThatIsARegularFileDisablesTheCache) {
  TempDir dir;
  const fs::path file = dir.path() / "not-a-directory";
  std::ofstream(file) << "x";
  std::unique_ptr<DiskCache> cache;
  ASSERT_NO_THROW(cache = std::make_unique<DiskCache>(file.string(), kNoCap));
  EXPECT_FALSE(cache->enabled());
  EXPECT_FALSE(cache->store(kKey, kArch, payload_of(10, 1)));
  EXPECT_FALSE(cache->load(kKey, kArch).has_value());
}

TEST(DiskCache, ACacheDirUnderARegularFileDisablesTheCache) {
  TempDir dir;
  const fs::path file = dir.path() / "file";
  std::ofstream(file) << "x";
  std::unique_ptr<DiskCache> cache;
  ASSERT_NO_THROW(cache = std::make_unique<DiskCache>((file / "cache").string(), kNoCap));
  EXPECT_FALSE(cache->enabled());
}

TEST(DiskCache, AReadOnlyDirectoryFallsBackToMemory) {
  TempDir dir;
  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                  fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  {
    const fs::path canary = dir.path() / "canary";
    if (std::ofstream(canary) << "x") {
      fs::remove(canary);
      GTEST_SKIP() << "this process can write in a 0555 directory (running as root?), so a read-only "
                      "directory cannot be simulated here; run the tests as an ordinary user";
    }
  }
  std::unique_ptr<DiskCache> cache;
  ASSERT_NO_THROW(cache = std::make_unique<DiskCache>(dir.str(), kNoCap));
  bool stored = true;
  ASSERT_NO_THROW(stored = cache->store(kKey, kArch, payload_of(10, 1)));
  EXPECT_TRUE(!cache->enabled() || !stored);
  EXPECT_FALSE(cache->enabled());
}

TEST(DiskCache, ADirectoryThatVanishesTurnsTheCacheOffOnStore) {
  TempDir dir;
  const fs::path cache_dir = dir.path() / "cache";
  DiskCache cache(cache_dir.string(), kNoCap);
  ASSERT_TRUE(cache.enabled());
  fs::remove_all(cache_dir);
  std::ofstream(cache_dir) << "now a file";
  bool stored = true;
  ASSERT_NO_THROW(stored = cache.store(kKey, kArch, payload_of(10, 1)));
  EXPECT_FALSE(stored);
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(cache.stats().write_failures, 1u);
}

// A full disk, simulated with a file size limit (which binds root too): the store fails
// cleanly, leaves no temp file behind and turns the cache off.
TEST(DiskCache, AFullDiskTurnsTheCacheOffAndLeavesNoTempFile) {
  TempDir dir;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing us
    rlimit limit{4096, 4096};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(10);
    DiskCache cache(dir.str(), kNoCap);
    if (!cache.enabled()) _exit(11);
    if (cache.store(kKey, kArch, payload_of(64 << 10, 1))) _exit(12);
    if (cache.enabled()) _exit(13);
    if (cache.stats().write_failures != 1) _exit(14);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died: status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the _exit codes in the child";
  EXPECT_TRUE(fs::is_empty(dir.path())) << "the temp file must be removed";
}

// ---------------------------------------------------------------------------------------
// Size cap

TEST(DiskCache, TheSizeCapEvictsTheLeastRecentlyUsed) {
  TempDir dir;
  const auto payload = payload_of(1000, 12);
  const uint64_t entry = DiskCache::encode("k0", kArch, payload).size();
  DiskCache cache(dir.str(), 3 * entry + entry / 2);  // room for three entries
  for (const char* key : {"k0", "k1", "k2"}) ASSERT_TRUE(cache.store(key, kArch, payload));
  // Explicit ages: file times written in one burst can be equal at coarse resolution.
  set_age(cache.path_for("k0"), std::chrono::seconds(300));
  set_age(cache.path_for("k1"), std::chrono::seconds(200));
  set_age(cache.path_for("k2"), std::chrono::seconds(100));
  ASSERT_TRUE(cache.load("k0", kArch).has_value());  // k0 is now the most recently used

  ASSERT_TRUE(cache.store("k3", kArch, payload));
  EXPECT_TRUE(fs::exists(cache.path_for("k0")));
  EXPECT_FALSE(fs::exists(cache.path_for("k1"))) << "the least recently used entry goes first";
  EXPECT_TRUE(fs::exists(cache.path_for("k2")));
  EXPECT_TRUE(fs::exists(cache.path_for("k3")));
}

TEST(DiskCache, StaleTempFilesAreSweptAndFreshOnesKept) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  const std::string stale = (dir.path() / (kKey + ".njk.tmp.123.abc")).string();
  const std::string fresh = (dir.path() / (kKey + ".njk.tmp.456.def")).string();
  write_bytes(stale, {'x'});
  write_bytes(fresh, {'y'});
  set_age(stale, std::chrono::hours(2));
  ASSERT_TRUE(cache.store("other", kArch, payload_of(10, 1)));
  EXPECT_FALSE(fs::exists(stale)) << "a temp file hours old was left by a writer that died";
  EXPECT_TRUE(fs::exists(fresh)) << "a fresh temp file may belong to a writer still at work";
}

// ---------------------------------------------------------------------------------------
// Crashed and concurrent writers

TEST(DiskCache, ALeftoverTempFileIsNeverLoaded) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  // What a writer killed before its rename leaves: a temp file, here with a valid entry's
  // bytes truncated, and no entry.
  auto bytes = DiskCache::encode(kKey, kArch, payload_of(1000, 13));
  bytes.resize(bytes.size() / 2);
  write_bytes((dir.path() / (kKey + ".njk.tmp.123.abc")).string(), bytes);
  EXPECT_FALSE(cache.load(kKey, kArch).has_value());
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_EQ(cache.stats().corrupt, 0u);
  EXPECT_TRUE(cache.list().empty()) << "list shows entries, not temp files";
}

// Payloads large enough that a write takes many system calls, so a reader racing a writer
// would see a partial file if stores were not atomic.
std::vector<char> shared_payload() { return payload_of(256 << 10, 100); }
std::vector<char> own_payload(int child) { return payload_of((64 << 10) + child, 200 + child); }
std::string own_key(int child) { return "child-" + std::to_string(child); }
const std::string kSharedKey = "shared";

// Exit status of a child: 0 when every load returned nothing or the exact payload.
int hammer(const std::string& dir, int child, int rounds) {
  DiskCache cache(dir, kNoCap);
  if (!cache.enabled()) return 3;
  const auto shared = shared_payload(), own = own_payload(child);
  for (int i = 0; i < rounds; ++i) {
    if (!cache.store(kSharedKey, kArch, shared)) return 4;
    if (auto got = cache.load(kSharedKey, kArch); got && *got != shared) return 5;
    if (!cache.store(own_key(child), kArch, own)) return 6;
    if (auto got = cache.load(own_key(child), kArch); got && *got != own) return 7;
    // Another child's key: absent, or that child's exact payload.
    const int other = (child + 1 + i) % 8;
    if (auto got = cache.load(own_key(other), kArch); got && *got != own_payload(other)) return 8;
  }
  return cache.stats().corrupt == 0 ? 0 : 9;  // a reader must never see a partial entry
}

TEST(DiskCache, ConcurrentProcessesNeverSeeAPartialEntry) {
  TempDir dir;
  constexpr int kChildren = 8;
  std::vector<pid_t> children;
  for (int child = 0; child < kChildren; ++child) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 2;
      try {
        code = hammer(dir.str(), child, 50);
      } catch (...) {
        code = 1;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child " << pid << " died: wait status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child " << pid << " failed (see the return codes of hammer)";
  }
  DiskCache cache(dir.str(), kNoCap);
  const auto entries = cache.list();
  EXPECT_EQ(entries.size(), kChildren + 1u);
  for (const auto& e : entries) EXPECT_TRUE(e.valid) << e.path << ": " << e.problem;
  EXPECT_EQ(cache.load(kSharedKey, kArch), shared_payload());
  for (const auto& p : fs::directory_iterator(dir.path()))
    EXPECT_EQ(p.path().extension(), ".njk") << "left behind: " << p.path();
}

TEST(DiskCache, ConcurrentThreadsShareOneCache) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  const auto shared = shared_payload();
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (!cache.store(kSharedKey, kArch, shared)) bad++;
        if (auto got = cache.load(kSharedKey, kArch); got && *got != shared) bad++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(cache.stats().corrupt, 0u);
  EXPECT_EQ(cache.stats().writes, 400u);
}

// ---------------------------------------------------------------------------------------
// Maintenance

TEST(DiskCache, ListVerifiesEveryEntry) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ASSERT_TRUE(cache.store("good", "sm_80", payload_of(123, 14)));
  ASSERT_TRUE(cache.store("flipped", "sm_90", payload_of(456, 15)));
  auto bytes = read_bytes(cache.path_for("flipped"));
  bytes.back() ^= 1;
  write_bytes(cache.path_for("flipped"), bytes);
  write_bytes(cache.path_for("garbage"), {'n', 'o', 'p', 'e'});
  write_bytes((dir.path() / "unrelated.txt").string(), {'x'});

  const auto entries = cache.list();
  ASSERT_EQ(entries.size(), 3u);  // sorted by key
  EXPECT_EQ(entries[0].key, "flipped");
  EXPECT_FALSE(entries[0].valid);
  EXPECT_EQ(entries[0].arch, "sm_90");
  EXPECT_EQ(entries[0].problem, "payload checksum mismatch");
  EXPECT_EQ(entries[1].key, "garbage");
  EXPECT_FALSE(entries[1].valid);
  EXPECT_NE(entries[1].problem.find("truncated"), std::string::npos) << entries[1].problem;
  EXPECT_EQ(entries[2].key, "good");
  EXPECT_TRUE(entries[2].valid) << entries[2].problem;
  EXPECT_EQ(entries[2].arch, "sm_80");
  EXPECT_EQ(entries[2].payload_bytes, 123u);
  EXPECT_EQ(entries[2].path, cache.path_for("good"));
  EXPECT_TRUE(fs::exists(cache.path_for("flipped"))) << "list only reports; load removes";
}

TEST(DiskCache, ClearRemovesEntriesAndTempFilesOnly) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  for (const char* key : {"a", "b", "c"}) ASSERT_TRUE(cache.store(key, kArch, payload_of(10, 1)));
  write_bytes((dir.path() / "a.njk.tmp.1.x").string(), {'x'});
  write_bytes((dir.path() / "keep.txt").string(), {'x'});
  EXPECT_EQ(cache.clear(), 3u);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_FALSE(fs::exists(dir.path() / "a.njk.tmp.1.x"));
  EXPECT_TRUE(fs::exists(dir.path() / "keep.txt"));
}


// ---------------------------------------------------------------------------------------
// Specifications by damage: every kind of damage to an entry file is detected by load,
// counted as corrupt, the file removed, and a later store+load of the same key works.

// Stores an entry, rewrites its file with `damage` applied, and checks the whole contract.
void expect_damage_detected(const std::function<void(std::vector<char>&)>& damage, const std::string& what) {
  SCOPED_TRACE(what);
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  const auto payload = payload_of(2000, 21);
  ASSERT_TRUE(cache.store(kKey, kArch, payload));
  const std::string path = cache.path_for(kKey);
  auto bytes = read_bytes(path);
  damage(bytes);
  write_bytes(path, bytes);

  std::vector<char> out;
  std::string why;
  EXPECT_FALSE(DiskCache::decode(bytes, kKey, kArch, out, why));
  EXPECT_FALSE(why.empty());
  std::optional<std::vector<char>> got;
  ASSERT_NO_THROW(got = cache.load(kKey, kArch));
  EXPECT_FALSE(got.has_value());
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_FALSE(fs::exists(path)) << "a corrupt entry must be removed";

  ASSERT_TRUE(cache.store(kKey, kArch, payload));
  EXPECT_EQ(cache.load(kKey, kArch), payload) << "the rebuilt entry must load";
  EXPECT_EQ(cache.stats().corrupt, 1u);
}

void flip(std::vector<char>& bytes, size_t at, int bit) { bytes.at(at) ^= static_cast<char>(1 << bit); }

TEST(DiskCache, StatsCountHitsMissesAndWrites) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  EXPECT_FALSE(cache.load("a", kArch).has_value());         // miss
  ASSERT_TRUE(cache.store("a", kArch, payload_of(10, 1)));  // write
  ASSERT_TRUE(cache.store("b", kArch, payload_of(20, 2)));  // write
  EXPECT_EQ(cache.load("a", kArch), payload_of(10, 1));     // hit
  EXPECT_EQ(cache.load("b", kArch), payload_of(20, 2));     // hit
  EXPECT_EQ(cache.load("a", kArch), payload_of(10, 1));     // hit
  EXPECT_FALSE(cache.load("c", kArch).has_value());         // miss
  const auto s = cache.stats();
  EXPECT_EQ(s.hits, 3u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.writes, 2u);
  EXPECT_EQ(s.corrupt, 0u);
  EXPECT_EQ(s.write_failures, 0u);
}

TEST(DiskCache, TruncatedEntryIsDetectedRemovedAndRebuiltAtEveryInterestingLength) {
  const size_t entry = DiskCache::encode(kKey, kArch, payload_of(2000, 21)).size();
  for (size_t keep : {size_t{0}, size_t{1}, size_t{8}, kHeaderBytes - 1, kHeaderBytes, kHeaderBytes + kKey.size(),
                      kHeaderBytes + kKey.size() + kArch.size(), entry / 2, entry - 1})
    expect_damage_detected([keep](std::vector<char>& b) { b.resize(keep); }, "kept " + std::to_string(keep));
}

TEST(DiskCache, AnEntryWithOneExtraTrailingByteIsDetectedRemovedAndRebuilt) {
  expect_damage_detected([](std::vector<char>& b) { b.push_back('\0'); }, "one extra byte");
}

TEST(DiskCache, FlippedPayloadBitsAreDetectedRemovedAndRebuilt) {
  const size_t payload_at = kHeaderBytes + kKey.size() + kArch.size();
  for (size_t offset : {size_t{0}, size_t{999}, size_t{1999}})
    for (int bit : {0, 7})
      expect_damage_detected([=](std::vector<char>& b) { flip(b, payload_at + offset, bit); },
                             "payload byte " + std::to_string(offset) + " bit " + std::to_string(bit));
}

TEST(DiskCache, FlippedHeaderLengthBitsAreDetectedRemovedAndRebuilt) {
  // key_len (u32 at 12), arch_len (u32 at 16), payload_len (u64 at 20): low, middle and top bits.
  const std::pair<size_t, int> fields[] = {{12, 32}, {16, 32}, {20, 64}};
  for (const auto& [at, width] : fields)
    for (int bit : {0, 3, 17, width - 1})
      expect_damage_detected([at = at, bit](std::vector<char>& b) { flip(b, at + bit / 8, bit % 8); },
                             "length field at " + std::to_string(at) + " bit " + std::to_string(bit));
}

TEST(DiskCache, FlippedChecksumBitsAreDetectedRemovedAndRebuilt) {
  for (size_t at : {size_t{28}, size_t{36}})  // payload hash, header hash
    for (int bit : {0, 63})
      expect_damage_detected([=](std::vector<char>& b) { flip(b, at + bit / 8, bit % 8); },
                             "checksum at " + std::to_string(at) + " bit " + std::to_string(bit));
}

TEST(DiskCache, FlippedKeyBitsAreDetectedRemovedAndRebuilt) {
  for (size_t i = 0; i < kKey.size(); ++i)
    for (int bit : {0, 5, 7})
      expect_damage_detected([=](std::vector<char>& b) { flip(b, kHeaderBytes + i, bit); },
                             "key byte " + std::to_string(i) + " bit " + std::to_string(bit));
}

TEST(DiskCache, FlippedArchBitsAreDetectedRemovedAndRebuilt) {
  for (size_t i = 0; i < kArch.size(); ++i)
    expect_damage_detected([=](std::vector<char>& b) { flip(b, kHeaderBytes + kKey.size() + i, 1); },
                           "arch byte " + std::to_string(i));
}

TEST(DiskCache, FlippedMagicBitsAreDetectedRemovedAndRebuilt) {
  for (size_t i = 0; i < 8; ++i)
    expect_damage_detected([=](std::vector<char>& b) { flip(b, i, 2); }, "magic byte " + std::to_string(i));
}

// Only the four version bytes are patched; the header checksum is left stale, so either the
// version check or the checksum may be what rejects it.
TEST(DiskCache, AnotherFormatVersionIsRejectedWithoutResealingTheHeader) {
  for (uint32_t version : {0u, DiskCache::kFormatVersion + 1, 0xffffffffu}) {
    expect_damage_detected([=](std::vector<char>& b) { put_le(b, 8, version, 4); },
                           "version " + std::to_string(version));
    auto bytes = DiskCache::encode(kKey, kArch, payload_of(100, 6));
    put_le(bytes, 8, version, 4);
    std::vector<char> out;
    std::string why;
    EXPECT_FALSE(DiskCache::decode(bytes, kKey, kArch, out, why));
    EXPECT_TRUE(why.find("version") != std::string::npos || why.find("checksum") != std::string::npos) << why;
  }
}

TEST(DiskCache, AnEntryStoredForSm80IsNotLoadedForSm90ButIsForSm80) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  const auto payload = payload_of(100, 7);
  ASSERT_TRUE(cache.store(kKey, "sm_80", payload));
  EXPECT_EQ(cache.load(kKey, "sm_80"), payload);
  EXPECT_FALSE(cache.load(kKey, "sm_90").has_value());
  EXPECT_FALSE(cache.load(kKey, "sm_80").has_value()) << "the mismatching entry was removed";
  ASSERT_TRUE(cache.store(kKey, "sm_90", payload));
  EXPECT_EQ(cache.load(kKey, "sm_90"), payload);
}

TEST(DiskCacheEncoding, DecodeRejectsEveryStrictPrefixOfEntriesOfSeveralShapes) {
  const std::pair<std::string, std::vector<char>> shapes[] = {
      {"a", {}}, {"k", {'x'}}, {std::string(200, 'z'), payload_of(77, 3)}};
  for (const auto& [key, payload] : shapes) {
    const auto good = DiskCache::encode(key, "sm_100a", payload);
    std::vector<char> out;
    std::string why;
    ASSERT_TRUE(DiskCache::decode(good, key, "sm_100a", out, why)) << why;
    EXPECT_EQ(out, payload);
    for (size_t n = 0; n < good.size(); ++n) {
      std::vector<char> prefix(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
      out.clear();
      EXPECT_FALSE(DiskCache::decode(prefix, key, "sm_100a", out, why)) << key.size() << "/" << n;
    }
    auto longer = good;
    longer.push_back('p');
    EXPECT_FALSE(DiskCache::decode(longer, key, "sm_100a", out, why));
  }
}

// ---------------------------------------------------------------------------------------
// Writers killed before their rename

// A writer killed between its write and its rename leaves a complete, valid entry under
// the temp name: still not an entry, neither for load nor for list.
TEST(DiskCache, ACompleteButUnrenamedTempFileIsNeverLoadedNorListed) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  const std::string tmp = (dir.path() / (kKey + ".njk.tmp.123.abc")).string();
  write_bytes(tmp, DiskCache::encode(kKey, kArch, payload_of(500, 31)));
  EXPECT_FALSE(cache.load(kKey, kArch).has_value());
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_TRUE(fs::exists(tmp)) << "a fresh temp file may belong to a live writer: load leaves it alone";

  // Next to a real entry, the entry is what loads and the only thing listed.
  ASSERT_TRUE(cache.store(kKey, kArch, payload_of(300, 32)));
  EXPECT_EQ(cache.load(kKey, kArch), payload_of(300, 32));
  const auto entries = cache.list();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].key, kKey);
  EXPECT_EQ(entries[0].path, cache.path_for(kKey));
  EXPECT_TRUE(entries[0].valid) << entries[0].problem;
}

// ---------------------------------------------------------------------------------------
// Read-only directories

bool can_create_file_in(const fs::path& dir) {
  const fs::path canary = dir / "canary";
  const int fd = ::open(canary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(canary.c_str());
  return true;
}

constexpr fs::perms kReadOnlyDir = fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                   fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec;

TEST(DiskCache, AReadOnlyDirectoryNeverThrowsAndStoresNothing) {
  TempDir dir;
  fs::permissions(dir.path(), kReadOnlyDir);
  if (can_create_file_in(dir.path())) GTEST_SKIP() << "running as root: permissions do not stop writes";
  std::unique_ptr<DiskCache> cache;
  ASSERT_NO_THROW(cache = std::make_unique<DiskCache>(dir.str(), kNoCap));
  bool stored = true;
  ASSERT_NO_THROW(stored = cache->store(kKey, kArch, payload_of(10, 1)));
  EXPECT_TRUE(!cache->enabled() || !stored);
  EXPECT_FALSE(cache->load(kKey, kArch).has_value());
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(DiskCache, ADirectoryMadeReadOnlyAfterConstructionFailsTheStoreAndTurnsTheCacheOff) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  ASSERT_TRUE(cache.enabled());
  ASSERT_TRUE(cache.store("before", kArch, payload_of(10, 1)));
  fs::permissions(dir.path(), kReadOnlyDir);
  if (can_create_file_in(dir.path())) GTEST_SKIP() << "running as root: permissions do not stop writes";
  bool stored = true;
  ASSERT_NO_THROW(stored = cache.store(kKey, kArch, payload_of(10, 2)));
  EXPECT_FALSE(stored);
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(cache.stats().write_failures, 1u);
  EXPECT_FALSE(cache.store(kKey, kArch, payload_of(10, 2))) << "stays off";
  EXPECT_FALSE(fs::exists(cache.path_for(kKey)));
}

// When the tests run as root, the two tests above cannot make permissions bite; these run
// the same scenarios in a child process that has given up root for "nobody" (65534).
// Exit codes: 0 passed, 77 cannot drop privileges here (skip), others name the failed check.
constexpr int kCannotDrop = 77;

template <typename Body>
int run_unprivileged(Body&& body) {
  const pid_t pid = fork();
  if (pid < 0) return 250;
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0 || getuid() == 0) _exit(kCannotDrop);
    int code = 251;
    try {
      code = body();
    } catch (...) {
      code = 252;
    }
    _exit(code);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 253;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 254;
}

TEST(DiskCache, AReadOnlyDirectoryDisablesTheCacheForAnUnprivilegedUser) {
  if (geteuid() != 0) GTEST_SKIP() << "covered by AReadOnlyDirectoryNeverThrowsAndStoresNothing";
  TempDir dir;
  ASSERT_EQ(::chown(dir.str().c_str(), 65534, 65534), 0);
  fs::permissions(dir.path(), kReadOnlyDir);
  const int code = run_unprivileged([&]() -> int {
    if (::access(dir.str().c_str(), R_OK | X_OK) != 0) return kCannotDrop;  // TMPDIR not reachable
    if (can_create_file_in(dir.path())) return kCannotDrop;                 // modes are ignored here
    DiskCache cache(dir.str(), kNoCap);
    if (cache.enabled()) return 1;
    if (cache.store(kKey, kArch, payload_of(10, 1))) return 2;
    if (cache.load(kKey, kArch).has_value()) return 3;
    return 0;
  });
  if (code == kCannotDrop) GTEST_SKIP() << "cannot drop root privileges here";
  EXPECT_EQ(code, 0) << "see the return codes in the child";
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(DiskCache, ADirectoryMadeReadOnlyAfterConstructionTurnsTheCacheOffForAnUnprivilegedUser) {
  if (geteuid() != 0) GTEST_SKIP() << "covered by ADirectoryMadeReadOnlyAfterConstruction...";
  TempDir dir;
  ASSERT_EQ(::chown(dir.str().c_str(), 65534, 65534), 0);
  const int code = run_unprivileged([&]() -> int {
    if (!can_create_file_in(dir.path())) return kCannotDrop;  // TMPDIR not reachable by nobody
    DiskCache cache(dir.str(), kNoCap);
    if (!cache.enabled()) return 1;
    if (!cache.store("before", kArch, payload_of(10, 1))) return 2;
    fs::permissions(dir.path(), kReadOnlyDir);
    if (can_create_file_in(dir.path())) return kCannotDrop;
    bool stored = true;
    try {
      stored = cache.store(kKey, kArch, payload_of(10, 2));
    } catch (...) {
      return 3;
    }
    if (stored) return 4;
    if (cache.enabled()) return 5;
    if (cache.stats().write_failures != 1) return 6;
    if (cache.load("before", kArch).has_value()) return 7;  // off: memory-only from now on
    if (fs::exists(cache.path_for(kKey))) return 8;
    return 0;
  });
  if (code == kCannotDrop) GTEST_SKIP() << "cannot drop root privileges here";
  EXPECT_EQ(code, 0) << "see the return codes in the child";
  for (const auto& p : fs::directory_iterator(dir.path()))
    EXPECT_EQ(p.path().filename(), "before.njk") << "left behind: " << p.path();
}

// Permission denied on an entry says nothing about its bytes: it may be a good entry of another
// user sharing the directory. It is a miss, counted as unreadable, and the file stays.
TEST(DiskCache, AnEntryThatCannotBeOpenedForPermissionIsAMissAndIsLeftInPlace) {
  TempDir dir;
  {
    DiskCache writer(dir.str(), kNoCap);
    ASSERT_TRUE(writer.store(kKey, kArch, payload_of(100, 3)));
  }
  const std::string entry = (dir.path() / (kKey + ".njk")).string();
  const std::vector<char> before = read_bytes(entry);
  struct stat st_before;
  ASSERT_EQ(::stat(entry.c_str(), &st_before), 0);
  fs::permissions(entry, fs::perms::none);  // owner (root when tests run as root): no access
  auto body = [&]() -> int {
    const int fd = ::open(entry.c_str(), O_RDONLY);
    if (fd >= 0 || errno != EACCES) {
      if (fd >= 0) ::close(fd);
      return kCannotDrop;  // permissions do not bite here
    }
    DiskCache cache(dir.str(), kNoCap);
    if (!cache.enabled()) return 1;
    if (cache.load(kKey, kArch).has_value()) return 2;
    const auto stats = cache.stats();
    if (stats.misses != 1) return 3;
    if (stats.unreadable != 1) return 4;
    if (stats.corrupt != 0) return 5;  // the bug: EACCES was counted as corrupt and the file removed
    struct stat st_after;
    if (::stat(entry.c_str(), &st_after) != 0) return 6;
    if (st_after.st_ino != st_before.st_ino) return 7;
    return 0;
  };
  int code = 0;
  if (geteuid() == 0) {
    // Root opens anything: give the directory to "nobody", keep the entry root's, drop root.
    ASSERT_EQ(::chown(dir.str().c_str(), 65534, 65534), 0);
    code = run_unprivileged(body);
  } else {
    code = body();
  }
  if (code == kCannotDrop) GTEST_SKIP() << "cannot make opening a file fail with EACCES here";
  EXPECT_EQ(code, 0) << "see the return codes in the body";
  fs::permissions(entry, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(read_bytes(entry), before) << "the unreadable entry must be left exactly as it was";
  std::vector<char> payload;
  std::string why;
  EXPECT_TRUE(DiskCache::decode(read_bytes(entry), kKey, kArch, payload, why)) << why;
}

// ---------------------------------------------------------------------------------------
// Size cap, keys, clear

TEST(DiskCache, TheSizeCapKeepsTheNewestEntriesAndEvictsTheOldest) {
  TempDir dir;
  const auto payload = payload_of(1000, 41);
  const uint64_t entry = DiskCache::encode("k0", kArch, payload).size();
  DiskCache cache(dir.str(), 2 * entry + entry / 2);  // room for two entries
  const auto base = fs::file_time_type::clock::now() - std::chrono::hours(1);
  const char* keys[] = {"k0", "k1", "k2", "k3", "k4"};
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(cache.store(keys[i], kArch, payload)) << keys[i];
    // Oldest first, a minute apart: deterministic whatever the file time resolution.
    fs::last_write_time(cache.path_for(keys[i]), base + std::chrono::minutes(i));
  }
  EXPECT_FALSE(fs::exists(cache.path_for("k0")));
  EXPECT_FALSE(fs::exists(cache.path_for("k1")));
  EXPECT_FALSE(fs::exists(cache.path_for("k2")));
  EXPECT_EQ(cache.load("k3", kArch), payload);
  EXPECT_EQ(cache.load("k4", kArch), payload);
  const auto entries = cache.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].key, "k3");
  EXPECT_EQ(entries[1].key, "k4");
  uint64_t total = 0;
  for (const auto& p : fs::directory_iterator(dir.path())) total += fs::file_size(p.path());
  EXPECT_LE(total, 2 * entry + entry / 2);
}

TEST(DiskCache, KeysOutsideTheAllowedCharactersAreRefusedAndCreateNoFileAnywhere) {
  TempDir dir;
  const fs::path cache_dir = dir.path() / "cache";
  DiskCache cache(cache_dir.string(), kNoCap);
  ASSERT_TRUE(cache.enabled());
  for (const std::string key : {"../evil", "A", "a.b", "a/b", "..", ".", "a\\b", "k\xc3\xa9", "a\nb", "a b"}) {
    EXPECT_FALSE(cache.store(key, kArch, payload_of(10, 1))) << key;
    EXPECT_FALSE(cache.load(key, kArch).has_value()) << key;
  }
  EXPECT_TRUE(cache.enabled());
  EXPECT_EQ(cache.stats().writes, 0u);
  EXPECT_EQ(cache.stats().corrupt, 0u);
  EXPECT_TRUE(fs::is_empty(cache_dir));
  // Nothing beside the cache directory either: "../evil" would have been dir/evil.njk.
  for (const auto& p : fs::directory_iterator(dir.path())) EXPECT_EQ(p.path(), cache_dir) << p.path();
}

TEST(DiskCache, ClearRemovesEveryEntryReturnsTheCountAndTheCacheStaysUsable) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  EXPECT_EQ(cache.clear(), 0u);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(cache.store("e" + std::to_string(i), kArch, payload_of(100, i)));
  ASSERT_EQ(cache.list().size(), 5u);
  EXPECT_EQ(cache.clear(), 5u);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_FALSE(cache.load("e0", kArch).has_value());
  EXPECT_EQ(cache.clear(), 0u);
  ASSERT_TRUE(cache.store("e0", kArch, payload_of(100, 0)));
  EXPECT_EQ(cache.load("e0", kArch), payload_of(100, 0));
}

// Threads of one process, each with its own key as well as the shared one.
TEST(DiskCache, EightThreadsStoringAndLoadingTheSameKeySeeNoFailure) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  const auto shared = payload_of(32 << 10, 51);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::string own_key = "thread-" + std::to_string(t);
      const auto own = payload_of(1000 + t, 60 + t);
      for (int i = 0; i < 50; ++i) {
        if (!cache.store("same", kArch, shared)) failures++;
        const auto got = cache.load("same", kArch);
        if (!got || *got != shared) failures++;  // stores never remove it: it must be there
        if (!cache.store(own_key, kArch, own)) failures++;
        if (cache.load(own_key, kArch) != own) failures++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(cache.enabled());
  const auto s = cache.stats();
  EXPECT_EQ(s.corrupt, 0u);
  EXPECT_EQ(s.write_failures, 0u);
  EXPECT_EQ(s.writes, 800u);
  EXPECT_EQ(s.hits, 800u);
  const auto entries = cache.list();
  EXPECT_EQ(entries.size(), 9u);
  for (const auto& e : entries) EXPECT_TRUE(e.valid) << e.path << ": " << e.problem;
}

// ---------------------------------------------------------------------------------------
// Odd files where an entry should be

TEST(DiskCache, TheLongestAllowedKeyRoundTripsAndOneLongerIsRefused) {
  TempDir dir;
  DiskCache cache(dir.str(), kNoCap);
  const std::string longest(200, 'k');
  ASSERT_TRUE(cache.store(longest, kArch, payload_of(100, 71)));
  EXPECT_EQ(cache.load(longest, kArch), payload_of(100, 71));
  EXPECT_FALSE(cache.store(longest + "k", kArch, payload_of(100, 71)));
  EXPECT_TRUE(cache.enabled());
}

// A FIFO at <key>.njk once made load() and list() block forever in open(); entries are now
// opened non-blocking. The child's alarm keeps a regression from hanging the suite.
TEST(DiskCache, AFifoInPlaceOfAnEntryIsAMissNotAHang) {
  TempDir dir;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(5);
    DiskCache cache(dir.str(), kNoCap);
    if (mkfifo(cache.path_for(kKey).c_str(), 0644) != 0) _exit(10);
    for (const auto& e : cache.list())
      if (e.valid) _exit(11);
    if (cache.load(kKey, kArch).has_value()) _exit(12);
    if (cache.stats().corrupt != 1) _exit(13);
    if (!cache.store(kKey, kArch, payload_of(10, 1))) _exit(14);
    if (cache.load(kKey, kArch) != payload_of(10, 1)) _exit(15);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_FALSE(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) << "load or list hung on a FIFO";
  ASSERT_TRUE(WIFEXITED(status)) << "child died: status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the _exit codes in the child";
}

// A symlink in place of an entry is not one we wrote: entries are opened with O_NOFOLLOW, so it
// is corrupt, and unlinking it removes the link, never its target.
TEST(DiskCache, ASymlinkToGarbageInPlaceOfAnEntryIsRemovedButNotItsTarget) {
  TempDir dir;
  const fs::path cache_dir = dir.path() / "cache";
  DiskCache cache(cache_dir.string(), kNoCap);
  const fs::path target = dir.path() / "garbage";
  write_bytes(target.string(), {'n', 'o', 'p', 'e'});
  fs::create_symlink(target, cache.path_for(kKey));
  EXPECT_FALSE(cache.load(kKey, kArch).has_value());
  EXPECT_EQ(cache.stats().corrupt, 1u);
  EXPECT_TRUE(fs::exists(target)) << "only the link in the cache directory may go";
  EXPECT_FALSE(fs::exists(fs::symlink_status(cache.path_for(kKey)))) << "the corrupt entry must be removed";
  ASSERT_TRUE(cache.store(kKey, kArch, payload_of(10, 1)));
  EXPECT_EQ(cache.load(kKey, kArch), payload_of(10, 1));
  EXPECT_EQ(read_bytes(target.string()), std::vector<char>({'n', 'o', 'p', 'e'}));
}

}  // namespace
