// normjit cache: look after the disk cache — list, count, verify and clear its entries, and
// move them between machines as one bundle file (export on the machine that compiled, import
// on every node of the fleet).
#include <sys/stat.h>

#include <cstdio>
#include <map>
#include <stdexcept>

#include "normjit/normjit.hpp"
#include "runtime/cache_bundle.h"
#include "runtime/disk_cache.h"
#include "runtime/nvrtc.h"
#include "tools/cache_location.h"
#include "tools/problem_flags.h"
#include "tools/subcommands.h"

namespace normjit::tools {
namespace {

void print_help(std::FILE* out) {
  std::fprintf(out,
      "usage: normjit cache <action> [--cache-dir DIR]\n"
      "Looks after the disk cache of compiled kernels.\n"
      "\n"
      "actions:\n"
      "  ls             one line per entry: key (first 16 hex digits), arch, payload bytes, valid or why not\n"
      "  stats          entries, valid and invalid counts, bytes, entries per arch\n"
      "  verify         decode every entry and unpack its cubin; name each invalid one (exit 1 if any)\n"
      "  clear          remove every entry\n"
      "  export FILE    write every valid entry to one bundle file, with the NVRTC and normjit versions\n"
      "  import FILE    check the whole bundle, then install its entries; entries for another NVRTC\n"
      "                 or normjit version, or an arch this NVRTC cannot target, are skipped and\n"
      "                 counted. A corrupt bundle installs nothing (exit 1)\n"
      "\n"
      "options:\n%s"
      "\n"
      "Exit 0 ok, 1 the work failed (invalid entries for verify, a corrupt bundle, an unwritable\n"
      "directory), 2 bad usage.\n",
      cache_dir_help());
}

uint64_t file_bytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

std::string key_prefix(const std::string& key) { return key.substr(0, 16); }

int cache_ls(const CacheLocation& where) {
  runtime::DiskCache disk(where.dir, where.config.cache_max_bytes);
  const auto entries = disk.list();
  for (const runtime::DiskCacheEntryInfo& e : entries)
    std::printf("%-16s  %-7s %10llu  %s\n", key_prefix(e.key).c_str(), e.arch.empty() ? "?" : e.arch.c_str(),
                static_cast<unsigned long long>(e.payload_bytes), e.valid ? "valid" : ("INVALID: " + e.problem).c_str());
  if (entries.empty()) std::fprintf(stderr, "no entries in %s\n", where.dir.c_str());
  return kExitOk;
}

int cache_stats(const CacheLocation& where) {
  runtime::DiskCache disk(where.dir, where.config.cache_max_bytes);
  uint64_t valid = 0, invalid = 0, payload = 0, on_disk = 0;
  std::map<std::string, uint64_t> per_arch;
  for (const runtime::DiskCacheEntryInfo& e : disk.list()) {
    (e.valid ? valid : invalid)++;
    payload += e.payload_bytes;
    on_disk += file_bytes(e.path);
    if (e.valid) per_arch[e.arch]++;
  }
  std::printf("directory: %s (%s)\n", where.dir.c_str(), where.from.c_str());
  std::printf("entries:   %llu (%llu valid, %llu invalid)\n", static_cast<unsigned long long>(valid + invalid),
              static_cast<unsigned long long>(valid), static_cast<unsigned long long>(invalid));
  std::printf("bytes:     %llu on disk, %llu of payload; cap %llu\n", static_cast<unsigned long long>(on_disk),
              static_cast<unsigned long long>(payload),
              static_cast<unsigned long long>(where.config.cache_max_bytes));
  std::string archs;
  for (const auto& [arch, count] : per_arch) archs += " " + arch + ": " + std::to_string(count);
  std::printf("by arch:  %s\n", archs.empty() ? " none" : archs.c_str());
  return kExitOk;
}

int cache_verify(const CacheLocation& where) {
  runtime::DiskCache disk(where.dir, where.config.cache_max_bytes);
  uint64_t valid = 0, invalid = 0;
  for (const runtime::DiskCacheEntryInfo& e : disk.list()) {
    std::vector<char> payload;
    std::string why;
    if (runtime::verify_cache_entry(e, payload, why)) {
      ++valid;
    } else {
      ++invalid;
      std::printf("INVALID %s: %s\n", e.path.c_str(), why.c_str());
    }
  }
  std::printf("%llu valid, %llu invalid entries in %s\n", static_cast<unsigned long long>(valid),
              static_cast<unsigned long long>(invalid), where.dir.c_str());
  if (invalid)
    std::fprintf(stderr, "normjit cache verify: invalid entries are removed and rebuilt when next used; "
                         "'normjit cache clear' removes everything now.\n");
  return invalid ? kExitFailed : kExitOk;
}

int cache_clear(const CacheLocation& where) {
  runtime::DiskCache disk(where.dir, where.config.cache_max_bytes);
  const uint64_t removed = disk.clear();
  std::printf("removed %llu entries from %s\n", static_cast<unsigned long long>(removed), where.dir.c_str());
  return kExitOk;
}

int cache_export(const CacheLocation& where, const std::string& file) {
  runtime::DiskCache disk(where.dir, where.config.cache_max_bytes);
  // The entries were compiled by this machine's NVRTC, as far as anyone can tell: keys hash the
  // version but entries do not record it (docs/CACHE.md).
  std::string why;
  const std::string nvrtc = runtime::Nvrtc::available(&why) ? runtime::Nvrtc::get().version() : "unknown";
  std::vector<runtime::DiskCacheEntryInfo> invalid;
  const runtime::Bundle bundle = runtime::collect_bundle(disk, nvrtc, &invalid);
  const std::vector<char> bytes = runtime::encode_bundle(bundle);
  runtime::write_bundle_file(file, bytes);
  std::printf("exported %zu entries (%zu bytes) to %s: NVRTC %s, normjit %s\n", bundle.entries.size(), bytes.size(),
              file.c_str(), nvrtc.c_str(), bundle.normjit_version.c_str());
  for (const runtime::DiskCacheEntryInfo& e : invalid)
    std::fprintf(stderr, "left out the invalid entry %s: %s\n", e.path.c_str(), e.problem.c_str());
  if (bundle.entries.empty()) std::fprintf(stderr, "warning: %s has no valid entries; the bundle is empty\n", where.dir.c_str());
  return kExitOk;
}

// "3 entries for NVRTC 12.8 (this machine has 13.0)", ...
std::string skipped_reasons(const runtime::ImportReport& r, const runtime::Bundle& b, const runtime::ImportTarget& here) {
  std::string out;
  auto add = [&out](uint64_t n, const std::string& what) {
    if (n) out += (out.empty() ? "" : "; ") + std::to_string(n) + " entries for " + what;
  };
  add(r.skipped_nvrtc, "NVRTC " + b.nvrtc_version + " (this machine has NVRTC " + here.nvrtc_version + ")");
  add(r.skipped_normjit, "normjit " + b.normjit_version + " (this is normjit " + here.normjit_version + ")");
  for (const auto& [arch, count] : r.skipped_arch) add(count, arch + ", which NVRTC " + here.nvrtc_version + " cannot target");
  return out;
}

int cache_import(const CacheLocation& where, const std::string& file) {
  const std::vector<char> bytes = runtime::read_bundle_file(file);
  runtime::Bundle bundle;
  std::string why;
  if (!runtime::decode_bundle(bytes, bundle, why)) {
    std::fprintf(stderr, "normjit cache import: %s is not a usable bundle: %s. Nothing was installed; export it "
                         "again ('normjit cache export FILE') or copy it again.\n", file.c_str(), why.c_str());
    return kExitFailed;
  }
  runtime::ImportTarget here;
  here.normjit_version = version_string();
  if (runtime::Nvrtc::available(&why)) {
    here.nvrtc_version = runtime::Nvrtc::get().version();
    here.archs = runtime::Nvrtc::get().supported_archs();
  } else {
    std::fprintf(stderr, "warning: NVRTC is not available here (%s): the bundle's NVRTC %s cannot be checked "
                         "against this machine's; installing every entry.\n", why.c_str(), bundle.nvrtc_version.c_str());
  }
  runtime::DiskCache disk(where.dir, where.config.cache_max_bytes);
  if (!disk.enabled()) {
    std::fprintf(stderr, "normjit cache import: the cache directory %s cannot be written; nothing was installed.\n",
                 where.dir.c_str());
    return kExitFailed;
  }
  const runtime::ImportReport r = runtime::import_bundle(disk, bundle, here);
  std::printf("installed %llu, already present %llu, skipped %llu, failed %llu of %zu entries from %s into %s\n",
              static_cast<unsigned long long>(r.installed), static_cast<unsigned long long>(r.already_present),
              static_cast<unsigned long long>(r.skipped()), static_cast<unsigned long long>(r.failed),
              bundle.entries.size(), file.c_str(), where.dir.c_str());
  if (r.skipped()) std::printf("skipped %s\n", skipped_reasons(r, bundle, here).c_str());
  if (r.failed) {
    std::fprintf(stderr, "normjit cache import: %llu entries could not be written to %s: check its space and "
                         "permissions.\n", static_cast<unsigned long long>(r.failed), where.dir.c_str());
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

int run_cache(std::vector<std::string> args) {
  if (take_flag(args, "--help") || take_flag(args, "-h")) {
    print_help(stdout);
    return kExitOk;
  }
  const CacheLocation where = take_cache_location(args);  // --cache-dir may come before the action
  if (args.empty()) {
    print_help(stderr);
    return kExitUsage;
  }
  const std::string action = args.front();
  args.erase(args.begin());
  std::string file;
  if (action == "export" || action == "import") {
    if (args.empty() || args.front().rfind("--", 0) == 0)
      throw std::invalid_argument(action + " needs a FILE: normjit cache " + action + " FILE");
    file = args.front();
    args.erase(args.begin());
  }
  if (!args.empty()) throw std::invalid_argument("unexpected argument '" + args.front() + "'");
  if (action == "ls") return cache_ls(where);
  if (action == "stats") return cache_stats(where);
  if (action == "verify") return cache_verify(where);
  if (action == "clear") return cache_clear(where);
  if (action == "export") return cache_export(where, file);
  if (action == "import") return cache_import(where, file);
  throw std::invalid_argument("unknown action '" + action + "' (use ls, stats, verify, clear, export FILE or import FILE)");
}

}  // namespace normjit::tools
