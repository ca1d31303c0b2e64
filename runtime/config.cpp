#include "runtime/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <toml++/toml.h>

#include "normjit/normjit.hpp"

namespace normjit::runtime {
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxConfigBytes = 1 << 20;

[[noreturn]] void bad(const std::string& origin, const std::string& key, const std::string& what,
                      const std::string& accepted) {
  throw Error(Status::ConfigError,
              "normjit: config " + origin + ": " + key + " " + what + "; " + accepted + ".");
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

LogLevel parse_log_level(const std::string& v, const std::string& origin, const std::string& key) {
  if (v == "error") return LogLevel::Error;
  if (v == "warn" || v == "warning") return LogLevel::Warn;
  if (v == "info") return LogLevel::Info;
  if (v == "debug") return LogLevel::Debug;
  bad(origin, key, "is \"" + v + "\"", "use error, warn, info or debug");
}

TuneMode parse_tune_mode(const std::string& v, const std::string& origin, const std::string& key) {
  if (v == "off") return TuneMode::Off;
  if (v == "cached") return TuneMode::Cached;
  if (v == "on-miss") return TuneMode::OnMiss;
  bad(origin, key, "is \"" + v + "\"", "use off, cached or on-miss");
}

// "1048576", "64K", "512M", "2G" -> bytes (> 0).
uint64_t parse_size(const std::string& v, const std::string& origin, const std::string& key) {
  const std::string accepted = "use a positive number of bytes, optionally with a K, M or G suffix (\"2G\")";
  if (v.empty()) bad(origin, key, "is empty", accepted);
  size_t digits = 0;
  while (digits < v.size() && std::isdigit(static_cast<unsigned char>(v[digits]))) ++digits;
  if (digits == 0 || digits > 18) bad(origin, key, "is \"" + v + "\"", accepted);
  uint64_t n = std::stoull(v.substr(0, digits));
  const std::string suffix = v.substr(digits);
  int shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  else if (suffix == "M" || suffix == "m") shift = 20;
  else if (suffix == "G" || suffix == "g") shift = 30;
  else if (!suffix.empty()) bad(origin, key, "is \"" + v + "\"", accepted);
  if (n == 0) bad(origin, key, "is 0", accepted);
  if (n > (~uint64_t{0} >> shift)) bad(origin, key, "is too large", accepted);
  return n << shift;
}

bool parse_env_bool(const std::string& v, const char* name) {
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  bad("environment", name, "is \"" + v + "\"", "use 1/0, true/false or on/off");
}

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: return "a date/time";
  }
}

Config defaults() {
  Config c;
  c.cache_dir = default_cache_dir();
  for (const char* key : {"cache.dir", "cache.disk", "cache.max_bytes", "log.level", "tune.mode"})
    c.sources[key] = "default";
  return c;
}

void apply_table(Config& c, const toml::table& root, const std::string& origin) {
  const std::string from = "file " + origin;
  for (const auto& [section_key, section_node] : root) {
    const std::string section(section_key.str());
    const toml::table* table = section_node.as_table();
    if (section != "cache" && section != "log" && section != "tune")
      bad(origin, section, "is not a known table", "the tables are [cache], [log] and [tune]");
    if (!table) bad(origin, section, std::string("is ") + type_name(section_node), "it must be a table");
    for (const auto& [name_key, node] : *table) {
      const std::string key = section + "." + std::string(name_key.str());
      auto want_string = [&]() -> std::string {
        if (!node.is_string()) bad(origin, key, std::string("is ") + type_name(node), "it must be a string");
        return node.as_string()->get();
      };
      if (key == "cache.dir") {
        c.cache_dir = want_string();
      } else if (key == "cache.disk") {
        if (!node.is_boolean()) bad(origin, key, std::string("is ") + type_name(node), "it must be true or false");
        c.disk_cache = node.as_boolean()->get();
      } else if (key == "cache.max_bytes") {
        if (node.is_integer()) {
          const int64_t v = node.as_integer()->get();
          if (v <= 0) bad(origin, key, "is " + std::to_string(v), "it must be a positive number of bytes");
          c.cache_max_bytes = static_cast<uint64_t>(v);
        } else {
          c.cache_max_bytes = parse_size(want_string(), origin, key);
        }
      } else if (key == "log.level") {
        c.log_level = parse_log_level(want_string(), origin, key);
      } else if (key == "tune.mode") {
        c.tune_mode = parse_tune_mode(want_string(), origin, key);
      } else {
        bad(origin, key, "is not a known key",
            "known keys: cache.dir, cache.disk, cache.max_bytes, log.level, tune.mode");
      }
      c.sources[key] = from;
    }
  }
}

