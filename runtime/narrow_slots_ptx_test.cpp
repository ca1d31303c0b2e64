// Rows of slots narrower than 8 elements (odd 16-bit N, rows aligned to 2 or 4 bytes) with the
// fused options, read off their PTX (NVRTC on the CPU; bench/NOTES.md entry 69):
// - the backward's dx loop reads 8 elements' worth of dresidual ahead of its dx stores: dx may
//   be dresidual itself, so a load after a dx store cannot move above it, and one slot at a time
//   the residual at 4095 ran 26% of copy (PTX: one load, one store, sixteen times);
// - the forward's warps draw their dropout keep bits together, one Philox draw a lane per
//   4 / kVec slots: each thread drawing for itself (and again for a bit mask's bytes) took 1156
//   64-bit multiplies at 4095 and ran the forward with all options at 9% of copy.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "codegen/forward_config.h"
#include "codegen/kernel_source.h"
#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "runtime/nvrtc.h"
#include "support/problem_variants.h"
#include "support/ptx_text.h"

using namespace normjit;

namespace {

class NarrowSlotsPtx : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "NVRTC not available: " << why;
  }
};

NormProblem odd_problem(NormKind kind, int64_t n, int alignment) {
  NormProblem p = test::make_problem(kind, n, DType::BF16, DType::F32,
                                     kind == NormKind::LayerNorm ? test::Affine::WeightAndBias : test::Affine::WeightOnly);
  p.alignment = alignment;
  return p;
}

// The global loads right before the entry's first global store, back to the barrier before them.
int loads_before_first_store(const std::string& ptx, const char* entry) {
  const std::regex load(R"(^\s*(@!?%p\d+\s+)?ld\.global)"), store(R"(^\s*(@!?%p\d+\s+)?st\.global)"),
      barrier(R"(^\s*(bar|barrier)\.)");
  int run = 0;
  for (const std::string& line : test::entry_body(ptx, entry)) {
    if (std::regex_search(line, store)) return run;
    if (std::regex_search(line, barrier)) run = 0;
    if (std::regex_search(line, load)) ++run;
  }
  return -1;
}

TEST_F(NarrowSlotsPtx, TheDxLoopReadsEightSlotsOfDresidualAheadOfItsStores) {
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    NormProblem problem = odd_problem(kind, 4095, 2);
    problem.residual = true;
    const NormProblem p = codegen::resolve_problem(problem);
    const codegen::LaunchConfig config = codegen::parse_described_config("threads=256 threads_per_row=256 vec=1 registers");
    const std::string what = codegen::describe(p) + " with " + codegen::describe(config);
    ASSERT_NO_THROW(codegen::check_launch_config(p, config)) << what;
    std::string ptx;
    ASSERT_NO_THROW(ptx = test::sm90_ptx(codegen::generate_backward_source(p, config), codegen::describe(p))) << what;
    EXPECT_GE(loads_before_first_store(ptx, codegen::KernelSource::kBackwardEntry), 8) << what;
  }
}

TEST_F(NarrowSlotsPtx, AWarpDrawsItsKeepBitsTogether) {
  struct Case {
    int64_t n;
    int alignment;
    const char* config;
    int draws;  // a lane's Philox draws a row: ceil(slots a thread / (4 / vec))
  };
  const Case cases[] = {
      {4095, 2, "threads=512 threads_per_row=512 vec=1 registers min_blocks=2", 2},  // 8 slots, 4 a draw
      {2050, 4, "threads=160 threads_per_row=160 vec=2 registers min_blocks=6", 4},  // 7 slots, 2 a draw
  };
  const std::regex multiply(R"(^\s*mul\.wide\.u32)");
  for (const Case& c : cases)
    for (DropoutMask mask : {DropoutMask::Bits, DropoutMask::Bytes}) {
      NormProblem problem = odd_problem(NormKind::LayerNorm, c.n, c.alignment);
      problem.dropout = mask;
      const NormProblem p = codegen::resolve_forward_problem(problem);
      const codegen::LaunchConfig config = codegen::parse_described_config(c.config);
      const std::string what = codegen::describe_forward(p) + " with " + c.config;
      ASSERT_NO_THROW(codegen::check_forward_config(p, config)) << what;
      std::string ptx;
      ASSERT_NO_THROW(ptx = test::sm90_ptx(codegen::generate_forward_source(p, config), codegen::describe_forward(p)))
          << what;
      int multiplies = 0;
      for (const std::string& line : test::entry_body(ptx, codegen::KernelSource::kForwardEntry))
        multiplies += std::regex_search(line, multiply);
      // Philox4x32-10: two 32 × 32 → 64-bit multiplies a round; a few more for addresses.
      EXPECT_GT(multiplies, 0) << what << ": no draw found";
      EXPECT_LE(multiplies, 20 * c.draws + 8) << what << ": more than " << c.draws << " draws a lane";
    }
}

}  // namespace
