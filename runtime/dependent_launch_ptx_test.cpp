// On sm_90 every kernel normjit launches but the grid cluster's is a programmatic dependent
// launch of the stream's previous kernel (docs/ARCHITECTURE.md, step 10): its blocks may run
// while that kernel still does, so no access to global memory may come before its
// griddepcontrol.wait, and none may let its own dependent start before that wait either. A
// load moved above the wait would race only now and then on a GPU; here it is read off each
// entry point's PTX (NVRTC on the CPU) for every kernel family of both passes. The one
// exception is by design: the column pass's second kernel loads rows before it waits for the
// row sums (templates/column_pass.cuh), and must still store nothing before.
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "codegen/forward_config.h"
#include "codegen/kernel_source.h"
#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "runtime/nvrtc.h"
#include "support/problem_variants.h"
#include "support/ptx_text.h"

using namespace normjit;
using normjit::test::entry_body;

namespace {

// Index of the first line matching `pattern`, if any.
std::optional<size_t> first(const std::vector<std::string>& lines, const std::regex& pattern) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (std::regex_search(lines[i], pattern)) return i;
  return std::nullopt;
}

// Instructions that touch global memory, or may (generic addresses): loads, stores, async
// copies, atomics, reductions, L2 discards and prefetches. Kernel parameters, shared, local and
// constant memory are not the previous kernel's to write.
const std::regex kGlobalLoad(R"(^\s*(@!?%p\d+\s+)?(ld|cp\.async|prefetch)(?!\.(param|shared|local|const))[.\s])");
const std::regex kGlobalStore(R"(^\s*(@!?%p\d+\s+)?(st|atom|red|discard)(?!\.(param|shared|local|async))[.\s])");
const std::regex kWait(R"(griddepcontrol\.wait)");
const std::regex kLetStart(R"(griddepcontrol\.launch_dependents)");

// Checks one entry point: the wait is there, and no global store, no global load (unless
// `loads_may_come_first`) and no start of the dependent grid comes before it.
void expect_waits_first(const std::string& ptx, const std::string& entry, bool loads_may_come_first,
                        const std::string& what) {
  SCOPED_TRACE(what + ", " + entry);
  const std::vector<std::string> body = entry_body(ptx, entry);
  ASSERT_FALSE(body.empty()) << "no .entry " << entry << " in the PTX";
  const std::optional<size_t> wait = first(body, kWait);
  ASSERT_TRUE(wait.has_value()) << entry << " never waits for the grid before it (griddepcontrol.wait)";
  if (const auto store = first(body, kGlobalStore)) EXPECT_GT(*store, *wait) << "stores before the wait: " << body[*store];
  if (!loads_may_come_first)
    if (const auto load = first(body, kGlobalLoad)) EXPECT_GT(*load, *wait) << "loads before the wait: " << body[*load];
  if (const auto start = first(body, kLetStart)) EXPECT_GT(*start, *wait) << "lets its dependent start before it waits";
}

class DependentLaunchPtx : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "NVRTC not available: " << why;
  }
};

TEST_F(DependentLaunchPtx, EveryBackwardKernelWaitsBeforeItTouchesGlobalMemory) {
  struct Case {
    NormProblem problem;
    int64_t m;             // for the heuristic: -1 many rows
    bool streamed = false; // the streamed fallback instead of the heuristic's config
  };
  auto with_alignment = [](NormProblem p, int alignment) {
    p.alignment = alignment;
    return p;
  };
  auto gated = [](NormProblem p) {
    p.gate = Gate::AfterNorm;
    return p;
  };
  auto parallel = [](NormProblem p) {
    p.parallel = true;
    return p;
  };
  using test::Affine;
  using test::make_problem;
  const Case cases[] = {
      {make_problem(NormKind::RMSNorm, 256, DType::BF16, DType::F32, Affine::WeightOnly), -1},        // rows a warp
      {make_problem(NormKind::LayerNorm, 4096, DType::BF16, DType::F32, Affine::WeightAndBias), -1},  // a row a block
      {make_problem(NormKind::LayerNorm, 8192, DType::BF16, DType::F32, Affine::WeightAndBias), 37},  // the column pass
      {make_problem(NormKind::LayerNorm, 65536, DType::BF16, DType::F32, Affine::WeightAndBias), -1}, // clusters
      {make_problem(NormKind::RMSNorm, 1048576, DType::BF16, DType::F32, Affine::WeightOnly), -1},    // the grid cluster
      {make_problem(NormKind::LayerNorm, 262144, DType::BF16, DType::F32, Affine::WeightAndBias), -1, true},  // streamed
      {with_alignment(make_problem(NormKind::LayerNorm, 5003, DType::BF16, DType::F32, Affine::WeightAndBias), 2), -1},
      {gated(make_problem(NormKind::RMSNorm, 4096, DType::BF16, DType::F32, Affine::WeightOnly)), -1},
      {parallel(make_problem(NormKind::LayerNorm, 4096, DType::F16, DType::F32, Affine::WeightAndBias)), -1},
  };
  for (const Case& c : cases) {
    const NormProblem p = codegen::resolve_problem(c.problem);
    const codegen::LaunchConfig config =
        c.streamed ? codegen::streamed_launch_config(p) : codegen::choose_launch_config(p, 90, 132, c.m, 18.4);
    const std::string what = codegen::describe(p) + " with " + codegen::describe(config);
    std::string ptx;
    ASSERT_NO_THROW(ptx = test::sm90_ptx(codegen::generate_backward_source(p, config), codegen::describe(p))) << what;
    using codegen::KernelSource;
    expect_waits_first(ptx, KernelSource::kBackwardEntry, config.column_pass > 0, what);
    expect_waits_first(ptx, KernelSource::kReduceEntry, false, what);
    if (config.column_pass > 0) expect_waits_first(ptx, KernelSource::kRowSumsEntry, false, what);
  }
}

TEST_F(DependentLaunchPtx, EveryForwardKernelWaitsBeforeItTouchesGlobalMemory) {
  using test::Affine;
  using test::make_problem;
  const NormProblem problems[] = {
      make_problem(NormKind::RMSNorm, 256, DType::BF16, DType::F32, Affine::WeightOnly),
      make_problem(NormKind::LayerNorm, 4096, DType::BF16, DType::F32, Affine::WeightAndBias),
      make_problem(NormKind::LayerNorm, 65536, DType::BF16, DType::F32, Affine::WeightAndBias),
      make_problem(NormKind::LayerNorm, 262144, DType::BF16, DType::F32, Affine::WeightAndBias),
  };
  for (const NormProblem& problem : problems) {
    const NormProblem p = codegen::resolve_forward_problem(problem);
    const codegen::LaunchConfig config = codegen::choose_forward_config(p, 90, -1, 132);
    const std::string what = codegen::describe_forward(p) + " with " + codegen::describe(config);
    std::string ptx;
    ASSERT_NO_THROW(ptx = test::sm90_ptx(codegen::generate_forward_source(p, config), codegen::describe_forward(p)))
        << what;
    expect_waits_first(ptx, codegen::KernelSource::kForwardEntry, false, what);
  }
}

}  // namespace
