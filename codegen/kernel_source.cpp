#include "codegen/kernel_source.h"

#include <sstream>

#include "codegen/embedded_templates.h"
#include "codegen/forward_config.h"
#include "codegen/fused_blocks.h"
#include "codegen/norm_problem.h"

namespace normjit::codegen {
namespace {

const char* device_type(DType d) {
  switch (d) {
    case DType::F32: return "float";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::Default: break;
  }
  return "void";
}

const char* cpp_bool(bool b) { return b ? "true" : "false"; }

// The constants every template reads, in namespace nj::cfg.
std::string problem_constants(const NormProblem& p, const LaunchConfig& c) {
  std::ostringstream s;
  s << "namespace nj {\nnamespace cfg {\n"
    << "constexpr bool kLayerNorm = " << cpp_bool(p.kind == NormKind::LayerNorm) << ";\n"
    << "constexpr i64 kN = " << p.n << ";\n"
    << "typedef " << device_type(p.x_dtype) << " TX;\n"
    << "typedef " << device_type(p.dy_dtype) << " TDY;\n"
    << "typedef " << device_type(p.dx_dtype) << " TDX;\n"
    << "typedef " << device_type(p.weight_dtype) << " TW;\n"
    << "constexpr bool kHasWeight = " << cpp_bool(p.has_weight) << ";\n"
    << "constexpr bool kHasBias = " << cpp_bool(p.has_bias) << ";\n"
    << "constexpr int kAlign = " << p.alignment << ";  // bytes every row and the weight are aligned to\n"
    << "constexpr int kThreads = " << c.threads << ";\n"
    << "constexpr int kThreadsPerRow = " << c.threads_per_row << ";\n"
    << "constexpr int kVec = " << c.vec << ";\n"
    << "constexpr bool kRowInRegisters = " << cpp_bool(c.row_in_registers) << ";\n"
    << "constexpr int kCluster = " << c.cluster << ";  // blocks sharing a row\n"
    << "constexpr int kMerge = " << c.merge << ";  // blocks of a cluster adding their dγ/dβ before writing them\n"
    << "constexpr bool kGridCluster = " << cpp_bool(c.grid) << ";  // the cluster is the grid, meeting in global memory\n"
    << "constexpr bool kPrefetch = " << cpp_bool(c.prefetch) << ";  // next row loaded during this one\n"
    << "constexpr bool kStaged = " << cpp_bool(c.staged) << ";  // rows staged in shared memory\n"
    << "constexpr int kStages = " << c.stages << ";  // staged rows in flight per block\n"
    << "constexpr int kSharedPrefetch = " << c.shared_prefetch << ";  // rows copied ahead into shared memory\n"
    << "constexpr bool kPairedRows = " << cpp_bool(c.paired_rows) << ";  // two rows a turn\n"
    << "constexpr int kMinBlocks = " << c.min_blocks_per_sm << ";  // resident blocks per SM to budget registers for\n"
    << "constexpr bool kSharedSums = " << cpp_bool(c.shared_sums) << ";  // dγ/dβ sums in shared memory\n"
    << "constexpr bool kPackedRows = " << cpp_bool(packs_rows(p, c)) << ";  // rows held as stored (16-bit)\n"
    << "constexpr bool kSharedWeights = " << cpp_bool(c.shared_weights) << ";  // γ held in shared memory\n"
    << "constexpr bool kPhased = " << cpp_bool(c.phased) << ";  // rows in phase read as aligned chunks\n"
    << "constexpr int kColumnPass = " << c.column_pass << ";  // > 0: row sums, then column blocks of this many lanes\n"
    << "}  // namespace cfg\n}  // namespace nj\n";
  return s.str();
}

// The fused options' constants, emitted only when one is on (an option-free source has none).
std::string fused_constants(const NormProblem& p, const LaunchConfig& c) {
  std::ostringstream s;
  s << "namespace nj {\nnamespace cfg {\n"
    << "constexpr bool kResidual = " << cpp_bool(p.residual) << ";  // dresidual added to dh\n"
    << "constexpr bool kZeroCenteredWeight = " << cpp_bool(p.zero_centered_weight) << ";  // γ stored as γ − 1\n"
    << "constexpr bool kRowScale = " << cpp_bool(p.rowscale) << ";  // dx_in = dh·rowscale[row]\n"
    << "constexpr int kDropoutMask = " << static_cast<int>(p.dropout)
    << ";  // 0: no dropout; keep-mask of 1: a byte, 2: a bit per element\n"
    << "constexpr int kGate = " << static_cast<int>(p.gate)
    << ";  // 0: no gate; silu(z) 1: after the norm (scales dy), 2: before it (scales x)\n"
    << "constexpr bool kGateHoldsGamma = " << cpp_bool(gate_holds_gamma(p))
    << ";  // packed gated rows keep the dx pass's γ for dz\n"
    << "constexpr bool kParallel = " << cpp_bool(p.parallel) << ";  // a second norm of x: dy1, γ1; dγ1, dβ1\n"
    << "constexpr bool kRecompute = " << cpp_bool(p.recompute_from_output)
    << ";  // x̂ = (y − β)/γ from the forward's output, read where x would be\n"
    << "constexpr bool kEarlyWeights = " << cpp_bool(c.early_weights) << ";  // the recompute's γ, β read at each row's top\n"
    << "}  // namespace cfg\n}  // namespace nj\n";
  return s.str();
}

// The forward's constants: only what templates/norm_forward.cuh reads.
std::string forward_constants(const NormProblem& p, const LaunchConfig& c) {
  std::ostringstream s;
  s << "namespace nj {\nnamespace cfg {\n"
    << "constexpr bool kLayerNorm = " << cpp_bool(p.kind == NormKind::LayerNorm) << ";\n"
    << "constexpr i64 kN = " << p.n << ";\n"
    << "typedef " << device_type(p.x_dtype) << " TX;  // x\n"
    << "typedef " << device_type(p.dy_dtype) << " TY;  // y\n"
    << "typedef " << device_type(p.weight_dtype) << " TW;\n"
    << "constexpr bool kHasWeight = " << cpp_bool(p.has_weight) << ";\n"
    << "constexpr bool kHasBias = " << cpp_bool(p.has_bias) << ";\n"
    << "constexpr bool kZeroCenteredWeight = " << cpp_bool(p.zero_centered_weight) << ";  // γ stored as γ − 1\n"
    << "constexpr int kAlign = " << p.alignment << ";  // bytes every row of x and y, γ and β are aligned to\n"
    << "constexpr int kThreads = " << c.threads << ";\n"
    << "constexpr int kThreadsPerRow = " << c.threads_per_row << ";\n"
    << "constexpr int kVec = " << c.vec << ";\n"
    << "constexpr bool kRowInRegisters = " << cpp_bool(c.row_in_registers) << ";\n"
    << "constexpr int kCluster = " << c.cluster << ";  // blocks sharing a row\n"
    << "constexpr bool kPrefetch = " << cpp_bool(c.prefetch) << ";  // next row loaded during this one\n"
    << "constexpr int kMinBlocks = " << c.min_blocks_per_sm << ";  // resident blocks per SM to budget registers for\n"
    << "constexpr int kStreamBatch = " << kForwardStreamBatch << ";  // 16-byte loads a streaming thread keeps in flight\n"
    << "constexpr bool kSharedWeights = " << cpp_bool(c.shared_weights) << ";  // γ and β held in shared memory\n"
    << "constexpr bool kHeldBias = " << cpp_bool(forward_holds_bias(p, c)) << ";  // β held too (else read each row)\n"
    << "constexpr int kSharedPrefetch = " << c.shared_prefetch << ";  // the next row copied ahead into shared memory\n"
    << "constexpr bool kPhased = " << cpp_bool(c.phased) << ";  // rows in phase read as aligned chunks\n"
    << "}  // namespace cfg\n}  // namespace nj\n";
  return s.str();
}

// The forward's fused options' constants, emitted only when one is on.
std::string forward_fused_constants(const NormProblem& p) {
  std::ostringstream s;
  s << "namespace nj {\nnamespace cfg {\n"
    << "constexpr bool kResidual = " << cpp_bool(p.residual) << ";  // h = branch + residual\n"
    << "constexpr bool kRowScale = " << cpp_bool(p.rowscale) << ";  // branch = x·rowscale[row]\n"
    << "constexpr int kDropoutMask = " << static_cast<int>(p.dropout)
    << ";  // 0: no dropout; the keep-mask written as 1: a byte, 2: a bit per element\n"
    << "constexpr int kGate = " << static_cast<int>(p.gate)
    << ";  // 0: no gate; silu(z) 1: after the norm (scales y), 2: before it (scales h)\n"
    << "constexpr bool kParallel = " << cpp_bool(p.parallel) << ";  // a second output y1 = norm(h)·γ1 + β1\n"
    << "}  // namespace cfg\n}  // namespace nj\n";
  return s.str();
}

// The switches a config turns on in the templates, as #defines ahead of them; none for the
// configs that need none, whose source is as it was before the switch existed. Realigned slots
// (templates/common.cuh) where x's slots are wider than the rows' alignment; bf16 widened by
// inline PTX where the forward forms a pre-norm sum (templates/common.cuh says why).
std::string template_switches(const NormProblem& p, const LaunchConfig& c, Pass pass) {
  std::string s;
  if (realigned_slots(p, c)) s += "#define NJ_REALIGNED_SLOTS 1  // x's slots are wider than the rows' alignment\n";
  if (pass == Pass::Forward && p.x_dtype == DType::BF16 && forms_pre_norm_sum(p))
    s += "#define NJ_OPAQUE_BF16_WIDENING 1  // bf16 widened by inline PTX\n";
  return s;
}

}  // namespace

KernelSource generate_forward_source(const NormProblem& p, const LaunchConfig& c) {
  KernelSource out;
  std::ostringstream name;
  name << kind_name(p.kind) << "_fwd_n" << p.n << ".cu";
  out.name = name.str();
  std::ostringstream s;
  s << "// normjit generated kernel: " << describe_forward(p) << "\n"
    << "// launch: " << describe(c) << "\n\n"
    << template_switches(p, c, Pass::Forward) << template_text("common.cuh") << "\n"
    << forward_constants(p, c) << "\n";
  const bool fused = has_forward_fused_options(p);
  if (fused)
    s << forward_fused_constants(p) << "\n"
      << template_text("gate_math.cuh") << "\n"
      << template_text("philox.cuh") << "\n";
  s << select_fused_blocks(template_text("norm_forward.cuh"), fused);
  out.text = s.str();
  return out;
}

// 16-byte slices only from N = 16384 on (128 blocks of 128 columns): shorter rows come with
// many partial rows (130-400), where a quarter of the blocks, each with twice the rows a lane,
// lost 1% on the H200 (RMS bf16 4096, 5003); longer rows come with few (8-66), where the
// blocks were the cost (LN bf16 262144: 26 -> 9 us). bench/NOTES.md, entry 58.
constexpr int64_t kWideReduceMinN = 16384;

ReduceShape reduce_shape(const NormProblem& problem) {
  ReduceShape shape;  // single columns, 16 lanes
  if (problem.n % 4 == 0 && problem.n >= kWideReduceMinN) {
    shape.vec = 4;
    shape.lanes = 8;
  }
  return shape;
}

KernelSource generate_backward_source(const NormProblem& p, const LaunchConfig& c) {
  KernelSource out;
  std::ostringstream name;
  name << kind_name(p.kind) << "_bwd_n" << p.n << ".cu";
  out.name = name.str();

  const bool fused = has_fused_options(p);
  std::ostringstream s;
  s << "// normjit generated kernel: " << describe(p) << "\n"
    << "// launch: " << describe(c) << "\n\n"
    << template_switches(p, c, Pass::Backward) << template_text("common.cuh") << "\n"
    << problem_constants(p, c) << "\n";
  if (fused) s << fused_constants(p, c) << "\n" << template_text("gate_math.cuh") << "\n" << template_text("fused_ops.cuh") << "\n";
  s << select_fused_blocks(template_text("norm_backward.cuh"), fused) << "\n";
  if (c.column_pass > 0) s << template_text("column_pass.cuh") << "\n";
  const ReduceShape r = reduce_shape(p);
  s << "namespace nj {\nnamespace cfg {\n"
    << "constexpr int kReduceAcross = " << r.across << ";  // the reduction's threads across its columns\n"
    << "constexpr int kReduceLanes = " << r.lanes << ";  // its threads down the partial rows\n"
    << "constexpr int kReduceVec = " << r.vec << ";  // adjacent columns a thread adds\n"
    << "}  // namespace cfg\n}  // namespace nj\n"
    << template_text("reduce_partials.cuh");
  out.text = s.str();
  return out;
}

}  // namespace normjit::codegen
