// libFuzzer target: the cache bundle reader, runtime::decode_bundle (`normjit cache import`),
// and the import behind it. A bundle is copied between machines: it may be cut short, damaged
// or hostile. The first input byte picks a mode:
//   0  decode_bundle(the rest), as read from a file
//   1  the rest framed as a bundle: "NJBUNDLE", format version 1, the rest, then the SHA-256
//      of all that, so that what the file hash guards (counts, lengths, keys, archs, records)
//      is fuzzed too rather than stopped at the hash
// In both modes decode_bundle never throws. It rejects with a reason and an empty bundle, or
// accepts exactly what encode_bundle would write for what it returns, byte for byte. An
// accepted bundle is imported into a temporary cache directory: every entry lands there under
// its own key (never elsewhere: keys are file names) and loads back unchanged.
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "llvm/Support/SHA256.h"
#include "runtime/cache_bundle.h"
#include "runtime/disk_cache.h"
#include "scratch_dir.h"

using namespace normjit::runtime;
namespace fs = std::filesystem;

namespace {

fs::path g_dir;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "cache_bundle_fuzz: %s\n", what);
  std::abort();
}

std::vector<char> framed(const char* p, size_t n) {
  std::vector<char> out = {'N', 'J', 'B', 'U', 'N', 'D', 'L', 'E', 1, 0, 0, 0};
  out.insert(out.end(), p, p + n);
  const std::array<uint8_t, 32> hash =
      llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(out.data()), out.size()));
  out.insert(out.end(), hash.begin(), hash.end());
  return out;
}

void check_import(const Bundle& bundle) {
  {
    DiskCache cache(g_dir.string(), uint64_t{1} << 40);
    if (!cache.enabled()) fail("the temporary cache directory is not usable");
    const ImportReport r = import_bundle(cache, bundle, ImportTarget{});  // no NVRTC here: install all
    if (r.failed != 0 || r.skipped() != 0) fail("import failed or skipped an entry of a valid bundle");
    if (r.installed + r.already_present != bundle.entries.size()) fail("import lost entries");
    // What the directory must hold, by key (a file name): import stores an entry unless one of
    // that key and arch verifies already, so of repeated (key, arch) pairs the first stays, and
    // an entry of another arch replaces it.
    std::map<std::string, const BundleEntry*> expected;
    for (const BundleEntry& e : bundle.entries) {
      const BundleEntry*& slot = expected[e.key];
      if (!slot || slot->arch != e.arch) slot = &e;
    }
    for (const auto& [key, e] : expected) {
      const auto got = cache.load(key, e->arch);
      if (!got || *got != e->payload) fail("an imported entry does not load back unchanged");
    }
  }
  // Nothing but entries (and no subdirectory) may appear in the cache directory.
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(g_dir, ec)) {
    if (f.path().extension() != ".njk" || !f.is_regular_file()) fail("import left something that is not an entry");
    fs::remove(f.path(), ec);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_dir = normjit_fuzz::make_scratch_dir("bundle");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* p = reinterpret_cast<const char*>(data) + 1;
  const size_t n = size - 1;
  const std::vector<char> bytes = data[0] % 2 == 0 ? std::vector<char>(p, p + n) : framed(p, n);

  Bundle bundle;
  bundle.nvrtc_version = "left over";  // decode must clear it on failure
  std::string why;
  if (!decode_bundle(bytes, bundle, why)) {
    if (why.empty()) fail("decode_bundle rejected a bundle without saying why");
    if (!bundle.entries.empty() || !bundle.nvrtc_version.empty() || !bundle.normjit_version.empty())
      fail("decode_bundle rejected a bundle but left something in it");
    return 0;
  }
  if (encode_bundle(bundle) != bytes) fail("decode_bundle accepted a file encode_bundle would not write");
  check_import(bundle);
  return 0;
}
