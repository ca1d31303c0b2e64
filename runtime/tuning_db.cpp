#include "runtime/tuning_db.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <system_error>
#include <toml++/toml.h>

#include "normjit/normjit.hpp"
#include "runtime/file_io.h"
#include "runtime/log.h"
#include "runtime/toml_messages.h"

namespace normjit::runtime {
namespace fs = std::filesystem;

namespace {

constexpr int64_t kFormatVersion = 1;
// A tuning file holds a few hundred entries; anything near this is not ours.
constexpr uintmax_t kMaxFileBytes = 64u << 20;


[[noreturn]] void bad(const std::string& origin, const std::string& where, const std::string& what) {
  throw Error(Status::ConfigError, "normjit: tuning database " + origin + ": " + where + " " + what +
                                       "; fix or delete the file (it is rebuilt by tuning).");
}

int64_t want_int(const toml::table& t, const char* key, const std::string& origin, const std::string& table,
                 int64_t lo, int64_t hi) {
  const toml::node* n = t.get(key);
  const std::string where = "[" + quoted(table) + "]." + key;
  if (!n) bad(origin, where, "is missing");
  if (!n->is_integer()) bad(origin, where, "is " + describe_value(*n) + ", not an integer");
  const int64_t v = n->as_integer()->get();
  if (v < lo || v > hi) bad(origin, where, "is " + std::to_string(v) + ", outside [" + std::to_string(lo) + ", " +
                                               std::to_string(hi) + "]");
  return v;
}
bool want_bool(const toml::table& t, const char* key, const std::string& origin, const std::string& table) {
  const toml::node* n = t.get(key);
  const std::string where = "[" + quoted(table) + "]." + key;
  if (!n) bad(origin, where, "is missing");
  if (!n->is_boolean()) bad(origin, where, "is " + describe_value(*n) + ", not true or false");
  return n->as_boolean()->get();
}
double want_time(const toml::table& t, const char* key, const std::string& origin, const std::string& table,
                 bool required) {
  const toml::node* n = t.get(key);
  const std::string where = "[" + quoted(table) + "]." + key;
  if (!n) {
    if (required) bad(origin, where, "is missing");
    return 0;
  }
  double v = 0;
  if (n->is_floating_point()) v = n->as_floating_point()->get();
  else if (n->is_integer()) v = static_cast<double>(n->as_integer()->get());
  else bad(origin, where, "is " + describe_value(*n) + ", not a number of microseconds");
  if (!(v >= 0) || v > 1e12) bad(origin, where, "is " + std::to_string(v) + ", not a plausible time in microseconds");
  return v;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}


// An exclusive fcntl lock on <path>.lock for the scope: serialises read-merge-replace among
// processes on this machine and, through the NFS lock manager, on others.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      why_ = "cannot open the lock file " + path + ": " + errno_text(errno);
      return;
    }
    struct flock l {};
    l.l_type = F_WRLCK;
    l.l_whence = SEEK_SET;
    while (::fcntl(fd_, F_SETLKW, &l) != 0) {
      if (errno == EINTR) continue;
      why_ = "cannot lock " + path + ": " + errno_text(errno);
      ::close(fd_);
      fd_ = -1;
      return;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }
  const std::string& why() const { return why_; }

 private:
  int fd_ = -1;
  std::string why_;
};

}  // namespace

size_t merge_tuning_entries(TuningEntries& into, const TuningEntries& from) {
  size_t changed = 0;
  for (const auto& [key, entry] : from) {
    auto it = into.find(key);
    if (it == into.end()) {
      into.emplace(key, entry);
      ++changed;
    } else if (entry.us < it->second.us) {
      it->second = entry;
      ++changed;
    }
  }
  return changed;
}

namespace {

// key as a TOML basic string ("..." with escapes). toml++ 3.3 writes keys that need quoting as
// literal strings ('...'), which cannot hold a ' and then fail to parse back (found by
// tests/fuzz/tuning_db_fuzz.cpp), so table headers are written here.
std::string toml_basic_string(const std::string& key) {
  std::string out = "\"";
  for (const char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04X", c);
      out += escape;
    } else {
      out += ch;  // UTF-8 passes through: the parser accepted the key, so it is valid UTF-8
    }
  }
  return out + "\"";
}

}  // namespace

