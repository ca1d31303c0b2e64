// templates/philox.cuh as host C++: Philox4x32-10 against Random123's known-answer vectors, the
// counter layout of the forward's dropout draws, and keep_bits (the mask the forward writes and
// applies) against the draws it is defined by.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#define NJ_HOST_DEVICE inline
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"  // its #pragma unroll is for NVRTC
#include "templates/philox.cuh"
#pragma GCC diagnostic pop

namespace {

struct Kat {
  unsigned counter[4];
  unsigned key[2];
  unsigned expected[4];
};

// Random123 1.14, examples/kat_vectors: "philox4x32 10 ...".
const Kat kKats[] = {
    {{0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u},
     {0x00000000u, 0x00000000u},
     {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
    {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
     {0xffffffffu, 0xffffffffu},
     {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
    {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
     {0xa4093822u, 0x299f31d0u},
     {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
};

// The draw of column col of a row, as philox.cuh defines it: word col mod 4 of the draws of
// group col / 4.
unsigned draw(uint64_t seed, uint64_t offset, uint64_t row, uint64_t col) {
  return nj::dropout_draws(seed, offset, row, col / 4).w[col % 4];
}

// drop_below for p, as runtime::forward_params computes it.
unsigned drop_below(double p) { return static_cast<unsigned>(p * 4294967296.0); }

template <int COUNT, bool ALIGNED4>
void expect_bits_match_draws(uint64_t seed, uint64_t offset, uint64_t row, int64_t col, unsigned below) {
  const unsigned bits = nj::keep_bits<COUNT, ALIGNED4>(seed, offset, row, col, below);
  for (int j = 0; j < COUNT; ++j)
    EXPECT_EQ((bits >> j) & 1u, draw(seed, offset, row, static_cast<uint64_t>(col + j)) >= below ? 1u : 0u)
        << "COUNT " << COUNT << " ALIGNED4 " << ALIGNED4 << " seed " << seed << " offset " << offset << " row "
        << row << " col " << col << " bit " << j;
  if (COUNT < 32) EXPECT_EQ(bits >> COUNT, 0u) << "bits past COUNT";
}

}  // namespace

TEST(Philox, MatchesRandom123KnownAnswers) {
  for (const Kat& k : kKats) {
    const nj::Philox4 out =
        nj::philox4x32_10(k.counter[0], k.counter[1], k.counter[2], k.counter[3], k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(out.w[i], k.expected[i]) << std::hex << "counter " << k.counter[0] << " word " << i;
  }
}

TEST(Philox, DropoutDrawsUseTheDocumentedCounterAndKey) {
  // counter = (col / 4, row mod 2^32, offset mod 2^32, offset / 2^32), key = (seed mod 2^32, seed / 2^32)
  const uint64_t seed = 0x0123456789abcdefull, offset = 0xfedcba9876543210ull;
  for (uint64_t row : {uint64_t{0}, uint64_t{1}, uint64_t{0xffffffff}})
    for (uint64_t q : {uint64_t{0}, uint64_t{7}, uint64_t{0x12345678}}) {
      const nj::Philox4 a = nj::dropout_draws(seed, offset, row, q);
      const nj::Philox4 b = nj::philox4x32_10(static_cast<unsigned>(q), static_cast<unsigned>(row), 0x76543210u,
                                              0xfedcba98u, 0x89abcdefu, 0x01234567u);
      for (int i = 0; i < 4; ++i) EXPECT_EQ(a.w[i], b.w[i]) << row << " " << q;
    }
  // Every index changes the draws.
  const nj::Philox4 base = nj::dropout_draws(1, 2, 3, 4);
  const nj::Philox4 others[] = {nj::dropout_draws(9, 2, 3, 4), nj::dropout_draws(1, 9, 3, 4),
                                nj::dropout_draws(1, 2, 9, 4), nj::dropout_draws(1, 2, 3, 9),
                                nj::dropout_draws(1ull << 32 | 1, 2, 3, 4), nj::dropout_draws(1, 1ull << 32 | 2, 3, 4)};
  for (const nj::Philox4& o : others) EXPECT_NE(o.w[0], base.w[0]);
}

TEST(Philox, KeepBitsAreTheDrawsAtOrAboveTheThreshold) {
  std::mt19937_64 rng(20261124);
  const unsigned thresholds[] = {0u, 1u, drop_below(0.1), drop_below(0.5), drop_below(0.9), 0xffffffffu};
  for (int trial = 0; trial < 200; ++trial) {
    const uint64_t seed = rng(), offset = rng() >> (trial % 2 ? 0 : 40), row = rng() % 100000;
    const unsigned below = thresholds[trial % std::size(thresholds)];
    const int64_t aligned = static_cast<int64_t>(rng() % 10000) * 4;
    const int64_t any = static_cast<int64_t>(rng() % 40000);
    // ALIGNED4: columns that start a group of four (slots of 4 and 8 elements).
    expect_bits_match_draws<4, true>(seed, offset, row, aligned, below);
    expect_bits_match_draws<8, true>(seed, offset, row, aligned, below);
    // Any column: slots of 1 and 2 elements, and a bit-packed mask's byte.
    expect_bits_match_draws<1, false>(seed, offset, row, any, below);
    expect_bits_match_draws<2, false>(seed, offset, row, any, below);
    expect_bits_match_draws<8, false>(seed, offset, row, any, below);
    expect_bits_match_draws<8, false>(seed, offset, row, any | 3, below);  // a group's last column first
  }
}

TEST(Philox, AlignedAndUnalignedKeepBitsAgreeAtAlignedColumns) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    const uint64_t seed = rng(), offset = rng(), row = rng() & 0xffffffff;
    const int64_t col = static_cast<int64_t>(rng() % 1000000) * 4;
    const unsigned below = static_cast<unsigned>(rng());
    EXPECT_EQ((nj::keep_bits<4, true>(seed, offset, row, col, below)),
              (nj::keep_bits<4, false>(seed, offset, row, col, below)));
    EXPECT_EQ((nj::keep_bits<8, true>(seed, offset, row, col, below)),
              (nj::keep_bits<8, false>(seed, offset, row, col, below)));
    EXPECT_EQ((nj::keep_bits<16, true>(seed, offset, row, col, below)),
              (nj::keep_bits<16, false>(seed, offset, row, col, below)));
  }
}

TEST(Philox, ThresholdZeroKeepsEverything) {
  for (uint64_t row = 0; row < 64; ++row)
    for (int64_t col = 0; col < 256; col += 8) {
      EXPECT_EQ((nj::keep_bits<8, true>(row * 31, row, row, col, 0u)), 0xffu);
      EXPECT_EQ((nj::keep_bits<8, false>(row * 31, row, row, col + 1, 0u)), 0xffu);
      EXPECT_EQ((nj::keep_bits<1, false>(row * 31, row, row, col + 3, 0u)), 1u);
    }
}

TEST(Philox, KeepsTheRightFractionAtP01) {
  // 1e6 draws (1000 rows of 1000 columns) at p = 0.1: 10% dropped, within ±0.002 (~7 σ).
  const unsigned below = drop_below(0.1);
  EXPECT_EQ(below, 429496729u);
  int64_t kept = 0, total = 0;
  for (uint64_t row = 0; row < 1000; ++row)
    for (int64_t col = 0; col < 1000; col += 8) {
      kept += __builtin_popcount(nj::keep_bits<8, true>(0x5eedull, 17, row, col, below));
      total += 8;
    }
  ASSERT_EQ(total, 1000000);
  const double dropped = 1.0 - static_cast<double>(kept) / static_cast<double>(total);
  EXPECT_NEAR(dropped, 0.1, 0.002) << "kept " << kept << " of " << total;
  // Each of the four words of a draw alike (no word is biased).
  for (int word = 0; word < 4; ++word) {
    int64_t dropped_here = 0;
    for (uint64_t q = 0; q < 250000; ++q) dropped_here += nj::dropout_draws(3, 0, q % 977, q).w[word] < below;
    EXPECT_NEAR(static_cast<double>(dropped_here) / 250000.0, 0.1, 0.004) << "word " << word;
  }
}
