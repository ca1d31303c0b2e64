#include "runtime/disk_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "llvm/Support/xxhash.h"
#include "runtime/log.h"

namespace normjit::runtime {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'N', 'J', 'K', 'C', 'U', 'B', 'I', 'N'};
// magic, version, key length, arch length, payload length, payload hash, header hash
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 4 + 8 + 8 + 8;
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;
constexpr const char* kSuffix = ".njk";

void put32(std::vector<char>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put64(std::vector<char>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t get(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}
uint64_t hash(llvm::ArrayRef<char> bytes) {
  return llvm::xxHash64(llvm::StringRef(bytes.data(), bytes.size()));
}

bool valid_key(llvm::StringRef key) {
  if (key.empty() || key.size() > 200) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '-';
  });
}

bool read_file(const std::string& path, std::vector<char>& out, std::string& why) {
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) {
    why = ec.message();
    return false;
  }
  if (size > kMaxEntryBytes) {
    why = "larger than 1 GiB";
    return false;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    why = "cannot open";
    return false;
  }
  out.resize(size);
  f.read(out.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(f.gcount()) != size) {
    why = "short read";
    return false;
  }
  return true;
}

std::string unique_suffix() {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^
                                          static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return std::to_string(getpid()) + "." + buf;
}

}  // namespace

DiskCache::DiskCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (!fs::is_directory(dir_, ec)) {
    disable(ec ? ec.message() : "it exists and is not a directory");
    return;
  }
  // Writable? Create and remove a probe, as a store would.
  const std::string probe = (fs::path(dir_) / (".probe." + unique_suffix())).string();
  std::ofstream f(probe, std::ios::binary);
  const bool ok = static_cast<bool>(f << 'x') && (f.close(), !f.fail());
  fs::remove(probe, ec);
  if (!ok) {
    disable(std::strerror(errno));
    return;
  }
  enabled_ = true;
}

void DiskCache::disable(const std::string& why) {
  enabled_ = false;
  warn_once("disk-cache:" + dir_, "the kernel cache directory " + dir_ + " cannot be used (" + why +
                                      "): using memory-only caching; set NORMJIT_CACHE_DIR or cache.dir to a "
                                      "writable directory.");
}

std::string DiskCache::path_for(llvm::StringRef key) const {
  return (fs::path(dir_) / (key.str() + kSuffix)).string();
}

std::vector<char> DiskCache::encode(llvm::StringRef key, llvm::StringRef arch, llvm::ArrayRef<char> payload) {
  std::vector<char> out(kMagic, kMagic + 8);
  put32(out, kFormatVersion);
  put32(out, static_cast<uint32_t>(key.size()));
  put32(out, static_cast<uint32_t>(arch.size()));
  put64(out, payload.size());
  put64(out, hash(payload));
  put64(out, hash(llvm::ArrayRef<char>(out.data(), out.size())));
  out.insert(out.end(), key.begin(), key.end());
  out.insert(out.end(), arch.begin(), arch.end());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

bool DiskCache::decode(llvm::ArrayRef<char> bytes, llvm::StringRef key, llvm::StringRef arch,
                       std::vector<char>& payload, std::string& why) {
  if (bytes.size() < kHeaderBytes) {
    why = "truncated (" + std::to_string(bytes.size()) + " bytes, header is " + std::to_string(kHeaderBytes) + ")";
    return false;
  }
  const char* p = bytes.data();
  if (std::memcmp(p, kMagic, 8) != 0) {
    why = "bad magic";
    return false;
  }
  if (hash(llvm::ArrayRef<char>(p, kHeaderBytes - 8)) != get(p + kHeaderBytes - 8, 8)) {
    why = "header checksum mismatch";
    return false;
  }
  const uint32_t version = static_cast<uint32_t>(get(p + 8, 4));
  if (version != kFormatVersion) {
    why = "format version " + std::to_string(version) + ", expected " + std::to_string(kFormatVersion);
    return false;
  }
  const uint64_t key_size = get(p + 12, 4), arch_size = get(p + 16, 4), payload_size = get(p + 20, 8);
  const uint64_t payload_hash = get(p + 28, 8);
  const uint64_t body = bytes.size() - kHeaderBytes;
  if (key_size > body || arch_size > body - key_size || payload_size != body - key_size - arch_size) {
    why = "truncated or padded (lengths do not add up to the file size)";
    return false;
  }
  const llvm::StringRef stored_key(p + kHeaderBytes, key_size);
  const llvm::StringRef stored_arch(p + kHeaderBytes + key_size, arch_size);
  if (stored_key != key) {
    why = "key mismatch";
    return false;
  }
  if (stored_arch != arch) {
    why = "arch mismatch (" + stored_arch.str() + " entry, " + arch.str() + " wanted)";
    return false;
  }
  const llvm::ArrayRef<char> stored_payload(p + kHeaderBytes + key_size + arch_size, payload_size);
  if (hash(stored_payload) != payload_hash) {
    why = "payload checksum mismatch";
    return false;
  }
  payload.assign(stored_payload.begin(), stored_payload.end());
  return true;
}

std::optional<std::vector<char>> DiskCache::load(llvm::StringRef key, llvm::StringRef arch) {
  if (!enabled() || !valid_key(key)) return std::nullopt;
  const std::string path = path_for(key);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    misses_++;
    return std::nullopt;
  }
  std::vector<char> bytes, payload;
  std::string why;
  if (!read_file(path, bytes, why) || !decode(bytes, key, arch, payload, why)) {
    corrupt_++;
    misses_++;
    fs::remove(path, ec);
    log(LogLevel::Info, "removed the corrupt cache entry " + path + " (" + why + "); it will be rebuilt");
    return std::nullopt;
  }
  hits_++;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // least recently used goes first
  return payload;
}

