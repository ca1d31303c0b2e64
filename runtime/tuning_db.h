// The tuning database: the best launch config measured per tuning key, in a human-readable
// TOML file (docs/TUNING.md), by default <cache dir>/tuning.toml.
//
// In a process the database lives in memory, loaded once; lookups take a shared lock and one
// hash lookup and never touch the file. Saving is safe with many processes on one machine or
// on a shared file system: under an exclusive lock on <file>.lock (fcntl, which NFS honours)
// the file is re-read, merged with what this process measured (the faster measurement of a
// key wins), written to a temporary name and renamed over the file, so a reader sees the old
// file or the new one, never a torn one. A file that does not parse is set aside as
// <file>.corrupt-<unix time> with one warning, and the database starts empty.
#pragma once
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>

#include "codegen/launch_config.h"
#include "llvm/ADT/StringMap.h"

namespace normjit::runtime {

struct TunedConfig {
  codegen::LaunchConfig config;
  double us = 0;            // median time of the backward (every kernel it launches), microseconds
  double heuristic_us = 0;  // the heuristic's median in the same run (0: not measured)
  int candidates = 0;       // configs timed
  std::string tuned_at;     // UTC, "2026-11-23T10:00:00Z"
};

// Key text (TuningKey::text()) -> entry, ordered so the file is written in a stable order.
using TuningEntries = std::map<std::string, TunedConfig>;

// Adds `from` into `into`, keeping the faster measurement where both hold a key.
// Returns how many entries of `into` changed.
size_t merge_tuning_entries(TuningEntries& into, const TuningEntries& from);

// The file's text, and back. Parsing throws normjit::Error(Status::ConfigError) naming the
// origin, the table and the key on anything it does not accept; configs are checked only for
// form here (check_launch_config needs the problem, which the engine has).
std::string format_tuning_entries(const TuningEntries& entries);
TuningEntries parse_tuning_entries(const std::string& text, const std::string& origin);

class TuningDb {
 public:
  // path empty: memory only (nothing is read or written).
  explicit TuningDb(std::string path = "");
  static std::string default_path(const std::string& cache_dir);  // <cache_dir>/tuning.toml, or "" for ""

  const std::string& path() const { return path_; }

  // Reads the file into memory (replacing nothing measured here: it merges). A missing file is
  // an empty database; a corrupt one is set aside with a warning. Never throws.
  void load();

  std::optional<TunedConfig> find(const std::string& key) const;
  // Records a measurement in memory (kept if faster than what is there). save() persists it.
  void put(const std::string& key, const TunedConfig& entry);
  TuningEntries entries() const;
  size_t size() const;

  // Re-reads, merges and atomically replaces the file under the lock. Returns false, with
  // `why`, when the file cannot be written; the entries stay in memory.
  bool save(std::string* why = nullptr);

 private:
  // Reads the file at path_; corrupt: set aside, warn, empty. Caller holds the file lock or
  // does not need it (a reader sees whole files only).
  TuningEntries read_file_entries() const;

  std::string path_;
  mutable std::shared_mutex mu_;
  llvm::StringMap<TunedConfig> index_;  // the hot lookup
  TuningEntries entries_;               // what is written
};

}  // namespace normjit::runtime
