// Compiled kernels on disk: one file per cache key, written to a temporary name and renamed
// into place, so a reader never sees a half-written entry. Each entry carries a magic, the
// format version, its key, the target arch and a checksum of the payload; anything that does
// not verify is counted, removed and reported as a miss, so the caller rebuilds it.
// A directory that cannot be created or written turns the cache off with one warning
// (memory-only caching); nothing here throws.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace normjit::runtime {

struct DiskCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t writes = 0;
  uint64_t corrupt = 0;         // entries that failed verification (removed)
  uint64_t write_failures = 0;
  uint64_t unreadable = 0;      // entries that could not be opened (permissions...): misses, left in place
};

struct DiskCacheEntryInfo {
  std::string path;
  std::string key;
  std::string arch;
  uint64_t payload_bytes = 0;
  bool valid = false;           // verified: magic, version, key matches file name, checksum
  std::string problem;          // why it is invalid, when it is not
};

class DiskCache {
 public:
  static constexpr uint32_t kFormatVersion = 1;

  // dir empty: disabled. max_bytes: size cap; when a store pushes the directory over it,
  // the least recently modified entries are removed until it fits.
  DiskCache(std::string dir, uint64_t max_bytes);

  bool enabled() const { return enabled_.load(); }
  const std::string& dir() const { return dir_; }

  // The payload stored under key for arch, or nullopt: absent; corrupt (then removed); or
  // unreadable by this process, e.g. permission denied (then counted and left in place).
  std::optional<std::vector<char>> load(llvm::StringRef key, llvm::StringRef arch);
  // Best effort: false (and, the first time, a warning that turns the cache off) on failure.
  bool store(llvm::StringRef key, llvm::StringRef arch, llvm::ArrayRef<char> payload);

  DiskCacheStats stats() const;

  // Maintenance, for the normjit command.
  std::vector<DiskCacheEntryInfo> list() const;  // every entry file, verified
  uint64_t clear();                               // removes every entry; returns how many

  // Entry encoding, exposed for tests and for cache bundles.
  static std::vector<char> encode(llvm::StringRef key, llvm::StringRef arch, llvm::ArrayRef<char> payload);
  // Verifies bytes as an entry for key/arch; on success fills payload. Never throws, never
  // allocates more than the bytes given. `why` says what failed.
  static bool decode(llvm::ArrayRef<char> bytes, llvm::StringRef key, llvm::StringRef arch,
                     std::vector<char>& payload, std::string& why);
  std::string path_for(llvm::StringRef key) const;

 private:
  void disable(const std::string& why);
  void enforce_cap();

  std::string dir_;
  uint64_t max_bytes_;
  std::atomic<bool> enabled_{false};
  mutable std::atomic<uint64_t> hits_{0}, misses_{0}, writes_{0}, corrupt_{0}, write_failures_{0},
      unreadable_{0};
};

}  // namespace normjit::runtime