std::string format_tuning_entries(const TuningEntries& entries) {
  std::ostringstream body;
  for (const auto& [key, e] : entries) {
    toml::table t;
    t.insert("threads", e.config.threads);
    t.insert("threads_per_row", e.config.threads_per_row);
    t.insert("vec", e.config.vec);
    t.insert("row_in_registers", e.config.row_in_registers);
    t.insert("cluster", e.config.cluster);
    if (e.config.merge > 1) t.insert("merge", e.config.merge);
    if (e.config.grid) t.insert("grid", true);
    t.insert("prefetch", e.config.prefetch);
    t.insert("staged", e.config.staged);
    t.insert("stages", e.config.stages);
    t.insert("min_blocks_per_sm", e.config.min_blocks_per_sm);
    if (e.config.shared_sums) t.insert("shared_sums", true);
    if (e.config.shared_weights) t.insert("shared_weights", true);
    if (e.config.phased) t.insert("phased", true);
    if (e.config.column_pass > 0) t.insert("column_pass", e.config.column_pass);
    if (e.config.shared_prefetch > 0) t.insert("shared_prefetch", e.config.shared_prefetch);
    if (e.config.paired_rows) t.insert("paired_rows", true);
    if (e.config.early_weights) t.insert("early_weights", true);
    t.insert("us", e.us);
    if (e.heuristic_us > 0) t.insert("heuristic_us", e.heuristic_us);
    t.insert("candidates", e.candidates);
    if (!e.tuned_at.empty()) t.insert("tuned_at", e.tuned_at);
    body << "\n[" << toml_basic_string(key) << "]\n" << t << "\n";
  }
  std::ostringstream s;
  s << "# normjit tuning database (docs/TUNING.md): one table per tuning key\n"
    << "# \"device | sm | SMs | nvrtc | normjit | problem | M bucket\", holding the fastest launch config\n"
    << "# measured for it and its median time in microseconds. Written by normjit; safe to edit or delete.\n\n"
    << "format = " << kFormatVersion << "\n"
    << body.str();
  return s.str();
}

TuningEntries parse_tuning_entries(const std::string& text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream s;
    s << "is not valid TOML: " << e.description() << " (line " << e.source().begin.line << ", column "
      << e.source().begin.column << ")";
    bad(origin, "the file", s.str());
  }
  const toml::node* format = root.get("format");
  if (!format || !format->is_integer() || format->as_integer()->get() != kFormatVersion)
    bad(origin, "format", format ? "is " + describe_value(*format) + ", not " + std::to_string(kFormatVersion)
                                 : "is missing (a normjit tuning file starts with format = 1)");
  TuningEntries out;
  for (const auto& [name, node] : root) {
    const std::string key(name.str());
    if (key == "format") continue;
    const toml::table* t = node.as_table();
    if (!t) bad(origin, quoted(key), "is " + describe_value(node) + ", not a table of a launch config");
    for (const auto& [field, value] : *t) {
      static const char* kFields[] = {"threads", "threads_per_row", "vec", "row_in_registers", "cluster", "merge",
                                      "grid", "prefetch", "staged", "stages", "min_blocks_per_sm", "shared_sums",
                                      "shared_weights", "phased", "column_pass", "shared_prefetch", "paired_rows",
                                      "early_weights", "us",
                                      "heuristic_us", "candidates", "tuned_at"};
      bool known = false;
      for (const char* f : kFields) known |= field.str() == f;
      if (!known) bad(origin, "[" + quoted(key) + "]." + std::string(field.str()), "is not a known field");
    }
    TunedConfig e;
    e.config.threads = static_cast<int>(want_int(*t, "threads", origin, key, 32, 1024));
    e.config.threads_per_row = static_cast<int>(want_int(*t, "threads_per_row", origin, key, 1, 1024));
    e.config.vec = static_cast<int>(want_int(*t, "vec", origin, key, 1, 16));
    e.config.row_in_registers = want_bool(*t, "row_in_registers", origin, key);
    // Written only for grid clusters, which may be larger than a thread-block cluster.
    e.config.grid = t->contains("grid") && want_bool(*t, "grid", origin, key);
    e.config.cluster = static_cast<int>(
        want_int(*t, "cluster", origin, key, 1, e.config.grid ? codegen::kMaxGridCluster : codegen::kMaxCluster));
    // Written only for merged blocks (few rows).
    if (t->contains("merge")) e.config.merge = static_cast<int>(want_int(*t, "merge", origin, key, 1, codegen::kMaxMerge));
    e.config.prefetch = want_bool(*t, "prefetch", origin, key);
    e.config.staged = want_bool(*t, "staged", origin, key);
    // Written since stages became a config field; entries from before it ran two.
    if (t->contains("stages")) e.config.stages = static_cast<int>(want_int(*t, "stages", origin, key, 2, codegen::kMaxGridStages));
    e.config.min_blocks_per_sm = static_cast<int>(want_int(*t, "min_blocks_per_sm", origin, key, 1, 32));
    // Written only for shared sums.
    e.config.shared_sums = t->contains("shared_sums") && want_bool(*t, "shared_sums", origin, key);
    // Written only for shared weights (files from before them read as without).
    e.config.shared_weights = t->contains("shared_weights") && want_bool(*t, "shared_weights", origin, key);
    // Written only for phased rows (files from before them read as without).
    e.config.phased = t->contains("phased") && want_bool(*t, "phased", origin, key);
    // Written only for the column pass.
    if (t->contains("column_pass")) e.config.column_pass = static_cast<int>(want_int(*t, "column_pass", origin, key, 1, 1024));
    // Written only for rows copied ahead into shared memory.
    if (t->contains("shared_prefetch"))
      e.config.shared_prefetch =
          static_cast<int>(want_int(*t, "shared_prefetch", origin, key, 1, codegen::kMaxSharedPrefetch));
    // Written only for paired rows.
    e.config.paired_rows = t->contains("paired_rows") && want_bool(*t, "paired_rows", origin, key);
    e.config.early_weights = t->contains("early_weights") && want_bool(*t, "early_weights", origin, key);  // likewise
    e.us = want_time(*t, "us", origin, key, true);
    e.heuristic_us = want_time(*t, "heuristic_us", origin, key, false);
    if (t->contains("candidates")) e.candidates = static_cast<int>(want_int(*t, "candidates", origin, key, 0, 1 << 20));
    if (const toml::node* at = t->get("tuned_at")) {
      if (!at->is_string()) bad(origin, "[" + quoted(key) + "].tuned_at", "is " + describe_value(*at) + ", not a string");
      e.tuned_at = at->as_string()->get();
    }
    out.emplace(key, e);
  }
  return out;
}

