// Shape files: the backward problems a model needs, listed in TOML, so that a fleet can compile
// them ahead of time (`normjit compile --shapes FILE`) instead of at the first training step.
//
//   # normjit shape file: the problems a model needs
//   [[problem]]
//   kind = "layernorm"        # required: layernorm | rmsnorm
//   n = [4096, 5120]          # required: one hidden size or a list, each >= 1
//   dtype = "bf16"            # required: x (and dy): fp32 | fp16 | bf16
//   dy_dtype = "bf16"         # optional, default: dtype
//   dx_dtype = "bf16"         # optional, default: dtype
//   weight_dtype = "fp32"     # optional: fp32 | fp16 | bf16 | same (default same)
//   weight = true             # optional, default true
//   bias = true               # optional, LayerNorm only; default: weight (LayerNorm), false (RMSNorm)
//   align = [16, 8]           # optional row alignments in bytes (1, 2, 4, 8, 16), default 16
//   m = [1, 4096]             # optional M buckets, kept for the tuner (compile ignores them)
//
// Every other key is an error. Errors are normjit::Error(Status::ConfigError) naming the file,
// the [[problem]] entry (1-based, with its line), the key, the value and what is accepted.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "normjit/norm_problem.hpp"

namespace normjit::runtime {

struct ShapeProblem {
  NormProblem problem;     // one hidden size and one alignment; validated, not resolved
  std::vector<int64_t> m;  // the entry's M buckets (empty when not given)
  int entry = 0;           // 1-based index of the [[problem]] table it came from
};

// One ShapeProblem per (entry, n, align), in file order.
std::vector<ShapeProblem> parse_shape_text(const std::string& text, const std::string& origin);
std::vector<ShapeProblem> load_shape_file(const std::string& path);

}  // namespace normjit::runtime
