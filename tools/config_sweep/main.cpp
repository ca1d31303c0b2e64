// normjit_config_sweep: the heuristics' launch configs over a grid of problems, one line each, so
// that a change meant to keep them (a refactor of codegen/launch_config.cpp, many_rows_rules.cpp
// or forward_config.cpp) can be proven to: run it before and after, then `cmp` the outputs.
// Every problem is also checked: a config the heuristic gives that its own check rejects, or a
// heuristic that throws, is printed as `throws ...` and makes the exit status 1; so do search
// space candidates that fail their check (`spaces`). No GPU, no NVRTC.
//
//   normjit_config_sweep forward|backward|spaces [--quick]
//
// forward: choose_forward_config; backward: choose_launch_config and twin_launch_config; spaces:
// both passes' search spaces, every candidate checked (counts only; 132 SMs, M unknown, 7 and
// 64 Mi / N). The full grid (every N to
// 4200, then every 7 to 70000, every 512 to 300000 and 1% steps to 4.2M; both kinds, three x
// types, both γ types, option sets and affine forms, alignments 16-2, sm 80 and 90, 132 and 128
// SMs, both memory rates, nine M) prints about 100 M lines for the forward (80 s, 9.5 GB: pipe it
// through md5sum); --quick takes every 97th N and prints a count only (CI runs it).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "codegen/forward_config.h"
#include "codegen/launch_config.h"
#include "codegen/norm_problem.h"
#include "codegen/search_space.h"

