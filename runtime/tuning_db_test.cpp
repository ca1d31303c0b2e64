#include "runtime/tuning_db.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "normjit/normjit.hpp"

using namespace normjit;
using runtime::TunedConfig;
using runtime::TuningDb;
using runtime::TuningEntries;
namespace fs = std::filesystem;

namespace {

TunedConfig tuned(int threads, double us) {
  TunedConfig e;
  e.config.threads = e.config.threads_per_row = threads;
  e.config.vec = 8;
  e.us = us;
  e.heuristic_us = us * 1.2;
  e.candidates = 12;
  e.tuned_at = "2026-11-23T10:00:00Z";
  return e;
}

const char* kKeyA = "NVIDIA H100 | sm_90 | 132 SMs | nvrtc 13.0 | normjit 0.1.0 | layernorm N=4096 | M<=4096";
const char* kKeyB = "NVIDIA H100 | sm_90 | 132 SMs | nvrtc 13.0 | normjit 0.1.0 | rmsnorm N=8192 | M<=1";

class TuningDbFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("normjit-tuning-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file() const { return (dir_ / "tuning.toml").string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    return out;
  }
  fs::path dir_;
};

}  // namespace

TEST(TuningEntries, MergeKeepsTheFasterMeasurementPerKey) {
  TuningEntries into{{kKeyA, tuned(256, 10.0)}};
  const TuningEntries from{{kKeyA, tuned(512, 12.0)}, {kKeyB, tuned(128, 3.0)}};
  EXPECT_EQ(runtime::merge_tuning_entries(into, from), 1u);  // B added, A kept (10 < 12)
  EXPECT_EQ(into.at(kKeyA).config.threads, 256);
  EXPECT_EQ(into.at(kKeyB).config.threads, 128);
  EXPECT_EQ(runtime::merge_tuning_entries(into, {{kKeyA, tuned(1024, 9.5)}}), 1u);
  EXPECT_EQ(into.at(kKeyA).config.threads, 1024);
  EXPECT_DOUBLE_EQ(into.at(kKeyA).us, 9.5);
}

TEST(TuningEntries, FormatAndParseRoundTrip) {
  TunedConfig staged = tuned(512, 42.25);
  staged.config.staged = true;
  staged.config.cluster = 4;
  staged.config.min_blocks_per_sm = 2;
  const TuningEntries entries{{kKeyA, staged}, {kKeyB, tuned(64, 3.5)}};
  const std::string text = runtime::format_tuning_entries(entries);
  EXPECT_NE(text.find("format = 1"), std::string::npos) << text;
  EXPECT_NE(text.find(kKeyA), std::string::npos) << "the key is the table name, readable:\n" << text;
  const TuningEntries back = runtime::parse_tuning_entries(text, "test");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.at(kKeyA).config, staged.config);
  EXPECT_DOUBLE_EQ(back.at(kKeyA).us, 42.25);
  EXPECT_DOUBLE_EQ(back.at(kKeyA).heuristic_us, staged.heuristic_us);
  EXPECT_EQ(back.at(kKeyA).candidates, 12);
  EXPECT_EQ(back.at(kKeyA).tuned_at, "2026-11-23T10:00:00Z");
  EXPECT_EQ(back.at(kKeyB).config, tuned(64, 3.5).config);
}

TEST(TuningEntries, GridClustersRoundTripAndOnlyTheyMayExceedSixteenBlocks) {
  TunedConfig grid = tuned(256, 99.5);
  grid.config.staged = true;
  grid.config.grid = true;
  grid.config.cluster = 132;
  grid.config.stages = 3;
  const std::string text = runtime::format_tuning_entries({{kKeyA, grid}, {kKeyB, tuned(64, 3.5)}});
  EXPECT_EQ(text.find("grid"), text.rfind("grid")) << "written for grid clusters only:\n" << text;
  const TuningEntries back = runtime::parse_tuning_entries(text, "test");
  EXPECT_EQ(back.at(kKeyA).config, grid.config);
  EXPECT_FALSE(back.at(kKeyB).config.grid);
  grid.config.grid = false;  // a 132-block thread-block cluster does not exist
  EXPECT_THROW(runtime::parse_tuning_entries(runtime::format_tuning_entries({{kKeyA, grid}}), "test"), Error);
}

