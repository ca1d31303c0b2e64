// Diagnostics to stderr, prefixed "normjit: <level>: ". The level is process-wide (the
// most verbose of the engines alive wins is not worth the complexity: the last set wins).
#pragma once
#include <string>

#include "normjit/config.hpp"

namespace normjit::runtime {

void set_log_level(LogLevel level);
LogLevel log_level();
void log(LogLevel level, const std::string& message);
// Logs a warning only the first time `once_key` is seen in this process.
void warn_once(const std::string& once_key, const std::string& message);

}  // namespace normjit::runtime
