/* Embedding normjit from plain C, as an engine does: the program owns the CUDA context, the
 * stream and the device memory (device_arena.c); normjit is told how much workspace it needs
 * and gets it from the program's allocator. It runs LayerNorm and RMSNorm backward over several
 * shapes and dtypes and checks dx, dgamma and dbeta against a double-precision CPU reference.
 *
 * Exit status: 0 every case matched; 1 a mismatch or a failed call; 77 no GPU here (ctest's
 * SKIP_RETURN_CODE): the CPU side ran, the device part was skipped. */
#include <normjit/normjit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "cuda_driver.h"
#include "device_arena.h"
#include "dtype.h"
#include "host_case.h"

enum { EXIT_MISMATCH = 1, EXIT_NO_GPU = 77 };

/* Both kinds on every shape; the dtypes rotate so each kind meets fp32, bf16 and fp16. 16-bit
 * inputs keep fp32 weights, as mixed-precision training does. N = 5003 leaves 16-bit rows only
 * 2-byte aligned; N = 65536 takes the long-row kernels (docs/ARCHITECTURE.md, step 5). */
static const case_spec kCases[] = {
    {NJ_LAYERNORM, 1, 1, NJ_F32, NJ_F32},          {NJ_RMSNORM, 1, 1, NJ_BF16, NJ_F32},
    {NJ_LAYERNORM, 37, 1000, NJ_BF16, NJ_F32},     {NJ_RMSNORM, 37, 1000, NJ_F32, NJ_F32},
    {NJ_LAYERNORM, 199, 4096, NJ_F16, NJ_F32},     {NJ_RMSNORM, 199, 4096, NJ_BF16, NJ_F32},
    {NJ_LAYERNORM, 64, 5003, NJ_BF16, NJ_F32},     {NJ_RMSNORM, 64, 5003, NJ_F16, NJ_F32},
    {NJ_LAYERNORM, 8, 65536, NJ_F32, NJ_F32},      {NJ_RMSNORM, 8, 65536, NJ_F16, NJ_F32},
};
enum { kCaseCount = sizeof kCases / sizeof kCases[0] };
static const uint64_t kSeed = 20240611;

/* Device bytes one case takes from the arena, its workspace included. */
static size_t case_device_bytes(const case_spec* s, size_t workspace) {
  const size_t rows = (size_t)s->m * (size_t)s->n * dtype_size(s->x_dtype);
  const size_t stats = (size_t)s->m * sizeof(float);
  const size_t weights = (size_t)s->n * dtype_size(s->weight_dtype);
  return 3 * device_arena_slice_size(rows) + 2 * device_arena_slice_size(stats) +
         3 * device_arena_slice_size(weights) + device_arena_slice_size(workspace);
}

/* What the program holds on the GPU. */
typedef struct gpu {
  cuda_driver driver;
  CUcontext context;
  CUstream stream;
  device_arena arena;
} gpu;