void apply_environment(Config& c) {
  auto set = [&](const char* name, const char* key, auto&& apply) {
    const std::string v = env(name);
    if (v.empty()) return;
    apply(v);
    c.sources[key] = std::string("env ") + name;
  };
  set("NORMJIT_CACHE_DIR", "cache.dir", [&](const std::string& v) { c.cache_dir = v; });
  set("NORMJIT_DISK_CACHE", "cache.disk",
      [&](const std::string& v) { c.disk_cache = parse_env_bool(v, "NORMJIT_DISK_CACHE"); });
  set("NORMJIT_CACHE_MAX_BYTES", "cache.max_bytes",
      [&](const std::string& v) { c.cache_max_bytes = parse_size(v, "environment", "NORMJIT_CACHE_MAX_BYTES"); });
  set("NORMJIT_LOG_LEVEL", "log.level",
      [&](const std::string& v) { c.log_level = parse_log_level(v, "environment", "NORMJIT_LOG_LEVEL"); });
  set("NORMJIT_TUNE", "tune.mode",
      [&](const std::string& v) { c.tune_mode = parse_tune_mode(v, "environment", "NORMJIT_TUNE"); });
}

std::string default_config_path() {
  if (std::string xdg = env("XDG_CONFIG_HOME"); !xdg.empty()) return xdg + "/normjit/config.toml";
  if (std::string home = env("HOME"); !home.empty()) return home + "/.config/normjit/config.toml";
  return "";
}

}  // namespace

std::string default_cache_dir() {
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return xdg + "/normjit";
  if (std::string home = env("HOME"); !home.empty()) return home + "/.cache/normjit";
  return "";
}

Config parse_config_text(const std::string& text, const std::string& origin) {
  Config c = defaults();
  c.config_file = origin;
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream s;
    s << "normjit: config " << origin << " is not valid TOML: " << e.description() << " (line "
      << e.source().begin.line << ", column " << e.source().begin.column << ")";
    throw Error(Status::ConfigError, s.str());
  }
  apply_table(c, root, origin);
  return c;
}

Config load_config(const std::string& explicit_path) {
  std::string path = explicit_path;
  bool required = !path.empty();
  if (path.empty()) {
    path = env("NORMJIT_CONFIG");
    required = !path.empty();
  }
  if (path.empty()) path = default_config_path();

  Config c = defaults();
  std::error_code ec;
  if (!path.empty() && fs::exists(path, ec)) {
    const uint64_t size = fs::file_size(path, ec);
    if (ec || size > kMaxConfigBytes)
      throw Error(Status::ConfigError, "normjit: config " + path + " is " +
                                           (ec ? "unreadable (" + ec.message() + ")" : "larger than 1 MiB") +
                                           ": point NORMJIT_CONFIG at a small TOML file.");
    std::ifstream f(path, std::ios::binary);
    std::stringstream text;
    text << f.rdbuf();
    if (!f)
      throw Error(Status::ConfigError, "normjit: config " + path + " cannot be read: check its permissions.");
    c = parse_config_text(text.str(), path);
  } else if (required) {
    throw Error(Status::ConfigError, "normjit: config file " + path +
                                         " does not exist: create it, or unset NORMJIT_CONFIG / pass no path "
                                         "to use the defaults.");
  }
  apply_environment(c);
  return c;
}

}  // namespace normjit::runtime
