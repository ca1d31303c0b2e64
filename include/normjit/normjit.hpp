// normjit C++ API. An Engine owns the configuration and the kernel caches; describe a
// problem, pass pointers and a stream, and it generates, compiles, caches and launches the
// backward kernels (and the forward's, docs/FORWARD.md). Errors are thrown as normjit::Error
// (status + a message that says what was asked, what was wrong and what to do).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "normjit/config.hpp"
#include "normjit/norm_problem.hpp"
#include "normjit/normjit.h"

namespace normjit {

using Stream = CUstream_st*;

enum class Status : int {
  Ok = NJ_OK,
  InvalidArgument = NJ_ERR_INVALID_ARGUMENT,
  Unsupported = NJ_ERR_UNSUPPORTED,
  NoDriver = NJ_ERR_NO_DRIVER,
  NoDevice = NJ_ERR_NO_DEVICE,
  NoNvrtc = NJ_ERR_NO_NVRTC,
  Compile = NJ_ERR_COMPILE,
  Cuda = NJ_ERR_CUDA,
  ConfigError = NJ_ERR_CONFIG,
  Workspace = NJ_ERR_WORKSPACE,
  Internal = NJ_ERR_INTERNAL,
};

class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  Status status() const { return status_; }

 private:
  Status status_;
};

const char* version_string();

struct CacheStats {
  uint64_t memory_hits = 0;    // launches served by an already loaded kernel
  uint64_t compiles = 0;       // NVRTC compilations done by this engine
  uint64_t disk_hits = 0;      // cubins read from the disk cache
  uint64_t disk_writes = 0;
  uint64_t disk_corrupt = 0;   // entries found corrupt, removed and rebuilt
};

class Engine {
 public:
  Engine();                          // Config from file + environment (see Config)
  explicit Engine(Config config);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Workspace bytes a backward of `problem` over m rows needs on the current device; 0 where
  // one row group writes dγ/dβ itself (small m).
  size_t workspace_size(const NormProblem& problem, int64_t m);

  void layer_norm_backward(const NormProblem& problem, const BackwardArgs& args, Stream stream);
  void rms_norm_backward(const NormProblem& problem, const BackwardArgs& args, Stream stream);
  // Either kind, as problem.kind says.
  void backward(const NormProblem& problem, const BackwardArgs& args, Stream stream);

  // The forward, y = norm(x)·γ + β, saving mean (LayerNorm) and rstd as the backward reads
  // them (docs/FORWARD.md). The same problem description as the backward: its backward-only
  // fields are ignored; fused options other than zero_centered_weight are rejected for now.
  void layer_norm_forward(const NormProblem& problem, const ForwardArgs& args, Stream stream);
  void rms_norm_forward(const NormProblem& problem, const ForwardArgs& args, Stream stream);
  void forward(const NormProblem& problem, const ForwardArgs& args, Stream stream);
  // prepare() for the forward kernel of `problem`.
  void prepare_forward(const NormProblem& problem);

  // Generates, compiles (or finds in the cache) and loads the kernels of `problem` for the
  // current context's device, so a later backward call does no compilation. Thread-safe:
  // warm many problems from a pool of threads.
  void prepare(const NormProblem& problem);

  const Config& config() const;
  CacheStats cache_stats() const;

  struct Impl;
  Impl& impl() { return *impl_; }  // for normjit's own tools and tests

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace normjit
