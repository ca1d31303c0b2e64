// The CUDA driver API, opened with dlopen("libcuda.so.1") on first use, so libnormjit loads
// and its CPU-side features work on a machine without a GPU. Entry points are resolved with
// cuGetProcAddress at the CUDA version of the headers we were built with, so each pointer has
// exactly the prototype cuda.h declares.
#pragma once
#include <cuda.h>

#include <string>

namespace normjit::runtime {

struct CudaDriver {
#define NJ_DRIVER_FUNCTIONS(X)                                                     \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)           \
  X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetAttribute)   \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)                        \
  X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuCtxPushCurrent)     \
  X(cuCtxPopCurrent) X(cuCtxSynchronize) X(cuStreamGetCtx)                        \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)                    \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel)                   \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                  \
  X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync)                 \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyDtoDAsync)           \
  X(cuMemsetD8) X(cuMemsetD8Async) X(cuMemsetD32Async)                           \
  X(cuMemGetInfo) X(cuPointerGetAttribute)                                        \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)                     \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuStreamIsCapturing)            \
  X(cuGraphInstantiate) X(cuGraphLaunch) X(cuGraphDestroy) X(cuGraphExecDestroy)  \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)       \
  X(cuEventElapsedTime)
#define NJ_DECLARE(name) decltype(&::name) name = nullptr;
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

}  // namespace normjit::runtime

// Checks a driver call; the context message is only built when the call failed, so the launch
// path allocates nothing.
#define NJ_CU(call, context)                                                      \
  do {                                                                            \
    const CUresult nj_result_ = (call);                                           \
    if (nj_result_ != CUDA_SUCCESS) ::normjit::runtime::fail_cu(nj_result_, #call, (context)); \
  } while (0)
