#include "cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Every entry point goes through cuGetProcAddress_v2 with the version its pointer type was
 * written for: dlsym("cuMemAlloc") would find the CUDA 2.0 ABI (32-bit sizes), and cuda.h's
 * macros (cuCtxCreate -> cuCtxCreate_v4 in CUDA 13) do not apply to strings. */
typedef struct entry {
  const char* symbol;
  int version;
  void** slot;
} entry;

int cuda_driver_open(cuda_driver* driver, char* why, size_t why_size) {
  memset(driver, 0, sizeof *driver);
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* reason = dlerror();
    snprintf(why, why_size, "dlopen(\"libcuda.so.1\") failed: %s", reason ? reason : "unknown reason");
    return 0;
  }
  PFN_cuGetProcAddress_v12000 get_proc = NULL;
  /* dlsym returns void*; copying it into a function pointer is the POSIX-sanctioned way. */
  void* sym = dlsym(lib, "cuGetProcAddress_v2");
  memcpy(&get_proc, &sym, sizeof get_proc);
  if (!get_proc) {
    snprintf(why, why_size, "the CUDA driver is older than CUDA 12 (no cuGetProcAddress_v2); update it");
    return 0;
  }
  const entry entries[] = {
      {"cuInit", 2000, (void**)&driver->init},
      {"cuGetErrorName", 6000, (void**)&driver->get_error_name},
      {"cuDeviceGetCount", 2000, (void**)&driver->device_get_count},
      {"cuDeviceGet", 2000, (void**)&driver->device_get},
      {"cuDeviceGetName", 2000, (void**)&driver->device_get_name},
      {"cuCtxCreate", 3020, (void**)&driver->ctx_create},
      {"cuCtxDestroy", 4000, (void**)&driver->ctx_destroy},
      {"cuStreamCreate", 2000, (void**)&driver->stream_create},
      {"cuStreamDestroy", 4000, (void**)&driver->stream_destroy},
      {"cuStreamSynchronize", 2000, (void**)&driver->stream_synchronize},
      {"cuMemAlloc", 3020, (void**)&driver->mem_alloc},
      {"cuMemFree", 3020, (void**)&driver->mem_free},
      {"cuMemcpyHtoD", 3020, (void**)&driver->memcpy_htod},
      {"cuMemcpyDtoH", 3020, (void**)&driver->memcpy_dtoh},
      {"cuMemsetD8", 3020, (void**)&driver->memset_d8},
  };
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    *entries[i].slot = NULL;
    if (get_proc(entries[i].symbol, entries[i].slot, entries[i].version, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=
            CUDA_SUCCESS ||
        found != CU_GET_PROC_ADDRESS_SUCCESS || !*entries[i].slot) {
      snprintf(why, why_size, "the CUDA driver has no %s (ABI version %d); update the NVIDIA driver",
               entries[i].symbol, entries[i].version);
      return 0;
    }
  }
  CUresult init = driver->init(0);
  if (init != CUDA_SUCCESS) {
    snprintf(why, why_size, "cuInit failed with %s%s", cuda_error_name(driver, init),
             init == CUDA_ERROR_NO_DEVICE ? " (no CUDA device is visible; check CUDA_VISIBLE_DEVICES)" : "");
    return 0;
  }
  int count = 0;
  CUresult counted = driver->device_get_count(&count);
  if (counted != CUDA_SUCCESS || count == 0) {
    snprintf(why, why_size, "the CUDA driver loaded but reports no device (%s)",
             counted != CUDA_SUCCESS ? cuda_error_name(driver, counted) : "count 0");
    return 0;
  }
  /* lib stays open: the pointers above live in it for the rest of the process. */
  return 1;
}

const char* cuda_error_name(const cuda_driver* driver, CUresult result) {
  const char* name = NULL;
  if (driver->get_error_name && driver->get_error_name(result, &name) == CUDA_SUCCESS && name) return name;
  return "an unknown CUDA error";
}
