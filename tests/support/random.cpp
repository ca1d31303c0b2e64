#include "support/random.h"

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

namespace normjit::test {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t fresh_seed() {
  if (const char* fixed = std::getenv("NORMJIT_TEST_SEED"); fixed && *fixed)
    return std::stoull(fixed, nullptr, 0);
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

Rng::Rng(uint64_t seed, uint64_t stream) {
  // Mix the stream into the seed through splitmix64 so neighbouring streams are unrelated.
  uint64_t state = seed;
  uint64_t mixed = splitmix64(state) ^ (stream * 0xD1B54A32D192ED03ull);
  for (uint64_t& word : s_) word = splitmix64(mixed);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

double Rng::normal() {
  // Box-Muller, both values used.
  if (has_spare_) {
    has_spare_ = false;
    return spare_normal_;
  }
  const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * M_PI * u2;
  spare_normal_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

int64_t Rng::below(int64_t bound) { return static_cast<int64_t>(uniform() * static_cast<double>(bound)); }

}  // namespace normjit::test
