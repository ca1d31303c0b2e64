// normjit config: the effective configuration — every key, its value, and where the value came
// from (default, the file, or an environment variable) — so "which cache directory does this
// node use, and why?" has a one-command answer.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "runtime/config.h"
#include "tools/problem_flags.h"
#include "tools/subcommands.h"

namespace normjit::tools {
namespace {

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "?";
}

const char* tune_name(TuneMode mode) {
  switch (mode) {
    case TuneMode::Off: return "off";
    case TuneMode::Cached: return "cached";
    case TuneMode::OnMiss: return "on-miss";
  }
  return "?";
}

// Where runtime::load_config looks when NORMJIT_CONFIG is unset (runtime/config.cpp keeps the
// rule private; this mirrors it for the message only).
std::string default_config_path() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::string(xdg) + "/normjit/config.toml";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.config/normjit/config.toml";
  return "";
}

std::string value_of(const Config& c, const std::string& key) {
  if (key == "cache.dir") return c.cache_dir.empty() ? "(none: memory only)" : c.cache_dir;
  if (key == "cache.disk") return c.disk_cache ? "true" : "false";
  if (key == "cache.max_bytes") return std::to_string(c.cache_max_bytes);
  if (key == "log.level") return level_name(c.log_level);
  if (key == "tune.mode") return tune_name(c.tune_mode);
  if (key == "launch.sm_margin") return std::to_string(c.sm_margin);
  return "(not shown by this normjit)";
}

}  // namespace

int run_config(std::vector<std::string> args) {
  if (take_flag(args, "--help")) {
    std::printf(
        "usage: normjit config\n"
        "Prints the configuration file read and, for every key, its effective value and where it came\n"
        "from: default, file PATH, or env VARIABLE (the environment overrides the file). Keys, files\n"
        "and variables: docs/CONFIG.md. Exit 1 when the configuration is invalid (the error names\n"
        "the file or variable, the key and what is accepted).\n");
    return kExitOk;
  }
  if (!args.empty()) throw std::invalid_argument("unexpected argument '" + args.front() + "'");
  const Config c = runtime::load_config();
  if (!c.config_file.empty()) {
    std::printf("config file: %s\n", c.config_file.c_str());
  } else {
    const std::string looked = default_config_path();
    std::printf("config file: none (looked for %s; NORMJIT_CONFIG names another)\n",
                looked.empty() ? "nothing: HOME is unset" : looked.c_str());
  }
  // Every key load_config knows has a source, so walking the sources lists them all.
  for (const auto& [key, source] : c.sources)
    std::printf("%-16s %-40s %s\n", key.c_str(), value_of(c, key).c_str(), source.c_str());
  return kExitOk;
}

}  // namespace normjit::tools