TuningDb::TuningDb(std::string path) : path_(std::move(path)) {}

std::string TuningDb::default_path(const std::string& cache_dir) {
  return cache_dir.empty() ? std::string() : (fs::path(cache_dir) / "tuning.toml").string();
}

TuningEntries TuningDb::read_file_entries() const {
  std::error_code ec;
  if (path_.empty() || !fs::exists(path_, ec)) return {};
  std::string why;
  try {
    const uintmax_t size = fs::file_size(path_, ec);
    if (ec) {
      why = "cannot read its size: " + ec.message();
    } else if (size > kMaxFileBytes) {
      why = "it is " + std::to_string(size) + " bytes, more than a tuning file ever holds";
    } else {
      std::ifstream f(path_, std::ios::binary);
      std::stringstream text;
      text << f.rdbuf();
      if (!f && !f.eof()) {
        // Unreadable is not corrupt: leave the file alone for whoever can read it.
        warn_once("tuning-db-read:" + path_, "cannot read the tuning database " + path_ +
                                                 ": tuning results from earlier runs are not used.");
        return {};
      }
      return parse_tuning_entries(text.str(), path_);
    }
  } catch (const Error& e) {
    why = e.what();
  }
  // Set the corrupt file aside (kept for a post-mortem) and start empty.
  const std::string aside = path_ + ".corrupt-" + std::to_string(std::time(nullptr));
  const bool moved = std::rename(path_.c_str(), aside.c_str()) == 0;
  warn_once("tuning-db-corrupt:" + path_,
            "the tuning database " + path_ + " is corrupt (" + why + "); " +
                (moved ? "moved it to " + aside : "could not move it aside (" + errno_text(errno) + ")") +
                " and starting with an empty database: shapes are tuned again or use the heuristic.");
  return {};
}

void TuningDb::load() {
  const TuningEntries from_file = read_file_entries();
  std::unique_lock<std::shared_mutex> lock(mu_);
  merge_tuning_entries(entries_, from_file);
  for (const auto& [key, e] : entries_) index_[key] = e;
}

std::optional<TunedConfig> TuningDb::find(const std::string& key) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

void TuningDb::put(const std::string& key, const TunedConfig& entry) {
  TunedConfig e = entry;
  if (e.tuned_at.empty()) e.tuned_at = utc_now();
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (merge_tuning_entries(entries_, {{key, e}}) > 0) index_[key] = entries_[key];
}

TuningEntries TuningDb::entries() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return entries_;
}

size_t TuningDb::size() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return entries_.size();
}

bool TuningDb::save(std::string* why) {
  auto fail = [&](const std::string& text) {
    if (why) *why = text;
    return false;
  };
  if (path_.empty()) return fail("no tuning database file (no cache directory)");
  std::error_code ec;
  fs::create_directories(fs::path(path_).parent_path(), ec);
  const FileLock lock(path_ + ".lock");
  if (!lock.held()) return fail(lock.why());
  // Under the lock: what other processes saved since we loaded, merged with ours.
  TuningEntries merged = read_file_entries();
  {
    std::unique_lock<std::shared_mutex> mem(mu_);
    merge_tuning_entries(merged, entries_);
    entries_ = merged;
    for (const auto& [key, e] : entries_) index_[key] = e;
  }
  const std::string text = format_tuning_entries(merged);
  const std::string tmp = path_ + ".tmp." + unique_suffix();
  std::string write_why;
  if (!write_new_file(tmp, std::vector<char>(text.begin(), text.end()), write_why)) {
    std::remove(tmp.c_str());
    return fail("cannot write " + tmp + ": " + write_why);
  }
  // rename is atomic: a reader without the lock sees the old file or the new one.
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    const std::string text_why = errno_text(errno);
    std::remove(tmp.c_str());
    return fail("cannot rename " + tmp + " to " + path_ + ": " + text_why);
  }
  return true;
}

}  // namespace normjit::runtime
