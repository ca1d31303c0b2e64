#include "runtime/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "normjit/normjit.hpp"

using namespace normjit;
using runtime::load_config;
using runtime::parse_config_text;
namespace fs = std::filesystem;

namespace {

const char* const kVariables[] = {"NORMJIT_CONFIG",     "NORMJIT_CACHE_DIR", "NORMJIT_DISK_CACHE",
                                  "NORMJIT_CACHE_MAX_BYTES", "NORMJIT_LOG_LEVEL", "NORMJIT_TUNE", "NORMJIT_SM_MARGIN",
                                  "XDG_CONFIG_HOME",    "XDG_CACHE_HOME",    "HOME"};

// Each test starts from a clean environment: no NORMJIT_* variables, and XDG_CONFIG_HOME
// pointing at an empty directory so the developer's own config file is never read. The
// original environment is restored afterwards.
class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) {
      const char* v = std::getenv(name);
      saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
      unsetenv(name);
    }
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / ("normjit-cfg-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "xdg-config");
    setenv("XDG_CONFIG_HOME", (dir_ / "xdg-config").c_str(), 1);
    setenv("HOME", (dir_ / "home").c_str(), 1);
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) setenv(name.c_str(), value->c_str(), 1);
      else unsetenv(name.c_str());
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write_file(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  fs::path dir_;
  std::map<std::string, std::optional<std::string>> saved_;
};

// The ConfigError thrown by f, or a test failure.
template <typename F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::ConfigError) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error was thrown";
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---------------------------------------------------------------------------------------
// Defaults and files

TEST_F(ConfigTest, AnEmptyFileGivesTheDefaults) {
  const Config c = parse_config_text("", "empty.toml");
  const Config defaults;
  EXPECT_EQ(c.cache_dir, runtime::default_cache_dir());
  EXPECT_EQ(c.disk_cache, defaults.disk_cache);
  EXPECT_EQ(c.cache_max_bytes, defaults.cache_max_bytes);
  EXPECT_EQ(c.log_level, defaults.log_level);
  EXPECT_EQ(c.tune_mode, defaults.tune_mode);
  EXPECT_EQ(c.config_file, "empty.toml");
  for (const char* key : {"cache.dir", "cache.disk", "cache.max_bytes", "log.level", "tune.mode"})
    EXPECT_EQ(c.sources.at(key), "default") << key;
}

TEST_F(ConfigTest, TheDefaultCacheDirFollowsXdgThenHome) {
  setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(runtime::default_cache_dir(), "/xdg/cache/normjit");
  setenv("XDG_CACHE_HOME", "", 1);
  EXPECT_EQ(runtime::default_cache_dir(), "/home/someone/.cache/normjit");
  unsetenv("HOME");
  EXPECT_EQ(runtime::default_cache_dir(), "") << "no home: memory-only caching";
}

TEST_F(ConfigTest, AFullFileSetsEveryValueAndRecordsItsSource) {
  const Config c = parse_config_text(R"(
[cache]
dir = "/var/cache/nj"
disk = false
max_bytes = 123456

[log]
level = "debug"

[tune]
mode = "on-miss"
)",
                                     "/etc/nj.toml");
  EXPECT_EQ(c.cache_dir, "/var/cache/nj");
  EXPECT_FALSE(c.disk_cache);
  EXPECT_EQ(c.cache_max_bytes, 123456u);
  EXPECT_EQ(c.log_level, LogLevel::Debug);
  EXPECT_EQ(c.tune_mode, TuneMode::OnMiss);
  EXPECT_EQ(c.config_file, "/etc/nj.toml");
  for (const char* key : {"cache.dir", "cache.disk", "cache.max_bytes", "log.level", "tune.mode"})
    EXPECT_EQ(c.sources.at(key), "file /etc/nj.toml") << key;
}

TEST_F(ConfigTest, UnsetKeysKeepTheDefaultSource) {
  const Config c = parse_config_text("[tune]\nmode = \"off\"\n", "x.toml");
  EXPECT_EQ(c.tune_mode, TuneMode::Off);
  EXPECT_EQ(c.sources.at("tune.mode"), "file x.toml");
  EXPECT_EQ(c.sources.at("log.level"), "default");
}

