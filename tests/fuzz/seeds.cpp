// Writes the generated seeds of the fuzz corpora: valid disk cache entries (whose checksums
// cannot be written by hand) in each mode of disk_cache_fuzz, valid kernel payloads, and valid
// cache bundles in each mode of cache_bundle_fuzz.
//   normjit_fuzz_seeds <corpus dir>   (writes <dir>/{disk_cache,kernel_cache,cache_bundle}/gen-*)
// scripts/fuzz.sh runs it into each run's temporary corpus, so the seeds follow the format;
// the copies checked in under tests/fuzz/corpus/ are for running a target by hand.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/cache_bundle.h"
#include "runtime/disk_cache.h"
#include "runtime/kernel_cache.h"

namespace fs = std::filesystem;
using normjit::runtime::Bundle;
using normjit::runtime::CompiledKernel;
using normjit::runtime::DiskCache;
using normjit::runtime::KernelCache;

namespace {

const std::string kKey = "7fe6d3f1178cbcbe355d2bd5a6c354d222a3bc9013be9615c7ffaad19355f6fb";
const std::string kArch = "sm_90";

// The shape of a real NVRTC log with its ptxas resource report.
const std::string kLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'nj_reduce_partials' for 'sm_90'\n"
    "ptxas info    : Function properties for nj_reduce_partials\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 31 registers, used 1 barriers, 1056 bytes smem, 400 bytes cmem[0]\n"
    "ptxas info    : Compiling entry function 'nj_norm_backward' for 'sm_90'\n"
    "ptxas info    : Function properties for nj_norm_backward\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 71 registers, used 1 barriers, 128 bytes smem, 456 bytes cmem[0]\n";

void write(const fs::path& path, const std::vector<char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) {
    std::fprintf(stderr, "normjit_fuzz_seeds: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

std::vector<char> with_mode(char mode, const std::string& key, const std::string& arch, const std::vector<char>& entry) {
  std::vector<char> out{mode};
  if (mode == 1 || mode == 2) {
    out.push_back(static_cast<char>(key.size()));
    out.push_back(static_cast<char>(arch.size()));
    out.insert(out.end(), key.begin(), key.end());
    out.insert(out.end(), arch.begin(), arch.end());
  }
  out.insert(out.end(), entry.begin(), entry.end());
  return out;
}

// cache_bundle_fuzz: mode 0 takes the file as is; mode 1 adds the magic, the version and the
// hash itself, so its seed is the bundle without its first 12 and last 32 bytes.
void write_bundle_seeds(const fs::path& dir, const std::string& name, const Bundle& bundle) {
  const std::vector<char> file = normjit::runtime::encode_bundle(bundle);
  std::vector<char> mode0{0};
  mode0.insert(mode0.end(), file.begin(), file.end());
  write(dir / ("gen-mode0-" + name), mode0);
  std::vector<char> mode1{1};
  mode1.insert(mode1.end(), file.begin() + 12, file.end() - 32);
  write(dir / ("gen-mode1-" + name), mode1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: normjit_fuzz_seeds <corpus dir>\n");
    return 2;
  }
  const fs::path root = argv[1];
  fs::create_directories(root / "disk_cache");
  fs::create_directories(root / "kernel_cache");
  fs::create_directories(root / "cache_bundle");

  CompiledKernel k;
  k.log = kLog;
  k.cubin = {'\x7f', 'E', 'L', 'F', '\x02', '\x01', '\x01', '\x33', 'c', 'u', 'b', 'i', 'n'};
  const std::vector<char> payload = KernelCache::pack(k);
  write(root / "kernel_cache" / "gen-payload", payload);
  CompiledKernel no_log;
  no_log.cubin = k.cubin;
  write(root / "kernel_cache" / "gen-payload-no-log", KernelCache::pack(no_log));

  const std::vector<char> entry = DiskCache::encode(kKey, kArch, payload);
  const std::vector<char> empty = DiskCache::encode(kKey, kArch, {});
  for (char mode = 0; mode < 4; ++mode) {
    const std::string m = std::to_string(int(mode));
    write(root / "disk_cache" / ("gen-mode" + m + "-entry"), with_mode(mode, kKey, kArch, entry));
    write(root / "disk_cache" / ("gen-mode" + m + "-empty-payload"), with_mode(mode, kKey, kArch, empty));
  }
  // Short key and arch (modes 1 and 2 take them from the input).
  write(root / "disk_cache" / "gen-mode1-short-key",
        with_mode(1, "k", "sm_80", DiskCache::encode("k", "sm_80", payload)));
  write(root / "disk_cache" / "gen-mode2-empty-key",
        with_mode(2, "", "", DiskCache::encode("", "", payload)));

  Bundle bundle;
  bundle.nvrtc_version = "13.0";
  bundle.normjit_version = "0.1.0";
  write_bundle_seeds(root / "cache_bundle", "empty", bundle);
  bundle.entries.push_back({kKey, kArch, payload});
  write_bundle_seeds(root / "cache_bundle", "one-entry", bundle);
  bundle.entries.push_back({"k", "sm_80", KernelCache::pack(no_log)});
  bundle.entries.push_back({kKey, "sm_80", {}});  // the same key again, another arch, empty payload
  write_bundle_seeds(root / "cache_bundle", "three-entries", bundle);
  return 0;
}
