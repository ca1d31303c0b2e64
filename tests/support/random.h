// Seeded random numbers for test inputs: fast (xoshiro256**), reproducible from one 64-bit
// seed, and splittable per row so inputs can be drawn from many threads with the same result.
#pragma once
#include <cstdint>

namespace normjit::test {

// A fresh seed from std::random_device, so every run draws new inputs; or the value of the
// environment variable NORMJIT_TEST_SEED when it is set, to replay a failure.
uint64_t fresh_seed();

class Rng {
 public:
  // The stream `stream` of `seed` (e.g. one per row): independent of every other stream.
  explicit Rng(uint64_t seed, uint64_t stream = 0);

  uint64_t next();
  double uniform();                         // [0, 1)
  double uniform(double lo, double hi);     // [lo, hi)
  double normal();                          // N(0, 1)
  int64_t below(int64_t bound);             // [0, bound)

 private:
  uint64_t s_[4];
  double spare_normal_ = 0;
  bool has_spare_ = false;
};

}  // namespace normjit::test