TEST_F(ConfigTest, EveryLogLevelAndTuneModeIsAccepted) {
  const std::pair<const char*, LogLevel> levels[] = {
      {"error", LogLevel::Error}, {"warn", LogLevel::Warn}, {"info", LogLevel::Info}, {"debug", LogLevel::Debug}};
  for (const auto& [name, level] : levels)
    EXPECT_EQ(parse_config_text(std::string("[log]\nlevel = \"") + name + "\"", "x").log_level, level) << name;
  const std::pair<const char*, TuneMode> modes[] = {
      {"off", TuneMode::Off}, {"cached", TuneMode::Cached}, {"on-miss", TuneMode::OnMiss}};
  for (const auto& [name, mode] : modes)
    EXPECT_EQ(parse_config_text(std::string("[tune]\nmode = \"") + name + "\"", "x").tune_mode, mode) << name;
}

TEST_F(ConfigTest, MaxBytesTakesAKMOrGSuffix) {
  auto max_bytes = [](const std::string& v) {
    return parse_config_text("[cache]\nmax_bytes = " + v, "x").cache_max_bytes;
  };
  EXPECT_EQ(max_bytes("\"2G\""), 2ull << 30);
  EXPECT_EQ(max_bytes("\"512M\""), 512ull << 20);
  EXPECT_EQ(max_bytes("\"64K\""), 64ull << 10);
  EXPECT_EQ(max_bytes("\"1000\""), 1000u);
  EXPECT_EQ(max_bytes("4096"), 4096u);
}

// ---------------------------------------------------------------------------------------
// Bad files: the message names the file, the key and the value

struct BadCase {
  const char* text;
  const char* key;    // must appear in the message
  const char* value;  // must appear in the message
};

TEST_F(ConfigTest, EachBadKeyTypeOrValueIsAConfigErrorNamingTheKey) {
  const BadCase cases[] = {
      {"[cache]\nsize = 5", "cache.size", "not a known key"},
      {"[cache]\ndir = 5", "cache.dir", "the integer 5"},
      {"[cache]\ndisk = \"yes\"", "cache.disk", "\"yes\""},
      {"[cache]\nmax_bytes = 0", "cache.max_bytes", "0"},
      {"[cache]\nmax_bytes = -5", "cache.max_bytes", "-5"},
      {"[cache]\nmax_bytes = \"2X\"", "cache.max_bytes", "\"2X\""},
      {"[cache]\nmax_bytes = \"G\"", "cache.max_bytes", "\"G\""},
      {"[cache]\nmax_bytes = \"\"", "cache.max_bytes", "\"\""},
      {"[cache]\nmax_bytes = \"99999999999G\"", "cache.max_bytes", "too large"},
      {"[cache]\nmax_bytes = 1.5", "cache.max_bytes", "1.5"},
      {"[log]\nlevel = \"loud\"", "log.level", "\"loud\""},
      {"[log]\nlevel = 3", "log.level", "the integer 3"},
      {"[log]\nverbose = true", "log.verbose", "not a known key"},
      {"[tune]\nmode = \"always\"", "tune.mode", "\"always\""},
      {"[tune]\nmode = [\"off\"]", "tune.mode", "an array"},
      {"[tuning]\nmode = \"off\"", "tuning", "not a known table"},
      {"cache = \"/tmp\"", "cache", "the string \"/tmp\""},
      {"[cache.sub]\nx = 1", "cache.sub", "not a known key"},
  };
  for (const BadCase& c : cases) {
    const std::string message = config_error([&] { parse_config_text(c.text, "/etc/bad.toml"); });
    EXPECT_TRUE(contains(message, "/etc/bad.toml")) << c.text << "\n-> " << message;
    EXPECT_TRUE(contains(message, c.key)) << c.text << "\n-> " << message;
    EXPECT_TRUE(contains(message, c.value)) << c.text << "\n-> " << message;
  }
}

