#include "device_arena.h"

#include <string.h>

size_t device_arena_slice_size(size_t bytes) {
  if (bytes == 0) bytes = 1; /* a zero-byte request still gets its own, non-null address */
  return (bytes + DEVICE_ARENA_ALIGNMENT - 1) / DEVICE_ARENA_ALIGNMENT * DEVICE_ARENA_ALIGNMENT;
}

CUresult device_arena_create(device_arena* arena, const cuda_driver* driver, size_t capacity) {
  memset(arena, 0, sizeof *arena);
  arena->driver = driver;
  CUresult result = driver->mem_alloc(&arena->base, capacity);
  if (result == CUDA_SUCCESS) arena->capacity = capacity;
  return result;
}

CUdeviceptr device_arena_take(device_arena* arena, size_t bytes) {
  const size_t size = device_arena_slice_size(bytes);
  if (size > arena->capacity - arena->used) return 0;
  const CUdeviceptr slice = arena->base + arena->used; /* cuMemAlloc's base is 256-aligned */
  arena->used += size;
  return slice;
}

void device_arena_reset(device_arena* arena) { arena->used = 0; }

void device_arena_destroy(device_arena* arena) {
  if (arena->base) arena->driver->mem_free(arena->base);
  memset(arena, 0, sizeof *arena);
}
