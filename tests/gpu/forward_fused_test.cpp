// The forward's fused options (docs/FORWARD.md, "Fused options") on the GPU against the float64
// reference (tests/support/forward_fused_reference.h): residual, row scale, dropout with its mask
// written as bytes or bits, the gate in both orders, parallel norms, y in another dtype, and
// combinations, over N from 1 to 262144 so every forward family runs (262144: rows streamed by a
// cluster on sm_90). Every output (y, y1, h, the mask, mean, rstd) is poisoned before the run and
// compared: y and y1 by relative error, h and the mask bit for bit (h's fp32 steps and the host's
// Philox draws). Fresh random inputs per case (seed printed; NORMJIT_TEST_SEED replays).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/forward_config.h"
#include "codegen/norm_problem.h"
#include "runtime/cuda_driver.h"
#include "runtime/engine_impl.h"
#include "support/compare.h"
#include "support/forward_fused_reference.h"
#include "support/gpu.h"
#include "support/host_tensor.h"
#include "support/norm_inputs.h"
#include "support/problem_variants.h"
#include "support/random.h"
#include "support/shared_engine.h"

namespace normjit::test {
namespace {

struct FusedForwardCase {
  const char* options;  // for the trace
  NormProblem problem;
  int64_t m = 0;
  bool residual_in_place = false;  // residual_out is the residual buffer
  bool write_mask = true;          // dropout: the mask asked for (else only y and h)
};

// The options of a case, set on a problem.
struct Options {
  const char* name;
  bool residual = false, rowscale = false;
  DropoutMask dropout = DropoutMask::None;
  Gate gate = Gate::None;
  bool parallel = false;
  DType y = DType::Default;
  bool zero_centered = false;
  bool in_place = false;
};

const Options kOptions[] = {
    {"residual", true},
    {"rowscale", false, true},
    {"dropout bytes", false, false, DropoutMask::Bytes},
    {"dropout bits", false, false, DropoutMask::Bits},
    {"residual rowscale dropout bits, in place", true, true, DropoutMask::Bits, Gate::None, false, DType::Default,
     false, true},
    {"gate after the norm", false, false, DropoutMask::None, Gate::AfterNorm},
    {"gate before the norm", false, false, DropoutMask::None, Gate::BeforeNorm},
    {"gate before the norm, residual", true, false, DropoutMask::None, Gate::BeforeNorm},
    {"parallel", false, false, DropoutMask::None, Gate::None, true},
    {"parallel residual dropout bytes", true, false, DropoutMask::Bytes, Gate::None, true},
    {"y fp32, residual", true, false, DropoutMask::None, Gate::None, false, DType::F32},
    {"zero-centred γ, residual, dropout bits", true, false, DropoutMask::Bits, Gate::None, false, DType::Default, true},
};

std::vector<FusedForwardCase> cases() {
  const int64_t ns[] = {1, 33, 1000, 4096, 8192, 65536, 262144};
  const int64_t ms[] = {1, 199, 4096};
  const DType dtypes[] = {DType::BF16, DType::F16, DType::F32};
  std::vector<FusedForwardCase> out;
  int i = 0;
  for (const Options& o : kOptions)
    for (int64_t n : ns) {
      const bool gated = o.gate != Gate::None;
      const NormKind kind = gated || i % 2 ? NormKind::RMSNorm : NormKind::LayerNorm;
      const DType x = dtypes[i % 3];
      Affine affine = kind == NormKind::LayerNorm ? (i % 4 == 0 ? Affine::WeightOnly : Affine::WeightAndBias)
                                                  : Affine::WeightOnly;
      FusedForwardCase c;
      c.options = o.name;
      c.problem = make_problem(kind, n, x, i % 2 == 0 ? DType::F32 : x, affine);
      c.problem.residual = o.residual;
      c.problem.rowscale = o.rowscale;
      c.problem.dropout = o.dropout;
      c.problem.gate = o.gate;
      c.problem.parallel = o.parallel;
      c.problem.dy_dtype = o.y;
      c.problem.zero_centered_weight = o.zero_centered;
      c.residual_in_place = o.in_place;
      c.write_mask = i % 5 != 4;
      int k = i % 3;
      while (k > 0 && ms[k] * n > (int64_t{1} << 22)) --k;
      c.m = ms[k];
      out.push_back(c);
      ++i;
    }
  return out;
}

HostTensor random_rows(DType dtype, int64_t m, int64_t n, uint64_t seed, uint64_t stream, double scale) {
  HostTensor t(dtype, m, n);
  for (int64_t r = 0; r < m; ++r) {
    Rng rng(seed, stream * 1000003 + static_cast<uint64_t>(r));
    for (int64_t c = 0; c < n; ++c) t.set(r, c, scale * rng.normal());
  }
  return t;
}

DeviceBuffer uploaded(const HostTensor& t) {
  DeviceBuffer b(t.size_bytes());
  if (t.size_bytes()) b.upload(t.data(), t.size_bytes());
  return b;
}

// The mask the kernel wrote against the reference's keep flags, bit for bit; bits past N 0.
::testing::AssertionResult masks_match(DropoutMask form, int64_t m, int64_t n, const std::vector<unsigned char>& out,
                                       const std::vector<unsigned char>& keep) {
  const int64_t row_bytes = codegen::dropout_mask_row_bytes(form, n);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t b = 0; b < row_bytes; ++b) {
      unsigned expected = 0;
      if (form == DropoutMask::Bytes) {
        expected = keep[r * n + b];
      } else {
        for (int j = 0; j < 8 && 8 * b + j < n; ++j) expected |= unsigned{keep[r * n + 8 * b + j]} << j;
      }
      if (out[r * row_bytes + b] != expected)
        return ::testing::AssertionFailure() << "mask byte " << b << " of row " << r << " is " << int{out[r * row_bytes + b]}
                                             << ", expected " << expected;
    }
  return ::testing::AssertionSuccess();
}

// h is defined operation by operation (templates/norm_forward.cuh, form_pre_norm_sum), so the
// kernel's must be the reference's to the bit.
::testing::AssertionResult h_matches_exactly(const HostTensor& h, const std::vector<double>& ref) {
  for (int64_t r = 0; r < h.rows(); ++r)
    for (int64_t c = 0; c < h.cols(); ++c)
      if (!(h.get(r, c) == ref[r * h.cols() + c]))
        return ::testing::AssertionFailure() << "h (residual_out) [" << r << ", " << c << "] is " << h.get(r, c)
                                             << ", expected " << ref[r * h.cols() + c] << " exactly";
  return ::testing::AssertionSuccess();
}

void check_case(Engine& engine, const FusedForwardCase& c, CUstream stream) {
  const NormProblem p = with_concrete_dtypes(c.problem);
  const NormProblem resolved = codegen::resolve_forward_problem(p);
  const int64_t m = c.m, n = p.n;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(std::string(c.options) + ": " + codegen::describe_forward(p) + " M=" + std::to_string(m) +
               " seed=" + std::to_string(seed) + " (replay: NORMJIT_TEST_SEED=" + std::to_string(seed) + ")");
  const bool layer_norm = p.kind == NormKind::LayerNorm;
  const bool dropout = p.dropout != DropoutMask::None;
  const bool pre_norm_sum = p.residual || p.rowscale || dropout;
  const DType y_dtype = resolved.dy_dtype;

  const HostTensor x = random_rows(p.x_dtype, m, n, seed, 1, 1.0);
  const HostTensor residual = p.residual ? random_rows(p.x_dtype, m, n, seed, 2, 1.0) : HostTensor();
  const HostTensor z = p.gate != Gate::None ? random_rows(p.x_dtype, m, n, seed, 3, 2.0) : HostTensor();
  HostTensor weight, bias, weight1, bias1;
  if (p.has_weight) weight = random_rows(p.weight_dtype, 1, n, seed, 4, 0.5);
  if (p.has_bias) bias = random_rows(p.weight_dtype, 1, n, seed, 5, 0.5);
  if (p.parallel && p.has_weight) weight1 = random_rows(p.weight_dtype, 1, n, seed, 6, 0.5);
  if (p.parallel && p.has_bias) bias1 = random_rows(p.weight_dtype, 1, n, seed, 7, 0.5);
  std::vector<float> rowscale;
  std::vector<double> rowscale_wide;
  if (p.rowscale) {
    Rng rng(seed, 8);
    for (int64_t r = 0; r < m; ++r) rowscale.push_back(static_cast<float>(rng.uniform(0.5, 1.5)));
    rowscale_wide.assign(rowscale.begin(), rowscale.end());
  }
  Rng draw(seed, 9);
  const double dropout_p = dropout ? 0.05 + 0.4 * draw.uniform() : 0.0;
  const uint64_t dropout_seed = draw.next(), dropout_offset = draw.next() >> 20;

  DeviceBuffer d_x = uploaded(x), d_residual = uploaded(residual), d_z = uploaded(z), d_weight = uploaded(weight),
               d_bias = uploaded(bias), d_weight1 = uploaded(weight1), d_bias1 = uploaded(bias1);
  DeviceBuffer d_rowscale(rowscale.size() * sizeof(float));
  if (p.rowscale) d_rowscale.upload(rowscale.data(), rowscale.size() * sizeof(float));
  HostTensor y(y_dtype, m, n), y1, h;
  if (p.parallel) y1 = HostTensor(y_dtype, m, n);
  if (pre_norm_sum) h = HostTensor(p.x_dtype, m, n);
  const int64_t mask_row = codegen::dropout_mask_row_bytes(p.dropout, n);
  std::vector<unsigned char> mask(dropout && c.write_mask ? static_cast<size_t>(m * mask_row) : 0);
  DeviceBuffer d_y(y.size_bytes()), d_y1(y1.size_bytes()), d_mask(mask.size()),
      d_mean(layer_norm ? m * sizeof(float) : 0), d_rstd(m * sizeof(float));
  DeviceBuffer d_h(c.residual_in_place ? 0 : h.size_bytes());
  for (DeviceBuffer* b : {&d_y, &d_y1, &d_mask, &d_mean, &d_rstd, &d_h}) b->poison();

  ForwardArgs a;
  a.m = m;
  a.x = d_x.ptr();
  a.weight = d_weight.ptr();
  a.bias = d_bias.ptr();
  a.y = d_y.ptr();
  a.mean = layer_norm ? static_cast<float*>(d_mean.ptr()) : nullptr;
  a.rstd = static_cast<float*>(d_rstd.ptr());
  a.eps = kNormEps;
  a.residual = d_residual.ptr();
  if (pre_norm_sum) a.residual_out = c.residual_in_place ? d_residual.ptr() : d_h.ptr();
  a.rowscale = static_cast<const float*>(d_rowscale.ptr());
  a.dropout_mask = d_mask.ptr();
  a.dropout_p = dropout_p;
  a.dropout_seed = dropout ? dropout_seed : 0;
  a.dropout_offset = dropout ? dropout_offset : 0;
  a.z = d_z.ptr();
  a.weight1 = d_weight1.ptr();
  a.bias1 = d_bias1.ptr();
  a.y1 = d_y1.ptr();
  ASSERT_NO_THROW(engine.forward(p, a, stream));
  NJ_CU(runtime::driver().cuStreamSynchronize(stream), std::string("synchronizing after the forward"));
  d_y.download(y.data(), y.size_bytes());
  if (p.parallel) d_y1.download(y1.data(), y1.size_bytes());
  if (pre_norm_sum) (c.residual_in_place ? d_residual : d_h).download(h.data(), h.size_bytes());
  if (!mask.empty()) d_mask.download(mask.data(), mask.size());
  std::vector<float> mean(static_cast<size_t>(m)), rstd(static_cast<size_t>(m));
  d_rstd.download(rstd.data(), rstd.size() * sizeof(float));
  if (layer_norm) d_mean.download(mean.data(), mean.size() * sizeof(float));

  const std::vector<double> xw = widened(x), rw = widened(residual), zw = widened(z), ww = widened(weight),
                            bw = widened(bias), w1 = widened(weight1), b1 = widened(bias1);
  ForwardFusedInputs in;
  in.problem = resolved;
  in.m = m;
  in.x = xw.data();
  in.residual = p.residual ? rw.data() : nullptr;
  in.rowscale = p.rowscale ? rowscale_wide.data() : nullptr;
  in.z = p.gate != Gate::None ? zw.data() : nullptr;
  in.weight = p.has_weight ? ww.data() : nullptr;
  in.bias = p.has_bias ? bw.data() : nullptr;
  in.weight1 = p.parallel && p.has_weight ? w1.data() : nullptr;
  in.bias1 = p.parallel && p.has_bias ? b1.data() : nullptr;
  in.dropout_p = dropout_p;
  in.seed = dropout_seed;
  in.offset = dropout_offset;
  in.eps = kNormEps;
  const ForwardFusedReference ref = reference_forward_fused(in);

  const TensorCheck y_check = check_tensor("y", y, ref.norm.y, ref.norm.y_term_norm, dx_tolerance(y_dtype));
  EXPECT_TRUE(y_check.ok()) << y_check;
  if (p.parallel) {
    const TensorCheck y1_check = check_tensor("y1", y1, ref.second.y, ref.second.y_term_norm, dx_tolerance(y_dtype));
    EXPECT_TRUE(y1_check.ok()) << y1_check;
  }
  if (pre_norm_sum) EXPECT_TRUE(h_matches_exactly(h, ref.h));
  if (!mask.empty()) EXPECT_TRUE(masks_match(p.dropout, m, n, mask, ref.keep));
  const std::vector<double> zeros(static_cast<size_t>(m), 0.0);
  std::vector<double> rms(static_cast<size_t>(m));
  for (int64_t r = 0; r < m; ++r) {
    double squares = 0;
    for (int64_t col = 0; col < n; ++col) squares += ref.h[r * n + col] * ref.h[r * n + col];
    // A row of zeros (N = 1 with its element dropped) has mean 0 exactly: a floor above 0.
    rms[r] = std::max(std::sqrt(squares / n), 1e-30);
  }
  EXPECT_TRUE(statistics_match("rstd", rstd, ref.norm.rstd, zeros, 1e-5));
  if (layer_norm) EXPECT_TRUE(statistics_match("mean", mean, ref.norm.mean, rms, 1e-5));
}

class ForwardFused : public GpuTest {};

TEST_F(ForwardFused, MatchesTheFloat64ReferenceForEachOptionAndCombination) {
  Engine& engine = shared_engine();
  for (const FusedForwardCase& c : cases()) check_case(engine, c, stream());
}

// Dropout on 600 rows, the x dtype alternating bf16 / fp16 with i: a bit-packed mask with every
// other option on, or a byte mask alone; every third case without the mask written.
FusedForwardCase dropout_case(NormKind kind, int64_t n, DropoutMask mask, int i) {
  FusedForwardCase c;
  c.options = mask == DropoutMask::Bits ? "dropout bits (all options)" : "dropout bytes";
  c.problem = make_problem(kind, n, i % 2 == 0 ? DType::BF16 : DType::F16, DType::F32,
                           kind == NormKind::LayerNorm ? Affine::WeightAndBias : Affine::WeightOnly);
  c.problem.dropout = mask;
  c.problem.residual = c.problem.rowscale = c.problem.zero_centered_weight = mask == DropoutMask::Bits;
  c.write_mask = i % 3 != 2;
  c.m = 600;
  return c;
}

// LayerNorm drawing a dropout mask on many 16-bit rows whose blocks take one or two slots a
// thread (codegen/forward_config.cpp): bits and bytes, alone and with the other options.
TEST_F(ForwardFused, LayerNormDropoutOnManyRowsOfNarrowBlocks) {
  Engine& engine = shared_engine();
  int i = 0;
  for (int64_t n : {2560, 3072, 5120, 6144, 7168})
    for (DropoutMask mask : {DropoutMask::Bits, DropoutMask::Bytes})
      check_case(engine, dropout_case(NormKind::LayerNorm, n, mask, i++), stream());
}

// Dropout on many rows of odd N, whose 16-bit rows are aligned to 2 or 4 bytes: slots of one or
// two elements, where a warp draws its lanes' keep bits together and gathers a bit-packed
// mask's bytes from its vote or by shuffles (row_keep_bits, kWarpDraws): warp rows (1001),
// blocks of 160-512 threads (2050, 4095, 5003).
TEST_F(ForwardFused, DropoutOnManyOddRowsOfNarrowSlots) {
  Engine& engine = shared_engine();
  int i = 0;
  for (int64_t n : {1001, 2050, 4095, 5003})
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DropoutMask mask : {DropoutMask::Bits, DropoutMask::Bytes})
        check_case(engine, dropout_case(kind, n, mask, i++), stream());
}

