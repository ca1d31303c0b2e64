#include "runtime/config.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <toml++/toml.h>

#include "normjit/normjit.hpp"
#include "runtime/toml_messages.h"

namespace normjit::runtime {
namespace fs = std::filesystem;

namespace {

// A configuration file is a few lines; anything larger is a mistake or hostile.
constexpr uint64_t kMaxConfigBytes = 1 << 20;
constexpr const char* kKeys[] = {"cache.dir", "cache.disk", "cache.max_bytes", "log.level", "tune.mode",
                                 "launch.sm_margin"};

// `where` names the source and the key: "config /etc/x.toml: cache.max_bytes" or
// "environment variable NORMJIT_TUNE".
[[noreturn]] void bad(const std::string& where, const std::string& what, const std::string& accepted) {
  throw Error(Status::ConfigError, "normjit: " + where + " " + what + "; " + accepted + ".");
}
std::string in_file(const std::string& origin, const std::string& key) { return "config " + origin + ": " + key; }
std::string in_env(const char* name) { return std::string("environment variable ") + name; }

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

LogLevel parse_log_level(const std::string& v, const std::string& where) {
  if (v == "error") return LogLevel::Error;
  if (v == "warn" || v == "warning") return LogLevel::Warn;
  if (v == "info") return LogLevel::Info;
  if (v == "debug") return LogLevel::Debug;
  bad(where, "is " + quoted(v), "use error, warn, info or debug");
}

TuneMode parse_tune_mode(const std::string& v, const std::string& where) {
  if (v == "off") return TuneMode::Off;
  if (v == "cached") return TuneMode::Cached;
  if (v == "on-miss") return TuneMode::OnMiss;
  bad(where, "is " + quoted(v), "use off, cached or on-miss");
}

// "1048576", "64K", "512M", "2G" -> bytes (> 0). Suffixes are binary (K = 1024).
uint64_t parse_size(const std::string& v, const std::string& where) {
  const std::string accepted = "use a positive number of bytes, optionally with a K, M or G suffix (\"2G\")";
  size_t digits = 0;
  while (digits < v.size() && std::isdigit(static_cast<unsigned char>(v[digits]))) ++digits;
  // 18 digits cannot overflow a uint64_t; more would be over an exabyte anyway.
  if (digits == 0 || digits > 18) bad(where, "is " + quoted(v), accepted);
  const uint64_t n = std::stoull(v.substr(0, digits));
  const std::string suffix = v.substr(digits);
  int shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  else if (suffix == "M" || suffix == "m") shift = 20;
  else if (suffix == "G" || suffix == "g") shift = 30;
  else if (!suffix.empty()) bad(where, "is " + quoted(v), accepted);
  if (n == 0) bad(where, "is " + quoted(v), accepted);
  if (n > (~uint64_t{0} >> shift)) bad(where, "is " + quoted(v) + ", too large", accepted);
  return n << shift;
}

// SMs to leave free: 0 up to kMaxSmMargin (more than any GPU has; the engine keeps one SM at least).
constexpr int64_t kMaxSmMargin = 4096;
int check_sm_margin(int64_t v, const std::string& text, const std::string& where) {
  if (v < 0 || v > kMaxSmMargin)
    bad(where, "is " + text, "use a whole number of SMs from 0 to " + std::to_string(kMaxSmMargin));
  return static_cast<int>(v);
}
int parse_sm_margin(const std::string& v, const std::string& where) {
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
    bad(where, "is " + quoted(v), "use a whole number of SMs from 0 to " + std::to_string(kMaxSmMargin));
  return check_sm_margin(std::stoll(v), quoted(v), where);
}

bool parse_env_bool(const std::string& v, const std::string& where) {
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  bad(where, "is " + quoted(v), "use 1/0, true/false or on/off");
}

Config defaults() {
  Config c;
  c.cache_dir = default_cache_dir();
  for (const char* key : kKeys) c.sources[key] = "default";
  return c;
}

const std::string& want_string(const toml::node& node, const std::string& where) {
  if (!node.is_string()) bad(where, "is " + describe_value(node), "it must be a string");
  return node.as_string()->get();
}

uint64_t want_size(const toml::node& node, const std::string& where) {
  if (node.is_integer()) {
    const int64_t v = node.as_integer()->get();
    if (v <= 0) bad(where, "is " + describe_value(node), "it must be a positive number of bytes");
    return static_cast<uint64_t>(v);
  }
  if (node.is_string()) return parse_size(node.as_string()->get(), where);
  bad(where, "is " + describe_value(node), "use a positive integer, or a string with a K, M or G suffix (\"2G\")");
}

// One key of a known table; returns false when the key is not known.
bool apply_key(Config& c, const std::string& key, const toml::node& node, const std::string& where) {
  if (key == "cache.dir") {
    c.cache_dir = want_string(node, where);
  } else if (key == "cache.disk") {
    if (!node.is_boolean()) bad(where, "is " + describe_value(node), "it must be true or false");
    c.disk_cache = node.as_boolean()->get();
  } else if (key == "cache.max_bytes") {
    c.cache_max_bytes = want_size(node, where);
  } else if (key == "log.level") {
    c.log_level = parse_log_level(want_string(node, where), where);
  } else if (key == "tune.mode") {
    c.tune_mode = parse_tune_mode(want_string(node, where), where);
  } else if (key == "launch.sm_margin") {
    if (!node.is_integer()) bad(where, "is " + describe_value(node), "it must be a whole number of SMs");
    c.sm_margin = check_sm_margin(node.as_integer()->get(), describe_value(node), where);
  } else {
    return false;
  }
  return true;
}

std::string known_keys_of(const std::string& section) {
  if (section == "cache") return "the keys of [cache] are dir, disk and max_bytes";
  if (section == "log") return "the key of [log] is level";
  if (section == "launch") return "the key of [launch] is sm_margin";
  return "the key of [tune] is mode";
}

void apply_table(Config& c, const toml::table& root, const std::string& origin) {
  for (const auto& [section_key, section_node] : root) {
    const std::string section(section_key.str());
    if (section != "cache" && section != "log" && section != "tune" && section != "launch")
      bad(in_file(origin, section), "is not a known table", "the tables are [cache], [log], [tune] and [launch]");
    const toml::table* table = section_node.as_table();
    if (!table) bad(in_file(origin, section), "is " + describe_value(section_node), "it must be a table ([" + section + "])");
    for (const auto& [name_key, node] : *table) {
      const std::string key = section + "." + std::string(name_key.str());
      if (!apply_key(c, key, node, in_file(origin, key)))
        bad(in_file(origin, key), "is not a known key", known_keys_of(section));
      c.sources[key] = "file " + origin;
    }
  }
}

void apply_environment(Config& c) {
  // An empty variable counts as unset, as shells make "unset" awkward to express.
  auto from_env = [&](const char* name, const char* key, auto&& apply) {
    const std::string v = env(name);
    if (v.empty()) return;
    apply(v, in_env(name));
    c.sources[key] = std::string("env ") + name;
  };
  from_env("NORMJIT_CACHE_DIR", "cache.dir", [&](const std::string& v, const std::string&) { c.cache_dir = v; });
  from_env("NORMJIT_DISK_CACHE", "cache.disk",
           [&](const std::string& v, const std::string& where) { c.disk_cache = parse_env_bool(v, where); });
  from_env("NORMJIT_CACHE_MAX_BYTES", "cache.max_bytes",
           [&](const std::string& v, const std::string& where) { c.cache_max_bytes = parse_size(v, where); });
  from_env("NORMJIT_LOG_LEVEL", "log.level",
           [&](const std::string& v, const std::string& where) { c.log_level = parse_log_level(v, where); });
  from_env("NORMJIT_TUNE", "tune.mode",
           [&](const std::string& v, const std::string& where) { c.tune_mode = parse_tune_mode(v, where); });
  from_env("NORMJIT_SM_MARGIN", "launch.sm_margin",
           [&](const std::string& v, const std::string& where) { c.sm_margin = parse_sm_margin(v, where); });
}

std::string default_config_path() {
  if (std::string xdg = env("XDG_CONFIG_HOME"); !xdg.empty()) return xdg + "/normjit/config.toml";
  if (std::string home = env("HOME"); !home.empty()) return home + "/.config/normjit/config.toml";
  return "";
}

// Reads at most kMaxConfigBytes (plus one, to tell a file that is too large).
std::string read_config_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw Error(Status::ConfigError, "normjit: config " + path + " is a directory: point it at a TOML file.");
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw Error(Status::ConfigError, "normjit: config " + path + " cannot be opened: check its permissions.");
  std::string text(kMaxConfigBytes + 1, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (f.bad())
    throw Error(Status::ConfigError, "normjit: config " + path + " cannot be read: check the file and its disk.");
  text.resize(static_cast<size_t>(f.gcount()));
  if (text.size() > kMaxConfigBytes)
    throw Error(Status::ConfigError, "normjit: config " + path +
                                         " is larger than 1 MiB, too large for a configuration file: point "
                                         "NORMJIT_CONFIG at a small TOML file.");
  return text;
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
      << e.source().begin.line << ", column " << e.source().begin.column << "); fix the file or point "
      << "NORMJIT_CONFIG elsewhere.";
    throw Error(Status::ConfigError, s.str());
  }
  apply_table(c, root, origin);
  return c;
}

Config load_config(const std::string& explicit_path) {
  std::string path = explicit_path;
  std::string named_by = "the path given";
  if (path.empty()) {
    path = env("NORMJIT_CONFIG");
    named_by = "NORMJIT_CONFIG";
  }
  const bool required = !path.empty();  // a file asked for must exist; the default one may not
  if (!required) path = default_config_path();

  Config c = defaults();
  std::error_code ec;
  const bool exists = !path.empty() && fs::exists(path, ec);
  if (exists) {
    c = parse_config_text(read_config_file(path), path);
  } else if (required) {
    const std::string problem = ec ? "cannot be reached (" + ec.message() + ")" : "does not exist";
    throw Error(Status::ConfigError, "normjit: config file " + path + " (" + named_by + ") " + problem +
                                         ": create it, or name an existing file, or name none to use the "
                                         "defaults.");
  }
  apply_environment(c);
  return c;
}

}  // namespace normjit::runtime
