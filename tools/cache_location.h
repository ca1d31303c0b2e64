// The disk cache a subcommand works on: --cache-dir DIR when given, else the configured one
// (runtime::load_config: cache.dir / NORMJIT_CACHE_DIR).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "normjit/config.hpp"

namespace normjit::tools {

struct CacheLocation {
  Config config;          // the effective configuration, cache_dir and disk_cache as chosen
  std::string dir;
  std::string from;       // "--cache-dir", or where the configured value came from ("env NORMJIT_CACHE_DIR")
};

// Consumes --cache-dir from args. A named directory turns the disk cache on even where the
// configuration turns it off. Throws std::invalid_argument when there is no directory at all.
CacheLocation take_cache_location(std::vector<std::string>& args);

// Help text for the option, shared by every subcommand that takes it.
const char* cache_dir_help();

}  // namespace normjit::tools
