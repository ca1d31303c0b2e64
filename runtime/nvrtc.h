// NVRTC, opened with dlopen on first use (libnvrtc from $NORMJIT_LIBNVRTC alone when it is set;
// else the loader's path, or the CUDA toolkit normjit was built against), so the library loads
// without it. Compiles
// generated source straight to a cubin for one arch. Thread-safe (NVRTC is).
#pragma once
#include <string>
#include <vector>

namespace normjit::runtime {

// What ptxas reported for one entry point of a cubin.
struct KernelResources {
  std::string function;
  int registers = 0;
  int spill_stores = 0;  // bytes
  int spill_loads = 0;   // bytes
  int stack_bytes = 0;
  int shared_bytes = 0;
};

struct CompileOutput {
  std::vector<char> cubin;
  std::string log;           // NVRTC's log, ptxas's resource report included
  double milliseconds = 0;
};

class Nvrtc {
 public:
  // Throws normjit::Error(Status::NoNvrtc) naming the paths tried and what to do.
  static const Nvrtc& get();
  static bool available(std::string* why = nullptr);

  std::string version() const;       // "13.0"
  std::vector<int> supported_archs() const;  // e.g. {75, 80, 86, 89, 90, 100, ...}
  std::string library_path() const { return path_; }

  // Throws normjit::Error(Status::Compile) with the log on failure; `what` names the problem.
  CompileOutput compile(const std::string& source, const std::string& name,
                        const std::vector<std::string>& options, const std::string& what) const;
  // PTX for inspection (normjit emit --ptx); same error contract.
  std::string compile_to_ptx(const std::string& source, const std::string& name,
                             const std::vector<std::string>& options, const std::string& what) const;

  struct Table;

 private:
  Nvrtc() = default;
  std::vector<std::string> with_report_unless_cached(const std::vector<std::string>& options) const;
  const Table* table_ = nullptr;
  std::string path_;
  int major_ = 0, minor_ = 0;
};

// Parses ptxas's "--verbose" report out of a compile log (one entry per function).
std::vector<KernelResources> parse_ptxas_report(const std::string& log);

}  // namespace normjit::runtime
