// libFuzzer target: the kernel payload stored inside a disk cache entry,
// runtime::KernelCache::unpack (log length, log, cubin; the log is parsed for the ptxas
// resource report). unpack returns false or true and never throws; when it accepts a payload,
// packing what it produced gives back the same bytes. Then the other way round: any log and
// cubin packed and unpacked come back unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/kernel_cache.h"

using normjit::runtime::CompiledKernel;
using normjit::runtime::KernelCache;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "kernel_cache_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

static void check(const uint8_t* data, size_t size) {
  const char* p = reinterpret_cast<const char*>(data);
  const std::vector<char> payload(p, p + size);

  // 1. The input as a stored payload.
  CompiledKernel k;
  if (KernelCache::unpack(payload, k)) {
    if (k.cubin.empty()) fail("accepted an empty cubin");
    if (k.log.size() + k.cubin.size() + 8 != size) fail("log + cubin + 8 != payload size");
    if (KernelCache::pack(k) != payload) fail("pack(unpack(payload)) != payload");
  }

  // 2. The input split into a log and a (non-empty: a compiled kernel always has one) cubin at
  // a point taken from its first byte. pack() of an empty cubin passes a null pointer to
  // memcpy (undefined behaviour, reported; never reached by the library itself).
  if (size >= 2) {
    const size_t split = 1 + (size - 2) * data[0] / 256;
    CompiledKernel in;
    in.log.assign(p + 1, p + split);
    in.cubin.assign(p + split, p + size);
    CompiledKernel out;
    if (!KernelCache::unpack(KernelCache::pack(in), out)) fail("unpack(pack(k)) failed");
    if (out.log != in.log || out.cubin != in.cubin) fail("unpack(pack(k)) != k");
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // parse_ptxas_report once matched with std::regex (stack overflow on long lines) and
  // std::stoi (threw on huge numbers); the corpus keeps reproducers of both. Any exception
  // escapes, std::terminate aborts, libFuzzer reports the input.
  check(data, size);
  return 0;
}