TEST_F(ConfigTest, BadValueMessagesSayWhatIsAccepted) {
  EXPECT_TRUE(contains(config_error([] { parse_config_text("[tune]\nmode = \"x\"", "f"); }), "off, cached or on-miss"));
  EXPECT_TRUE(contains(config_error([] { parse_config_text("[log]\nlevel = \"x\"", "f"); }),
                       "error, warn, info or debug"));
  EXPECT_TRUE(contains(config_error([] { parse_config_text("[cache]\nmax_bytes = \"x\"", "f"); }), "\"2G\""));
}

TEST_F(ConfigTest, ASyntaxErrorNamesTheFileAndLine) {
  const std::string message = config_error([] { parse_config_text("[cache]\ndisk = true\ndir = \n", "/etc/s.toml"); });
  EXPECT_TRUE(contains(message, "/etc/s.toml")) << message;
  EXPECT_TRUE(contains(message, "line 3")) << message;
  EXPECT_TRUE(contains(message, "not valid TOML")) << message;
}

TEST_F(ConfigTest, AHugeValueIsCutShortInTheMessage) {
  const std::string message =
      config_error([] { parse_config_text("[log]\nlevel = \"" + std::string(100000, 'a') + "\"", "f"); });
  EXPECT_LT(message.size(), 1000u);
}

// ---------------------------------------------------------------------------------------
// Lookup order and the environment

TEST_F(ConfigTest, NoFileAnywhereGivesTheDefaults) {
  const Config c = load_config();
  EXPECT_EQ(c.config_file, "");
  EXPECT_EQ(c.sources.at("tune.mode"), "default");
}

TEST_F(ConfigTest, TheDefaultFileIsReadWhenPresent) {
  const std::string path = write_file("xdg-config/normjit/config.toml", "[tune]\nmode = \"off\"\n");
  const Config c = load_config();
  EXPECT_EQ(c.config_file, path);
  EXPECT_EQ(c.tune_mode, TuneMode::Off);
}

TEST_F(ConfigTest, NormjitConfigIsUsedWhenNoPathIsGiven) {
  const std::string path = write_file("env.toml", "[log]\nlevel = \"info\"\n");
  setenv("NORMJIT_CONFIG", path.c_str(), 1);
  const Config c = load_config();
  EXPECT_EQ(c.config_file, path);
  EXPECT_EQ(c.log_level, LogLevel::Info);
  EXPECT_EQ(c.sources.at("log.level"), "file " + path);
}

TEST_F(ConfigTest, AnExplicitPathWinsOverNormjitConfig) {
  const std::string from_env = write_file("env.toml", "[log]\nlevel = \"info\"\n");
  const std::string explicit_path = write_file("explicit.toml", "[log]\nlevel = \"error\"\n");
  setenv("NORMJIT_CONFIG", from_env.c_str(), 1);
  const Config c = load_config(explicit_path);
  EXPECT_EQ(c.config_file, explicit_path);
  EXPECT_EQ(c.log_level, LogLevel::Error);
}

TEST_F(ConfigTest, AMissingExplicitPathIsAnError) {
  const std::string missing = (dir_ / "missing.toml").string();
  const std::string message = config_error([&] { load_config(missing); });
  EXPECT_TRUE(contains(message, missing)) << message;
  EXPECT_TRUE(contains(message, "does not exist")) << message;
}

TEST_F(ConfigTest, AMissingNormjitConfigFileIsAnError) {
  const std::string missing = (dir_ / "missing.toml").string();
  setenv("NORMJIT_CONFIG", missing.c_str(), 1);
  const std::string message = config_error([] { load_config(); });
  EXPECT_TRUE(contains(message, missing)) << message;
  EXPECT_TRUE(contains(message, "NORMJIT_CONFIG")) << message;
}

TEST_F(ConfigTest, ADirectoryAsTheConfigFileIsAnError) {
  const std::string message = config_error([&] { load_config(dir_.string()); });
  EXPECT_TRUE(contains(message, "directory")) << message;
}

TEST_F(ConfigTest, AnOversizedFileIsRejected) {
  const std::string path = write_file("big.toml", "# " + std::string(2 << 20, 'x') + "\n");
  const std::string message = config_error([&] { load_config(path); });
  EXPECT_TRUE(contains(message, "1 MiB")) << message;
}

TEST_F(ConfigTest, AnErrorInTheFileNamesThePathRead) {
  const std::string path = write_file("bad.toml", "[cache]\nmax_bytes = \"lots\"\n");
  const std::string message = config_error([&] { load_config(path); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "cache.max_bytes")) << message;
}