// The mask depends on (seed, offset, row, col) only: the same call gives the same bits, another
// offset other bits, and about 1 − p of the elements are kept.
TEST_F(ForwardFused, TheDropoutMaskIsReproducibleAndKeepsOneMinusP) {
  Engine& engine = shared_engine();
  const int64_t m = 512, n = 4096;
  const NormProblem p = [] {
    NormProblem q = make_problem(NormKind::RMSNorm, 4096, DType::BF16, DType::F32, Affine::WeightOnly);
    q.dropout = DropoutMask::Bytes;
    return q;
  }();
  const HostTensor x = random_rows(DType::BF16, m, n, fresh_seed(), 1, 1.0);
  const HostTensor weight = random_rows(DType::F32, 1, n, 5, 4, 0.5);
  DeviceBuffer d_x = uploaded(x), d_weight = uploaded(weight), d_y(x.size_bytes()), d_mask(m * n);
  const auto mask_of = [&](uint64_t offset) {
    d_mask.poison();
    ForwardArgs a;
    a.m = m;
    a.x = d_x.ptr();
    a.weight = d_weight.ptr();
    a.y = d_y.ptr();
    a.dropout_mask = d_mask.ptr();
    a.dropout_p = 0.25;
    a.dropout_seed = 1234;
    a.dropout_offset = offset;
    engine.forward(p, a, stream());
    synchronize();
    std::vector<unsigned char> out(static_cast<size_t>(m * n));
    d_mask.download(out.data(), out.size());
    return out;
  };
  const std::vector<unsigned char> first = mask_of(0), again = mask_of(0), other = mask_of(1);
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
  int64_t kept = 0, same = 0;
  for (size_t i = 0; i < first.size(); ++i) {
    kept += first[i];
    same += first[i] == other[i];
  }
  const double fraction = static_cast<double>(kept) / static_cast<double>(first.size());
  EXPECT_NEAR(fraction, 0.75, 0.005) << "kept " << kept << " of " << first.size();
  // Two independent masks agree on p² + (1 − p)² = 0.625 of the elements.
  EXPECT_NEAR(static_cast<double>(same) / static_cast<double>(first.size()), 0.625, 0.005);
}

}  // namespace
}  // namespace normjit::test
