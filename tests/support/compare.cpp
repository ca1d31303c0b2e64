#include "support/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "support/norm_inputs.h"
#include "support/reference.h"

namespace normjit::test {
namespace {

// Denominator floor when the reference and its terms are all zero (LayerNorm with N = 1:
// x̂ = 0, so dγ = 0): then the output must be zero too, up to denormal noise.
constexpr double kZeroFloor = 1e-30;

}  // namespace

double dx_tolerance(DType dx_dtype) { return dx_dtype == DType::F32 ? 1e-5 : 1e-2; }

double param_grad_tolerance(DType weight_dtype, int64_t m) {
  if (weight_dtype != DType::F32) return 1e-2;
  const double growth = std::max(1.0, std::sqrt(static_cast<double>(m)) / 8.0);
  return std::min(1e-5 * growth, 1e-4);
}

bool TensorCheck::ok() const {
  return nonfinite_where_finite == 0 && finite_where_nonfinite == 0 && error <= tolerance;
}

std::ostream& operator<<(std::ostream& os, const TensorCheck& c) {
  os << c.name << ": " << (c.ok() ? "ok" : "FAILED") << ", relative error " << c.error << " (tolerance "
     << c.tolerance << ")";
  if (c.nonfinite_where_finite)
    os << ", " << c.nonfinite_where_finite << " NaN/Inf elements where the reference is finite";
  if (c.finite_where_nonfinite)
    os << ", " << c.finite_where_nonfinite << " finite elements where the reference is NaN/Inf";
  if (c.first_mismatch_row >= 0)
    os << " (first at row " << c.first_mismatch_row << ", column " << c.first_mismatch_col << ")";
  if (!c.ok() && c.worst_row >= 0) {
    os << "; worst at row " << c.worst_row << ", column " << c.worst_col << ": " << c.worst_got << " against "
       << c.worst_want << "; " << c.elements_off << " elements off by ten times the tolerance, in " << c.rows_off
       << " rows (the first:";
    for (int64_t r : c.first_rows_off) os << " " << r;
    os << ")";
  }
  return os;
}

TensorCheck check_tensor(const std::string& name, const HostTensor& out, const std::vector<double>& ref,
                         double term_norm, double tolerance) {
  TensorCheck check;
  check.name = name;
  check.tolerance = tolerance;
  double diff_squares = 0, ref_squares = 0, worst = -1;
  for (int64_t r = 0; r < out.rows(); ++r)
    for (int64_t c = 0; c < out.cols(); ++c) {
      const double want = ref[static_cast<size_t>(r * out.cols() + c)];
      const double got = out.get(r, c);
      const bool want_finite = std::isfinite(want), got_finite = std::isfinite(got);
      if (want_finite != got_finite) {
        (want_finite ? check.nonfinite_where_finite : check.finite_where_nonfinite)++;
        if (check.first_mismatch_row < 0) {
          check.first_mismatch_row = r;
          check.first_mismatch_col = c;
        }
      }
      if (want_finite && got_finite) {
        diff_squares += (got - want) * (got - want);
        ref_squares += want * want;
        if (std::abs(got - want) > worst) {
          worst = std::abs(got - want);
          check.worst_row = r;
          check.worst_col = c;
          check.worst_got = got;
          check.worst_want = want;
        }
      }
    }
  const double scale = std::max({std::sqrt(ref_squares), term_norm, kZeroFloor});
  check.error = std::sqrt(diff_squares) / scale;
  // Where a failure lies, for its message: a second pass over the elements, so only for a
  // failure (every GPU test compares tensors of up to 16 Mi elements that pass). Off: an element
  // ten times the tolerance from the reference, relative to the tensor's root-mean-square element.
  if (check.ok()) return check;
  const double element_scale = scale / std::sqrt(static_cast<double>(std::max<int64_t>(1, out.rows() * out.cols())));
  for (int64_t r = 0; r < out.rows(); ++r) {
    const int64_t before = check.elements_off;
    for (int64_t c = 0; c < out.cols(); ++c) {
      const double want = ref[static_cast<size_t>(r * out.cols() + c)];
      const double got = out.get(r, c);
      if (std::isfinite(want) && std::isfinite(got) && std::abs(got - want) > tolerance * element_scale * 10)
        ++check.elements_off;
    }
    if (check.elements_off > before) {
      ++check.rows_off;
      if (check.first_rows_off.size() < 8) check.first_rows_off.push_back(r);
    }
  }
  return check;
}

std::vector<TensorCheck> check_gradients(const NormInputs& in, const Gradients& out, const ReferenceGrads& ref) {
  const NormProblem& p = in.problem;
  std::vector<TensorCheck> checks;
  checks.push_back(check_tensor("dx", out.dx, ref.dx, ref.dx_term_norm, dx_tolerance(p.dx_dtype)));
  const double param_tolerance = param_grad_tolerance(p.weight_dtype, in.m);
  if (p.has_weight)
    checks.push_back(check_tensor("dweight", out.dweight, ref.dweight, ref.dweight_term_norm, param_tolerance));
  if (p.has_bias)
    checks.push_back(check_tensor("dbias", out.dbias, ref.dbias, ref.dbias_term_norm, param_tolerance));
  if (in.fused.dresidual_in)
    checks.push_back(check_tensor("dresidual_in", out.dresidual_in, ref.dresidual_in, ref.dresidual_in_term_norm,
                                  dx_tolerance(p.dx_dtype)));
  if (p.gate != Gate::None)  // a product of a few fp32 roundings: dx's bound, in dx's dtype
    checks.push_back(check_tensor("dz", out.dz, ref.dz, ref.dz_term_norm, dx_tolerance(p.dx_dtype)));
  if (p.parallel && p.has_weight)
    checks.push_back(check_tensor("dweight1", out.dweight1, ref.dweight1, ref.dweight1_term_norm, param_tolerance));
  if (p.parallel && p.has_bias)
    checks.push_back(check_tensor("dbias1", out.dbias1, ref.dbias1, ref.dbias1_term_norm, param_tolerance));
  return checks;
}

::testing::AssertionResult gradients_match(const NormInputs& in, const Gradients& out, const ReferenceGrads& ref) {
  const std::vector<TensorCheck> checks = check_gradients(in, out, ref);
  const bool all_ok = std::all_of(checks.begin(), checks.end(), [](const TensorCheck& c) { return c.ok(); });
  ::testing::AssertionResult result = all_ok ? ::testing::AssertionSuccess() : ::testing::AssertionFailure();
  result << describe_case(in);
  for (const TensorCheck& c : checks) result << "\n  " << c;
  return result;
}

::testing::AssertionResult same_bits(const char* name, const HostTensor& a, const HostTensor& b) {
  if (a.size_bytes() != b.size_bytes()) return ::testing::AssertionFailure() << name << ": sizes differ";
  if (a.size_bytes() == 0 || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0) return ::testing::AssertionSuccess();
  for (int64_t slot = 0; slot < a.slot_count(); ++slot)
    if (std::memcmp(a.slot_bytes(slot), b.slot_bytes(slot), a.element_bytes()) != 0)
      return ::testing::AssertionFailure() << name << " differs first at element " << slot << ": " << a.load(slot)
                                           << " vs " << b.load(slot);
  return ::testing::AssertionFailure() << name << " differs";
}

::testing::AssertionResult same_bits(const Gradients& a, const Gradients& b) {
  for (auto check : {same_bits("dx", a.dx, b.dx), same_bits("dweight", a.dweight, b.dweight),
                     same_bits("dbias", a.dbias, b.dbias)})
    if (!check) return check;
  return ::testing::AssertionSuccess();
}

// Each row's statistic within `tolerance` of the reference, relative to max(|ref|, floor[r]);
// NaN never passes.
::testing::AssertionResult statistics_match(const char* name, const std::vector<float>& out,
                                            const std::vector<double>& ref, const std::vector<double>& floor,
                                            double tolerance) {
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (size_t r = 0; r < ref.size(); ++r) {
    const double error = std::fabs(out[r] - ref[r]) / std::max(std::fabs(ref[r]), floor[r]);
    if (!(error <= tolerance)) {
      if (first < 0) first = static_cast<int64_t>(r);
      ++bad;
    }
    if (!(error <= worst)) worst = error;  // NaN sticks
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << name << ": " << bad << " of " << ref.size() << " rows off (first: row "
                                       << first << ", " << out[first] << " vs " << ref[first]
                                       << "); worst relative error " << worst << ", tolerance " << tolerance;
}

}  // namespace normjit::test