namespace {

using namespace normjit;
using namespace normjit::codegen;

// The hidden sizes of the grid.
std::vector<int64_t> sizes(bool quick) {
  std::vector<int64_t> out;
  for (int64_t n = 1; n <= 4200000; n = n < 4200 ? n + 1 : n < 70000 ? n + 7 : n < 300000 ? n + 512 : n + n / 100 + 1)
    out.push_back(n);
  if (!quick) return out;
  std::vector<int64_t> every;
  for (size_t i = 0; i < out.size(); i += 97) every.push_back(out[i]);
  for (int64_t n : {1000, 1024, 2048, 4095, 4096, 5003, 8192, 16384, 32768, 49152, 57344, 65536, 81920, 98304, 131072,
                    262144, 1048576})
    every.push_back(n);  // the standing's and the memory-rich rules' own
  return every;
}

// The option sets and affine forms of one problem: option 0 is option-free with γ (and β for
// LayerNorm); 1-6 fused options; 7 γ alone; 8 neither.
bool make_problem(NormKind kind, int64_t n, DType x, bool same_weight, int option, int alignment, NormProblem* p) {
  NormProblem q;
  q.kind = kind;
  q.n = n;
  q.x_dtype = x;
  q.weight_dtype = same_weight ? x : DType::F32;
  q.has_bias = kind == NormKind::LayerNorm && option != 7 && option != 8;
  q.has_weight = option != 8;
  q.alignment = alignment;
  q.rows_in_phase = alignment == 2 && option == 0;
  switch (option) {
    case 1: q.residual = true; break;
    case 2: q.dropout = DropoutMask::Bits; break;
    case 3: q.residual = q.rowscale = q.zero_centered_weight = true; break;
    case 4: q.parallel = true; break;
    case 5: q.gate = Gate::BeforeNorm; break;
    case 6: q.recompute_from_output = true; break;
    default: break;
  }
  *p = q;
  return true;
}

int sweep(const char* what, bool quick) {
  const bool forward = std::strcmp(what, "forward") == 0, spaces = std::strcmp(what, "spaces") == 0;
  long long lines = 0, throws = 0, candidates = 0;
  std::string out;
  auto flush = [&] {
    if (!quick) std::fwrite(out.data(), 1, out.size(), stdout);
    out.clear();
  };
  const std::vector<int64_t> ns = sizes(quick || spaces);
  for (int64_t n : ns)
    for (NormKind kind : {NormKind::LayerNorm, NormKind::RMSNorm})
      for (DType x : {DType::BF16, DType::F16, DType::F32})
        for (bool same_weight : {false, true})
          for (int option = 0; option <= 8; ++option)
            for (int alignment : {16, 8, 4, 2}) {
              if (alignment < 16 && option > 1 && option < 7) continue;
              NormProblem raw, p, backward;
              make_problem(kind, n, x, same_weight, option, alignment, &raw);
              bool forward_ok = true, backward_ok = true;
              try {
                p = resolve_forward_problem(raw);
              } catch (const std::exception&) {
                forward_ok = false;  // not a forward problem
              }
              try {
                backward = resolve_problem(raw);
              } catch (const std::exception&) {
                backward_ok = false;
              }
              if (!forward) p = backward;
              if ((forward && !forward_ok) || (!forward && !spaces && !backward_ok) || (spaces && !forward_ok && !backward_ok))
                continue;
              const std::string shape = describe(forward_ok && forward ? p : backward_ok ? backward : p) + " | ";
              for (int sm : {80, 90})
                for (int sm_count : {132, 128})
                  for (double rate : {0.0, 18.4})
                    for (int64_t m : {int64_t{-1}, int64_t{1}, int64_t{7}, int64_t{37}, int64_t{199}, int64_t{263},
                                      int64_t{264}, int64_t{600}, 67108864 / n + 1}) {
                      if (sm == 80 && (sm_count == 128 || rate > 0)) continue;
                      // Search spaces (a few dozen candidates each): one SM count, three M.
                      if (spaces && (sm_count == 128 || (m != -1 && m != 7 && m != 67108864 / n + 1))) continue;
                      std::string line = shape + "sm_" + std::to_string(sm) + " " + std::to_string(sm_count) + " SMs rate " +
                                         std::to_string(rate) + " M=" + std::to_string(m) + ": ";
                      try {
                        if (spaces) {
                          for (Pass pass : {Pass::Forward, Pass::Backward}) {
                            if (!(pass == Pass::Forward ? forward_ok : backward_ok)) continue;
                            const NormProblem& q = pass == Pass::Forward ? p : backward;
                            const std::vector<LaunchConfig> space =
                                pass == Pass::Forward ? forward_search_space(q, sm, m, sm_count, rate)
                                                      : search_space(q, sm, sm_count, m, rate);
                            for (const LaunchConfig& c : space) {
                              ++candidates;
                              check_config(q, c, pass);
                            }
                          }
                          ++lines;
                          continue;
                        }
                        if (forward) {
                          line += describe(choose_forward_config(p, sm, m, sm_count, rate));
                        } else {
                          line += describe(choose_launch_config(p, sm, sm_count, m, rate));
                          line += " | twin ";
                          line += describe(twin_launch_config(p, sm, sm_count, m, rate));
                        }
                      } catch (const std::exception& e) {
                        line += std::string("throws ") + e.what();
                        ++throws;
                        std::fprintf(stderr, "normjit_config_sweep: %s\n", line.c_str());
                      }
                      out += line;
                      out += '\n';
                      ++lines;
                      if (out.size() > (1 << 20)) flush();
                    }
            }
  flush();
  std::fprintf(stderr, "normjit_config_sweep %s%s: %lld %s, %lld candidates checked, %lld throw\n", what,
               quick ? " --quick" : "", lines, spaces ? "search spaces" : "configs", candidates, throws);
  return throws == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc == 3 && std::strcmp(argv[2], "--quick") == 0;
  if (argc < 2 || argc > 3 || (argc == 3 && !quick) ||
      (std::strcmp(argv[1], "forward") != 0 && std::strcmp(argv[1], "backward") != 0 && std::strcmp(argv[1], "spaces") != 0)) {
    std::fprintf(stderr, "usage: normjit_config_sweep forward|backward|spaces [--quick]\n");
    return 2;
  }
  return sweep(argv[1], quick);
}
