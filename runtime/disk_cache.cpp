#include "runtime/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>

#include "llvm/Support/xxhash.h"
#include "runtime/file_io.h"
#include "runtime/log.h"

namespace normjit::runtime {
namespace fs = std::filesystem;

namespace {

// Entry layout, little-endian:
//   magic[8] version:u32 key_len:u32 arch_len:u32 payload_len:u64 payload_hash:u64
//   header_hash:u64 (of everything before it), then key, arch, payload.
constexpr char kMagic[8] = {'N', 'J', 'K', 'C', 'U', 'B', 'I', 'N'};
constexpr size_t kVersionAt = 8, kKeyLenAt = 12, kArchLenAt = 16, kPayloadLenAt = 20;
constexpr size_t kPayloadHashAt = 28, kHeaderHashAt = 36, kHeaderBytes = 44;

constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;  // larger files are not ours
// File names are limited to 255 bytes; the temp name adds ".njk.tmp.<pid>.<16 hex>".
constexpr size_t kMaxKeyBytes = 200;
constexpr const char* kSuffix = ".njk";
constexpr const char* kTempMarker = ".njk.tmp.";
// A temp file this old belongs to a writer that died; a live one renames within seconds.
constexpr auto kStaleTempAge = std::chrono::hours(1);

void put32(std::vector<char>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put64(std::vector<char>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t get_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}
uint64_t hash(const char* data, size_t size) { return llvm::xxHash64(llvm::StringRef(data, size)); }

bool valid_key(llvm::StringRef key) {
  if (key.empty() || key.size() > kMaxKeyBytes) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '-';
  });
}

bool is_entry(const fs::path& p) { return p.extension() == kSuffix; }
bool is_temp(const fs::path& p) { return p.filename().string().find(kTempMarker) != std::string::npos; }


// Missing: no such file. Unreadable: the file may be a good entry that this process is not
// allowed to read now (permissions, too many open files, out of memory): nothing is known about
// its bytes, so it is left alone. Failed: the file is not an entry we wrote (or is cut short).
enum class ReadResult { Ok, Missing, Unreadable, Failed };

// Reads a whole file through one descriptor, sized by fstat of that descriptor: an entry
// renamed over the path meanwhile cannot give us a length from one file and bytes from another.
// `st` describes the file read (when it could be opened), so a caller removes only that file.
ReadResult read_file(const std::string& path, std::vector<char>& out, std::string& why, struct stat& st,
                     bool& have_st) {
  have_st = false;
  // Non-blocking: a FIFO in place of an entry must not hang us. No following links: a link is
  // not an entry we wrote (ELOOP), and removing it must remove the link, not its target.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return ReadResult::Missing;
    why = "cannot open: " + errno_text(err);
    // Only a link says something about what is there (we never write links); EACCES, EPERM,
    // EMFILE, ENOMEM and the like are about this process, not about the entry.
    return err == ELOOP ? ReadResult::Failed : ReadResult::Unreadable;
  }
  ReadResult result = ReadResult::Failed;
  have_st = ::fstat(fd, &st) == 0;
  if (!have_st) {
    why = "cannot stat: " + errno_text(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (static_cast<uint64_t>(st.st_size) > kMaxEntryBytes) {
    why = "larger than 1 GiB";
  } else {
    out.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    if (done == out.size()) {
      result = ReadResult::Ok;
    } else {
      why = "short read (" + std::to_string(done) + " of " + std::to_string(out.size()) + " bytes)";
    }
  }
  ::close(fd);
  return result;
}

// Removes `path` only if it is still the file described by `st`: another process may have
// renamed a fresh, valid entry over the corrupt one since we read it.
void remove_if_same(const std::string& path, const struct stat& st) {
  struct stat now;
  if (::lstat(path.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
    ::unlink(path.c_str());
}

// The directory exists (created if need be), is a directory, and a file can be written in it.
bool prepare_directory(const std::string& dir, std::string& why) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::error_code status_ec;
  const fs::file_status st = fs::status(dir, status_ec);
  if (status_ec || !fs::exists(st)) {
    why = "cannot create it: " + (ec ? ec : status_ec).message();
    return false;
  }
  if (!fs::is_directory(st)) {
    why = "it exists and is not a directory";
    return false;
  }
  // Named like a temp file so that, should we die before removing it, enforce_cap does.
  const std::string probe = (fs::path(dir) / ("probe" + std::string(kTempMarker) + unique_suffix())).string();
  std::string write_why;
  const bool ok = write_new_file(probe, {'x'}, write_why);
  ::unlink(probe.c_str());
  if (!ok) why = "cannot write in it: " + write_why;
  return ok;
}

}  // namespace

DiskCache::DiskCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  if (dir_.empty()) return;  // memory only, as configured: nothing to say
  try {
    std::string why;
    if (!prepare_directory(dir_, why)) {
      disable(why);
      return;
    }
    enabled_ = true;
  } catch (const std::exception& e) {
    disable(e.what());
  }
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
  std::vector<char> out(kMagic, kMagic + sizeof kMagic);
  out.reserve(kHeaderBytes + key.size() + arch.size() + payload.size());
  put32(out, kFormatVersion);
  put32(out, static_cast<uint32_t>(key.size()));
  put32(out, static_cast<uint32_t>(arch.size()));
  put64(out, payload.size());
  put64(out, hash(payload.data(), payload.size()));
  put64(out, hash(out.data(), out.size()));  // the header hash covers every field before it
  out.insert(out.end(), key.begin(), key.end());
  out.insert(out.end(), arch.begin(), arch.end());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

// Checks in the order that gives the most useful message: a different format is reported
// as such before its (differently laid out) checksums are looked at. Lengths are only used
// after the header checksum vouches for them, and are compared without adding them up.
bool DiskCache::decode(llvm::ArrayRef<char> bytes, llvm::StringRef key, llvm::StringRef arch,
                       std::vector<char>& payload, std::string& why) {
  const size_t size = bytes.size();
  if (size < kHeaderBytes) {
    why = "truncated (" + std::to_string(size) + " bytes, shorter than the " + std::to_string(kHeaderBytes) +
          "-byte header)";
    return false;
  }
  const char* p = bytes.data();
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) {
    why = "bad magic (not a normjit cache entry)";
    return false;
  }
  const uint64_t version = get_le(p + kVersionAt, 4);
  if (version != kFormatVersion) {
    why = "format version " + std::to_string(version) + ", expected " + std::to_string(kFormatVersion);
    return false;
  }
  if (hash(p, kHeaderHashAt) != get_le(p + kHeaderHashAt, 8)) {
    why = "header checksum mismatch";
    return false;
  }
  const uint64_t key_size = get_le(p + kKeyLenAt, 4), arch_size = get_le(p + kArchLenAt, 4);
  const uint64_t payload_size = get_le(p + kPayloadLenAt, 8);
  const uint64_t body = size - kHeaderBytes;
  if (key_size > body || arch_size > body - key_size || payload_size > body - key_size - arch_size) {
    why = "truncated (" + std::to_string(size) + " bytes; the header promises a " + std::to_string(key_size) +
          "-byte key, a " + std::to_string(arch_size) + "-byte arch and a " + std::to_string(payload_size) +
          "-byte payload)";
    return false;
  }
  if (payload_size != body - key_size - arch_size) {
    why = "trailing bytes (" + std::to_string(size) + " bytes, " +
          std::to_string(kHeaderBytes + key_size + arch_size + payload_size) + " expected)";
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
  const char* stored_payload = p + kHeaderBytes + key_size + arch_size;
  if (hash(stored_payload, payload_size) != get_le(p + kPayloadHashAt, 8)) {
    why = "payload checksum mismatch";
    return false;
  }
  payload.assign(stored_payload, stored_payload + payload_size);
  return true;
}

std::optional<std::vector<char>> DiskCache::load(llvm::StringRef key, llvm::StringRef arch) {
  if (!enabled()) return std::nullopt;
  if (!valid_key(key)) {  // never a file name we would have written
    misses_++;
    return std::nullopt;
  }
  try {
    const std::string path = path_for(key);
    std::vector<char> bytes, payload;
    std::string why;
    struct stat st;
    bool have_st = false;
    const ReadResult read = read_file(path, bytes, why, st, have_st);
    if (read == ReadResult::Missing) {
      misses_++;
      return std::nullopt;
    }
    if (read == ReadResult::Unreadable) {  // not corruption: count it, say so once, keep the file
      misses_++;
      unreadable_++;
      warn_once("disk-cache-unreadable:" + dir_,
                "cannot read the kernel cache entry " + path + " (" + why + "); it is left as it is and the kernel is "
                "compiled instead. Check the permissions of " + dir_ + " and its files.");
      return std::nullopt;
    }
    if (read == ReadResult::Failed || !decode(bytes, key, arch, payload, why)) {
      corrupt_++;
      misses_++;
      if (have_st) remove_if_same(path, st);
      else ::unlink(path.c_str());
      log(LogLevel::Info, "removed the corrupt cache entry " + path + " (" + why + "); it will be rebuilt");
      return std::nullopt;
    }
    hits_++;
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // now: the size cap evicts least recently used
    return payload;
  } catch (const std::exception&) {  // out of memory: behave as a miss, the caller rebuilds
    misses_++;
    return std::nullopt;
  }
}

bool DiskCache::store(llvm::StringRef key, llvm::StringRef arch, llvm::ArrayRef<char> payload) {
  if (!enabled()) return false;
  if (!valid_key(key)) {  // a caller bug, not a disk problem: the cache stays on
    write_failures_++;
    log(LogLevel::Debug, "not caching on disk: the key \"" + key.str() + "\" is not a valid entry name");
    return false;
  }
  try {
    if (kHeaderBytes + key.size() + arch.size() + payload.size() > kMaxEntryBytes) {
      write_failures_++;
      log(LogLevel::Info, "not caching " + key.str() + " on disk: its entry would exceed 1 GiB");
      return false;
    }
    const std::string path = path_for(key);
    const std::string tmp = path + ".tmp." + unique_suffix();
    std::string why;
    // Write aside, then rename over the entry: rename is atomic, so a reader in any process
    // sees no entry, the old complete one, or the new complete one, never a partial write.
    bool ok = write_new_file(tmp, encode(key, arch, payload), why);
    if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
      why = "rename: " + errno_text(errno);
      ok = false;
    }
    if (!ok) {
      ::unlink(tmp.c_str());
      write_failures_++;
      disable("writing " + path + " failed: " + why);
      return false;
    }
    writes_++;
    enforce_cap();
    return true;
  } catch (const std::exception&) {  // out of memory: not a disk problem, the cache stays on
    write_failures_++;
    return false;
  }
}

void DiskCache::enforce_cap() {
  struct Entry {
    fs::path path;
    uint64_t size;
    fs::file_time_type time;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  const auto stale = fs::file_time_type::clock::now() - kStaleTempAge;
  std::error_code it_ec;
  for (fs::directory_iterator it(dir_, it_ec), end; !it_ec && it != end; it.increment(it_ec)) {
    const fs::path& p = it->path();
    std::error_code ec;
    const auto time = fs::last_write_time(p, ec);
    if (ec) continue;  // removed by another process meanwhile
    if (is_temp(p)) {
      if (time < stale) fs::remove(p, ec);
      continue;
    }
    if (!is_entry(p)) continue;
    const uint64_t size = fs::file_size(p, ec);
    if (ec) continue;
    entries.push_back({p, size, time});
    total += size;
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.time < b.time; });
  for (const Entry& e : entries) {
    if (total <= max_bytes_) break;
    std::error_code ec;
    fs::remove(e.path, ec);
    total -= e.size;  // gone, whether we or another process removed it
  }
}

DiskCacheStats DiskCache::stats() const {
  return {hits_.load(), misses_.load(), writes_.load(), corrupt_.load(), write_failures_.load(), unreadable_.load()};
}

std::vector<DiskCacheEntryInfo> DiskCache::list() const {
  std::vector<DiskCacheEntryInfo> out;
  if (dir_.empty()) return out;
  try {
    std::error_code it_ec;
    for (fs::directory_iterator it(dir_, it_ec), end; !it_ec && it != end; it.increment(it_ec)) {
      const fs::path& p = it->path();
      if (!is_entry(p)) continue;
      DiskCacheEntryInfo info;
      info.path = p.string();
      info.key = p.stem().string();
      std::vector<char> bytes, payload;
      struct stat st;
      bool have_st = false;
      const ReadResult read = read_file(info.path, bytes, info.problem, st, have_st);
      if (read == ReadResult::Missing) continue;  // removed since the directory was read
      if (read == ReadResult::Ok) {
        // decode wants the arch it should find; take it from the header, bounds-checked here,
        // and let decode verify everything else.
        if (bytes.size() >= kHeaderBytes) {
          const uint64_t key_size = get_le(bytes.data() + kKeyLenAt, 4);
          const uint64_t arch_size = get_le(bytes.data() + kArchLenAt, 4);
          const uint64_t body = bytes.size() - kHeaderBytes;
          if (key_size <= body && arch_size <= body - key_size)
            info.arch.assign(bytes.data() + kHeaderBytes + key_size, arch_size);
        }
        info.valid = decode(bytes, info.key, info.arch, payload, info.problem);
        info.payload_bytes = payload.size();
      }
      out.push_back(std::move(info));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  } catch (const std::exception&) {
    // Out of memory while listing: return what was gathered.
  }
  return out;
}

uint64_t DiskCache::clear() {
  uint64_t removed = 0;
  if (dir_.empty()) return 0;
  try {
    std::vector<fs::path> doomed;
    std::error_code it_ec;
    for (fs::directory_iterator it(dir_, it_ec), end; !it_ec && it != end; it.increment(it_ec))
      if (is_entry(it->path()) || is_temp(it->path())) doomed.push_back(it->path());
    for (const fs::path& p : doomed) {
      std::error_code ec;
      if (fs::remove(p, ec) && is_entry(p)) ++removed;
    }
  } catch (const std::exception&) {
  }
  return removed;
}

}  // namespace normjit::runtime
