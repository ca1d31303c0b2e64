// The C API's ABI guard: nj_engine_create passes the caller's struct sizes, so a program built
// against an older normjit.h (shorter structs) has the fields it lacks read as zero rather than
// from whatever follows its structs, and one built against a newer header is refused.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "normjit/normjit.h"
#include "support/c_problem.h"

namespace {

using normjit::test::rms_problem;

// The structs as earlier headers declared them (git show <commit>:include/normjit/normjit.h),
// so their sizes are the compiler's rather than the library's table. Written out flat: a derived
// struct would not reuse its base's tail padding as C does for the next field.
#define PROBLEM_314EE68                            \
  nj_norm_kind kind;                               \
  int64_t n;                                       \
  nj_dtype x_dtype, dy_dtype, dx_dtype, weight_dtype; \
  int has_weight, has_bias, alignment;
#define PROBLEM_7B82868 PROBLEM_314EE68 int residual, zero_centered_weight, rowscale; nj_dropout_mask dropout;
#define PROBLEM_FCDF3E2 PROBLEM_7B82868 nj_gate gate;
struct problem_314ee68 { PROBLEM_314EE68 };  // the first header: up to alignment
struct problem_7b82868 { PROBLEM_7B82868 };  // + residual .. dropout; gate would sit in its padding
struct problem_fcdf3e2 { PROBLEM_FCDF3E2 };  // + gate
struct problem_c7867cd { PROBLEM_FCDF3E2 int parallel; };  // + parallel

#define BACKWARD_ARGS_314EE68                                                               \
  int64_t m;                                                                                \
  const void* x;                                                                            \
  int64_t x_stride;                                                                         \
  const void* dy;                                                                           \
  int64_t dy_stride;                                                                        \
  const float *mean, *rstd;                                                                 \
  const void* weight;                                                                       \
  void* dx;                                                                                 \
  int64_t dx_stride;                                                                        \
  void *dweight, *dbias, *workspace;                                                        \
  size_t workspace_bytes;
#define BACKWARD_ARGS_7B82868                                                               \
  BACKWARD_ARGS_314EE68 const void* dresidual;                                              \
  int64_t dresidual_stride;                                                                 \
  const float* rowscale;                                                                    \
  const void* dropout_mask;                                                                 \
  int64_t dropout_mask_stride;                                                              \
  double dropout_p;                                                                         \
  void* dresidual_in;                                                                       \
  int64_t dresidual_in_stride;
#define BACKWARD_ARGS_FCDF3E2 BACKWARD_ARGS_7B82868 const void* z; int64_t z_stride; void* dz; int64_t dz_stride;
struct backward_args_314ee68 { BACKWARD_ARGS_314EE68 };  // up to workspace_bytes
struct backward_args_7b82868 { BACKWARD_ARGS_7B82868 };  // + dresidual .. dresidual_in_stride
struct backward_args_fcdf3e2 { BACKWARD_ARGS_FCDF3E2 };  // + z .. dz_stride
struct backward_args_c7867cd {                            // + dy1 .. dbias1
  BACKWARD_ARGS_FCDF3E2
  const void* dy1;
  int64_t dy1_stride;
  const void* weight1;
  void *dweight1, *dbias1;
};
struct forward_args_6509c96 {  // the first forward: up to eps
  int64_t m;
  const void* x;
  int64_t x_stride;
  const void *weight, *bias;
  void* y;
  int64_t y_stride;
  float *mean, *rstd;
  double eps;
};
#undef PROBLEM_314EE68
#undef PROBLEM_7B82868
#undef PROBLEM_FCDF3E2
#undef BACKWARD_ARGS_314EE68
#undef BACKWARD_ARGS_7B82868
#undef BACKWARD_ARGS_FCDF3E2

// A layout's struct at the start of a current-size buffer whose remaining bytes are garbage: what
// a library reading the current layout would find after an older program's struct. `fields` less
// than sizeof(Old) leaves its tail padding garbage too, as a struct filled field by field can.
template <class Current, class Old>
struct Tailed {
  alignas(Current) unsigned char bytes[sizeof(Current)];
  explicit Tailed(const Old& old, size_t fields = sizeof(Old)) {
    static_assert(sizeof(Old) < sizeof(Current), "an older layout is shorter");
    std::memset(bytes, 0xAB, sizeof bytes);
    std::memcpy(bytes, &old, fields);
  }
  const Current* get() const { return reinterpret_cast<const Current*>(bytes); }
};

struct Outcome {
  nj_status status;
  std::string message;
  bool operator==(const Outcome& o) const { return status == o.status && message == o.message; }
  bool operator!=(const Outcome& o) const { return !(*this == o); }
};
std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << nj_status_name(o.status) << ": " << o.message;
}
Outcome outcome(nj_status s) { return {s, nj_last_error()}; }

