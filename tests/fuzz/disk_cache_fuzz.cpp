// libFuzzer target: the disk cache entry decoder, runtime::DiskCache::decode, and the load
// path around it. The first input byte picks a mode, the rest is the entry (after the key and
// arch in modes 1 and 2):
//   0  decode(entry) for a fixed key and arch
//   1  decode(entry) for a key and arch taken from the input: [key_len][arch_len][key][arch]
//   2  as 1, with the entry's checksums first made right, so that what the checksums guard
//      (lengths, key, arch, trailing bytes) is fuzzed too rather than stopped at the hash
//   3  the entry written as a file of a DiskCache in a temporary directory, then load():
//      a hit gives the payload decode gives; anything else is a miss that removes the file
// In every mode decode never throws, never accepts what encode(key, arch, payload) would not
// have written byte for byte, and encode -> decode of the input as a payload round-trips.
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "llvm/Support/xxhash.h"
#include "runtime/disk_cache.h"
#include "scratch_dir.h"

using normjit::runtime::DiskCache;
namespace fs = std::filesystem;

namespace {

// A real key is 64 hex digits (SHA-256); an arch is "sm_90" and the like.
const std::string kKey = "7fe6d3f1178cbcbe355d2bd5a6c354d222a3bc9013be9615c7ffaad19355f6fb";
const std::string kArch = "sm_90";

// The entry layout of runtime/disk_cache.cpp, for mode 2 only; LLVMFuzzerInitialize checks
// that these still describe what encode writes, and stops with a message when they do not.
constexpr size_t kKeyLenAt = 12, kArchLenAt = 16, kPayloadLenAt = 20, kPayloadHashAt = 28;
constexpr size_t kHeaderHashAt = 36, kHeaderBytes = 44;

fs::path g_dir;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "disk_cache_fuzz: %s\n", what);
  std::abort();
}

uint64_t get_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}
void put_le(char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
uint64_t hash(const char* p, size_t n) { return llvm::xxHash64(llvm::StringRef(p, n)); }

// Recomputes the payload checksum (when the lengths are in bounds) and the header checksum.
void repair_checksums(std::vector<char>& e) {
  if (e.size() < kHeaderBytes) return;
  const uint64_t key = get_le(e.data() + kKeyLenAt, 4), arch = get_le(e.data() + kArchLenAt, 4);
  const uint64_t payload = get_le(e.data() + kPayloadLenAt, 8);
  const uint64_t body = e.size() - kHeaderBytes;
  if (key <= body && arch <= body - key && payload <= body - key - arch)
    put_le(e.data() + kPayloadHashAt, hash(e.data() + kHeaderBytes + key + arch, payload), 8);
  put_le(e.data() + kHeaderHashAt, hash(e.data(), kHeaderHashAt), 8);
}

void check_decode(const std::vector<char>& entry, const std::string& key, const std::string& arch) {
  std::vector<char> payload;
  std::string why;
  if (DiskCache::decode(entry, key, arch, payload, why)) {
    if (!why.empty()) fail("decode accepted an entry and gave a reason");
    if (payload.size() > entry.size()) fail("decode produced more bytes than it was given");
    if (DiskCache::encode(key, arch, payload) != entry) fail("decode accepted an entry encode would not write");
  } else if (why.empty()) {
    fail("decode rejected an entry without saying why");
  }
}

void check_round_trip(const char* p, size_t n, const std::string& key, const std::string& arch) {
  const std::vector<char> entry = DiskCache::encode(key, arch, llvm::ArrayRef<char>(p, n));
  std::vector<char> payload;
  std::string why;
  if (!DiskCache::decode(entry, key, arch, payload, why)) fail("decode(encode(payload)) failed");
  if (payload.size() != n || (n && std::memcmp(payload.data(), p, n) != 0)) fail("decode(encode(payload)) != payload");
}

void check_load(const std::vector<char>& entry) {
  DiskCache cache(g_dir.string(), uint64_t{1} << 30);
  if (!cache.enabled()) fail("the temporary cache directory is not usable");
  const std::string path = cache.path_for(kKey);
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(entry.data(), static_cast<std::streamsize>(entry.size()));
    if (!f) fail("cannot write the entry file");
  }
  std::vector<char> expected;
  std::string why;
  const bool valid = DiskCache::decode(entry, kKey, kArch, expected, why);
  const auto got = cache.load(kKey, kArch);
  const auto stats = cache.stats();
  if (valid) {
    if (!got || *got != expected || stats.hits != 1) fail("load missed an entry decode accepts");
  } else {
    if (got || stats.corrupt != 1) fail("load did not report a corrupt entry");
    if (fs::exists(path)) fail("load left a corrupt entry in place");
  }
  fs::remove(path);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The layout constants above against the real encoder.
  const std::vector<char> e = DiskCache::encode(kKey, kArch, llvm::ArrayRef<char>("payload", 7));
  std::vector<char> repaired = e;
  repaired[kHeaderHashAt] ^= 1;
  repaired[kPayloadHashAt] ^= 1;
  repair_checksums(repaired);
  if (e.size() != kHeaderBytes + kKey.size() + kArch.size() + 7 || get_le(e.data() + kKeyLenAt, 4) != kKey.size() ||
      get_le(e.data() + kArchLenAt, 4) != kArch.size() || get_le(e.data() + kPayloadLenAt, 8) != 7 || repaired != e) {
    std::fprintf(stderr,
                 "disk_cache_fuzz: the entry layout in tests/fuzz/disk_cache_fuzz.cpp no longer matches "
                 "runtime/disk_cache.cpp: update the constants there\n");
    std::abort();
  }
  g_dir = normjit_fuzz::make_scratch_dir("dc");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* p = reinterpret_cast<const char*>(data);
  const int mode = data[0] % 4;
  size_t at = 1;
  std::string key = kKey, arch = kArch;
  if (mode == 1 || mode == 2) {
    const size_t key_len = at < size ? data[at++] : 0;
    const size_t arch_len = at < size ? data[at++] : 0;
    key.assign(p + at, std::min(key_len, size - at));
    at += key.size();
    arch.assign(p + at, std::min(arch_len, size - at));
    at += arch.size();
  }
  std::vector<char> entry(p + at, p + size);
  if (mode == 2) repair_checksums(entry);

  check_decode(entry, key, arch);
  if (mode == 3) check_load(entry);
  check_round_trip(p + at, size - at, key, arch);
  return 0;
}
