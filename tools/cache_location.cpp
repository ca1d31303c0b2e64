#include "tools/cache_location.h"

#include <stdexcept>

#include "runtime/config.h"
#include "tools/problem_flags.h"

namespace normjit::tools {

CacheLocation take_cache_location(std::vector<std::string>& args) {
  CacheLocation where;
  const std::string flag = take_option(args, "--cache-dir");
  where.config = runtime::load_config();
  if (!flag.empty()) {
    where.config.cache_dir = flag;
    where.config.disk_cache = true;
    where.from = "--cache-dir";
  } else {
    where.from = where.config.sources["cache.dir"];
  }
  where.dir = where.config.cache_dir;
  if (where.dir.empty())
    throw std::invalid_argument(
        "no cache directory: neither HOME nor XDG_CACHE_HOME is set and none is configured; pass --cache-dir DIR "
        "or set NORMJIT_CACHE_DIR");
  return where;
}

const char* cache_dir_help() {
  return "  --cache-dir DIR            the disk cache to use (default: the configured one, see 'normjit config')\n";
}

}  // namespace normjit::tools
