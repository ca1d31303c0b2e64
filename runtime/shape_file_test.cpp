// Shape files: a valid file gives one problem per hidden size and alignment with the documented
// defaults; every bad key or value is a ConfigError naming the file, the entry and the key; the
// shipped examples parse.
#include "runtime/shape_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "normjit/normjit.hpp"

using normjit::DType;
using normjit::NormKind;
using normjit::runtime::ShapeProblem;
using normjit::runtime::parse_shape_text;
namespace fs = std::filesystem;

namespace {

const fs::path kExamples = fs::path(__FILE__).parent_path().parent_path() / "examples" / "shapes";

// The message of the ConfigError that parsing `text` throws; fails the test if there is none.
std::string config_error(const std::string& text) {
  try {
    parse_shape_text(text, "shapes.toml");
  } catch (const normjit::Error& e) {
    EXPECT_EQ(e.status(), normjit::Status::ConfigError) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

TEST(ShapeFile, AValidFileGivesOneProblemPerHiddenSizeAndAlignmentInFileOrder) {
  const auto problems = parse_shape_text(R"(
# normjit shape file
[[problem]]
kind = "layernorm"
n = [4096, 5120]
dtype = "bf16"
weight_dtype = "fp32"
dx_dtype = "fp32"
align = [16, 4]
m = [1, 4096]

[[problem]]
kind = "rmsnorm"
n = 2048
dtype = "fp16"
)",
                                         "shapes.toml");
  ASSERT_EQ(problems.size(), 5u);
  const int64_t ns[] = {4096, 4096, 5120, 5120, 2048};
  const int aligns[] = {16, 4, 16, 4, 16};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(problems[i].problem.n, ns[i]) << i;
    EXPECT_EQ(problems[i].problem.alignment, aligns[i]) << i;
  }
  const ShapeProblem& ln = problems[0];
  EXPECT_EQ(ln.entry, 1);
  EXPECT_EQ(ln.problem.kind, NormKind::LayerNorm);
  EXPECT_EQ(ln.problem.x_dtype, DType::BF16);
  EXPECT_EQ(ln.problem.dy_dtype, DType::Default);
  EXPECT_EQ(ln.problem.dx_dtype, DType::F32);
  EXPECT_EQ(ln.problem.weight_dtype, DType::F32);
  EXPECT_EQ(ln.m, (std::vector<int64_t>{1, 4096}));
  const ShapeProblem& rms = problems[4];
  EXPECT_EQ(rms.entry, 2);
  EXPECT_EQ(rms.problem.kind, NormKind::RMSNorm);
  EXPECT_EQ(rms.problem.x_dtype, DType::F16);
  EXPECT_TRUE(rms.m.empty());
}

TEST(ShapeFile, DefaultsAreWeightSameDtypeAlign16AndBiasForLayerNormOnly) {
  const auto problems = parse_shape_text(R"(
[[problem]]
kind = "layernorm"
n = 1024
dtype = "fp32"
[[problem]]
kind = "layernorm"
n = 1024
dtype = "fp32"
weight = false
[[problem]]
kind = "rmsnorm"
n = 1024
dtype = "fp32"
)",
                                         "shapes.toml");
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_TRUE(problems[0].problem.has_weight);
  EXPECT_TRUE(problems[0].problem.has_bias);
  EXPECT_EQ(problems[0].problem.weight_dtype, DType::Default);
  EXPECT_EQ(problems[0].problem.alignment, 16);
  EXPECT_FALSE(problems[1].problem.has_weight);
  EXPECT_FALSE(problems[1].problem.has_bias) << "no gamma: no beta unless asked for";
  EXPECT_TRUE(problems[2].problem.has_weight);
  EXPECT_FALSE(problems[2].problem.has_bias);
}

TEST(ShapeFile, WeightDtypeSameMeansAsX) {
  const auto problems =
      parse_shape_text("[[problem]]\nkind = \"rmsnorm\"\nn = 8\ndtype = \"bf16\"\nweight_dtype = \"same\"\n", "s");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].problem.weight_dtype, DType::Default);
}

struct BadCase {
  const char* name;
  const char* entry;        // the body of one [[problem]] table
  std::vector<const char*> expected;  // substrings of the message
};

class ShapeFileBadValue : public ::testing::TestWithParam<BadCase> {};