/* For functions that return 1 on success: a failed driver call is reported and returns 0. */
#define CU_CHECK(g, call)                                                                               \
  do {                                                                                                  \
    CUresult cu_check_result = (call);                                                                  \
    if (cu_check_result != CUDA_SUCCESS) {                                                              \
      fprintf(stderr, "embed_c: %s failed with %s\n", #call, cuda_error_name(&(g)->driver, cu_check_result)); \
      return 0;                                                                                         \
    }                                                                                                   \
  } while (0)

/* One case on the GPU: upload, poison the outputs, run, copy back, compare. Returns 1 when it
 * matched, 0 on a mismatch or a failed call (already reported). */
static int run_case(gpu* g, nj_engine* engine, const host_case* host, size_t workspace_bytes) {
  const case_spec* s = &host->spec;
  const nj_problem problem = case_problem(s);
  const size_t count = (size_t)s->m * (size_t)s->n;
  const size_t row_bytes = count * dtype_size(s->x_dtype), stat_bytes = (size_t)s->m * sizeof(float);
  const size_t weight_bytes = (size_t)s->n * dtype_size(s->weight_dtype);
  const int layer_norm = s->kind == NJ_LAYERNORM;

  device_arena_reset(&g->arena);
  const CUdeviceptr x = device_arena_take(&g->arena, row_bytes), dy = device_arena_take(&g->arena, row_bytes),
                    dx = device_arena_take(&g->arena, row_bytes), mean = device_arena_take(&g->arena, stat_bytes),
                    rstd = device_arena_take(&g->arena, stat_bytes), gamma = device_arena_take(&g->arena, weight_bytes),
                    dgamma = device_arena_take(&g->arena, weight_bytes),
                    dbeta = device_arena_take(&g->arena, weight_bytes),
                    workspace = device_arena_take(&g->arena, workspace_bytes);
  if (!x || !dy || !dx || !mean || !rstd || !gamma || !dgamma || !dbeta || !workspace) {
    fprintf(stderr, "embed_c: the arena is too small for this case (a bug in case_device_bytes)\n");
    return 0;
  }
  CU_CHECK(g, g->driver.memcpy_htod(x, host->x, row_bytes));
  CU_CHECK(g, g->driver.memcpy_htod(dy, host->dy, row_bytes));
  if (layer_norm) CU_CHECK(g, g->driver.memcpy_htod(mean, host->mean, stat_bytes));
  CU_CHECK(g, g->driver.memcpy_htod(rstd, host->rstd, stat_bytes));
  CU_CHECK(g, g->driver.memcpy_htod(gamma, host->gamma, weight_bytes));
  /* 0xFF bytes are NaN in fp32, fp16 and bf16: an element normjit fails to write cannot pass. */
  CU_CHECK(g, g->driver.memset_d8(dx, 0xFF, row_bytes));
  CU_CHECK(g, g->driver.memset_d8(dgamma, 0xFF, weight_bytes));
  CU_CHECK(g, g->driver.memset_d8(dbeta, 0xFF, weight_bytes));

  nj_backward_args args;
  memset(&args, 0, sizeof args); /* strides 0: rows are contiguous */
  args.m = s->m;
  args.x = (const void*)(uintptr_t)x;
  args.dy = (const void*)(uintptr_t)dy;
  args.mean = layer_norm ? (const float*)(uintptr_t)mean : NULL;
  args.rstd = (const float*)(uintptr_t)rstd;
  args.weight = (const void*)(uintptr_t)gamma;
  args.dx = (void*)(uintptr_t)dx;
  args.dweight = (void*)(uintptr_t)dgamma;
  args.dbias = layer_norm ? (void*)(uintptr_t)dbeta : NULL;
  args.workspace = (void*)(uintptr_t)workspace; /* ours, so normjit allocates nothing */
  args.workspace_bytes = workspace_bytes;
  /* The memcpys and memsets above are ordered before this on the legacy default stream, which
   * our blocking stream (flags 0) waits for. */
  const nj_status status = layer_norm ? nj_layer_norm_backward(engine, &problem, &args, g->stream)
                                      : nj_rms_norm_backward(engine, &problem, &args, g->stream);
  if (status != NJ_OK) {
    fprintf(stderr, "embed_c: %s: %s\n", nj_status_name(status), nj_last_error());
    return 0;
  }
  CU_CHECK(g, g->driver.stream_synchronize(g->stream));

  void* got_dx = malloc(row_bytes);
  void* got_dgamma = malloc(weight_bytes);
  void* got_dbeta = malloc(weight_bytes);
  int ok = got_dx && got_dgamma && got_dbeta;
  if (!ok) fprintf(stderr, "embed_c: out of host memory for the results\n");
  if (ok) ok = g->driver.memcpy_dtoh(got_dx, dx, row_bytes) == CUDA_SUCCESS &&
               g->driver.memcpy_dtoh(got_dgamma, dgamma, weight_bytes) == CUDA_SUCCESS &&
               g->driver.memcpy_dtoh(got_dbeta, dbeta, weight_bytes) == CUDA_SUCCESS;
  if (got_dx && got_dgamma && got_dbeta && !ok) fprintf(stderr, "embed_c: copying the results back failed\n");
  if (ok) {
    const double tolerance = tolerance_for(s->x_dtype);
    /* Every comparison runs (and prints) even after one fails. */
    ok = compare_output("dx", s->x_dtype, got_dx, &host->dx, tolerance);
    ok = compare_output("dgamma", s->weight_dtype, got_dgamma, &host->dgamma, tolerance) && ok;
    if (layer_norm) ok = compare_output("dbeta", s->weight_dtype, got_dbeta, &host->dbeta, tolerance) && ok;
  }
  free(got_dx);
  free(got_dgamma);
  free(got_dbeta);
  return ok;
}

/* Our own context (current on this thread from here on) and stream. Returns 1 when both exist. */
static int gpu_open(gpu* g) {
  CUdevice device;
  char name[256] = "?";
  CU_CHECK(g, g->driver.device_get(&device, 0));
  CU_CHECK(g, g->driver.device_get_name(name, (int)sizeof name, device));
  CU_CHECK(g, g->driver.ctx_create(&g->context, 0, device));
  CU_CHECK(g, g->driver.stream_create(&g->stream, CU_STREAM_DEFAULT));
  printf("device 0: %s; own context and stream\n", name);
  return 1;
}

/* Frees what gpu_open and run_on_gpu made, the context last. */
static void gpu_close(gpu* g) {
  device_arena_destroy(&g->arena);
  if (g->stream) g->driver.stream_destroy(g->stream);
  if (g->context) g->driver.ctx_destroy(g->context);
  g->stream = NULL;
  g->context = NULL;
}

/* Workspace sizes, the arena, then every case. Returns the number of cases that failed. */
static int run_on_gpu(gpu* g, nj_engine* engine) {
  if (!gpu_open(g)) return kCaseCount;
  /* nj_workspace_size asks about the current context's device. */
  size_t workspace[kCaseCount], capacity = 0;
  for (int i = 0; i < kCaseCount; ++i) {
    const nj_problem problem = case_problem(&kCases[i]);
    const nj_status status = nj_workspace_size(engine, &problem, kCases[i].m, &workspace[i]);
    if (status != NJ_OK) {
      fprintf(stderr, "embed_c: nj_workspace_size: %s: %s\n", nj_status_name(status), nj_last_error());
      return kCaseCount;
    }
    const size_t need = case_device_bytes(&kCases[i], workspace[i]);
    if (need > capacity) capacity = need;
  }
  const CUresult arena = device_arena_create(&g->arena, &g->driver, capacity);
  if (arena != CUDA_SUCCESS) {
    fprintf(stderr, "embed_c: cuMemAlloc of the %zu-byte arena failed with %s\n", capacity,
            cuda_error_name(&g->driver, arena));
    return kCaseCount;
  }
  printf("arena: %zu bytes from one cuMemAlloc\n\n", capacity);

  int failed = 0;
  for (int i = 0; i < kCaseCount; ++i) {
    char what[160];
    case_describe(&kCases[i], what, sizeof what);
    printf("[%d/%d] %s, workspace %zu bytes\n", i + 1, kCaseCount, what, workspace[i]);
    host_case host;
    if (!host_case_build(&kCases[i], kSeed + (uint64_t)i, &host)) {
      fprintf(stderr, "embed_c: out of host memory building %s\n", what);
      ++failed;
      continue;
    }
    if (!run_case(g, engine, &host, workspace[i])) ++failed;
    host_case_free(&host);
  }
  return failed;
}

int main(void) {
  printf("embed_c: normjit %s through its C API\n", nj_version_string());
  nj_engine* engine = NULL;
  nj_status status = nj_engine_create(NULL, &engine);
  if (status != NJ_OK) {
    fprintf(stderr, "embed_c: nj_engine_create: %s: %s\n", nj_status_name(status), nj_last_error());
    return EXIT_MISMATCH;
  }
  printf("engine created; %d cases, each checked against a double-precision CPU reference:\n", kCaseCount);
  for (int i = 0; i < kCaseCount; ++i) {
    char what[160];
    case_describe(&kCases[i], what, sizeof what);
    printf("  %s\n", what);
  }
  char why[512] = "";
  if (!dtype_self_check(why, sizeof why)) {
    fprintf(stderr, "embed_c: the host fp16/bf16 conversions are wrong: %s\n", why);
    nj_engine_destroy(engine);
    return EXIT_MISMATCH;
  }

  gpu g;
  memset(&g, 0, sizeof g);
  if (!cuda_driver_open(&g.driver, why, sizeof why)) {
    /* The CPU side still runs in full, so CI covers the inputs and the reference. */
    for (int i = 0; i < kCaseCount; ++i) {
      host_case host;
      if (!host_case_build(&kCases[i], kSeed + (uint64_t)i, &host)) {
        fprintf(stderr, "embed_c: out of host memory building case %d\n", i + 1);
        nj_engine_destroy(engine);
        return EXIT_MISMATCH;
      }
      host_case_free(&host);
    }
    printf("host inputs and references built for all %d cases\n", kCaseCount);
    printf("no GPU: skipping the device part (%s)\n", why);
    nj_engine_destroy(engine);
    return EXIT_NO_GPU;
  }

  int failed = run_on_gpu(&g, engine);
  if (!failed) {
    /* An engine may outlive a context its kernels were loaded into: an engine that makes a
     * fresh context (after a device reset, say) runs the same cases there. The driver may give
     * the new context the old one's handle; the engine must load its kernels anew all the same. */
    const CUcontext old_context = g.context;
    gpu_close(&g);
    printf("\ncontext destroyed; the same engine in a new context:\n");
    failed = run_on_gpu(&g, engine);
    printf("(the new context %s the old one's handle)\n", g.context == old_context ? "reuses" : "does not reuse");
  }
  /* The engine's kernels live in our context: destroy it while the context is still there. */
  nj_engine_destroy(engine);
  gpu_close(&g);
  if (failed) {
    printf("\nembed_c: %d of %d cases FAILED\n", failed, kCaseCount);
    return EXIT_MISMATCH;
  }
  printf("\nembed_c: all %d cases match the reference, in both contexts\n", kCaseCount);
  return 0;
}
