#include "codegen/fused_blocks.h"

#include <gtest/gtest.h>

#include <stdexcept>

using normjit::codegen::select_fused_blocks;

namespace {

const char* kText =
    "a\n"
    "  // fused:begin\n"
    "  fused line\n"
    "// fused:end\n"
    "b\n";

TEST(FusedBlocks, DroppedWithTheirMarkersForAProblemWithoutOptions) {
  EXPECT_EQ(select_fused_blocks(kText, false), "a\nb\n");
}

TEST(FusedBlocks, KeptWithoutTheirMarkersOtherwise) {
  EXPECT_EQ(select_fused_blocks(kText, true), "a\n  fused line\nb\n");
}

TEST(FusedBlocks, TextWithoutBlocksIsUnchanged) {
  const std::string plain = "x\n// fused: not a marker\ny";
  EXPECT_EQ(select_fused_blocks(plain, false), plain);
  EXPECT_EQ(select_fused_blocks(plain, true), plain);
}

TEST(FusedBlocks, UnbalancedMarkersAreATemplateDefect) {
  EXPECT_THROW(select_fused_blocks("// fused:begin\nx\n", false), std::logic_error);
  EXPECT_THROW(select_fused_blocks("x\n// fused:end\n", true), std::logic_error);
  EXPECT_THROW(select_fused_blocks("// fused:begin\n// fused:begin\n// fused:end\n", true), std::logic_error);
}

}  // namespace
