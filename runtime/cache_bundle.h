// Cache bundles: every valid disk-cache entry of one machine in a single file, so a fleet can
// compile once (`normjit compile`, `normjit cache export`) and install everywhere
// (`normjit cache import`) instead of compiling at every node's first step.
//
// Layout, little-endian (docs/CACHE.md):
//   magic "NJBUNDLE"  format_version:u32  entry_count:u32
//   nvrtc_len:u32 nvrtc_version   normjit_len:u32 normjit_version
//   entry_count x { key_len:u32 key  arch_len:u32 arch  record_len:u64 record }
//   sha256:[32] of every byte before it
// Each record is a disk-cache entry file as DiskCache::encode writes it (its own magic, header
// and payload checksums), so an entry is checked twice: by the file's hash and by its own.
//
// Every entry was compiled by the NVRTC named in the header: the exporter's. Cache keys hash
// the NVRTC and normjit versions, so an entry from another version would never be looked up
// here; import skips such entries (and entries for archs this NVRTC cannot target) and counts
// them rather than filling the cache with dead files.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "runtime/disk_cache.h"

namespace normjit::runtime {

struct BundleEntry {
  std::string key;
  std::string arch;            // "sm_90"
  std::vector<char> payload;   // as stored in the disk cache (KernelCache::pack)
};

struct Bundle {
  static constexpr uint32_t kFormatVersion = 1;
  std::string nvrtc_version;   // of the NVRTC that compiled the entries ("13.0"), or "unknown"
  std::string normjit_version;
  std::vector<BundleEntry> entries;
};

std::vector<char> encode_bundle(const Bundle& bundle);
// Verifies the whole file (magic, version, file hash, every record) before filling `out`.
// Never throws; on failure `why` says what is wrong and `out` is left empty.
bool decode_bundle(llvm::ArrayRef<char> bytes, Bundle& out, std::string& why);

// Reads and checks one entry of DiskCache::list() as `normjit cache verify` does: the file
// decodes (DiskCache::decode: magic, version, key, arch, header and payload checksums) and its
// payload unpacks into a compile log and an ELF cubin. Fills payload on success, why on
// failure. Never throws.
bool verify_cache_entry(const DiskCacheEntryInfo& info, std::vector<char>& payload, std::string& why);

// The entries of cache's directory that verify_cache_entry accepts, read without side effects
// (a read-only directory will do). `invalid` receives the others, `problem` saying why.
Bundle collect_bundle(const DiskCache& cache, const std::string& nvrtc_version, std::vector<DiskCacheEntryInfo>* invalid);

// What the importing machine can use. An empty nvrtc_version means NVRTC is not available
// here: no entry can be judged, so every entry is installed.
struct ImportTarget {
  std::string nvrtc_version;
  std::vector<int> archs;      // NVRTC's targets as major*10+minor (empty: any)
  std::string normjit_version;
};

struct ImportReport {
  uint64_t installed = 0;
  uint64_t already_present = 0;  // a valid entry with that key was there
  uint64_t failed = 0;           // DiskCache::store refused (the directory is not writable)
  uint64_t skipped_nvrtc = 0;    // the bundle's NVRTC is not this machine's
  uint64_t skipped_normjit = 0;  // the bundle's normjit is not this one
  std::map<std::string, uint64_t> skipped_arch;  // arch NVRTC here cannot target -> entries
  uint64_t skipped() const;
};

// Installs a decoded bundle through DiskCache::store.
ImportReport import_bundle(DiskCache& cache, const Bundle& bundle, const ImportTarget& here);

// Whole-file helpers for the command. read_bundle_file refuses files over 4 GiB;
// write_bundle_file writes beside `path` and renames into place. Both throw
// normjit::Error(Status::InvalidArgument) naming the path and the reason.
std::vector<char> read_bundle_file(const std::string& path);
void write_bundle_file(const std::string& path, const std::vector<char>& bytes);

}  // namespace normjit::runtime
