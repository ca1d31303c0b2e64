/* The few CUDA driver calls this example makes, opened at run time with dlopen.
 *
 * Why not link libcuda: the program has to start, and do its CPU-side work, on a machine with
 * no NVIDIA driver at all (CI), where libcuda.so.1 does not exist. An engine that must run on
 * such machines does the same. cuda.h supplies the types only. */
#ifndef EMBED_C_CUDA_DRIVER_H
#define EMBED_C_CUDA_DRIVER_H

#include <cudaTypedefs.h>

/* Each entry is the ABI version whose prototype the pointer type names (cudaTypedefs.h), so
 * cuGetProcAddress hands back exactly that function (cuMemAlloc_v2 for 3020, and so on). */
typedef struct cuda_driver {
  PFN_cuInit_v2000 init;
  PFN_cuGetErrorName_v6000 get_error_name;
  PFN_cuDeviceGetCount_v2000 device_get_count;
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuDeviceGetName_v2000 device_get_name;
  PFN_cuCtxCreate_v3020 ctx_create;
  PFN_cuCtxDestroy_v4000 ctx_destroy;
  PFN_cuStreamCreate_v2000 stream_create;
  PFN_cuStreamDestroy_v4000 stream_destroy;
  PFN_cuStreamSynchronize_v2000 stream_synchronize;
  PFN_cuMemAlloc_v3020 mem_alloc;
  PFN_cuMemFree_v3020 mem_free;
  PFN_cuMemcpyHtoD_v3020 memcpy_htod;
  PFN_cuMemcpyDtoH_v3020 memcpy_dtoh;
  PFN_cuMemsetD8_v3020 memset_d8;
} cuda_driver;

/* Opens libcuda.so.1, resolves every entry and calls cuInit(0). Returns 1 when all of that
 * worked. Returns 0 when this machine cannot run CUDA (no driver library, a driver too old,
 * cuInit failing, no device); why then says so in a sentence. */
int cuda_driver_open(cuda_driver* driver, char* why, size_t why_size);

/* "CUDA_ERROR_OUT_OF_MEMORY" and the like, for messages. */
const char* cuda_error_name(const cuda_driver* driver, CUresult result);

#endif
