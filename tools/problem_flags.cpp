#include "tools/problem_flags.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace normjit::tools {

std::string take_option(std::vector<std::string>& args, const std::string& name) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name) {
      if (i + 1 >= args.size()) throw std::invalid_argument(name + " needs a value");
      std::string value = args[i + 1];
      args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
      return value;
    }
    if (args[i].rfind(name + "=", 0) == 0) {
      std::string value = args[i].substr(name.size() + 1);
      args.erase(args.begin() + static_cast<long>(i));
      return value;
    }
  }
  return "";
}

double take_memory_rate(std::vector<std::string>& args) {
  const std::string v = take_option(args, "--memory-rate");
  if (v.empty()) return 0;
  char* end = nullptr;
  const double rate = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(rate >= 0))
    throw std::invalid_argument("--memory-rate takes the device's peak memory bytes an SM cycle, a number >= 0 "
                                "(an H100 SXM reads 12.8, an H200 18.4; `normjit bench` prints it), not '" + v + "'");
  return rate;
}

bool take_flag(std::vector<std::string>& args, const std::string& name) {
  auto it = std::find(args.begin(), args.end(), name);
  if (it == args.end()) return false;
  args.erase(it);
  return true;
}

namespace {

// The whole of `text` as an integer: "128,256" or "4k" is an error, not 128 or 4.
int64_t parse_integer(const std::string& flag, const std::string& text) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw std::invalid_argument(flag + " '" + text + "' is not a number");
  return value;
}

}  // namespace

std::vector<int64_t> parse_integer_list(const std::string& flag, const std::string& text, int64_t min_value) {
  std::vector<int64_t> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) {
    const int64_t v = parse_integer(flag, item);
    if (v < min_value)
      throw std::invalid_argument(flag + " '" + item + "' is less than " + std::to_string(min_value));
    out.push_back(v);
  }
  return out;
}

DType parse_dtype(const std::string& t) {
  if (t == "fp32" || t == "f32" || t == "float32") return DType::F32;
  if (t == "fp16" || t == "f16" || t == "float16" || t == "half") return DType::F16;
  if (t == "bf16" || t == "bfloat16") return DType::BF16;
  if (t == "same" || t == "default") return DType::Default;
  throw std::invalid_argument("unknown dtype '" + t + "' (use fp32, fp16, bf16 or same)");
}

void apply_fused_set(const std::string& item, NormProblem& p) {
  if (item.empty()) throw std::invalid_argument("--fused: an empty set");
  std::stringstream parts(item);
  for (std::string o; std::getline(parts, o, '+');) {
    if (o == "none") continue;
    if (o == "residual") p.residual = true;
    else if (o == "zero-centered" || o == "zero-centered-weight") p.zero_centered_weight = true;
    else if (o == "rowscale") p.rowscale = true;
    else if (o == "all") p.residual = p.zero_centered_weight = p.rowscale = true, p.dropout = DropoutMask::Bits;
    else if (o == "dropout-bytes" || o == "dropout-bits") {
      const DropoutMask form = o == "dropout-bytes" ? DropoutMask::Bytes : DropoutMask::Bits;
      if (p.dropout != DropoutMask::None && p.dropout != form)
        throw std::invalid_argument("--fused '" + item + "': one dropout mask form per set (bytes or bits)");
      p.dropout = form;
    } else if (o == "gate" || o == "gate-before" || o == "gate_before") {
      const Gate gate = o == "gate" ? Gate::AfterNorm : Gate::BeforeNorm;
      if (p.gate != Gate::None && p.gate != gate)
        throw std::invalid_argument("--fused '" + item + "': one gate per set (gate or gate-before)");
      p.gate = gate;
    } else if (o == "parallel") {
      p.parallel = true;
    } else if (o == "recompute") {
      p.recompute_from_output = true;
    } else {
      throw std::invalid_argument("--fused '" + item + "': '" + o +
                                  "' is not an option (use none, residual, zero-centered, rowscale, "
                                  "dropout-bytes, dropout-bits, all, gate, gate-before, parallel or recompute; + combines "
                                  "them)");
    }
  }
  // Said here, before a GPU is looked for, rather than by validate_problem at the first shape.
  if (p.parallel && p.gate != Gate::None)
    throw std::invalid_argument("--fused '" + item +
                                "': a gate and parallel norms cannot be combined (the library rejects them: "
                                "which of the two norms the gate would belong to is not defined)");
  if (p.recompute_from_output && (p.parallel || p.gate != Gate::None))
    throw std::invalid_argument("--fused '" + item + "': recompute cannot be combined with a gate or parallel norms "
                                "(the library rejects them)");
}

