// NoiseSource: where every DP mechanism gets its randomness.
//
// Kinds (name() is recorded in run summaries):
//   seeded      xoshiro256** (engine/rng.hpp) seeded with derive_seed(root, Domain::kDpNoise, a,
//   b), and for the bulk normals of add_gaussian() ChaCha8Rand (privacy/chacha20.hpp) seeded
//               from the same seed (stream 2, "stream=2" in its name): reproducible, for
//               experiments. NOT for deployments: the seed reveals the noise.
//   os_entropy  ChaCha20 keyed from getrandom(2) with fast key erasure (privacy/chacha20.hpp),
//               for deployments; not reproducible.
//   zero        always returns zero noise: a test double (no privacy at all).
//   scripted    returns a given list of noise values in order, then throws: a test double.
// Samplers (ours, not std::*_distribution): uniform, Gaussian, Laplace, gamma, Dirichlet. With
// secure = true (seeded or os_entropy) gaussian(), laplace() and add_gaussian()
// draw exact discrete samples on a power-of-two grid (privacy/secure_sampling.hpp). That defeats
// Mironov's (2012) floating-point attack only when the value the noise is added to lies on the
// same grid: LaplaceMechanism and GaussianMechanism snap their input first and inflate the scale
// to cover the snapping (secure_release.hpp); a caller adding secure noise to arbitrary doubles
// (x + g k reveals the low bits of x) gets exact noise but not that protection.
// NOT secure against floating-point attacks in any mode: gamma() and dirichlet() (and so the
// Dirichlet mechanism) compute with floating point (Marsaglia-Tsang with Box-Muller normals).
// The default is secure = false for seeded sources (fast, bit-reproducible experiments) and
// secure = true for os_entropy.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/rng.hpp"

namespace dprl {
class StateIo;
}

namespace dprl::privacy {

class NoiseSource {
 public:
  virtual ~NoiseSource() = default;
  virtual std::string name() const = 0;
  // 64 uniform random bits.
  virtual std::uint64_t next_u64() = 0;
  // out[i] = next_u64() in order (the bulk path of the table sampler; no virtual call per word).
  virtual void fill_u64(std::span<std::uint64_t> out);
  // Noise samples; sigma, scale > 0.
  virtual double gaussian(double sigma);
  // Adds independent N(0, sigma^2) noise to every element: the bulk path for per-element noise
  // (DP-SGD, gradient perturbation). Same distribution and guarantee as gaussian(); the seeded
  // non-secure source overrides it with a ziggurat sampler (Doornik's ZIGNOR, 128 layers) on a
  // ChaCha8Rand stream of its own, box tests four at a time (about 1.5 ns a sample, against
  // 2.7 ns on xoshiro before stream 2), so its stream differs from repeated gaussian().
  virtual void add_gaussian(std::span<double> x, double sigma);
  virtual double laplace(double scale);
  // Uniform in [0, 1) (53 bits) and (0, 1).
  virtual double uniform();
  double uniform_open();
  // Gamma(shape, 1) (Marsaglia and Tsang 2000) and Dirichlet(alpha) via normalised gammas:
  // floating-point sampling even when secure() (see above).
  virtual double gamma(double shape);
  void dirichlet(std::span<const double> alpha, std::span<double> out);
  bool secure() const { return secure_; }
  // Saves or loads the stream's position (run checkpoints, engine/state_io.hpp) under its name(): a
  // seeded source its generator, so a resumed run draws what the uninterrupted one would; a source
  // nobody can regenerate (os-entropy) only its name, and goes on with fresh bits. A load refuses
  // (DataError) a checkpoint written by another source.
  virtual void sync_state(StateIo& io);

 protected:
  explicit NoiseSource(bool secure) : secure_(secure) {}
  double standard_normal();  // Box-Muller from uniform_open()
  bool secure_;
};

// Seeded from derive_seed(root, Domain::kDpNoise, a, b).
std::unique_ptr<NoiseSource> make_seeded_noise(std::uint64_t root, std::uint64_t a = 0,
                                               std::uint64_t b = 0, bool secure = false);
std::unique_ptr<NoiseSource> make_os_entropy_noise(bool secure = true);
std::unique_ptr<NoiseSource> make_zero_noise();
// Returns values[0], values[1], ... from gaussian()/laplace()/gamma()/uniform(); throws DataError
// when exhausted.
std::unique_ptr<NoiseSource> make_scripted_noise(std::vector<double> values);

class Chacha8Rand;
// The seeded source's bulk normals: x[j] += sigma z_j for standard normals z_j drawn from gen by
// the ziggurat of noise_source.cpp (stream 2: one word per first draw, the draws outside their
// layer's box finished in order on the words that follow). add_gaussian() of a seeded source
// that is not secure is this on its own ChaCha8Rand; benchmarks call it to count the words.
void add_seeded_normals(Chacha8Rand& gen, std::span<double> x, double sigma);

}  // namespace dprl::privacy