TEST_P(ShapeFileBadValue, IsAConfigErrorNamingTheFileTheEntryAndTheKey) {
  const BadCase& c = GetParam();
  const std::string good = "[[problem]]\nkind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\n\n";
  const std::string message = config_error(good + "[[problem]]\n" + c.entry + "\n");
  EXPECT_NE(message.find("shapes.toml"), std::string::npos) << message;
  EXPECT_NE(message.find("problem 2 (line 6)"), std::string::npos) << message;
  for (const char* s : c.expected) EXPECT_NE(message.find(s), std::string::npos) << "'" << s << "' in: " << message;
}

INSTANTIATE_TEST_SUITE_P(
    ShapeFileKeys, ShapeFileBadValue,
    ::testing::Values(
        BadCase{"UnknownKey", "kind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\nhidden = 64",
                {"hidden", "not a known key", "kind, n, dtype"}},
        BadCase{"UnknownKind", "kind = \"batchnorm\"\nn = 64\ndtype = \"fp32\"",
                {"kind", "\"batchnorm\"", "\"layernorm\" or \"rmsnorm\""}},
        BadCase{"KindNotAString", "kind = 1\nn = 64\ndtype = \"fp32\"", {"kind", "the integer 1"}},
        BadCase{"MissingKind", "n = 64\ndtype = \"fp32\"", {"kind", "is missing"}},
        BadCase{"MissingN", "kind = \"rmsnorm\"\ndtype = \"fp32\"", {": n", "is missing", "hidden size"}},
        BadCase{"ZeroN", "kind = \"rmsnorm\"\nn = 0\ndtype = \"fp32\"", {": n", "the integer 0", ">= 1"}},
        BadCase{"NAsString", "kind = \"rmsnorm\"\nn = \"4096\"\ndtype = \"fp32\"", {": n", "\"4096\""}},
        BadCase{"BadNInList", "kind = \"rmsnorm\"\nn = [64, -1]\ndtype = \"fp32\"", {"n[1]", "the integer -1"}},
        BadCase{"EmptyN", "kind = \"rmsnorm\"\nn = []\ndtype = \"fp32\"", {": n", "empty array"}},
        BadCase{"HugeN", "kind = \"rmsnorm\"\nn = 4294967296\ndtype = \"fp32\"", {"2^31"}},
        BadCase{"MissingDtype", "kind = \"rmsnorm\"\nn = 64", {"dtype", "is missing", "\"bf16\""}},
        BadCase{"UnknownDtype", "kind = \"rmsnorm\"\nn = 64\ndtype = \"bf8\"",
                {"dtype", "\"bf8\"", "\"fp32\", \"fp16\" or \"bf16\""}},
        BadCase{"DtypeSame", "kind = \"rmsnorm\"\nn = 64\ndtype = \"same\"", {"dtype", "\"same\""}},
        BadCase{"UnknownDyDtype", "kind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\ndy_dtype = \"int8\"",
                {"dy_dtype", "\"int8\""}},
        BadCase{"UnknownDxDtype", "kind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\ndx_dtype = 16", {"dx_dtype", "16"}},
        BadCase{"UnknownWeightDtype", "kind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\nweight_dtype = \"fp8\"",
                {"weight_dtype", "\"fp8\"", "\"same\""}},
        BadCase{"UnsupportedWeightDtype", "kind = \"layernorm\"\nn = 64\ndtype = \"bf16\"\nweight_dtype = \"fp16\"",
                {"weight dtype fp16 with x dtype bf16", "fp32 or the dtype of x"}},
        BadCase{"WeightNotABoolean", "kind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\nweight = \"yes\"",
                {"weight", "\"yes\"", "true or false"}},
        BadCase{"BiasOnRmsNorm", "kind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\nbias = true",
                {"bias", "rmsnorm", "no bias"}},
        BadCase{"AlignNotAPowerOfTwo", "kind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\nalign = 3",
                {"align", "the integer 3", "1, 2, 4, 8 or 16"}},
        BadCase{"AlignAbove16", "kind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\nalign = [16, 32]",
                {"align[1]", "the integer 32"}},
        BadCase{"ZeroMBucket", "kind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\nm = [0]", {"m[0]", "the integer 0"}},
        BadCase{"MNotAnInteger", "kind = \"rmsnorm\"\nn = 64\ndtype = \"fp32\"\nm = 1.5", {": m", "the number 1.5"}}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(ShapeFile, AnUnknownTopLevelKeyIsNamed) {
  const std::string message = config_error("version = 1\n[[problem]]\nkind = \"rmsnorm\"\nn = 8\ndtype = \"fp32\"\n");
  EXPECT_NE(message.find("version"), std::string::npos) << message;
  EXPECT_NE(message.find("[[problem]]"), std::string::npos) << message;
}

TEST(ShapeFile, ASingleProblemTableInsteadOfAnArrayOfTablesSaysToUseDoubleBrackets) {
  const std::string message = config_error("[problem]\nkind = \"rmsnorm\"\nn = 8\ndtype = \"fp32\"\n");
  EXPECT_NE(message.find("[[problem]]"), std::string::npos) << message;
}

TEST(ShapeFile, AFileWithoutProblemsIsAnError) {
  EXPECT_NE(config_error("# nothing here\n").find("lists no problems"), std::string::npos);
}

TEST(ShapeFile, InvalidTomlNamesTheLine) {
  const std::string message = config_error("[[problem]]\nkind = \"rmsnorm\nn = 8\n");
  EXPECT_NE(message.find("not valid TOML"), std::string::npos) << message;
  EXPECT_NE(message.find("line 2"), std::string::npos) << message;
}

TEST(ShapeFile, AMissingFileIsAConfigErrorNamingThePath) {
  try {
    normjit::runtime::load_shape_file("/nonexistent/shapes.toml");
    FAIL() << "no error";
  } catch (const normjit::Error& e) {
    EXPECT_EQ(e.status(), normjit::Status::ConfigError);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/shapes.toml"), std::string::npos) << e.what();
  }
}

TEST(ShapeFile, TheShippedExamplesParse) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kExamples)) {
    if (entry.path().extension() != ".toml") continue;
    ++files;
    std::vector<ShapeProblem> problems;
    EXPECT_NO_THROW(problems = normjit::runtime::load_shape_file(entry.path().string())) << entry.path();
    EXPECT_FALSE(problems.empty()) << entry.path();
  }
  EXPECT_GE(files, 3) << "llama.toml, gpt.toml and common.toml in " << kExamples;
}

