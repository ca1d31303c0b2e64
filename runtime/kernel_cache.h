// Compiled kernels by cache key: in memory for the process, on disk across processes.
// A kernel is compiled once even when many threads ask for it at once: the first asker
// compiles, the others wait on the same future. Knows nothing of launching or tuning.
#pragma once
#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/cache_key.h"
#include "codegen/kernel_source.h"
#include "llvm/ADT/StringMap.h"
#include "runtime/disk_cache.h"
#include "runtime/nvrtc.h"

namespace normjit::runtime {

struct CompiledKernel {
  std::string key;
  std::string arch;
  std::vector<char> cubin;
  std::string log;                        // NVRTC/ptxas log: resource report
  std::vector<KernelResources> resources; // parsed from log
  double compile_ms = 0;                  // 0 when read from disk
  bool from_disk = false;
};

struct KernelCacheStats {
  uint64_t memory_hits = 0;
  uint64_t compiles = 0;
  uint64_t disk_hits = 0;
};

class KernelCache {
 public:
  explicit KernelCache(DiskCache& disk) : disk_(disk) {}

  // `what` describes the problem for error messages. Throws normjit::Error on compile failure
  // (the failure is not cached: a later call tries again).
  std::shared_ptr<const CompiledKernel> get(const codegen::KernelSource& source,
                                            const codegen::CompileTarget& target, const std::string& what);
  KernelCacheStats stats() const;

  // Payload stored on disk: the log (for the resource report) then the cubin.
  static std::vector<char> pack(const CompiledKernel& kernel);
  static bool unpack(const std::vector<char>& payload, CompiledKernel& kernel);

 private:
  std::shared_ptr<const CompiledKernel> build(const codegen::KernelSource& source,
                                              const codegen::CompileTarget& target, const std::string& key,
                                              const std::string& what);

  DiskCache& disk_;
  std::mutex mu_;
  llvm::StringMap<std::shared_future<std::shared_ptr<const CompiledKernel>>> entries_;
  std::atomic<uint64_t> memory_hits_{0}, compiles_{0}, disk_hits_{0};
};

}  // namespace normjit::runtime