TEST(TuningEntries, MergedBlocksRoundTripAndAreWrittenOnlyWhenMerged) {
  TunedConfig merged = tuned(256, 9.5);
  merged.config.merge = 8;
  const std::string text = runtime::format_tuning_entries({{kKeyA, merged}, {kKeyB, tuned(64, 3.5)}});
  EXPECT_EQ(text.find("merge"), text.rfind("merge")) << "written for merged blocks only:\n" << text;
  const TuningEntries back = runtime::parse_tuning_entries(text, "test");
  EXPECT_EQ(back.at(kKeyA).config, merged.config);
  EXPECT_EQ(back.at(kKeyB).config.merge, 1);
  merged.config.merge = 16;  // beyond the portable cluster size
  EXPECT_THROW(runtime::parse_tuning_entries(runtime::format_tuning_entries({{kKeyA, merged}}), "test"), Error);
}

// shared_sums is written only when set, and files from before it (no field) read as false.
TEST(TuningEntries, SharedSumsRoundTripAndAreWrittenOnlyWhenSet) {
  TunedConfig shared = tuned(512, 150.5);
  shared.config.shared_sums = true;
  shared.config.min_blocks_per_sm = 2;
  const std::string text = runtime::format_tuning_entries({{kKeyA, shared}, {kKeyB, tuned(64, 3.5)}});
  EXPECT_EQ(text.find("shared_sums"), text.rfind("shared_sums")) << "written for shared sums only:\n" << text;
  const TuningEntries back = runtime::parse_tuning_entries(text, "test");
  EXPECT_EQ(back.at(kKeyA).config, shared.config);
  EXPECT_FALSE(back.at(kKeyB).config.shared_sums);
}

// shared_weights likewise: written only when set; files from before it read as false.
TEST(TuningEntries, SharedWeightsRoundTripAndAreWrittenOnlyWhenSet) {
  TunedConfig shared = tuned(768, 158.0);
  shared.config.shared_sums = shared.config.shared_weights = true;
  const std::string text = runtime::format_tuning_entries({{kKeyA, shared}, {kKeyB, tuned(64, 3.5)}});
  EXPECT_EQ(text.find("shared_weights"), text.rfind("shared_weights")) << "written once:\n" << text;
  const TuningEntries back = runtime::parse_tuning_entries(text, "test");
  EXPECT_EQ(back.at(kKeyA).config, shared.config);
  EXPECT_FALSE(back.at(kKeyB).config.shared_weights);
}

// phased likewise (a config pinned or tuned for rows in phase keeps its memory plan).
TEST(TuningEntries, PhasedRowsRoundTripAndAreWrittenOnlyWhenSet) {
  TunedConfig phased = tuned(288, 150.0);
  phased.config.cluster = 4;
  phased.config.shared_sums = phased.config.shared_weights = phased.config.phased = true;
  const std::string text = runtime::format_tuning_entries({{kKeyA, phased}, {kKeyB, tuned(64, 3.5)}});
  EXPECT_EQ(text.find("phased"), text.rfind("phased")) << "written once:\n" << text;
  const TuningEntries back = runtime::parse_tuning_entries(text, "test");
  EXPECT_EQ(back.at(kKeyA).config, phased.config);
  EXPECT_FALSE(back.at(kKeyB).config.phased);
}

// column_pass is written only when on, and files from before it read as 0 (off).
TEST(TuningEntries, ColumnPassRoundTripsAndIsWrittenOnlyWhenOn) {
  TunedConfig column = tuned(512, 8.5);
  column.config.row_in_registers = false;
  column.config.column_pass = 64;
  const std::string text = runtime::format_tuning_entries({{kKeyA, column}, {kKeyB, tuned(64, 3.5)}});
  EXPECT_EQ(text.find("column_pass"), text.rfind("column_pass")) << "written for the column pass only:\n" << text;
  const TuningEntries back = runtime::parse_tuning_entries(text, "test");
  EXPECT_EQ(back.at(kKeyA).config, column.config);
  EXPECT_EQ(back.at(kKeyB).config.column_pass, 0);
}