bool DiskCache::store(llvm::StringRef key, llvm::StringRef arch, llvm::ArrayRef<char> payload) {
  if (!enabled() || !valid_key(key)) return false;
  const std::string path = path_for(key);
  const std::string tmp = path + ".tmp." + unique_suffix();
  const std::vector<char> bytes = encode(key, arch, payload);
  std::error_code ec;
  bool ok;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    ok = static_cast<bool>(f.write(bytes.data(), static_cast<std::streamsize>(bytes.size())));
    f.close();
    ok = ok && !f.fail();
  }
  // rename() replaces atomically: a reader sees the old entry, the new one, or none.
  if (ok) ok = std::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    const std::string why = std::strerror(errno);
    fs::remove(tmp, ec);
    write_failures_++;
    disable("writing " + path + " failed: " + why);
    return false;
  }
  writes_++;
  enforce_cap();
  return true;
}

void DiskCache::enforce_cap() {
  std::error_code ec;
  struct Entry {
    fs::path path;
    uint64_t size;
    fs::file_time_type time;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    const auto time = fs::last_write_time(p, ec);
    if (ec) continue;
    if (name.find(".tmp.") != std::string::npos) {  // left by a writer that died mid-write
      if (time < stale) fs::remove(p, ec);
      continue;
    }
    if (p.extension() != kSuffix) continue;
    const uint64_t size = fs::file_size(p, ec);
    if (ec) continue;
    entries.push_back({p, size, time});
    total += size;
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.time < b.time; });
  for (const Entry& e : entries) {
    if (total <= max_bytes_) break;
    if (fs::remove(e.path, ec)) total -= e.size;
  }
}

DiskCacheStats DiskCache::stats() const {
  return {hits_.load(), misses_.load(), writes_.load(), corrupt_.load(), write_failures_.load()};
}

std::vector<DiskCacheEntryInfo> DiskCache::list() const {
  std::vector<DiskCacheEntryInfo> out;
  if (dir_.empty()) return out;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != kSuffix) continue;
    DiskCacheEntryInfo info;
    info.path = p.string();
    info.key = p.stem().string();
    std::vector<char> bytes, payload;
    if (!read_file(info.path, bytes, info.problem)) {
      out.push_back(info);
      continue;
    }
    if (bytes.size() >= kHeaderBytes) {  // the arch as the header says, bounds-checked by decode
      const uint64_t key_size = get(bytes.data() + 12, 4), arch_size = get(bytes.data() + 16, 4);
      if (kHeaderBytes + key_size + arch_size <= bytes.size())
        info.arch.assign(bytes.data() + kHeaderBytes + key_size, arch_size);
    }
    info.valid = decode(bytes, info.key, info.arch, payload, info.problem);
    info.payload_bytes = payload.size();
    out.push_back(info);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

uint64_t DiskCache::clear() {
  uint64_t removed = 0;
  if (dir_.empty()) return 0;
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->path().extension() == kSuffix || name.find(kSuffix + std::string(".tmp.")) != std::string::npos)
      doomed.push_back(it->path());
  }
  for (const fs::path& p : doomed)
    if (fs::remove(p, ec) && p.extension() == kSuffix) ++removed;
  return removed;
}

}  // namespace normjit::runtime
