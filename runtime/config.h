// Loading the Config: defaults, then a TOML file, then environment variables, each value
// remembering where it came from. Unknown keys and bad values are errors (Status::ConfigError)
// that name the file, the key, the value and what is accepted.
//
// File lookup: explicit path, else $NORMJIT_CONFIG, else $XDG_CONFIG_HOME/normjit/config.toml
// (or ~/.config/normjit/config.toml) when it exists. An explicit or $NORMJIT_CONFIG path that
// does not exist is an error; the default path is optional.
//
// Keys (file)            environment            values
//   cache.dir            NORMJIT_CACHE_DIR      path; default $XDG_CACHE_HOME/normjit or ~/.cache/normjit
//   cache.disk           NORMJIT_DISK_CACHE     true/false (env: 1/0/true/false/on/off)
//   cache.max_bytes      NORMJIT_CACHE_MAX_BYTES integer > 0, or with suffix K/M/G (e.g. "2G")
//   log.level            NORMJIT_LOG_LEVEL      error|warn|info|debug
//   tune.mode            NORMJIT_TUNE           off|cached|on-miss
#pragma once
#include <string>

#include "normjit/config.hpp"

namespace normjit::runtime {

// Throws normjit::Error(Status::ConfigError, ...) on a bad file or value.
Config load_config(const std::string& explicit_path = "");
// Parses TOML text as if read from `origin` (for tests and fuzzing); applies no environment.
Config parse_config_text(const std::string& text, const std::string& origin);
std::string default_cache_dir();

}  // namespace normjit::runtime