TEST(TuningEntries, SharedPrefetchRoundTripsAndIsWrittenOnlyWhenOn) {
  TunedConfig ahead = tuned(512, 7.5);
  ahead.config.cluster = 2;
  ahead.config.shared_sums = true;
  ahead.config.shared_prefetch = 2;
  const std::string text = runtime::format_tuning_entries({{kKeyA, ahead}, {kKeyB, tuned(64, 3.5)}});
  EXPECT_EQ(text.find("shared_prefetch"), text.rfind("shared_prefetch"))
      << "written for rows copied ahead only:\n" << text;
  const TuningEntries back = runtime::parse_tuning_entries(text, "test");
  EXPECT_EQ(back.at(kKeyA).config, ahead.config);
  EXPECT_EQ(back.at(kKeyB).config.shared_prefetch, 0);
  std::string deep = text;
  deep.replace(deep.find("shared_prefetch = 2"), 19, "shared_prefetch = 9");
  EXPECT_THROW(runtime::parse_tuning_entries(deep, "test"), std::runtime_error)
      << "more rows ahead than a kernel takes";
}

namespace {
// A flag of the config written only when set (`field`, the member `flag` of `on`, which has it
// set): it round-trips, an entry without it reads it false, and a value not a bool is corrupt.
void flag_round_trips(const TunedConfig& on, const std::string& field, bool codegen::LaunchConfig::*flag) {
  const std::string text = runtime::format_tuning_entries({{kKeyA, on}, {kKeyB, tuned(64, 3.5)}});
  EXPECT_EQ(text.find(field), text.rfind(field)) << "written where set only:\n" << text;
  const TuningEntries back = runtime::parse_tuning_entries(text, "test");
  EXPECT_EQ(back.at(kKeyA).config, on.config);
  EXPECT_FALSE(back.at(kKeyB).config.*flag);
  std::string bad = text;
  const std::string written = field + " = true";
  bad.replace(bad.find(written), written.size(), field + " = 2");
  EXPECT_THROW(runtime::parse_tuning_entries(bad, "test"), std::runtime_error) << field << ": not a bool";
}
}  // namespace

TEST(TuningEntries, PairedRowsRoundTripAndAreWrittenOnlyWhenOn) {
  TunedConfig pairs = tuned(512, 7.5);
  pairs.config.cluster = 2;
  pairs.config.shared_sums = true;
  pairs.config.paired_rows = true;
  flag_round_trips(pairs, "paired_rows", &codegen::LaunchConfig::paired_rows);
}

TEST(TuningEntries, EarlyWeightsRoundTripAndAreWrittenOnlyWhenOn) {
  TunedConfig early = tuned(384, 6.5);
  early.config.vec = 1;
  early.config.early_weights = true;
  flag_round_trips(early, "early_weights", &codegen::LaunchConfig::early_weights);
}

// Keys needing quotes, with a ' (which toml++ 3.3 would write as an unreadable literal
// string), a ", a backslash and a control character, read back unchanged.
TEST(TuningEntries, KeysWithQuotesAndEscapesRoundTrip) {
  const std::string keys[] = {"jjj'jj5", "a \"quoted\" name", "back\\slash", std::string("tab\there"), "H100 'SXM' | sm_90"};
  TuningEntries entries;
  for (const std::string& k : keys) entries.emplace(k, tuned(256, 9.5));
  const std::string text = runtime::format_tuning_entries(entries);
  TuningEntries back;
  ASSERT_NO_THROW(back = runtime::parse_tuning_entries(text, "test")) << text;
  ASSERT_EQ(back.size(), entries.size()) << text;
  for (const std::string& k : keys) EXPECT_EQ(back.count(k), 1u) << k << " in\n" << text;
}

TEST(TuningEntries, ParseErrorsNameTheTableAndTheKey) {
  const std::string good = runtime::format_tuning_entries({{kKeyA, tuned(256, 1.0)}});
  auto error_of = [](const std::string& text) {
    try {
      runtime::parse_tuning_entries(text, "t.toml");
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::ConfigError);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("format = 2\n").find("format"), std::string::npos);
  EXPECT_NE(error_of("x = [").find("not valid TOML"), std::string::npos);
  std::string wrong = good;
  wrong.replace(wrong.find("threads = 256"), 13, "threads = 4096");
  const std::string message = error_of(wrong);
  EXPECT_NE(message.find("threads"), std::string::npos) << message;
  EXPECT_NE(message.find("layernorm N=4096"), std::string::npos) << message;
  EXPECT_NE(message.find("t.toml"), std::string::npos) << message;
  std::string unknown = good;
  unknown.replace(unknown.find("vec = 8"), 7, "vec = 8\nwarp = 1");
  EXPECT_NE(error_of(unknown).find("warp"), std::string::npos);
}

