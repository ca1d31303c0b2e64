// The dropout mask of the forward (docs/FORWARD.md): element (row, col) is kept when a
// counter-based random number of (seed, offset, row, col) is at least p·2^32. Philox4x32-10
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a keyed bijection of
// a 128-bit counter, so every element's draw depends on nothing but its indices. The mask is the
// same whatever the launch config, grid or kernel family, and a test can compute it on the host:
// this file is plain C++ there (tests/support/dropout_mask.cpp defines NJ_HOST_DEVICE first).
//
//   counter = (col / 4, row mod 2^32, offset mod 2^32, offset / 2^32),  key = (seed mod 2^32, seed / 2^32)
//   the draw of column col is word col mod 4 of philox(counter, key)
#ifndef NJ_HOST_DEVICE
#define NJ_HOST_DEVICE __device__ __forceinline__
#endif
namespace nj {

struct Philox4 {
  unsigned w[4];
};

NJ_HOST_DEVICE unsigned philox_mulhi(unsigned a, unsigned b) {
  return (unsigned)(((unsigned long long)a * b) >> 32);
}

NJ_HOST_DEVICE Philox4 philox4x32_10(unsigned c0, unsigned c1, unsigned c2, unsigned c3, unsigned k0, unsigned k1) {
  const unsigned kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const unsigned hi0 = philox_mulhi(kM0, c0), lo0 = kM0 * c0;
    const unsigned hi1 = philox_mulhi(kM1, c2), lo1 = kM1 * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  return Philox4{{c0, c1, c2, c3}};
}

// The draws of columns 4q .. 4q + 3 of a row.
NJ_HOST_DEVICE Philox4 dropout_draws(unsigned long long seed, unsigned long long offset, unsigned long long row,
                                     unsigned long long q) {
  return philox4x32_10((unsigned)q, (unsigned)row, (unsigned)offset, (unsigned)(offset >> 32), (unsigned)seed,
                       (unsigned)(seed >> 32));
}

// Whether an element of draw `draw` is kept, as a bit: its draw is >= drop_below (p·2^32, rounded
// down).
NJ_HOST_DEVICE unsigned kept_bit(unsigned draw, unsigned drop_below) { return draw >= drop_below ? 1u : 0u; }

// Bit j set when column col + j (j < COUNT) of the row is kept (kept_bit). ALIGNED4: col is a
// multiple of 4, so the draws of a group of four are taken together.
template <int COUNT, bool ALIGNED4>
NJ_HOST_DEVICE unsigned keep_bits(unsigned long long seed, unsigned long long offset, unsigned long long row,
                                  long long col, unsigned drop_below) {
  unsigned bits = 0;
  Philox4 draws{{0, 0, 0, 0}};
#pragma unroll
  for (int j = 0; j < COUNT; ++j) {
    const unsigned long long c = (unsigned long long)(col + j);
    if (ALIGNED4 ? j % 4 == 0 : (j == 0 || c % 4 == 0)) draws = dropout_draws(seed, offset, row, c / 4);
    bits |= kept_bit(draws.w[c % 4], drop_below) << j;
  }
  return bits;
}

}  // namespace nj
