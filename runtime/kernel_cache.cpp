#include "runtime/kernel_cache.h"

#include <algorithm>
#include <cstring>

#include "normjit/normjit.hpp"

namespace normjit::runtime {

std::vector<char> KernelCache::pack(const CompiledKernel& k) {
  std::vector<char> out(8 + k.log.size() + k.cubin.size());
  const uint64_t log_size = k.log.size();
  std::memcpy(out.data(), &log_size, 8);
  // std::copy, not memcpy: an empty log or cubin may have a null data().
  std::copy(k.log.begin(), k.log.end(), out.begin() + 8);
  std::copy(k.cubin.begin(), k.cubin.end(), out.begin() + 8 + static_cast<std::ptrdiff_t>(k.log.size()));
  return out;
}

bool KernelCache::unpack(const std::vector<char>& payload, CompiledKernel& k) {
  uint64_t log_size = 0;
  if (payload.size() < 8) return false;
  std::memcpy(&log_size, payload.data(), 8);
  if (log_size > payload.size() - 8) return false;
  k.log.assign(payload.data() + 8, log_size);
  k.cubin.assign(payload.begin() + 8 + static_cast<std::ptrdiff_t>(log_size), payload.end());
  k.resources = parse_ptxas_report(k.log);
  return !k.cubin.empty();
}

std::shared_ptr<const CompiledKernel> KernelCache::get(const codegen::KernelSource& source,
                                                       const codegen::CompileTarget& target,
                                                       const std::string& what) {
  const std::string key = codegen::cache_key(source.text, target);
  std::promise<std::shared_ptr<const CompiledKernel>> promise;
  std::shared_future<std::shared_ptr<const CompiledKernel>> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      pending = it->second;
    } else {
      entries_[key] = promise.get_future().share();
    }
  }
  if (pending.valid()) {  // built, or being built by another thread: wait outside the lock
    memory_hits_++;
    return pending.get();
  }
  try {
    auto kernel = build(source, target, key, what);
    promise.set_value(kernel);
    return kernel;
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(mu_);
    entries_.erase(key);  // let a later call try again
    throw;
  }
}

std::shared_ptr<const CompiledKernel> KernelCache::build(const codegen::KernelSource& source,
                                                         const codegen::CompileTarget& target,
                                                         const std::string& key, const std::string& what) {
  auto kernel = std::make_shared<CompiledKernel>();
  kernel->key = key;
  kernel->arch = target.arch();
  if (auto payload = disk_.load(key, kernel->arch); payload && unpack(*payload, *kernel)) {
    kernel->from_disk = true;
    disk_hits_++;
    return kernel;
  }
  CompileOutput out = Nvrtc::get().compile(source.text, source.name, codegen::compile_options(target), what);
  compiles_++;
  kernel->cubin = std::move(out.cubin);
  kernel->log = std::move(out.log);
  kernel->resources = parse_ptxas_report(kernel->log);
  kernel->compile_ms = out.milliseconds;
  disk_.store(key, kernel->arch, pack(*kernel));
  return kernel;
}

KernelCacheStats KernelCache::stats() const {
  return {memory_hits_.load(), compiles_.load(), disk_hits_.load()};
}

}  // namespace normjit::runtime