TEST_F(TuningDbFile, AMissingFileIsAnEmptyDatabase) {
  TuningDb db(file());
  db.load();
  EXPECT_EQ(db.size(), 0u);
  EXPECT_FALSE(db.find(kKeyA));
}

TEST_F(TuningDbFile, SaveThenLoadInAnotherDatabase) {
  TuningDb a(file());
  a.load();
  a.put(kKeyA, tuned(256, 10.0));
  std::string why;
  ASSERT_TRUE(a.save(&why)) << why;
  TuningDb b(file());
  b.load();
  ASSERT_TRUE(b.find(kKeyA));
  EXPECT_EQ(b.find(kKeyA)->config.threads, 256);
  // Nothing but the file and its lock is left behind (no temporaries).
  for (const std::string& name : names()) EXPECT_TRUE(name == "tuning.toml" || name == "tuning.toml.lock") << name;
}

TEST_F(TuningDbFile, SaveMergesWhatAnotherProcessSavedMeanwhile) {
  TuningDb a(file()), b(file());
  a.load();
  b.load();
  a.put(kKeyA, tuned(256, 10.0));
  b.put(kKeyA, tuned(512, 8.0));  // faster: wins whoever saves last
  b.put(kKeyB, tuned(128, 3.0));
  ASSERT_TRUE(b.save());
  ASSERT_TRUE(a.save());  // re-reads b's file before replacing it
  TuningDb c(file());
  c.load();
  ASSERT_TRUE(c.find(kKeyA) && c.find(kKeyB));
  EXPECT_EQ(c.find(kKeyA)->config.threads, 512);
  EXPECT_EQ(a.find(kKeyB)->config.threads, 128) << "a learns what it merged";
}

TEST_F(TuningDbFile, ManyProcessesSavingAtOnceLoseNothing) {
  constexpr int kProcesses = 8;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      TuningDb db(file());
      db.load();
      for (int k = 0; k < 5; ++k) {
        db.put("key " + std::to_string(i) + "." + std::to_string(k), tuned(64 * (1 + k % 4), 1.0 + i));
        if (!db.save()) _exit(1);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  TuningDb db(file());
  db.load();
  EXPECT_EQ(db.size(), static_cast<size_t>(kProcesses * 5));
}

TEST_F(TuningDbFile, ACorruptFileIsSetAsideAndTheDatabaseStartsEmpty) {
  { std::ofstream(file()) << "format = 1\n[\"half a table\"\nthreads = "; }
  testing::internal::CaptureStderr();
  TuningDb db(file());
  db.load();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(db.size(), 0u);
  EXPECT_NE(err.find("corrupt"), std::string::npos) << err;
  bool set_aside = false;
  for (const std::string& name : names()) set_aside |= name.rfind("tuning.toml.corrupt-", 0) == 0;
  EXPECT_TRUE(set_aside) << "expected tuning.toml.corrupt-<time>";
  EXPECT_FALSE(fs::exists(file()));
  // And it is rebuilt by the next save.
  db.put(kKeyA, tuned(256, 10.0));
  ASSERT_TRUE(db.save());
  TuningDb again(file());
  again.load();
  EXPECT_TRUE(again.find(kKeyA));
}

TEST_F(TuningDbFile, PutKeepsTheFasterMeasurementInMemory) {
  TuningDb db;  // memory only
  db.put(kKeyA, tuned(256, 10.0));
  db.put(kKeyA, tuned(512, 11.0));
  EXPECT_EQ(db.find(kKeyA)->config.threads, 256);
  EXPECT_FALSE(db.save()) << "a memory-only database has no file to save to";
}

TEST(TuningDbPath, DefaultsToTheCacheDirectory) {
  EXPECT_EQ(TuningDb::default_path("/var/cache/normjit"), "/var/cache/normjit/tuning.toml");
  EXPECT_EQ(TuningDb::default_path(""), "");
}
