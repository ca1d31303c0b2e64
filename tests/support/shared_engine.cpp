#include "support/shared_engine.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace normjit::test {
namespace {

struct EngineWithTempCache {
  std::string cache_dir = make_temp_dir();
  Engine engine{[this] {
    Config config;
    config.cache_dir = cache_dir;
    config.disk_cache = true;
    return config;
  }()};
  ~EngineWithTempCache() {
    std::error_code ignored;
    std::filesystem::remove_all(cache_dir, ignored);
  }
};

}  // namespace

std::string make_temp_dir() {
  const std::filesystem::path pattern = std::filesystem::temp_directory_path() / "normjit-test-XXXXXX";
  const std::string text = pattern.string();
  std::vector<char> path(text.begin(), text.end());
  path.push_back('\0');
  if (!mkdtemp(path.data()))
    throw std::runtime_error("test setup: mkdtemp(" + pattern.string() + ") failed: " + std::strerror(errno));
  return path.data();
}

Engine& shared_engine() {
  static EngineWithTempCache shared;
  return shared.engine;
}

}  // namespace normjit::test
