#include "tools/default_problems.h"

namespace normjit::tools {

std::vector<NormProblem> default_problems() {
  static constexpr int64_t kHiddenSizes[] = {2048, 4096, 5120, 7168, 8192, 12288, 16384};
  std::vector<NormProblem> out;
  for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
    for (DType dtype : {DType::BF16, DType::F16})
      for (int64_t n : kHiddenSizes) {
        NormProblem p;
        p.kind = kind;
        p.n = n;
        p.x_dtype = dtype;
        p.weight_dtype = DType::F32;
        p.has_weight = true;
        p.has_bias = kind == NormKind::LayerNorm;
        out.push_back(p);
      }
  return out;
}

}  // namespace normjit::tools