TEST_F(ConfigTest, TheEnvironmentOverridesTheFileAndRecordsItsSource) {
  const std::string path = write_file("c.toml", R"(
[cache]
dir = "/from/file"
disk = true
max_bytes = 1000
[log]
level = "error"
[tune]
mode = "off"
)");
  setenv("NORMJIT_CACHE_DIR", "/from/env", 1);
  setenv("NORMJIT_DISK_CACHE", "off", 1);
  setenv("NORMJIT_CACHE_MAX_BYTES", "3M", 1);
  setenv("NORMJIT_LOG_LEVEL", "debug", 1);
  setenv("NORMJIT_TUNE", "on-miss", 1);
  const Config c = load_config(path);
  EXPECT_EQ(c.cache_dir, "/from/env");
  EXPECT_FALSE(c.disk_cache);
  EXPECT_EQ(c.cache_max_bytes, 3ull << 20);
  EXPECT_EQ(c.log_level, LogLevel::Debug);
  EXPECT_EQ(c.tune_mode, TuneMode::OnMiss);
  EXPECT_EQ(c.sources.at("cache.dir"), "env NORMJIT_CACHE_DIR");
  EXPECT_EQ(c.sources.at("cache.disk"), "env NORMJIT_DISK_CACHE");
  EXPECT_EQ(c.sources.at("cache.max_bytes"), "env NORMJIT_CACHE_MAX_BYTES");
  EXPECT_EQ(c.sources.at("log.level"), "env NORMJIT_LOG_LEVEL");
  EXPECT_EQ(c.sources.at("tune.mode"), "env NORMJIT_TUNE");
  EXPECT_EQ(c.config_file, path);
}

TEST_F(ConfigTest, EnvironmentBooleansTakeTheUsualSpellings) {
  for (const char* yes : {"1", "true", "on"}) {
    setenv("NORMJIT_DISK_CACHE", yes, 1);
    EXPECT_TRUE(load_config().disk_cache) << yes;
  }
  for (const char* no : {"0", "false", "off"}) {
    setenv("NORMJIT_DISK_CACHE", no, 1);
    EXPECT_FALSE(load_config().disk_cache) << no;
  }
}

TEST_F(ConfigTest, AnEmptyNormjitCacheDirCountsAsUnset) {
  const std::string path = write_file("c.toml", "[cache]\ndir = \"/from/file\"\n");
  setenv("NORMJIT_CACHE_DIR", "", 1);
  const Config c = load_config(path);
  EXPECT_EQ(c.cache_dir, "/from/file");
  EXPECT_EQ(c.sources.at("cache.dir"), "file " + path);
}

TEST_F(ConfigTest, ABadEnvironmentValueNamesTheVariable) {
  const std::pair<const char*, const char*> cases[] = {{"NORMJIT_DISK_CACHE", "maybe"},
                                                       {"NORMJIT_CACHE_MAX_BYTES", "-1"},
                                                       {"NORMJIT_CACHE_MAX_BYTES", "0"},
                                                       {"NORMJIT_LOG_LEVEL", "loud"},
                                                       {"NORMJIT_TUNE", "always"}};
  for (const auto& [name, value] : cases) {
    setenv(name, value, 1);
    const std::string message = config_error([] { load_config(); });
    EXPECT_TRUE(contains(message, name)) << message;
    EXPECT_TRUE(contains(message, std::string("\"") + value + "\"")) << message;
    unsetenv(name);
  }
}


// ---------------------------------------------------------------------------------------
// Further specifications

const char* const kAllKeys[] = {"cache.dir", "cache.disk", "cache.max_bytes", "log.level", "tune.mode",
                                "launch.sm_margin"};

const char* const kFullFile = R"(
[cache]
dir = "/from/file"
disk = false
max_bytes = 1000
[log]
level = "error"
[tune]
mode = "off"
[launch]
sm_margin = 5
)";

