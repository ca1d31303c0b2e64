#include "runtime/tuning_key.h"

#include <gtest/gtest.h>

#include "codegen/cache_key.h"
#include "codegen/norm_problem.h"

using namespace normjit;
using runtime::make_tuning_key;
using runtime::TuningDevice;

namespace {
TuningDevice h100() { return {"NVIDIA H100 80GB HBM3", 90, 132, "13.0"}; }
NormProblem bf16_layernorm(int64_t n) {
  NormProblem p;
  p.n = n;
  p.x_dtype = DType::BF16;
  p.weight_dtype = DType::F32;
  p.has_bias = true;
  return codegen::resolve_problem(p);
}
}  // namespace

TEST(TuningKey, MBucketIsTheNextPowerOfTwo) {
  EXPECT_EQ(runtime::m_bucket(0), 1);
  EXPECT_EQ(runtime::m_bucket(1), 1);
  EXPECT_EQ(runtime::m_bucket(2), 2);
  EXPECT_EQ(runtime::m_bucket(3), 4);
  EXPECT_EQ(runtime::m_bucket(4096), 4096);
  EXPECT_EQ(runtime::m_bucket(4097), 8192);
  EXPECT_EQ(runtime::m_bucket(65535), 65536);
  EXPECT_EQ(runtime::m_bucket_log2(65536), 16);
  EXPECT_EQ(runtime::m_bucket_log2(int64_t{1} << 40), 40);
}

TEST(TuningKey, NamesEveryPart) {
  const std::string text = make_tuning_key(h100(), bf16_layernorm(4096), 3000).text();
  EXPECT_EQ(text, "NVIDIA H100 80GB HBM3 | sm_90 | 132 SMs | nvrtc 13.0 | normjit " +
                      std::string(codegen::normjit_version()) + " | " + codegen::describe(bf16_layernorm(4096)) +
                      " | M<=4096");
}

TEST(TuningKey, EachPartMakesADifferentKey) {
  const std::string base = make_tuning_key(h100(), bf16_layernorm(4096), 4096).text();
  TuningDevice other = h100();
  other.name = "NVIDIA H200";
  EXPECT_NE(make_tuning_key(other, bf16_layernorm(4096), 4096).text(), base);
  other = h100();
  other.sm = 100;
  EXPECT_NE(make_tuning_key(other, bf16_layernorm(4096), 4096).text(), base);
  other = h100();
  other.sm_count = 114;  // the PCIe H100
  EXPECT_NE(make_tuning_key(other, bf16_layernorm(4096), 4096).text(), base);
  other = h100();
  other.nvrtc = "13.1";
  EXPECT_NE(make_tuning_key(other, bf16_layernorm(4096), 4096).text(), base);
  runtime::TuningKey k = make_tuning_key(h100(), bf16_layernorm(4096), 4096);
  k.normjit = "9.9.9";
  EXPECT_NE(k.text(), base);
  EXPECT_NE(make_tuning_key(h100(), bf16_layernorm(4097), 4096).text(), base);
  NormProblem rms = bf16_layernorm(4096);
  rms.kind = NormKind::RMSNorm;
  rms.has_bias = false;
  EXPECT_NE(make_tuning_key(h100(), rms, 4096).text(), base);
  NormProblem unaligned = bf16_layernorm(4096);
  unaligned.alignment = 2;
  EXPECT_NE(make_tuning_key(h100(), unaligned, 4096).text(), base);
  EXPECT_NE(make_tuning_key(h100(), bf16_layernorm(4096), 4097).text(), base);
  for (int option = 0; option < 5; ++option) {
    NormProblem fused = bf16_layernorm(4096);
    if (option == 0) fused.residual = true;
    if (option == 1) fused.zero_centered_weight = true;
    if (option == 2) fused.rowscale = true;
    if (option == 3) fused.dropout = DropoutMask::Bits;
    if (option == 4) fused.recompute_from_output = true;
    EXPECT_NE(make_tuning_key(h100(), fused, 4096).text(), base) << option;
  }
  // Within a bucket, one key.
  EXPECT_EQ(make_tuning_key(h100(), bf16_layernorm(4096), 2049).text(), base);
}

TEST(TuningKey, TheForwardOfAProblemIsAnotherKey) {
  const NormProblem p = bf16_layernorm(4096);
  const std::string backward = make_tuning_key(h100(), p, 4096).text();
  const std::string forward = make_tuning_key(h100(), p, 4096, codegen::Pass::Forward).text();
  EXPECT_NE(backward, forward);
  EXPECT_NE(forward.find("| layernorm forward N=4096"), std::string::npos) << forward;
  EXPECT_EQ(backward.find("forward"), std::string::npos) << backward;
}
