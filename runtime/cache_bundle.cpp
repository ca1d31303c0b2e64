#include "runtime/cache_bundle.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "llvm/Support/SHA256.h"
#include "normjit/normjit.hpp"
#include "runtime/file_io.h"
#include "runtime/kernel_cache.h"

namespace normjit::runtime {
namespace {

constexpr char kMagic[8] = {'N', 'J', 'B', 'U', 'N', 'D', 'L', 'E'};
constexpr size_t kHashBytes = 32;
constexpr uint64_t kMaxBundleBytes = uint64_t{4} << 30;
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;  // as DiskCache
// The same limits DiskCache puts on entry names: a bundle cannot name a file outside the cache.
constexpr size_t kMaxKeyBytes = 200;
constexpr size_t kMaxVersionBytes = 64;

void put32(std::vector<char>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put64(std::vector<char>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put_string(std::vector<char>& out, const std::string& s) {
  put32(out, static_cast<uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

std::array<uint8_t, kHashBytes> sha256(const char* data, size_t size) {
  return llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(data), size));
}

bool valid_key(const std::string& key) {
  if (key.empty() || key.size() > kMaxKeyBytes) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || c == '-';
  });
}

// "sm_90" -> 90, or -1.
int arch_number(const std::string& arch) {
  if (arch.size() < 4 || arch.size() > 6 || arch.rfind("sm_", 0) != 0) return -1;
  int v = 0;
  for (size_t i = 3; i < arch.size(); ++i) {
    if (arch[i] < '0' || arch[i] > '9') return -1;
    v = v * 10 + (arch[i] - '0');
  }
  return v;
}

// Reads fields front to back; every read is bounds-checked, and the first failure sticks.
class Reader {
 public:
  Reader(const char* data, size_t size) : p_(data), left_(size) {}
  bool ok() const { return ok_; }
  size_t left() const { return left_; }

  uint64_t number(int bytes) {
    if (!ok_ || left_ < static_cast<size_t>(bytes)) return fail();
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t(static_cast<unsigned char>(p_[i])) << (8 * i);
    advance(static_cast<size_t>(bytes));
    return v;
  }
  llvm::ArrayRef<char> bytes(uint64_t n) {
    if (!ok_ || left_ < n) {
      fail();
      return {};
    }
    llvm::ArrayRef<char> out(p_, static_cast<size_t>(n));
    advance(static_cast<size_t>(n));
    return out;
  }
  std::string string(size_t max) {
    const uint64_t n = number(4);
    if (n > max) {
      fail();
      return {};
    }
    const llvm::ArrayRef<char> b = bytes(n);
    return std::string(b.begin(), b.end());
  }

 private:
  uint64_t fail() {
    ok_ = false;
    return 0;
  }
  void advance(size_t n) {
    p_ += n;
    left_ -= n;
  }
  const char* p_;
  size_t left_;
  bool ok_ = true;
};


std::vector<char> read_whole_file(const std::string& path, uint64_t limit) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(Status::InvalidArgument, "normjit: " + path + " is a directory, not a file.");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(Status::InvalidArgument, "normjit: cannot open " + path + ": " + errno_text(errno) + ".");
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > limit)
    throw Error(Status::InvalidArgument, "normjit: " + path + " is larger than " + std::to_string(limit >> 20) +
                                             " MiB or not a regular file.");
  f.seekg(0);
  std::vector<char> bytes(static_cast<size_t>(size));
  f.read(bytes.data(), size);
  if (f.gcount() != size) throw Error(Status::InvalidArgument, "normjit: short read from " + path + ".");
  return bytes;
}

}  // namespace

uint64_t ImportReport::skipped() const {
  uint64_t n = skipped_nvrtc + skipped_normjit;
  for (const auto& [arch, count] : skipped_arch) n += count;
  return n;
}

std::vector<char> encode_bundle(const Bundle& bundle) {
  std::vector<char> out(kMagic, kMagic + sizeof kMagic);
  put32(out, Bundle::kFormatVersion);
  put32(out, static_cast<uint32_t>(bundle.entries.size()));
  put_string(out, bundle.nvrtc_version);
  put_string(out, bundle.normjit_version);
  for (const BundleEntry& e : bundle.entries) {
    put_string(out, e.key);
    put_string(out, e.arch);
    const std::vector<char> record = DiskCache::encode(e.key, e.arch, e.payload);
    put64(out, record.size());
    out.insert(out.end(), record.begin(), record.end());
  }
  const auto hash = sha256(out.data(), out.size());
  out.insert(out.end(), hash.begin(), hash.end());
  return out;
}

