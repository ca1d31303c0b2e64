#include "runtime/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>

namespace normjit::runtime {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::Warn)};
const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warning";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "?";
}
}  // namespace

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }

void log(LogLevel level, const std::string& message) {
  if (static_cast<int>(level) > g_level.load()) return;
  std::fprintf(stderr, "normjit: %s: %s\n", level_name(level), message.c_str());
}

void warn_once(const std::string& once_key, const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> seen;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen.insert(once_key).second) return;
  }
  log(LogLevel::Warn, message);
}

}  // namespace normjit::runtime
