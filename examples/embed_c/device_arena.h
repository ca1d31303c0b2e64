/* The program's own device allocator: one cuMemAlloc up front, handed out in aligned slices
 * and reset between cases. An engine with a caching allocator gives normjit memory the same
 * way: normjit never allocates when it is given a workspace. */
#ifndef EMBED_C_DEVICE_ARENA_H
#define EMBED_C_DEVICE_ARENA_H

#include "cuda_driver.h"

enum { DEVICE_ARENA_ALIGNMENT = 256 }; /* like cudaMalloc; normjit needs 16 for a workspace */

typedef struct device_arena {
  const cuda_driver* driver;
  CUdeviceptr base;
  size_t capacity, used;
} device_arena;

/* bytes rounded up to the alignment: what one slice of that size uses of the arena. */
size_t device_arena_slice_size(size_t bytes);

CUresult device_arena_create(device_arena* arena, const cuda_driver* driver, size_t capacity);
/* A slice of bytes (at least one alignment unit, so never 0 for a valid request), or 0 when
 * the arena is full. */
CUdeviceptr device_arena_take(device_arena* arena, size_t bytes);
void device_arena_reset(device_arena* arena);
void device_arena_destroy(device_arena* arena);

#endif