NormProblem parse_problem_flags(std::vector<std::string>& args) {
  NormProblem p;
  const std::string kind = take_option(args, "--kind");
  if (kind.empty() || kind == "layernorm" || kind == "ln") {
    p.kind = NormKind::LayerNorm;
    p.has_bias = true;
  } else if (kind == "rmsnorm" || kind == "rms") {
    p.kind = NormKind::RMSNorm;
    p.has_bias = false;
  } else {
    throw std::invalid_argument("unknown --kind '" + kind + "' (use layernorm or rmsnorm)");
  }
  const std::string n = take_option(args, "--n");
  if (n.empty()) throw std::invalid_argument("--n is required (the hidden size)");
  p.n = parse_integer("--n", n);
  if (std::string d = take_option(args, "--dtype"); !d.empty()) p.x_dtype = parse_dtype(d);
  if (std::string d = take_option(args, "--dy-dtype"); !d.empty()) p.dy_dtype = parse_dtype(d);
  if (std::string d = take_option(args, "--dx-dtype"); !d.empty()) p.dx_dtype = parse_dtype(d);
  if (std::string d = take_option(args, "--weight-dtype"); !d.empty()) p.weight_dtype = parse_dtype(d);
  if (take_flag(args, "--no-weight")) p.has_weight = false;
  if (take_flag(args, "--no-bias")) p.has_bias = false;
  if (take_flag(args, "--bias")) p.has_bias = true;
  if (std::string a = take_option(args, "--align"); !a.empty()) {
    const int64_t align = parse_integer("--align", a);
    if (align < 1 || align > 16 || (align & (align - 1)) != 0)
      throw std::invalid_argument("--align '" + a + "' is not 1, 2, 4, 8 or 16 (bytes)");
    p.alignment = static_cast<int>(align);
  }
  if (take_flag(args, "--residual")) p.residual = true;
  if (take_flag(args, "--zero-centered-weight")) p.zero_centered_weight = true;
  if (take_flag(args, "--rowscale")) p.rowscale = true;
  if (std::string d = take_option(args, "--dropout"); !d.empty()) {
    if (d == "bytes") p.dropout = DropoutMask::Bytes;
    else if (d == "bits") p.dropout = DropoutMask::Bits;
    else throw std::invalid_argument("--dropout '" + d + "' is not a mask form (use bytes or bits)");
  }
  if (take_flag(args, "--parallel")) p.parallel = true;
  if (take_flag(args, "--recompute-from-output")) p.recompute_from_output = true;
  if (std::string g = take_option(args, "--gate"); !g.empty()) {
    if (g == "after-norm") p.gate = Gate::AfterNorm;
    else if (g == "before-norm") p.gate = Gate::BeforeNorm;
    else if (g != "none") throw std::invalid_argument("--gate '" + g + "' is not a gate (use after-norm, before-norm or none)");
  }
  if (std::string f = take_option(args, "--fused"); !f.empty()) apply_fused_set(f, p);
  return p;
}

std::string problem_flags_help() {
  return "  --kind layernorm|rmsnorm   (default layernorm, with bias)\n"
         "  --n N                      hidden size (required)\n"
         "  --dtype fp32|fp16|bf16     x and dy (default fp32)\n"
         "  --dy-dtype, --dx-dtype D   default: as x\n"
         "  --weight-dtype fp32|same   gamma/beta dtype (default: as x)\n"
         "  --no-weight, --no-bias     plain normalisation / no beta\n"
         "  --align BYTES              row alignment to assume (default 16)\n"
         "  --residual                 fused: add dresidual to dh (docs/FUSED.md)\n"
         "  --zero-centered-weight     fused: gamma stored as gamma - 1\n"
         "  --rowscale                 fused: dx_in = dh * rowscale[row]\n"
         "  --dropout bytes|bits       fused: dx_in = dh * keep / (1 - p), keep-mask in this form\n"
         "  --gate after-norm|before-norm  fused, rmsnorm: y = norm(x)*gamma*silu(z) or norm(x*silu(z))*gamma\n"
         "  --parallel                 fused: a second norm of the same x (dy1, gamma1 in; dgamma1, dbeta1 out)\n"
         "  --recompute-from-output    fused: x-hat = (y - beta)/gamma from the forward's output y; x optional\n"
         "  --fused SET                the options above as `normjit bench --fused` names a set (residual,\n"
         "                             gate-before, all, residual+rowscale, ...)\n";
}

}  // namespace normjit::tools
