// Effective configuration of an Engine. Filled from defaults, then the TOML file, then
// the environment (runtime/config.h does the loading and records where each value came from).
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace normjit {

enum class LogLevel : int { Error = 0, Warn = 1, Info = 2, Debug = 3 };
enum class TuneMode : int { Off = 0, Cached = 1, OnMiss = 2 };

struct Config {
  std::string cache_dir;                       // empty: no disk cache (memory only)
  bool disk_cache = true;                      // false: memory-only caching
  uint64_t cache_max_bytes = 1ull << 30;       // disk cache size cap; oldest entries go first
  LogLevel log_level = LogLevel::Warn;
  TuneMode tune_mode = TuneMode::Cached;
  // SMs the launches leave free for kernels running beside them (communication overlapped with
  // the norm): the grid shrinks to the other SMs' share, and the results stay bit-identical.
  int sm_margin = 0;
  std::string config_file;                     // the file read, empty if none
  // key ("cache.dir", "cache.max_bytes", ...) -> "default" | "file <path>" | "env NAME"
  std::map<std::string, std::string> sources;
};

}  // namespace normjit
