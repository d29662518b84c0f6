// Random numbers and seed derivation.
//
// Generator: xoshiro256** 1.0 (Blackman and Vigna, 2018), state seeded by SplitMix64 (Steele,
// Lea and Flood, 2014). Both are tested against the authors' published outputs.
//
// Seeds are derived, never added: derive_seed(root, Domain::X, a, b) folds each word into a
// SplitMix64-style mix, so (root, domain, indices) tuples that differ anywhere give unrelated
// streams. Streams belong to units of work (env slot and episode, epoch and minibatch, DP step),
// never to threads.
//
// Samplers are our own (std::*_distribution differs between standard libraries):
//   uniform()   double in [0, 1) with 53 random bits
//   normal()    Box-Muller on two uniforms, no cached second value (stateless per call)
//   laplace(b)  inverse CDF
//   gamma(k)    Marsaglia and Tsang (2000), with the k < 1 boost U^(1/k)
//   categorical first index whose cumulative weight exceeds u * total
// These are the experiment-grade samplers. DP noise for deployments comes from privacy/'s
// NoiseSource, which adds a secure mode.
#pragma once

#include <cstdint>
#include <span>

namespace dprl {

// Who owns a stream; part of every derived seed.
enum class Domain : std::uint64_t {
  kEnvReset = 1,    // (slot, episode)
  kEnvStep = 2,     // (slot) noise inside an env's step
  kEval = 3,        // (eval round, episode)
  kAlgo = 4,        // (component, index)
  kInit = 5,        // network initialisation (network index)
  kMinibatch = 6,   // (epoch, batch)
  kDpNoise = 7,     // (step, tensor)
  kDataset = 8,     // dataset generation (trajectory)
  kSweep = 9,       // (run index)
  kBench = 10,      // benchmarks
  kMechanism = 11,  // mechanisms run from the CLI
  kUser = 1000,     // first value free for user code
};

// One step of SplitMix64: advances *state and returns the next output.
std::uint64_t splitmix64_next(std::uint64_t& state);

// The SplitMix64 finaliser alone (a bijective 64-bit mix).
std::uint64_t mix64(std::uint64_t x);

// A seed for (root, domain, a, b, c): an injective-in-practice hash of the tuple.
std::uint64_t derive_seed(std::uint64_t root, Domain domain, std::uint64_t a = 0,
                          std::uint64_t b = 0, std::uint64_t c = 0);

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) { seed_with(seed); }
  // Raw xoshiro256** state, for known-answer tests.
  static Rng from_state(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2, std::uint64_t s3);

  void seed_with(std::uint64_t seed);

  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  using result_type = std::uint64_t;
  std::uint64_t operator()() { return next_u64(); }
  static constexpr std::uint64_t min() { return 0; }
  static constexpr std::uint64_t max() { return ~std::uint64_t{0}; }

  // Uniform double in [0, 1).
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform double in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform double in (0, 1): never 0, for logs.
  double uniform_open() { return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53; }
  // Uniform integer in [0, n), unbiased (Lemire's multiply-and-reject). n > 0.
  std::uint64_t below(std::uint64_t n);
  // Standard normal.
  double normal();
  double normal(double mean, double stddev) { return mean + stddev * normal(); }
  // Laplace with location 0 and scale b.
  double laplace(double b);
  // Gamma with shape k > 0 and scale 1.
  double gamma(double k);
  // Index drawn with probability proportional to weights (non-negative, positive sum).
  std::size_t categorical(std::span<const double> weights);

  // The four state words (for checkpoints and state() of envs).
  void get_state(std::uint64_t out[4]) const;
  void set_state(const std::uint64_t in[4]);

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace dprl