TEST_F(ConfigTest, MaxBytesRejectsZeroMinusOneAnUnknownSuffixTheEmptyStringAndABareSuffix) {
  for (const char* value : {"0", "-1", "\"12X\"", "\"\"", "\"G\"", "\"0K\"", "\"-1\"", "\" 64K\"", "\"64 K\"", "\"64KB\""}) {
    const std::string message =
        config_error([&] { parse_config_text(std::string("[cache]\nmax_bytes = ") + value, "/etc/mb.toml"); });
    EXPECT_TRUE(contains(message, "cache.max_bytes")) << value << " -> " << message;
    EXPECT_TRUE(contains(message, "/etc/mb.toml")) << value << " -> " << message;
  }
}

TEST_F(ConfigTest, MaxBytesFromTheEnvironmentTakesTheSameForms) {
  const std::pair<const char*, uint64_t> good[] = {
      {"4096", 4096}, {"64K", 64ull << 10}, {"512M", 512ull << 20}, {"2G", 2ull << 30}};
  for (const auto& [value, bytes] : good) {
    setenv("NORMJIT_CACHE_MAX_BYTES", value, 1);
    const Config c = load_config();
    EXPECT_EQ(c.cache_max_bytes, bytes) << value;
    EXPECT_EQ(c.sources.at("cache.max_bytes"), "env NORMJIT_CACHE_MAX_BYTES") << value;
  }
  for (const char* value : {"0", "-1", "12X", "G"}) {
    setenv("NORMJIT_CACHE_MAX_BYTES", value, 1);
    const std::string message = config_error([] { load_config(); });
    EXPECT_TRUE(contains(message, "NORMJIT_CACHE_MAX_BYTES")) << value << " -> " << message;
  }
}

TEST_F(ConfigTest, WrongTypesForEveryKeyNameTheKeyAndTheOrigin) {
  const std::pair<const char*, const char*> cases[] = {
      {"[cache]\ndir = true", "cache.dir"},         {"[cache]\ndisk = \"yes\"", "cache.disk"},
      {"[cache]\ndisk = 1", "cache.disk"},          {"[cache]\nmax_bytes = true", "cache.max_bytes"},
      {"[log]\nlevel = 3", "log.level"},            {"[tune]\nmode = false", "tune.mode"},
      {"[log]\nlevel = { x = 1 }", "log.level"},    {"[cache]\ndir = 1979-05-27", "cache.dir"},
  };
  for (const auto& [text, key] : cases) {
    const std::string message = config_error([&] { parse_config_text(text, "/cfg/types.toml"); });
    EXPECT_TRUE(contains(message, key)) << text << " -> " << message;
    EXPECT_TRUE(contains(message, "/cfg/types.toml")) << text << " -> " << message;
  }
}

TEST_F(ConfigTest, UnknownTablesAndKeysAnywhereNameThemAndTheOrigin) {
  const std::pair<const char*, const char*> cases[] = {
      {"[engine]\nthreads = 4", "engine"},   // unknown table
      {"dir = \"/x\"", "dir"},               // a key outside any table
      {"[cache]\nDir = \"/x\"", "cache.Dir"},  // keys are case-sensitive
      {"[log]\nlevel = \"info\"\nfile = \"/tmp/log\"", "log.file"},
      {"[tune]\nmode = \"off\"\nbudget = 3", "tune.budget"},
  };
  for (const auto& [text, key] : cases) {
    const std::string message = config_error([&] { parse_config_text(text, "/cfg/unknown.toml"); });
    EXPECT_TRUE(contains(message, key)) << text << " -> " << message;
    EXPECT_TRUE(contains(message, "/cfg/unknown.toml")) << text << " -> " << message;
  }
}

TEST_F(ConfigTest, InvalidTomlReadFromAFileNamesThePathAndTheLine) {
  const std::string path = write_file("broken.toml", "[cache]\ndisk = true\n[log\nlevel = \"info\"\n");
  const std::string message = config_error([&] { load_config(path); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "line")) << message;
  for (const char* text : {"[cache", "x = ", "= 1", "[cache]\ndisk = tru", "[cache]\ndisk = true\ndisk = false"}) {
    const std::string m = config_error([&] { parse_config_text(text, "inline.toml"); });
    EXPECT_TRUE(contains(m, "line")) << text << " -> " << m;
  }
}

