/* The C API from an installed normjit: version, engine, workspace size (or why not: no GPU).
 * Prints the path libnormjit was loaded from, so the test can see it is the installed one. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <normjit/normjit.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  char header_version[32];
  snprintf(header_version, sizeof header_version, "%d.%d.%d", NJ_VERSION_MAJOR, NJ_VERSION_MINOR, NJ_VERSION_PATCH);
  const char* version = nj_version_string();
  printf("consumer_c: normjit %s (header %s, package %s)\n", version, header_version, NORMJIT_PACKAGE_VERSION);
  if (strcmp(version, header_version) != 0 || strcmp(version, NORMJIT_PACKAGE_VERSION) != 0) {
    fprintf(stderr, "consumer_c: the library, its header and its CMake package disagree on the version\n");
    return 1;
  }
  Dl_info where;
  if (!dladdr((void*)nj_version_string, &where) || !where.dli_fname) {
    fprintf(stderr, "consumer_c: dladdr cannot say where nj_version_string lives\n");
    return 1;
  }
  printf("consumer_c: libnormjit: %s\n", where.dli_fname);

  nj_engine* engine = NULL;
  nj_status status = nj_engine_create(NULL, &engine);
  if (status != NJ_OK) {
    fprintf(stderr, "consumer_c: nj_engine_create: %s: %s\n", nj_status_name(status), nj_last_error());
    return 1;
  }
  /* A bad call is refused with a message, on any machine. */
  size_t bytes = 0;
  status = nj_workspace_size(engine, NULL, 128, &bytes);
  if (status != NJ_ERR_INVALID_ARGUMENT || nj_last_error()[0] == '\0') {
    fprintf(stderr, "consumer_c: nj_workspace_size(problem = NULL) gave %s, not NJ_ERR_INVALID_ARGUMENT\n",
            nj_status_name(status));
    nj_engine_destroy(engine);
    return 1;
  }
  nj_problem problem;
  memset(&problem, 0, sizeof problem);
  problem.kind = NJ_LAYERNORM;
  problem.n = 4096;
  problem.x_dtype = NJ_BF16;
  problem.weight_dtype = NJ_F32;
  problem.has_weight = 1;
  problem.has_bias = 1;
  status = nj_workspace_size(engine, &problem, 128, &bytes);
  int rc = 0;
  if (status == NJ_OK) {
    printf("consumer_c: workspace for LayerNorm bf16 128 x 4096: %zu bytes\n", bytes);
  } else if (status == NJ_ERR_NO_DRIVER || status == NJ_ERR_NO_DEVICE) {
    printf("consumer_c: no GPU (%s): %s\n", nj_status_name(status), nj_last_error());
  } else {
    fprintf(stderr, "consumer_c: nj_workspace_size: %s: %s\n", nj_status_name(status), nj_last_error());
    rc = 1;
  }
  nj_engine_destroy(engine);
  if (rc == 0) printf("consumer_c: ok\n");
  return rc;
}
