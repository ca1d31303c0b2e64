// normjit emit: the generated source of one problem, and optionally its PTX, resource report or SASS.
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "codegen/cache_key.h"
#include "codegen/forward_config.h"
#include "codegen/kernel_source.h"
#include "codegen/norm_problem.h"
#include "runtime/engine_impl.h"
#include "runtime/nvrtc.h"
#include "tools/disassembler.h"
#include "tools/problem_flags.h"
#include "tools/target_archs.h"
#include "tools/subcommands.h"

namespace normjit::tools {

int run_emit(std::vector<std::string> args) {
  if (take_flag(args, "--help")) {
    std::printf("usage: normjit emit PROBLEM [--forward] [--arch sm_XY] [--ptx | --resources | --sass | --cubin FILE]\n%s"
                "  --forward                  the forward kernel (y, mean, rstd) instead of the backward\n"
                "  --arch sm_XY               target for --ptx/--resources/--sass/--cubin (default sm_90)\n"
                "  --memory-rate B            the device's peak memory bytes an SM cycle the heuristic assumes\n"
                "                             (default 0: the H100's rules; an H200 reads 18.4: its rules from 16)\n"
                "  --ptx                      print PTX instead of CUDA source\n"
                "  --resources                compile and print registers, shared memory, stack and spills\n"
                "  --sass                     compile and print the cubin's machine code (nvdisasm: $NORMJIT_NVDISASM,\n"
                "                             PATH or /usr/local/cuda/bin; `pip install nvidia-cuda-nvdisasm` has one)\n"
                "  --cubin FILE               compile and write the cubin to FILE\n"
                "  --line-info                with --cubin: line tables mapping the machine code (the same bytes as\n"
                "                             without) to the lines of the source emit prints; bench/ncu_stalls.py\n"
                "                             --lines reads a profile's SASS addresses through them\n"
                "  --config \"DESCRIBED\"      the launch config as `normjit tune --list` prints one (every field\n"
                "                             it leaves out at its default), in place of the heuristic's\n"
                "  --threads T, --threads-per-row R, --vec V, --min-blocks B, --cluster C, --streamed, --registers,\n"
                "  --staged, --unstaged, --shared-sums, --prefetch, --column-pass L (the column pass, L lanes\n"
                "  down the rows; with --threads, --vec)\n"
                "                             override the heuristic's launch config (to compare register reports;\n"
                "                             shared weights, γ in shared memory, follow the overridden shape;\n"
                "                             --shared-weights holds the forward's γ and β in shared memory)\n",
                problem_flags_help().c_str());
    return kExitOk;
  }
  const bool forward = take_flag(args, "--forward");
  const bool ptx = take_flag(args, "--ptx");
  const bool resources = take_flag(args, "--resources");
  const bool sass = take_flag(args, "--sass");
  const std::string cubin_file = take_option(args, "--cubin");
  const bool line_info = take_flag(args, "--line-info");
  if (int{ptx} + int{resources} + int{sass} + int{!cubin_file.empty()} > 1)
    throw std::invalid_argument("--ptx, --resources, --sass and --cubin each give something else: give one of them");
  if (line_info && cubin_file.empty())
    throw std::invalid_argument("--line-info is for the cubin --cubin FILE writes: give --cubin too");
  std::string arch = take_option(args, "--arch");
  if (arch.empty()) arch = "sm_90";
  // The heuristic's rules depend on the device's memory rate (codegen::kMemoryRichBytesPerSmCycle),
  // which only a GPU reports: without one, name it to see the config a given device gets.
  const double memory_rate = take_memory_rate(args);
  // Launch-config overrides, each replacing one field of the heuristic's choice.
  auto take_int = [&](const char* name) {
    const std::string v = take_option(args, name);
    return v.empty() ? 0 : static_cast<int>(parse_integer_list(name, v, 1).front());
  };
  const std::string config_text = take_option(args, "--config");
  const int threads = take_int("--threads"), threads_per_row = take_int("--threads-per-row"),
            vec = take_int("--vec"), min_blocks = take_int("--min-blocks"), cluster = take_int("--cluster"),
            column_pass = take_int("--column-pass");
  const bool streamed = take_flag(args, "--streamed"), registers = take_flag(args, "--registers"),
             staged = take_flag(args, "--staged"), unstaged = take_flag(args, "--unstaged"),
             shared_sums = take_flag(args, "--shared-sums"), prefetch = take_flag(args, "--prefetch"),
             shared_weights = take_flag(args, "--shared-weights");
  const NormProblem problem = parse_problem_flags(args);
  if (!args.empty()) throw std::invalid_argument("unexpected argument '" + args.front() + "'");
  if (forward)
    codegen::validate_forward_problem(problem);
  else
    codegen::validate_problem(problem);
  const NormProblem p = forward ? codegen::resolve_forward_problem(problem) : codegen::resolve_problem(problem);
  const int sm = parse_arch_list({arch}).front();
  const codegen::LaunchConfig heuristic = forward ? codegen::choose_forward_config(p, sm, -1, 0, memory_rate)
                                                  : codegen::choose_launch_config(p, sm, 0, -1, memory_rate);
  codegen::LaunchConfig config = config_text.empty() ? heuristic : codegen::parse_described_config(config_text);
  if (threads) config.threads = threads;
  if (threads_per_row) config.threads_per_row = threads_per_row;
  if (vec) config.vec = vec;
  if (min_blocks) config.min_blocks_per_sm = min_blocks;
  if (cluster) config.cluster = cluster;
  if (streamed) config.row_in_registers = false;
  if (registers) config.row_in_registers = true;
  if (staged || unstaged) config.staged = staged;
  if (shared_sums) config.shared_sums = true;
  if (prefetch) config.prefetch = true;
  if (column_pass) {
    config = codegen::column_pass_config(p, threads ? threads : 256, column_pass);
    if (vec) config.vec = vec;
  }
  if (forward) {
    if (shared_weights) config.shared_weights = true;
    codegen::check_forward_config(p, config);
  } else {
    if (shared_weights) throw std::invalid_argument("--shared-weights is the forward's (the backward's follow its shape)");
    config = codegen::with_shared_weights(p, config, sm);  // as the heuristic and the tuner set it
    codegen::check_launch_config(p, config);
  }
  const codegen::KernelSource source =
      forward ? codegen::generate_forward_source(p, config) : codegen::generate_backward_source(p, config);
  const std::string described = codegen::describe(p, forward ? codegen::Pass::Forward : codegen::Pass::Backward);
  if (!ptx && !resources && !sass && cubin_file.empty()) {
    std::fputs(source.text.c_str(), stdout);
    return kExitOk;
  }
  const runtime::Nvrtc& nvrtc = runtime::Nvrtc::get();
  const codegen::CompileTarget target{sm, nvrtc.version(), line_info};
  if (ptx) {
    std::fputs(nvrtc.compile_to_ptx(source.text, source.name, codegen::compile_options(target), described).c_str(),
               stdout);
    return kExitOk;
  }
  // Looked for before compiling, so a missing tool costs no compile and prints only its error.
  const std::string disassembler = sass ? find_disassembler() : std::string();
  const runtime::CompileOutput out =
      nvrtc.compile(source.text, source.name, codegen::compile_options(target), described);
  if (sass) {
    std::printf("// %s\n// %s, %s, NVRTC %s\n", described.c_str(), codegen::describe(config).c_str(), arch.c_str(),
                nvrtc.version().c_str());
    print_sass(disassembler, out.cubin);
    return kExitOk;
  }
  if (!cubin_file.empty()) {
    std::ofstream file(cubin_file, std::ios::binary);
    file.write(out.cubin.data(), static_cast<std::streamsize>(out.cubin.size()));
    if (!file.flush())
      throw std::runtime_error("could not write the cubin to '" + cubin_file + "': check the path and the disk");
    std::printf("%s: %zu bytes (%s; %s, %s%s)\n", cubin_file.c_str(), out.cubin.size(), described.c_str(),
                codegen::describe(config).c_str(), arch.c_str(), line_info ? ", line tables" : "");
    return kExitOk;
  }
  std::printf("problem: %s\nlaunch:  %s\ntarget:  %s, NVRTC %s, key %s\ncubin:   %zu bytes, compiled in %.0f ms\n",
              described.c_str(), codegen::describe(config).c_str(), arch.c_str(), nvrtc.version().c_str(),
              codegen::cache_key(source.text, target).c_str(), out.cubin.size(), out.milliseconds);
  std::printf("%-22s %9s %12s %12s %12s %12s\n", "function", "registers", "shared (B)", "stack (B)",
              "spill st (B)", "spill ld (B)");
  bool local_memory = false;
  for (const runtime::KernelResources& r : runtime::parse_ptxas_report(out.log)) {
    std::printf("%-22s %9d %12d %12d %12d %12d\n", r.function.c_str(), r.registers, r.shared_bytes, r.stack_bytes,
                r.spill_stores, r.spill_loads);
    local_memory |= r.stack_bytes > 0 || r.spill_stores > 0;
  }
  // The engine does not run a heuristic block bounded to fill the SM that takes local memory.
  if (forward && local_memory && config == heuristic)
    if (const auto unfilled = codegen::unfilled_forward_config(p, config))
      std::printf("note: this block takes local memory; the engine runs %s instead\n",
                  codegen::describe(*unfilled).c_str());
  return kExitOk;
}

}  // namespace normjit::tools