TEST_F(ConfigTest, AnExplicitPathWinsEvenWhenNormjitConfigNamesAMissingFile) {
  const std::string explicit_path = write_file("explicit.toml", "[tune]\nmode = \"on-miss\"\n");
  setenv("NORMJIT_CONFIG", (dir_ / "no-such.toml").c_str(), 1);
  const Config c = load_config(explicit_path);
  EXPECT_EQ(c.config_file, explicit_path);
  EXPECT_EQ(c.tune_mode, TuneMode::OnMiss);
  EXPECT_EQ(c.sources.at("tune.mode"), "file " + explicit_path);
}

TEST_F(ConfigTest, NormjitConfigWinsOverTheDefaultFile) {
  write_file("xdg-config/normjit/config.toml", "[tune]\nmode = \"off\"\n");
  const std::string from_env = write_file("env.toml", "[tune]\nmode = \"on-miss\"\n");
  setenv("NORMJIT_CONFIG", from_env.c_str(), 1);
  const Config c = load_config();
  EXPECT_EQ(c.config_file, from_env);
  EXPECT_EQ(c.tune_mode, TuneMode::OnMiss);
}

TEST_F(ConfigTest, TheDefaultFileFallsBackToHomeDotConfig) {
  unsetenv("XDG_CONFIG_HOME");
  const std::string path = write_file("home/.config/normjit/config.toml", "[log]\nlevel = \"debug\"\n");
  const Config c = load_config();
  EXPECT_EQ(c.config_file, path);
  EXPECT_EQ(c.log_level, LogLevel::Debug);
}

TEST_F(ConfigTest, EachEnvironmentVariableOverridesOnlyItsOwnKey) {
  const std::string path = write_file("c.toml", kFullFile);
  const struct {
    const char* name;
    const char* value;
    const char* key;
  } cases[] = {{"NORMJIT_CACHE_DIR", "/from/env", "cache.dir"},
               {"NORMJIT_DISK_CACHE", "on", "cache.disk"},
               {"NORMJIT_CACHE_MAX_BYTES", "64K", "cache.max_bytes"},
               {"NORMJIT_LOG_LEVEL", "info", "log.level"},
               {"NORMJIT_TUNE", "cached", "tune.mode"},
               {"NORMJIT_SM_MARGIN", "16", "launch.sm_margin"}};
  for (const auto& e : cases) {
    setenv(e.name, e.value, 1);
    const Config c = load_config(path);
    for (const char* key : kAllKeys) {
      const std::string expected = key == std::string(e.key) ? std::string("env ") + e.name : "file " + path;
      EXPECT_EQ(c.sources.at(key), expected) << e.name << " / " << key;
    }
    EXPECT_EQ(c.cache_dir, e.key == std::string("cache.dir") ? "/from/env" : "/from/file") << e.name;
    EXPECT_EQ(c.disk_cache, e.key == std::string("cache.disk")) << e.name;
    EXPECT_EQ(c.cache_max_bytes, e.key == std::string("cache.max_bytes") ? 64u << 10 : 1000u) << e.name;
    EXPECT_EQ(c.log_level, e.key == std::string("log.level") ? LogLevel::Info : LogLevel::Error) << e.name;
    EXPECT_EQ(c.tune_mode, e.key == std::string("tune.mode") ? TuneMode::Cached : TuneMode::Off) << e.name;
    EXPECT_EQ(c.sm_margin, e.key == std::string("launch.sm_margin") ? 16 : 5) << e.name;
    unsetenv(e.name);
  }
}

TEST_F(ConfigTest, TheEnvironmentAppliesWithoutAnyConfigFile) {
  setenv("NORMJIT_CACHE_DIR", "/env/only", 1);
  setenv("NORMJIT_DISK_CACHE", "0", 1);
  const Config c = load_config();
  EXPECT_EQ(c.config_file, "");
  EXPECT_EQ(c.cache_dir, "/env/only");
  EXPECT_FALSE(c.disk_cache);
  EXPECT_EQ(c.sources.at("cache.dir"), "env NORMJIT_CACHE_DIR");
  EXPECT_EQ(c.sources.at("cache.disk"), "env NORMJIT_DISK_CACHE");
  EXPECT_EQ(c.sources.at("log.level"), "default");
}