nj_engine* create(size_t problem, size_t backward_args, size_t forward_args) {
  nj_engine* e = nullptr;
  const nj_status s = nj_engine_create_abi(nullptr, &e, problem, backward_args, forward_args);
  EXPECT_EQ(s, NJ_OK) << problem << "/" << backward_args << "/" << forward_args << ": " << nj_last_error();
  return e;
}


// A backward that every layout can express and whose checks fail on x, the first required
// pointer, after the fused options' checks: those would fail first on a nonzero fused field.
template <class A>
A backward_without_x() {
  A a{};
  a.m = 4;
  a.dy = a.dx = reinterpret_cast<void*>(uintptr_t{0x10000});
  a.rstd = reinterpret_cast<const float*>(uintptr_t{0x20000});
  a.weight = reinterpret_cast<const void*>(uintptr_t{0x30000});
  a.dweight = reinterpret_cast<void*>(uintptr_t{0x40000});
  return a;
}

template <class A>
A forward_without_x() {
  A a{};
  a.m = 4;
  a.y = reinterpret_cast<void*>(uintptr_t{0x50000});
  a.rstd = reinterpret_cast<float*>(uintptr_t{0x20000});
  a.weight = reinterpret_cast<const void*>(uintptr_t{0x30000});
  a.eps = 1e-6;
  return a;
}

class CAbi : public ::testing::Test {
 protected:
  void SetUp() override { setenv("NORMJIT_DISK_CACHE", "0", 1); }
  void TearDown() override { unsetenv("NORMJIT_DISK_CACHE"); }
};

