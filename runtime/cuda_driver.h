// The CUDA driver API, opened with dlopen("libcuda.so.1") on first use, so libnormjit loads
// and its CPU-side features work on a machine without a GPU. Entry points are resolved with
// cuGetProcAddress at the CUDA version of the headers we were built with, so each pointer has
// exactly the prototype cuda.h declares.
#pragma once
#include <cuda.h>

#include <string>

namespace normjit::runtime {

// Each entry: the name as cuda.h spells it, and the CUDA version whose ABI that prototype is.
// cuGetProcAddress at the header's CUDA_VERSION would hand back the newest ABI instead
// (cuStreamGetCtx at 13.0 is the three-argument green-context form), so each is pinned, and
// cuda_driver.cpp checks every pin against cudaTypedefs.h at compile time.
#define NJ_DRIVER_FUNCTIONS(X)                                                              \
  X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuGetErrorName, 6000)                       \
  X(cuGetErrorString, 6000) X(cuDeviceGet, 2000) X(cuDeviceGetCount, 2000)                  \
  X(cuDeviceGetName, 2000) X(cuDeviceGetAttribute, 2000) X(cuDevicePrimaryCtxRetain, 7000)  \
  X(cuDevicePrimaryCtxRelease, 11000) X(cuCtxGetCurrent, 4000) X(cuCtxSetCurrent, 4000)     \
  X(cuCtxGetId, 12000) X(cuCtxGetDevice, 2000) X(cuCtxPushCurrent, 4000) X(cuCtxPopCurrent, 4000)                \
  X(cuCtxSynchronize, 2000) X(cuStreamGetCtx, 9020) X(cuModuleLoadData, 2000)               \
  X(cuModuleUnload, 2000) X(cuModuleGetFunction, 2000) X(cuFuncGetAttribute, 2020)          \
  X(cuFuncSetAttribute, 9000) X(cuLaunchKernel, 4000) X(cuLaunchKernelEx, 11060)              \
  X(cuOccupancyMaxActiveClusters, 11070)                                                    \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) X(cuMemAlloc, 3020)                  \
  X(cuMemFree, 3020) X(cuMemAllocAsync, 11020) X(cuMemFreeAsync, 11020)                     \
  X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020) X(cuMemcpyDtoD, 3020)                         \
  X(cuMemcpyDtoDAsync, 3020) X(cuMemsetD8, 3020) X(cuMemsetD8Async, 3020)                   \
  X(cuMemsetD32Async, 3020) X(cuMemGetInfo, 3020) X(cuPointerGetAttribute, 4000)            \
  X(cuStreamCreate, 2000) X(cuStreamDestroy, 4000) X(cuStreamSynchronize, 2000)             \
  X(cuStreamBeginCapture, 10010) X(cuStreamEndCapture, 10000) X(cuStreamIsCapturing, 10000) \
  X(cuGraphInstantiateWithFlags, 11040) X(cuGraphLaunch, 10000) X(cuGraphDestroy, 10000)    \
  X(cuGraphExecDestroy, 10000) X(cuEventCreate, 2000) X(cuEventDestroy, 4000)               \
  X(cuEventRecord, 2000) X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 12080)

struct CudaDriver {
#define NJ_DECLARE(name, version) decltype(&::name) name = nullptr;
  NJ_DRIVER_FUNCTIONS(NJ_DECLARE)
#undef NJ_DECLARE
};

// The process-wide driver table, loaded and cuInit-ed once. Throws normjit::Error with
// Status::NoDriver (library missing or cuInit failed) naming the cause and what to do.
const CudaDriver& driver();
// True when the driver loads and reports at least one device; never throws.
bool cuda_available(std::string* why = nullptr);

// Throws normjit::Error(Status::Cuda) for a failed call, naming the call and the context.
[[noreturn]] void fail_cu(CUresult result, const char* call, const std::string& context);

// Makes ctx current for the scope when it is not already (a caller's stream may belong to a
// context other than the thread's current one; the tuner may run on any thread).
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace normjit::runtime

// Checks a driver call; the context message is only built when the call failed, so the launch
// path allocates nothing.
#define NJ_CU(call, context)                                                      \
  do {                                                                            \
    const CUresult nj_result_ = (call);                                           \
    if (nj_result_ != CUDA_SUCCESS) ::normjit::runtime::fail_cu(nj_result_, #call, (context)); \
  } while (0)
