// 16-bit rows held packed in registers whose N is a multiple of the slot have every slot whole or
// absent: they load as predicated vectors (PackedSlot::load_if) and store dx as whole vectors
// (store_slot), with no element-by-element path. In session 48 those paths' compares and
// branches were about 6% of the instructions in LN bf16 32768's row loop, and dropping them
// gained 1.5-5% at 16-bit N of 1000 and 16384-262144. Read off the backward entry's PTX (NVRTC on
// the CPU): no scalar 2-byte global load or store. Rows loaded ahead keep load()'s branch (a
// measured spill), and an N that leaves a partial slot needs the element path: both are checked
// to have such accesses, so the pattern is seen to find what it looks for.
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

// A scalar 16-bit access of global memory (the element-by-element path); not a vector (.v2/.v4).
const std::regex kScalarHalfAccess(R"(^\s*(@!?%p\d+\s+)?(ld|st)\.global(\.(?!v\d)[a-z0-9_]+)*\.(u16|b16|s16)\s)");

struct Case {
  NormProblem problem;
  const char* config;  // as `normjit tune --list` prints it
  bool element_path;   // expected to keep scalar 16-bit accesses
  const char* why;
};

// Scalar 16-bit global accesses in the entry's PTX; of `prefix` (ld or st) only, if given.
int scalar_half_accesses(const codegen::KernelSource& src, const NormProblem& problem, const char* entry,
                         const char* prefix = nullptr) {
  const std::string ptx = test::sm90_ptx(src, codegen::describe(problem));
  int count = 0;
  std::smatch m;
  for (const std::string& line : test::entry_body(ptx, entry))
    count += std::regex_search(line, m, kScalarHalfAccess) && (!prefix || m[2] == prefix);
  return count;
}

int scalar_half_accesses(const NormProblem& problem, const codegen::LaunchConfig& config) {
  return scalar_half_accesses(codegen::generate_backward_source(problem, config), problem,
                              codegen::KernelSource::kBackwardEntry);
}

TEST(WholeSlotsPtx, PackedRowsOfWholeSlotsHaveNoElementPath) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "NVRTC not available: " << why;
  using test::Affine;
  using test::make_problem;
  auto aligned_to = [](NormProblem p, int alignment) {
    p.alignment = alignment;
    return p;
  };
  const NormProblem ln32768 = make_problem(NormKind::LayerNorm, 32768, DType::BF16, DType::F32, Affine::WeightAndBias);
  const NormProblem ln4100 = aligned_to(make_problem(NormKind::LayerNorm, 4100, DType::BF16, DType::F32, Affine::WeightAndBias), 8);
  const Case cases[] = {
      {ln32768, "threads=512 threads_per_row=512 vec=8 registers cluster=4 min_blocks=2 shared_sums shared_weights", false,
       "clusters of four, the sweep's config"},
      {make_problem(NormKind::LayerNorm, 16384, DType::BF16, DType::F32, Affine::WeightAndBias),
       "threads=512 threads_per_row=512 vec=8 registers cluster=2 paired_rows shared_sums shared_weights", false, "paired rows"},
      {make_problem(NormKind::RMSNorm, 1000, DType::F16, DType::F32, Affine::WeightOnly),
       "threads=128 threads_per_row=128 vec=8 registers min_blocks=8 shared_sums", false, "a row a block, 125 slots"},
      {ln4100, "threads=512 threads_per_row=512 vec=4 registers", false, "slots of four, N % 4 = 0"},
      {ln4100, "threads=512 threads_per_row=512 vec=8 registers", true, "slots of eight, N % 8 = 4: a partial slot"},
      {make_problem(NormKind::LayerNorm, 12288, DType::BF16, DType::F32, Affine::WeightAndBias),
       "threads=768 threads_per_row=768 vec=8 registers prefetch shared_sums shared_weights", true,
       "rows loaded ahead keep load()'s branch"},
  };
  for (const Case& c : cases) {
    const NormProblem p = codegen::resolve_problem(c.problem);
    const codegen::LaunchConfig config = codegen::parse_described_config(c.config);
    const std::string what = codegen::describe(p) + " with " + c.config + " (" + c.why + ")";
    ASSERT_NO_THROW(codegen::check_launch_config(p, config)) << what;
    int count = 0;
    ASSERT_NO_THROW(count = scalar_half_accesses(p, config)) << what;
    if (c.element_path) EXPECT_GT(count, 0) << what << ": no scalar 16-bit access found where one must be";
    else EXPECT_EQ(count, 0) << what << ": scalar 16-bit global accesses in a row of whole slots";
  }
}

// The forward's prefetching blocks keep store_slot's element path for y (FOLD = false) at whole
// slots: with the fold they ran 0.69-0.87x (LN and RMS bf16 5120-7168, RMS 12288-14336; session
// 54, bench/results/2026-11-30-h200-odd-occupancy/ calls 8-10: the fold entered in session 48,
// the forward untimed there). Its other rows fold it: without, LayerNorm's warp rows of 1000 ran
// 0.91x (session 55, -standing/). Read off the forward entry's PTX: 2-byte stores beside the
// vector ones, or none.
TEST(WholeSlotsPtx, TheForwardFoldsItsStoresWhereRowsAreNotPrefetched) {
  std::string why;
  if (!runtime::Nvrtc::available(&why)) GTEST_SKIP() << "NVRTC not available: " << why;
  struct ForwardCase {
    int n;
    const char* config;
    bool element_path;
  };
  const ForwardCase cases[] = {
      {12288, "threads=768 threads_per_row=768 vec=8 registers prefetch", true},
      {12288, "threads=768 threads_per_row=768 vec=8 registers", false},
      {1000, "threads=256 threads_per_row=32 vec=8 registers", false},
  };
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm}) {
    for (const ForwardCase& c : cases) {
      const NormProblem p = codegen::resolve_forward_problem(test::make_problem(
          kind, c.n, DType::BF16, DType::F32, kind == NormKind::LayerNorm ? test::Affine::WeightAndBias : test::Affine::WeightOnly));
      const codegen::LaunchConfig config = codegen::parse_described_config(c.config);
      const std::string what = codegen::describe(p) + " with " + c.config;
      ASSERT_NO_THROW(codegen::check_forward_config(p, config)) << what;
      int stores = 0;
      ASSERT_NO_THROW(stores = scalar_half_accesses(codegen::generate_forward_source(p, config), p,
                                                    codegen::KernelSource::kForwardEntry, "st"))
          << what;
      if (c.element_path) EXPECT_GT(stores, 0) << what << ": the prefetching block's y stores lost their element path";
      else EXPECT_EQ(stores, 0) << what << ": y stores an element at a time in a row of whole slots";
    }
  }
}

}  // namespace