TEST_F(ConfigTest, AnEmptyNormjitCacheDirWithNoFileGivesTheDefaultCacheDir) {
  setenv("XDG_CACHE_HOME", (dir_ / "xdg-cache").c_str(), 1);
  setenv("NORMJIT_CACHE_DIR", "", 1);
  const Config c = load_config();
  EXPECT_EQ(c.cache_dir, (dir_ / "xdg-cache" / "normjit").string());
  EXPECT_EQ(c.sources.at("cache.dir"), "default");
}

TEST_F(ConfigTest, ABadEnvironmentValueIsAnErrorEvenOverAValidFile) {
  const std::string path = write_file("c.toml", kFullFile);
  const std::pair<const char*, const char*> cases[] = {
      {"NORMJIT_DISK_CACHE", "2"}, {"NORMJIT_DISK_CACHE", "ON "}, {"NORMJIT_LOG_LEVEL", "DEBUG"},
      {"NORMJIT_TUNE", "on_miss"}, {"NORMJIT_CACHE_MAX_BYTES", "1T"}};
  for (const auto& [name, value] : cases) {
    setenv(name, value, 1);
    const std::string message = config_error([&] { load_config(path); });
    EXPECT_TRUE(contains(message, name)) << value << " -> " << message;
    unsetenv(name);
  }
}

TEST_F(ConfigTest, AFileOfExactlyOneMiBIsReadAndOneByteMoreIsRejected) {
  const std::string head = "[tune]\nmode = \"off\"\n# ";
  std::string text = head + std::string((1u << 20) - head.size() - 1, 'x') + "\n";
  ASSERT_EQ(text.size(), 1u << 20);
  const std::string fits = write_file("fits.toml", text);
  EXPECT_EQ(load_config(fits).tune_mode, TuneMode::Off);

  text.insert(text.size() - 1, "x");
  ASSERT_EQ(text.size(), (1u << 20) + 1);
  const std::string too_big = write_file("too-big.toml", text);
  const std::string message = config_error([&] { load_config(too_big); });
  EXPECT_TRUE(contains(message, too_big)) << message;
  EXPECT_TRUE(contains(message, "1 MiB")) << message;
}

TEST_F(ConfigTest, AnOversizedNormjitConfigFileIsRejected) {
  const std::string path = write_file("huge.toml", std::string(3 << 20, '\n'));
  setenv("NORMJIT_CONFIG", path.c_str(), 1);
  const std::string message = config_error([] { load_config(); });
  EXPECT_TRUE(contains(message, path)) << message;
}

}  // namespace

TEST_F(ConfigTest, SmMarginIsAWholeNumberOfSmsFromTheFileOrTheEnvironment) {
  EXPECT_EQ(load_config().sm_margin, 0);
  EXPECT_EQ(load_config().sources.at("launch.sm_margin"), "default");
  const Config c = parse_config_text("[launch]\nsm_margin = 8\n", "/etc/m.toml");
  EXPECT_EQ(c.sm_margin, 8);
  EXPECT_EQ(c.sources.at("launch.sm_margin"), "file /etc/m.toml");
  for (const char* value : {"-1", "4097", "1.5", "\"8\"", "true"}) {
    const std::string message =
        config_error([&] { parse_config_text(std::string("[launch]\nsm_margin = ") + value, "/etc/m.toml"); });
    EXPECT_TRUE(contains(message, "launch.sm_margin")) << value << " -> " << message;
    EXPECT_TRUE(contains(message, "/etc/m.toml")) << value << " -> " << message;
  }
  EXPECT_TRUE(contains(config_error([] { parse_config_text("[launch]\nmargin = 8\n", "x"); }), "sm_margin"));
  setenv("NORMJIT_SM_MARGIN", "32", 1);
  EXPECT_EQ(load_config().sm_margin, 32);
  for (const char* value : {"-1", "4097", "8 SMs", "0x10", "99999999999"}) {
    setenv("NORMJIT_SM_MARGIN", value, 1);
    const std::string message = config_error([] { load_config(); });
    EXPECT_TRUE(contains(message, "NORMJIT_SM_MARGIN")) << value << " -> " << message;
  }
}
