#include "runtime/cuda_driver.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <type_traits>

#include "normjit/normjit.hpp"

namespace normjit::runtime {
namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

// Every pinned version names exactly the prototype cuda.h gives that function.
#define NJ_CHECK_PIN(name, version)                                                   \
  static_assert(std::is_same_v<decltype(&::name), PFN_##name##_v##version>, \
                #name " is not pinned to the ABI version of its cuda.h prototype");
NJ_DRIVER_FUNCTIONS(NJ_CHECK_PIN)
#undef NJ_CHECK_PIN

struct Loaded {
  CudaDriver table;
  Status status = Status::Ok;
  std::string error;
};

Loaded load() {
  Loaded out;
  const char* override_path = std::getenv("NORMJIT_LIBCUDA");
  const char* path = override_path && *override_path ? override_path : "libcuda.so.1";
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    out.status = Status::NoDriver;
    out.error = std::string("no CUDA driver: dlopen(\"") + path + "\") failed (" +
                (why ? why : "unknown") +
                "). GPU calls need the NVIDIA driver; on a machine without one only code "
                "generation and compilation (normjit demo/emit/compile --arch) work.";
    return out;
  }
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!get_proc) {
    out.status = Status::NoDriver;
    out.error = std::string("the CUDA driver in ") + path +
                " is too old (no cuGetProcAddress_v2): install a driver for CUDA 12 or newer.";
    return out;
  }
  std::string missing;
  auto resolve = [&](const char* symbol, int version, void** slot) {
    CUdriverProcAddressQueryResult found{};
    if (get_proc(symbol, slot, version, CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
        found != CU_GET_PROC_ADDRESS_SUCCESS || !*slot) {
      *slot = nullptr;
      missing += missing.empty() ? symbol : std::string(", ") + symbol;
    }
  };
#define NJ_RESOLVE(name, version) resolve(#name, version, reinterpret_cast<void**>(&out.table.name));
  NJ_DRIVER_FUNCTIONS(NJ_RESOLVE)
#undef NJ_RESOLVE
  if (!missing.empty()) {
    out.status = Status::NoDriver;
    out.error = "the CUDA driver in " + std::string(path) + " lacks " + missing +
                " (normjit needs a driver for CUDA " + std::to_string(CUDA_VERSION / 1000) +
                "." + std::to_string(CUDA_VERSION % 1000 / 10) + " or newer): update the NVIDIA driver.";
    return out;
  }
  CUresult init = out.table.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    out.table.cuGetErrorName(init, &name);
    out.status = init == CUDA_ERROR_NO_DEVICE ? Status::NoDevice : Status::NoDriver;
    out.error = std::string("cuInit failed with ") + (name ? name : "an unknown error") +
                (init == CUDA_ERROR_NO_DEVICE ? ": no CUDA device is visible (check CUDA_VISIBLE_DEVICES)."
                                              : ": the NVIDIA driver is installed but not usable here.");
  }
  return out;
}

const Loaded& loaded() {
  static const Loaded instance = load();
  return instance;
}

}  // namespace

const CudaDriver& driver() {
  const Loaded& l = loaded();
  if (l.status != Status::Ok) throw Error(l.status, l.error);
  return l.table;
}

bool cuda_available(std::string* why) {
  const Loaded& l = loaded();
  if (l.status != Status::Ok) {
    if (why) *why = l.error;
    return false;
  }
  int count = 0;
  if (l.table.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    if (why) *why = "the CUDA driver loaded but reports no device";
    return false;
  }
  return true;
}

void fail_cu(CUresult result, const char* call, const std::string& context) {  const char* name = nullptr;
  const char* text = nullptr;
  const CudaDriver& d = loaded().table;
  if (d.cuGetErrorName) d.cuGetErrorName(result, &name);
  if (d.cuGetErrorString) d.cuGetErrorString(result, &text);
  throw Error(Status::Cuda, context + ": " + call + " failed with " + (name ? name : "?") + " (" +
                                (text ? text : "no description") + ")");
}

ScopedContext::ScopedContext(CUcontext ctx) {
  CUcontext current = nullptr;
  driver().cuCtxGetCurrent(&current);
  if (current != ctx) {
    NJ_CU(driver().cuCtxPushCurrent(ctx), "making the stream's context current");
    pushed_ = true;
  }
}

ScopedContext::~ScopedContext() {
  CUcontext popped;
  if (pushed_) driver().cuCtxPopCurrent(&popped);
}

}  // namespace normjit::runtime
