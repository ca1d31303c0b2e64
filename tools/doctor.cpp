// normjit doctor: what normjit sees on this machine, each line a fact and, where something is
// missing, what to do about it.
#include <cstdio>

#include "normjit/normjit.hpp"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"
#include "runtime/disk_cache.h"
#include "runtime/nvrtc.h"
#include "tools/problem_flags.h"
#include "tools/subcommands.h"

namespace normjit::tools {

int run_doctor(std::vector<std::string> args) {
  if (take_flag(args, "--help")) {
    std::printf("usage: normjit doctor\nPrints the driver, devices, NVRTC, configuration and cache health.\n"
                "Exit code 0 when a GPU backward can run here, 3 when only CPU-side features work.\n");
    return kExitOk;
  }
  std::printf("normjit %s\n", version_string());
  bool gpu_ok = false;
  std::string why;
  if (runtime::cuda_available(&why)) {
    const auto& d = runtime::driver();
    int version = 0, count = 0;
    d.cuDriverGetVersion(&version);
    d.cuDeviceGetCount(&count);
    std::printf("driver:   CUDA %d.%d, %d device(s)\n", version / 1000, version % 1000 / 10, count);
    for (int i = 0; i < count; ++i) {
      CUdevice dev;
      char name[256] = {};
      int major = 0, minor = 0, sms = 0;
      d.cuDeviceGet(&dev, i);
      d.cuDeviceGetName(name, sizeof name, dev);
      d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
      d.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
      std::printf("device %d: %s, sm_%d%d, %d SMs\n", i, name, major, minor, sms);
    }
    gpu_ok = true;
  } else {
    std::printf("driver:   not usable: %s\n", why.c_str());
  }
  if (runtime::Nvrtc::available(&why)) {
    const runtime::Nvrtc& n = runtime::Nvrtc::get();
    std::string archs;
    for (int a : n.supported_archs()) archs += " sm_" + std::to_string(a);
    std::printf("nvrtc:    %s at %s; targets:%s\n", n.version().c_str(), n.library_path().c_str(), archs.c_str());
  } else {
    gpu_ok = false;
    std::printf("nvrtc:    not usable: %s\n", why.c_str());
  }
  const Config config = runtime::load_config();
  std::printf("config:   %s\n", config.config_file.empty() ? "no file (defaults and environment)" : config.config_file.c_str());
  for (const auto& [key, source] : config.sources) std::printf("          %-16s from %s\n", key.c_str(), source.c_str());
  if (!config.disk_cache || config.cache_dir.empty()) {
    std::printf("cache:    memory only (disk cache off)\n");
  } else {
    runtime::DiskCache disk(config.cache_dir, config.cache_max_bytes);
    if (!disk.enabled()) {
      std::printf("cache:    %s is not usable: memory-only caching (see the warning above)\n", config.cache_dir.c_str());
    } else {
      uint64_t bytes = 0, invalid = 0;
      const auto entries = disk.list();
      for (const auto& e : entries) {
        bytes += e.payload_bytes;
        invalid += e.valid ? 0 : 1;
      }
      std::printf("cache:    %s: %zu entries, %llu bytes of cubins, %llu invalid\n", config.cache_dir.c_str(),
                  entries.size(), static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(invalid));
    }
  }
  return gpu_ok ? kExitOk : kExitNoGpu;
}

}  // namespace normjit::tools
