// Checking a gradient against the function it claims to differentiate, in double.
#pragma once
#include <functional>
#include <vector>

namespace normjit::test {

// d loss/d v for each element v of *values in turn (restored afterwards), by fourth-order
// central differences. Fourth order because a norm's loss bends on the scale of
// sqrt(var + eps), which is as small as sqrt(eps) ≈ 3e-3 when a row's values nearly coincide
// (N = 2): a second-order stencil would need h so small that rounding took over.
std::vector<double> numeric_gradient(std::vector<double>* values, const std::function<double()>& loss);

// ‖a − b‖ / max(‖b‖, floor): the metric of compare.h, on doubles.
double relative_error(const std::vector<double>& a, const std::vector<double>& b, double floor);

// relative_error(numeric_gradient(values, loss), analytic, floor): how far a gradient the
// reference claims is from the loss's own, against kFiniteDifferenceTolerance.
double gradient_error(std::vector<double>* values, const std::function<double()>& loss,
                      const std::vector<double>& analytic, double floor);

// The FD gradient's error, truncation (~(h/sqrt(eps))⁴) plus rounding (~1e-16·|L|/h), stays
// near 1e-9 of the terms; a wrong formula is off by O(1).
constexpr double kFiniteDifferenceTolerance = 1e-6;

}  // namespace normjit::test
