#include "support/finite_difference.h"

#include <algorithm>
#include <cmath>

namespace normjit::test {

std::vector<double> numeric_gradient(std::vector<double>* values, const std::function<double()>& loss) {
  std::vector<double> grad(values->size());
  for (size_t i = 0; i < values->size(); ++i) {
    const double saved = (*values)[i];
    const double h = 1e-5 * std::max(1.0, std::fabs(saved));
    auto loss_at = [&](double steps) {
      (*values)[i] = saved + steps * h;
      return loss();
    };
    const double one_step = loss_at(1) - loss_at(-1), two_steps = loss_at(2) - loss_at(-2);
    (*values)[i] = saved;
    grad[i] = (8 * one_step - two_steps) / (12 * h);
  }
  return grad;
}

double relative_error(const std::vector<double>& a, const std::vector<double>& b, double floor) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return std::sqrt(diff) / std::max({std::sqrt(norm), floor, 1e-30});
}

double gradient_error(std::vector<double>* values, const std::function<double()>& loss,
                      const std::vector<double>& analytic, double floor) {
  return relative_error(numeric_gradient(values, loss), analytic, floor);
}

}  // namespace normjit::test