TEST(ShapeFile, TheLlamaExampleIsRmsNormBf16WithFp32Weights) {
  const auto problems = normjit::runtime::load_shape_file((kExamples / "llama.toml").string());
  std::vector<int64_t> ns;
  for (const ShapeProblem& s : problems) {
    EXPECT_EQ(s.problem.kind, NormKind::RMSNorm);
    EXPECT_EQ(s.problem.x_dtype, DType::BF16);
    EXPECT_EQ(s.problem.weight_dtype, DType::F32);
    ns.push_back(s.problem.n);
  }
  EXPECT_EQ(ns, (std::vector<int64_t>{2048, 4096, 5120, 8192}));
}

TEST(ShapeFile, TheGptExampleIsLayerNormWithBiasBf16) {
  const auto problems = normjit::runtime::load_shape_file((kExamples / "gpt.toml").string());
  std::vector<int64_t> ns;
  for (const ShapeProblem& s : problems) {
    EXPECT_EQ(s.problem.kind, NormKind::LayerNorm);
    EXPECT_TRUE(s.problem.has_bias);
    EXPECT_EQ(s.problem.x_dtype, DType::BF16);
    ns.push_back(s.problem.n);
  }
  EXPECT_EQ(ns, (std::vector<int64_t>{2048, 4096, 7168, 12288, 16384}));
}

}  // namespace

// The reader's caps (found by tests/fuzz/shape_file_fuzz: n x align lists once expanded
// without limit, so a small file could ask for 10^8 problems).
TEST(ShapeFile, ExpansionsBeyond4096ProblemsAndMoreThan256BucketsAreRejected) {
  std::string ns, aligns, ms;
  for (int i = 1; i <= 100; ++i) ns += (i > 1 ? ", " : "") + std::to_string(i);
  for (int i = 0; i < 50; ++i) aligns += (i > 0 ? ", " : "") + std::string("16");
  const std::string many = config_error("[[problem]]\nkind = \"layernorm\"\nn = [" + ns + "]\ndtype = \"bf16\"\nalign = [" + aligns + "]\n");
  EXPECT_NE(many.find("at most 4096 problems"), std::string::npos) << many;
  for (int i = 1; i <= 257; ++i) ms += (i > 1 ? ", " : "") + std::to_string(i);
  const std::string buckets = config_error("[[problem]]\nkind = \"rmsnorm\"\nn = 8\ndtype = \"bf16\"\nm = [" + ms + "]\n");
  EXPECT_NE(buckets.find("at most 256"), std::string::npos) << buckets;
}