// Checks in the order that gives the most useful message: "not a bundle" and "a newer format"
// before "corrupt"; lengths are trusted only after the file hash vouches for them, and even
// then every read is bounds-checked.
bool decode_bundle(llvm::ArrayRef<char> bytes, Bundle& out, std::string& why) {
  out = Bundle{};
  const size_t size = bytes.size();
  if (size < sizeof kMagic + 8 + kHashBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    why = "not a normjit cache bundle (no NJBUNDLE magic)";
    return false;
  }
  Reader header(bytes.data() + sizeof kMagic, size - sizeof kMagic);
  const uint64_t version = header.number(4);
  if (version != Bundle::kFormatVersion) {
    why = "bundle format version " + std::to_string(version) + "; this normjit reads version " +
          std::to_string(Bundle::kFormatVersion) + ": export it again with this normjit";
    return false;
  }
  const size_t body = size - kHashBytes;
  const auto hash = sha256(bytes.data(), body);
  if (std::memcmp(hash.data(), bytes.data() + body, kHashBytes) != 0) {
    why = "checksum mismatch: the file is corrupt or truncated (" + std::to_string(size) + " bytes)";
    return false;
  }

  Bundle bundle;
  Reader r(bytes.data() + sizeof kMagic + 4, body - sizeof kMagic - 4);
  const uint64_t count = r.number(4);
  bundle.nvrtc_version = r.string(kMaxVersionBytes);
  bundle.normjit_version = r.string(kMaxVersionBytes);
  if (!r.ok()) {
    why = "header truncated";
    return false;
  }
  for (uint64_t i = 0; i < count; ++i) {
    const std::string at = "entry " + std::to_string(i + 1) + " of " + std::to_string(count);
    BundleEntry e;
    e.key = r.string(kMaxKeyBytes);
    e.arch = r.string(16);
    const uint64_t record_size = r.number(8);
    const llvm::ArrayRef<char> record = r.bytes(record_size);
    if (!r.ok()) {
      why = at + " is truncated";
      return false;
    }
    if (!valid_key(e.key) || arch_number(e.arch) < 0) {
      why = at + " has an invalid key or arch (\"" + e.arch + "\")";
      return false;
    }
    std::string record_why;
    if (!DiskCache::decode(record, e.key, e.arch, e.payload, record_why)) {
      why = at + " (" + e.key.substr(0, 16) + ") does not verify: " + record_why;
      return false;
    }
    bundle.entries.push_back(std::move(e));
  }
  if (r.left() != 0) {
    why = std::to_string(r.left()) + " bytes after the last of " + std::to_string(count) + " entries";
    return false;
  }
  out = std::move(bundle);
  return true;
}

bool verify_cache_entry(const DiskCacheEntryInfo& info, std::vector<char>& payload, std::string& why) {
  payload.clear();
  if (!info.valid) {  // list() has decoded it already
    why = info.problem;
    return false;
  }
  try {
    const std::vector<char> bytes = read_whole_file(info.path, kMaxEntryBytes);
    if (!DiskCache::decode(bytes, info.key, info.arch, payload, why)) return false;
  } catch (const std::exception& e) {  // removed or replaced since it was listed; out of memory
    why = e.what();
    return false;
  }
  CompiledKernel kernel;
  if (!KernelCache::unpack(payload, kernel)) {
    why = "the payload is not a compile log followed by a cubin";
    return false;
  }
  if (kernel.cubin.size() < 4 || std::memcmp(kernel.cubin.data(), "\x7f" "ELF", 4) != 0) {
    why = "the cubin is not an ELF file";
    return false;
  }
  return true;
}

Bundle collect_bundle(const DiskCache& cache, const std::string& nvrtc_version,
                      std::vector<DiskCacheEntryInfo>* invalid) {
  Bundle bundle;
  bundle.nvrtc_version = nvrtc_version;
  bundle.normjit_version = version_string();
  for (DiskCacheEntryInfo& info : cache.list()) {
    BundleEntry e;
    std::string why;
    if (!verify_cache_entry(info, e.payload, why)) {
      info.valid = false;
      info.problem = why;
      if (invalid) invalid->push_back(std::move(info));
      continue;
    }
    e.key = info.key;
    e.arch = info.arch;
    bundle.entries.push_back(std::move(e));
  }
  return bundle;
}

ImportReport import_bundle(DiskCache& cache, const Bundle& bundle, const ImportTarget& here) {
  ImportReport report;
  const bool judge = !here.nvrtc_version.empty();
  for (const BundleEntry& e : bundle.entries) {
    if (judge && bundle.nvrtc_version != here.nvrtc_version) {
      report.skipped_nvrtc++;
      continue;
    }
    if (!here.normjit_version.empty() && bundle.normjit_version != here.normjit_version) {
      report.skipped_normjit++;
      continue;
    }
    if (judge && !here.archs.empty() &&
        std::find(here.archs.begin(), here.archs.end(), arch_number(e.arch)) == here.archs.end()) {
      report.skipped_arch[e.arch]++;
      continue;
    }
    if (cache.load(e.key, e.arch)) {
      report.already_present++;
      continue;
    }
    if (cache.store(e.key, e.arch, e.payload)) report.installed++;
    else report.failed++;
  }
  return report;
}

std::vector<char> read_bundle_file(const std::string& path) { return read_whole_file(path, kMaxBundleBytes); }

void write_bundle_file(const std::string& path, const std::vector<char>& bytes) {
  // Beside the target and renamed into place: a reader (an import on another node, say) never
  // sees half a bundle, and a failed export leaves the previous bundle as it was.
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(Status::InvalidArgument, "normjit: cannot write " + tmp + ": " + errno_text(errno) + ".");
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = !wrote ? write_errno : errno;
    std::remove(tmp.c_str());
    throw Error(Status::InvalidArgument, "normjit: cannot write " + path + ": " + errno_text(err) + ".");
  }
}

}  // namespace normjit::runtime
