#include "runtime/nvrtc.h"

#include <dlfcn.h>
#include <cuda.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <charconv>
#include <string_view>
#include <sstream>

#include "codegen/cache_key.h"
#include "normjit/normjit.hpp"

namespace normjit::runtime {

struct Nvrtc::Table {
#define NJ_NVRTC_FUNCTIONS(X)                                                                 \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)         \
  X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) \
  X(nvrtcGetCUBIN) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetNumSupportedArchs)             \
  X(nvrtcGetSupportedArchs)
#define NJ_DECLARE(name) decltype(&::name) name = nullptr;
  NJ_NVRTC_FUNCTIONS(NJ_DECLARE)
#undef NJ_DECLARE
};

namespace {

struct Loaded {
  Nvrtc::Table table;
  std::string path;
  std::string error;  // empty when loaded
};

// The libraries to try, in order. `named` (NORMJIT_LIBNVRTC), when given, is the only one: a
// library the user names is used or the load fails saying so, never quietly replaced by another
// NVRTC found elsewhere.
std::vector<std::string> candidate_paths(const char* named) {
  if (named) return {named};
  const std::string major = std::to_string(CUDA_VERSION / 1000);
  return {"libnvrtc.so." + major, "libnvrtc.so", std::string(NORMJIT_CUDA_TOOLKIT_LIB) + "/libnvrtc.so." + major,
          "/usr/local/cuda/lib64/libnvrtc.so"};
}

Loaded load() {
  Loaded out;
  const char* env = std::getenv("NORMJIT_LIBNVRTC");
  const char* named = env && *env ? env : nullptr;
  std::string tried;
  void* lib = nullptr;
  for (const std::string& path : candidate_paths(named)) {
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      out.path = path;
      break;
    }
    const char* why = dlerror();
    tried += "\n  " + path + ": " + (why ? why : "not found");
  }
  if (!lib) {
    out.error = "NVRTC (the CUDA run-time compiler) could not be loaded; tried:" + tried +
                (named ? "\nNORMJIT_LIBNVRTC names that library: point it at libnvrtc, or unset it to search "
                         "the usual places."
                       : "\nInstall the CUDA toolkit's NVRTC (libnvrtc) or set NORMJIT_LIBNVRTC to its path.");
    return out;
  }
  std::string missing;
#define NJ_RESOLVE(name)                                                          \
  out.table.name = reinterpret_cast<decltype(out.table.name)>(dlsym(lib, #name)); \
  if (!out.table.name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  NJ_NVRTC_FUNCTIONS(NJ_RESOLVE)
#undef NJ_RESOLVE
  if (!missing.empty())
    out.error = "NVRTC at " + out.path + " lacks " + missing + ": use NVRTC from CUDA 12 or newer.";
  return out;
}

const Loaded& loaded() {
  static const Loaded instance = load();
  return instance;
}

// Owns one nvrtcProgram for the length of a compile.
class Program {
 public:
  Program(const Nvrtc::Table& t, const std::string& source, const std::string& name) : t_(t) {
    result_ = t_.nvrtcCreateProgram(&prog_, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  }
  ~Program() {
    if (result_ == NVRTC_SUCCESS) t_.nvrtcDestroyProgram(&prog_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return prog_; }
  nvrtcResult created() const { return result_; }

 private:
  const Nvrtc::Table& t_;
  nvrtcProgram prog_ = nullptr;
  nvrtcResult result_;
};

std::string program_log(const Nvrtc::Table& t, nvrtcProgram prog) {
  size_t size = 0;
  if (t.nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  t.nvrtcGetProgramLog(prog, log.data());
  log.resize(size - 1);
  return log;
}

// Compiles; on failure throws Status::Compile with the log. Returns the log.
std::string compile_program(const Nvrtc::Table& t, const Program& prog, const std::vector<std::string>& options,
                            const std::string& what) {
  if (prog.created() != NVRTC_SUCCESS)
    throw Error(Status::Compile, "normjit: NVRTC could not create a program for " + what + ": " +
                                     t.nvrtcGetErrorString(prog.created()));
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const nvrtcResult r = t.nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  std::string log = program_log(t, prog.get());
  if (r != NVRTC_SUCCESS) {
    std::string opts;
    for (const std::string& o : options) opts += " " + o;
    throw Error(Status::Compile, "normjit: NVRTC failed to compile the kernel for " + what + " (" +
                                     t.nvrtcGetErrorString(r) + ", options:" + opts + "). This is a normjit "
                                     "bug or an NVRTC too old for the target; please report it with this log:\n" +
                                     log);
  }
  return log;
}

}  // namespace

const Nvrtc& Nvrtc::get() {
  static const Nvrtc instance = [] {
    const Loaded& l = loaded();
    if (!l.error.empty()) throw Error(Status::NoNvrtc, "normjit: " + l.error);
    Nvrtc n;
    n.table_ = &l.table;
    n.path_ = l.path;
    l.table.nvrtcVersion(&n.major_, &n.minor_);
    return n;
  }();
  return instance;
}

bool Nvrtc::available(std::string* why) {
  const Loaded& l = loaded();
  if (l.error.empty()) return true;
  if (why) *why = l.error;
  return false;
}

std::string Nvrtc::version() const { return std::to_string(major_) + "." + std::to_string(minor_); }

std::vector<int> Nvrtc::supported_archs() const {
  int count = 0;
  table_->nvrtcGetNumSupportedArchs(&count);
  std::vector<int> archs(static_cast<size_t>(count));
  if (count > 0) table_->nvrtcGetSupportedArchs(archs.data());
  return archs;
}

std::vector<std::string> Nvrtc::with_report_unless_cached(const std::vector<std::string>& options) const {
  // NVRTC 12.9 and later answer a source they compiled before from their own cache, and that
  // answer's log has no ptxas report (NVIDIA/Fuser#4694; seen on the GPU machine: spills then
  // went unreported). Where the report is asked for, compile afresh: normjit keeps its own
  // cubin cache, so NVRTC's only repeated a compile normjit had already decided to run.
  const bool wants_report =
      std::find(options.begin(), options.end(), codegen::kPtxasReportOption) != options.end();
  if (!wants_report || major_ < 12 || (major_ == 12 && minor_ < 9)) return options;
  std::vector<std::string> out = options;
  out.push_back("--no-cache");
  return out;
}

CompileOutput Nvrtc::compile(const std::string& source, const std::string& name,
                             const std::vector<std::string>& options, const std::string& what) const {
  const auto start = std::chrono::steady_clock::now();
  Program prog(*table_, source, name);
  CompileOutput out;
  out.log = compile_program(*table_, prog, with_report_unless_cached(options), what);
  size_t size = 0;
  if (table_->nvrtcGetCUBINSize(prog.get(), &size) != NVRTC_SUCCESS || size == 0)
    throw Error(Status::Compile, "normjit: NVRTC produced no cubin for " + what +
                                     ": compile for a real arch (sm_XY), not a virtual one (compute_XY).");
  out.cubin.resize(size);
  table_->nvrtcGetCUBIN(prog.get(), out.cubin.data());
  out.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string Nvrtc::compile_to_ptx(const std::string& source, const std::string& name,
                                  const std::vector<std::string>& options, const std::string& what) const {
  std::vector<std::string> ptx_options;
  for (const std::string& o : options) {
    if (o.rfind("--gpu-architecture=sm_", 0) == 0)
      ptx_options.push_back("--gpu-architecture=compute_" + o.substr(std::string("--gpu-architecture=sm_").size()));
    else if (o.rfind("--ptxas-options", 0) != 0)
      ptx_options.push_back(o);
  }
  Program prog(*table_, source, name);
  compile_program(*table_, prog, ptx_options, what);
  size_t size = 0;
  table_->nvrtcGetPTXSize(prog.get(), &size);
  std::string ptx(size, '\0');
  table_->nvrtcGetPTX(prog.get(), ptx.data());
  if (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

namespace {

// The number ending just before `suffix` in line ("Used 40 registers" -> 40 for " registers"),
// or -1. Plain scanning and from_chars: log text from disk may be hostile, and std::regex
// recurses per character and std::stoi throws.
int number_before(std::string_view line, std::string_view suffix) {
  const size_t at = line.find(suffix);
  if (at == std::string_view::npos || at == 0) return -1;
  size_t begin = at;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  int value = -1;
  const auto result = std::from_chars(line.data() + begin, line.data() + at, value);
  return result.ec == std::errc() && result.ptr == line.data() + at ? value : -1;
}

}  // namespace

std::vector<KernelResources> parse_ptxas_report(const std::string& log) {
  constexpr std::string_view kEntry = "Compiling entry function '";
  std::vector<KernelResources> out;
  std::string_view rest(log);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (const size_t at = line.find(kEntry); at != std::string_view::npos) {
      const std::string_view name = line.substr(at + kEntry.size());
      out.push_back({});
      out.back().function = std::string(name.substr(0, name.find('\'')));
      continue;
    }
    if (out.empty()) continue;
    KernelResources& k = out.back();
    auto set = [](int& field, int value) {
      if (value >= 0) field = value;
    };
    set(k.stack_bytes, number_before(line, " bytes stack frame"));
    set(k.spill_stores, number_before(line, " bytes spill stores"));
    set(k.spill_loads, number_before(line, " bytes spill loads"));
    set(k.registers, number_before(line, " registers"));
    set(k.shared_bytes, number_before(line, " bytes smem"));
  }
  return out;
}

}  // namespace normjit::runtime