TEST_F(CAbi, TheCurrentSizesAreAccepted) {
  nj_engine* e = nullptr;
  ASSERT_EQ(nj_engine_create_abi(nullptr, &e, sizeof(nj_problem), sizeof(nj_backward_args), sizeof(nj_forward_args)),
            NJ_OK)
      << nj_last_error();
  ASSERT_NE(e, nullptr);
  nj_problem p = rms_problem<nj_problem>();
  nj_backward_args a = backward_without_x<nj_backward_args>();
  EXPECT_EQ(nj_rms_norm_backward(e, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("x is NULL"), std::string::npos) << nj_last_error();
  // nj_problem's last field is read.
  p.recompute_from_output = 1;
  a = nj_backward_args{};
  a.m = 4;
  EXPECT_EQ(nj_rms_norm_backward(e, &p, &a, nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("y is NULL but recompute_from_output is on"), std::string::npos)
      << nj_last_error();
  nj_engine_destroy(e);
}

TEST_F(CAbi, EveryEarlierLayoutIsAccepted) {
  const size_t problems[] = {sizeof(problem_314ee68), sizeof(problem_7b82868), sizeof(problem_fcdf3e2),
                             sizeof(problem_c7867cd), sizeof(nj_problem)};
  const size_t backward_args[] = {sizeof(backward_args_314ee68), sizeof(backward_args_7b82868),
                                  sizeof(backward_args_fcdf3e2), sizeof(backward_args_c7867cd),
                                  sizeof(nj_backward_args)};
  const size_t forward_args[] = {sizeof(forward_args_6509c96), sizeof(nj_forward_args)};
  for (size_t p : problems)
    for (size_t b : backward_args)
      for (size_t f : forward_args) nj_engine_destroy(create(p, b, f));
}

// A program of the first header: its structs end where the fused options begin, and what lies
// after them in memory must not be read as those options.
TEST_F(CAbi, AnOlderLayoutReadsTheFieldsItLacksAsZero) {
  nj_engine* old = create(sizeof(problem_314ee68), sizeof(backward_args_314ee68), sizeof(forward_args_6509c96));
  nj_engine* current = create(sizeof(nj_problem), sizeof(nj_backward_args), sizeof(nj_forward_args));
  ASSERT_TRUE(old && current);
  // Its nj_problem's tail padding (where residual is now) is garbage as well: it is not read.
  const Tailed<nj_problem, problem_314ee68> old_problem(rms_problem<problem_314ee68>(),
                                                        offsetof(problem_314ee68, alignment) + sizeof(int));
  const Tailed<nj_backward_args, backward_args_314ee68> old_backward(backward_without_x<backward_args_314ee68>());
  const Tailed<nj_forward_args, forward_args_6509c96> old_forward(forward_without_x<forward_args_6509c96>());
  const nj_problem zeroed_problem = rms_problem<nj_problem>();
  const nj_backward_args zeroed_backward = backward_without_x<nj_backward_args>();
  const nj_forward_args zeroed_forward = forward_without_x<nj_forward_args>();

  // nj_workspace_size validates the problem, then refuses m < 0 before it needs a GPU.
  size_t bytes = 0;
  const Outcome expected_size = outcome(nj_workspace_size(current, &zeroed_problem, -1, &bytes));
  ASSERT_NE(expected_size.message.find("m = -1 is negative"), std::string::npos) << expected_size;
  EXPECT_EQ(outcome(nj_workspace_size(old, old_problem.get(), -1, &bytes)), expected_size);
  // The same bytes through the current layout are read as options: the guard is what differs.
  EXPECT_NE(outcome(nj_workspace_size(current, old_problem.get(), -1, &bytes)), expected_size);

  const Outcome expected_backward = outcome(nj_rms_norm_backward(current, &zeroed_problem, &zeroed_backward, nullptr));
  ASSERT_NE(expected_backward.message.find("x is NULL"), std::string::npos) << expected_backward;
  EXPECT_EQ(outcome(nj_rms_norm_backward(old, old_problem.get(), old_backward.get(), nullptr)), expected_backward);
  EXPECT_NE(outcome(nj_rms_norm_backward(current, &zeroed_problem, old_backward.get(), nullptr)), expected_backward);

  const Outcome expected_forward = outcome(nj_rms_norm_forward(current, &zeroed_problem, &zeroed_forward, nullptr));
  ASSERT_NE(expected_forward.message.find("x is NULL"), std::string::npos) << expected_forward;
  EXPECT_EQ(outcome(nj_rms_norm_forward(old, old_problem.get(), old_forward.get(), nullptr)), expected_forward);
  EXPECT_NE(outcome(nj_rms_norm_forward(current, &zeroed_problem, old_forward.get(), nullptr)), expected_forward);

  nj_engine_destroy(old);
  nj_engine_destroy(current);
}

// Middle layouts: their own last fields are read, the later ones are zero.
TEST_F(CAbi, AMiddleLayoutReadsItsOwnFields) {
  // nj_problem of fcdf3e2 (up to gate) with garbage where parallel and recompute_from_output are.
  nj_engine* e = create(sizeof(problem_fcdf3e2), sizeof(backward_args_c7867cd), sizeof(nj_forward_args));
  nj_engine* current = create(sizeof(nj_problem), sizeof(nj_backward_args), sizeof(nj_forward_args));
  ASSERT_TRUE(e && current);
  problem_fcdf3e2 gated = rms_problem<problem_fcdf3e2>();
  gated.gate = NJ_GATE_AFTER_NORM;
  const Tailed<nj_problem, problem_fcdf3e2> tp(gated);
  nj_problem expected = rms_problem<nj_problem>();
  expected.gate = NJ_GATE_AFTER_NORM;
  size_t bytes = 0;
  const Outcome expected_size = outcome(nj_workspace_size(current, &expected, -1, &bytes));
  ASSERT_NE(expected_size.message.find("m = -1 is negative"), std::string::npos) << expected_size;
  EXPECT_EQ(outcome(nj_workspace_size(e, tp.get(), -1, &bytes)), expected_size);
  EXPECT_NE(outcome(nj_workspace_size(current, tp.get(), -1, &bytes)), expected_size);

  // nj_backward_args of c7867cd (up to dbias1): dbias1 is read (has_bias is off), and y and bias
  // after it are not.
  nj_engine_destroy(e);
  e = create(sizeof(nj_problem), sizeof(backward_args_c7867cd), sizeof(nj_forward_args));
  ASSERT_NE(e, nullptr);
  nj_problem parallel = rms_problem<nj_problem>();
  parallel.parallel = 1;
  backward_args_c7867cd a = backward_without_x<backward_args_c7867cd>();
  a.dy1 = reinterpret_cast<const void*>(uintptr_t{0x60000});
  a.weight1 = reinterpret_cast<const void*>(uintptr_t{0x70000});
  a.dweight1 = reinterpret_cast<void*>(uintptr_t{0x80000});
  a.dbias1 = reinterpret_cast<void*>(uintptr_t{0x90000});
  const Tailed<nj_backward_args, backward_args_c7867cd> with_dbias1(a);
  EXPECT_EQ(nj_rms_norm_backward(e, &parallel, with_dbias1.get(), nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("dbias1 is given but has_bias is false"), std::string::npos)
      << nj_last_error();
  a.dbias1 = nullptr;
  const Tailed<nj_backward_args, backward_args_c7867cd> without(a);
  EXPECT_EQ(nj_rms_norm_backward(e, &parallel, without.get(), nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("x is NULL"), std::string::npos) << nj_last_error();
  EXPECT_EQ(nj_rms_norm_backward(current, &parallel, without.get(), nullptr), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("recompute_from_output is off"), std::string::npos)
      << nj_last_error();
  nj_engine_destroy(e);
  nj_engine_destroy(current);
}

// nj_problem before gate has the size of nj_problem with it (gate sits in the tail padding): the
// size names the newer layout, so gate is read.
TEST_F(CAbi, ASizeTwoLayoutsShareIsTheNewerOne) {
  ASSERT_EQ(sizeof(problem_7b82868), sizeof(problem_fcdf3e2)) << "not an LP64 layout; nothing to test";
  nj_engine* e = create(sizeof(problem_fcdf3e2), sizeof(nj_backward_args), sizeof(nj_forward_args));
  ASSERT_NE(e, nullptr);
  problem_fcdf3e2 p = rms_problem<problem_fcdf3e2>();
  p.gate = static_cast<nj_gate>(5);
  const Tailed<nj_problem, problem_fcdf3e2> tp(p);
  size_t bytes = 0;
  EXPECT_EQ(nj_workspace_size(e, tp.get(), 4, &bytes), NJ_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(nj_last_error()).find("gate 5 is unknown"), std::string::npos) << nj_last_error();
  nj_engine_destroy(e);
}

std::string refused(size_t problem, size_t backward_args, size_t forward_args) {
  nj_engine* e = reinterpret_cast<nj_engine*>(uintptr_t{1});
  const nj_status s = nj_engine_create_abi(nullptr, &e, problem, backward_args, forward_args);
  EXPECT_EQ(s, NJ_ERR_UNSUPPORTED) << nj_status_name(s) << ": " << nj_last_error();
  EXPECT_EQ(e, nullptr);
  if (s == NJ_OK) nj_engine_destroy(e);
  return nj_last_error();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST_F(CAbi, ANewerHeadersLargerStructIsRefused) {
  const size_t P = sizeof(nj_problem), B = sizeof(nj_backward_args), F = sizeof(nj_forward_args);
  const std::string problem = refused(P + 8, B, F);
  EXPECT_TRUE(contains(problem, "nj_problem is " + std::to_string(P + 8) + " bytes")) << problem;
  EXPECT_TRUE(contains(problem, "this library's (libnormjit " + std::string(nj_version_string()) + ") is " +
                                    std::to_string(P) + " bytes"))
      << problem;
  EXPECT_TRUE(contains(problem, "newer normjit.h")) << problem;
  EXPECT_TRUE(contains(problem, "Rebuild it against this library's normjit.h")) << problem;

  const std::string backward = refused(P, B + 8, F);
  EXPECT_TRUE(contains(backward, "nj_backward_args is " + std::to_string(B + 8) + " bytes")) << backward;
  EXPECT_TRUE(contains(backward, ") is " + std::to_string(B) + " bytes")) << backward;

  const std::string forward = refused(P, B, F + 64);
  EXPECT_TRUE(contains(forward, "nj_forward_args is " + std::to_string(F + 64) + " bytes")) << forward;
  EXPECT_TRUE(contains(forward, ") is " + std::to_string(F) + " bytes")) << forward;
}

TEST_F(CAbi, ASizeNoHeaderHadIsRefused) {
  const size_t P = sizeof(nj_problem), B = sizeof(nj_backward_args), F = sizeof(nj_forward_args);
  const std::string three = refused(3, B, F);
  EXPECT_TRUE(contains(three, "nj_problem is 3 bytes")) << three;
  EXPECT_TRUE(contains(three, "no normjit.h has had a layout of that size")) << three;
  if (sizeof(void*) == 8)  // the sizes the table gives on LP64, against the structs above
    EXPECT_TRUE(contains(three, "(48, 64, 72 bytes)")) << three;
  refused(0, B, F);
  // Where the first layout's fields end (44 on LP64) is not a size a compiler gives that struct.
  refused(offsetof(nj_problem, residual), B, F);
  refused(P - 16, B, F);  // between two layouts
  refused(P - 4, B, F);   // not a multiple of the alignment
  const std::string backward = refused(P, sizeof(backward_args_314ee68) - 8, F);
  EXPECT_TRUE(contains(backward, "nj_backward_args is " + std::to_string(sizeof(backward_args_314ee68) - 8)))
      << backward;
  refused(P, B, sizeof(forward_args_6509c96) + 8);
  refused(P, B, 1);
}

TEST_F(CAbi, TheChecksAreInOrderAndANullOutPointerComesFirst) {
  EXPECT_EQ(nj_engine_create_abi(nullptr, nullptr, 3, 3, 3), NJ_ERR_INVALID_ARGUMENT);
  // A refused size is refused before the config file is read.
  nj_engine* e = nullptr;
  EXPECT_EQ(nj_engine_create_abi("/nonexistent/normjit.toml", &e, 3, sizeof(nj_backward_args),
                                 sizeof(nj_forward_args)),
            NJ_ERR_UNSUPPORTED);
  EXPECT_EQ(nj_engine_create_abi("/nonexistent/normjit.toml", &e, sizeof(nj_problem), sizeof(nj_backward_args),
                                 sizeof(nj_forward_args)),
            NJ_ERR_CONFIG);
}

// No symbol nj_engine_create in libnormjit: a program built before the macro, which calls it
// without sizes, fails to load rather than have its structs read in a layout guessed for it.
// The library is the one this build made, or NORMJIT_LIBRARY where the build folder moved.
TEST_F(CAbi, NoSizelessCreateSymbolIsExported) {
  const char* moved = std::getenv("NORMJIT_LIBRARY");
  const std::string path = moved && *moved ? moved : NORMJIT_LIBRARY_PATH;
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << path << ": " << dlerror();
  EXPECT_EQ(dlsym(lib, "nj_engine_create"), nullptr);
  EXPECT_NE(dlsym(lib, "nj_engine_create_abi"), nullptr) << "the lookup itself works";
  dlclose(lib);
}

}  // namespace
