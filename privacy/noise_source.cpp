#include "privacy/noise_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "engine/error.hpp"
#include "engine/state_io.hpp"
#include "privacy/chacha20.hpp"
#include "privacy/secure_sampling.hpp"

namespace dprl::privacy {

void NoiseSource::fill_u64(std::span<std::uint64_t> out) {
  for (std::uint64_t& w : out) w = next_u64();
}

double NoiseSource::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double NoiseSource::uniform_open() {
  return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53;
}

void NoiseSource::sync_state(StateIo& io) {
  io.section("noise_source");
  std::string n = name();
  io(n);
  if (io.loading() && n != name())
    throw DataError(fmt::format("checkpoint: its noise source is {}, this run's is {}", n, name()));
}

double NoiseSource::standard_normal() {
  const double u1 = uniform_open();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double NoiseSource::gaussian(double sigma) {
  if (secure_) return secure_gaussian(sigma, [this] { return next_u64(); });
  return sigma * standard_normal();
}

void NoiseSource::add_gaussian(std::span<double> x, double sigma) {
  for (double& v : x) v += gaussian(sigma);
}

// Standard normals by the ziggurat method (Marsaglia and Tsang 2000) with 256 layers (r and v are
// their constants for 256), in Doornik's (2005) ZIGNOR form: one 64-bit draw gives both the
// uniform (top 53 bits) and the layer (low 8 bits), and the base layer's tail is sampled exactly
// by Marsaglia's (1964) method. 98.5% of draws are accepted by one comparison (97.2% with 128
// layers, the choice before stream 2); the rest evaluate the density. Exact in
// distribution (up to floating point), like the polar and Box-Muller methods.
namespace {

struct Ziggurat {
  static constexpr int kLayers = 256;
  static constexpr std::uint64_t kMask = kLayers - 1;  // the layer's bits
  static constexpr double kR = 3.6541528853610088;     // start of the tail
  static constexpr double kV = 4.92867323399e-3;       // area of each layer
  double x[kLayers + 1];
  double ratio[kLayers];
  alignas(16) double x_ratio[2 * kLayers];  // (x[i], ratio[i]) pairs for the AVX2 path
  Ziggurat() {
    double f = std::exp(-0.5 * kR * kR);
    x[0] = kV / f;  // the base layer, tail included, as a box of equal area
    x[1] = kR;
    x[kLayers] = 0.0;
    for (int i = 2; i < kLayers; ++i) {
      x[i] = std::sqrt(-2.0 * std::log(kV / x[i - 1] + f));
      f = std::exp(-0.5 * x[i] * x[i]);
    }
    for (int i = 0; i < kLayers; ++i) {
      ratio[i] = x[i + 1] / x[i];
      x_ratio[2 * i] = x[i];
      x_ratio[2 * i + 1] = ratio[i];
    }
  }
};

const Ziggurat& ziggurat() {
  static const Ziggurat z;
  return z;
}

// e^a for |a| <= 1 with relative error below 2e-11: the Taylor polynomial of degree 7 of e^(a/8)
// (remainder (1/8)^8 / 8! e^(1/8) < 2e-12 relative; Estrin's scheme, rounding below 2e-15),
// raised to the 8th power by three squarings (relative error times 8, plus 3 roundings). The
// wedge test's value f1 + U (f0 - f1) lies in [f0, f1] within [0.47, 2.1] (a0 and a1 are within
// 0.74 of 0 with 128 layers, 0.73 with 256), so on these values it is within 1e-10 of its value on
// std::exp's (accurate to 1 ulp): a value 1e-9 or more away from 1 decides the test exactly as
// std::exp would. That saves two libm calls on 1.5% of draws; the rest (about one wedge in 10^8)
// calls std::exp.
inline double exp_near_zero(double a) {
  const double y = a * 0.125;
  const double y2 = y * y;
  const double y4 = y2 * y2;
  const double p01 = 1.0 + y, p23 = 0.5 + y * (1.0 / 6), p45 = 1.0 / 24 + y * (1.0 / 120),
               p67 = 1.0 / 720 + y * (1.0 / 5040);
  double p = (p01 + y2 * p23) + y4 * (p45 + y2 * p67);
  p *= p;
  p *= p;
  p *= p;
  return p;
}

// Uniform in [0, 1) and in (0, 1) from the top 53 bits of a word (as NoiseSource::uniform()).
inline double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }
inline double unit_open(std::uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;
}

// One normal whose first draw is bits (its box test included); further draws from rng.
template <class Draws>
double ziggurat_from(std::uint64_t bits, Draws& rng, const Ziggurat& z) {
  for (;; bits = rng.next_u64()) {
    const double u = 2.0 * (static_cast<double>(bits >> 11) * 0x1.0p-53) - 1.0;  // [-1, 1)
    const int i = static_cast<int>(bits & Ziggurat::kMask);
    if (std::fabs(u) < z.ratio[i]) return u * z.x[i];
    if (i == 0) {
      // the tail beyond R: x = R + E1 / R conditioned on 2 E2 > (E1 / R)^2
      double t, y;
      do {
        t = std::log(unit_open(rng.next_u64())) / Ziggurat::kR;
        y = std::log(unit_open(rng.next_u64()));
      } while (-2.0 * y < t * t);
      return u < 0 ? t - Ziggurat::kR : Ziggurat::kR - t;
    }
    // the wedge between layers i and i + 1: accept when f1 + U (f0 - f1) < 1 with
    // f0 = exp(a0) <= 1 <= f1 = exp(a1); decided on exp_near_zero() values unless they put the
    // test within 1e-9 of 1, then on std::exp exactly as always (see exp_near_zero())
    const double xx = u * z.x[i];
    const double a0 = -0.5 * (z.x[i] * z.x[i] - xx * xx);
    const double a1 = -0.5 * (z.x[i + 1] * z.x[i + 1] - xx * xx);
    const double uw = unit(rng.next_u64());
    if (std::fabs(a0) <= 1.0 && std::fabs(a1) <= 1.0) {
      const double g0 = exp_near_zero(a0), g1 = exp_near_zero(a1);
      const double t = g1 + uw * (g0 - g1);
      if (t < 1.0 - 1e-9) return xx;
      if (t > 1.0 + 1e-9) continue;
    }
    const double f0 = std::exp(a0);
    const double f1 = std::exp(a1);
    if (f1 + uw * (f0 - f1) < 1.0) return xx;
  }
}

#if defined(__AVX2__)
// The box test of four first draws at once: v[k] += sigma * (u_k x[i_k]) for the lanes inside
// their layer's box; returns the mask of those lanes (bit k for lane k; all four in about 94% of
// groups). The arithmetic is the scalar path's, exactly: u = 2 (k 2^-53) - 1 for the 53-bit
// k = bits >> 11 equals (1 + r 2^-52) - (2 - b), r the low 52 bits of k and b its top bit, and
// both are exact (multiples of 2^-52 in [-1, 1)); 1 + r 2^-52 is built from its bit pattern. The
// comparison and the products are the same IEEE operations (no FMA: -ffp-contract=off).
inline int ziggurat_box4(const std::uint64_t* bits, const Ziggurat& z, double sigma, double* v) {
  const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bits));
  // 1 + r 2^-52: k's top bit lands on the lowest exponent bit, which 1.0's exponent already sets
  const __m256d one_r = _mm256_castsi256_pd(
      _mm256_or_si256(_mm256_srli_epi64(w, 11), _mm256_set1_epi64x(0x3ff0000000000000LL)));
  // b = the top bit of bits (bit 63, the sign bit the blend reads): subtract 1 when set, else 2
  const __m256d sub =
      _mm256_blendv_pd(_mm256_set1_pd(2.0), _mm256_set1_pd(1.0), _mm256_castsi256_pd(w));
  const __m256d u = _mm256_sub_pd(one_r, sub);
  // (x[i], ratio[i]) of each lane by 16-byte loads (vgatherqpd is slow where the Gather Data
  // Sampling mitigation is on), transposed into an x vector and a ratio vector
  const double* t = z.x_ratio;
  const __m256d p02 =
      _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_load_pd(t + 2 * (bits[0] & Ziggurat::kMask))),
                           _mm_load_pd(t + 2 * (bits[2] & Ziggurat::kMask)), 1);
  const __m256d p13 =
      _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_load_pd(t + 2 * (bits[1] & Ziggurat::kMask))),
                           _mm_load_pd(t + 2 * (bits[3] & Ziggurat::kMask)), 1);
  const __m256d xi = _mm256_unpacklo_pd(p02, p13);
  const __m256d ratio = _mm256_unpackhi_pd(p02, p13);
  const __m256d abs_u = _mm256_andnot_pd(_mm256_set1_pd(-0.0), u);
  const __m256d inside = _mm256_cmp_pd(abs_u, ratio, _CMP_LT_OQ);
  const __m256d noise = _mm256_mul_pd(_mm256_set1_pd(sigma), _mm256_mul_pd(u, xi));
  const __m256d old = _mm256_loadu_pd(v);
  _mm256_storeu_pd(v, _mm256_blendv_pd(old, _mm256_add_pd(old, noise), inside));
  return _mm256_movemask_pd(inside);
}
#endif

}  // namespace

// The seeded source's bulk normals (stream 2). Element j of a call takes the next word of the
// ChaCha8Rand stream as its first draw, in order, up to the end of the generator's current
// iteration (124 words); the box test of those words runs four at a time. Then the elements whose
// first draw fell outside its box (about 1.5%), in order, finish on the words that follow in the
// stream (the wedge test's uniform, the tail's, or a fresh first draw), and the next elements take
// the words after those. The output is that of the one-element-at-a-time rule, bit for bit
// (tests/privacy/noise_fill_test.cpp), and depends only on the seed and the call lengths.
void add_seeded_normals(Chacha8Rand& gen, std::span<double> x, double sigma) {
  const Ziggurat& z = ziggurat();
  struct Outside {
    std::uint32_t at;
    std::uint64_t bits;
  };
  Outside outside[Chacha8Rand::kOutput];
  const std::size_t n = x.size();
  std::size_t done = 0;
  while (done < n) {
    const std::span<const std::uint64_t> words = gen.take(n - done);
    const std::size_t m = words.size();
    double* v = x.data() + done;
    std::size_t k = 0, n_out = 0;
#if defined(__AVX2__)
    for (; k + 4 <= m; k += 4) {
      const int inside = ziggurat_box4(words.data() + k, z, sigma, v + k);
      if (inside != 0xf) [[unlikely]]
        for (int l = 0; l < 4; ++l)
          if (!(inside >> l & 1))
            outside[n_out++] = {static_cast<std::uint32_t>(k + l), words[k + l]};
    }
#endif
    for (; k < m; ++k) {
      const std::uint64_t bits = words[k];
      const double u = 2.0 * (static_cast<double>(bits >> 11) * 0x1.0p-53) - 1.0;
      const int i = static_cast<int>(bits & Ziggurat::kMask);
      if (std::fabs(u) < z.ratio[i])
        v[k] += sigma * (u * z.x[i]);
      else
        outside[n_out++] = {static_cast<std::uint32_t>(k), bits};
    }
    // words now points into the generator's buffer, which these draws may refill: done with it
    for (std::size_t r = 0; r < n_out; ++r)
      v[outside[r].at] += sigma * ziggurat_from(outside[r].bits, gen, z);
    done += m;
  }
}

double NoiseSource::laplace(double scale) {
  if (secure_) return secure_laplace(scale, [this] { return next_u64(); });
  const double u = uniform_open() - 0.5;
  return -scale * std::copysign(1.0, u) * std::log1p(-2.0 * std::fabs(u));
}

double NoiseSource::gamma(double shape) {
  if (shape < 1.0) {
    const double g = gamma(shape + 1.0);
    return g * std::pow(uniform_open(), 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = standard_normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform_open();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

void NoiseSource::dirichlet(std::span<const double> alpha, std::span<double> out) {
  DPRL_CHECK(alpha.size() == out.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < alpha.size(); ++i) {
    out[i] = gamma(alpha[i]);
    sum += out[i];
  }
  if (!(sum > 0.0)) {
    // every gamma underflowed (all shapes tiny): the Dirichlet then sits on a vertex, vertex i
    // with probability alpha_i / sum(alpha)
    double total = 0.0;
    for (double a : alpha) total += a;
    double u = uniform() * total;
    std::size_t pick = alpha.size() - 1;
    for (std::size_t i = 0; i < alpha.size(); ++i) {
      if (u < alpha[i]) {
        pick = i;
        break;
      }
      u -= alpha[i];
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = i == pick ? 1.0 : 0.0;
    return;
  }
  for (double& x : out) x /= sum;
}

namespace {

// The bulk normals' ChaCha8Rand seed: four SplitMix64 words from the source's own derived seed
// mixed once more, so that it shares nothing with the xoshiro state seeded from that seed.
std::array<std::uint32_t, 8> bulk_seed(std::uint64_t seed) {
  std::uint64_t sm = derive_seed(seed, Domain::kDpNoise, 0x6275'6c6b);  // "bulk"
  std::array<std::uint32_t, 8> key;
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t w = splitmix64_next(sm);
    key[2 * i] = static_cast<std::uint32_t>(w);
    key[2 * i + 1] = static_cast<std::uint32_t>(w >> 32);
  }
  return key;
}

class SeededNoise final : public NoiseSource {
 public:
  SeededNoise(std::uint64_t root, std::uint64_t a, std::uint64_t b, bool secure)
      : SeededNoise(root, a, b, secure, derive_seed(root, Domain::kDpNoise, a, b)) {}
  // stream=2: the bulk normals come from ChaCha8Rand (before, from the xoshiro stream); the name
  // is recorded in run summaries and checkpoints, so a checkpoint of the earlier stream is refused
  std::string name() const override {
    return fmt::format("seeded(root={}, a={}, b={}{}, stream=2)", root_, a_, b_,
                       secure_ ? ", secure" : "");
  }
  std::uint64_t next_u64() override { return rng_.next_u64(); }
  void fill_u64(std::span<std::uint64_t> out) override {
    for (std::uint64_t& w : out) w = rng_.next_u64();
  }
  void sync_state(StateIo& io) override {
    NoiseSource::sync_state(io);
    io(rng_);
    std::array<std::uint32_t, 8> key = bulk_.key();
    std::uint32_t pos = bulk_.position();
    io(key);
    io(pos);
    if (io.loading()) bulk_.restore(key, pos);
  }
  void add_gaussian(std::span<double> x, double sigma) override {
    if (secure_) {
      NoiseSource::add_gaussian(x, sigma);
      return;
    }
    add_seeded_normals(bulk_, x, sigma);
  }

 private:
  SeededNoise(std::uint64_t root, std::uint64_t a, std::uint64_t b, bool secure, std::uint64_t seed)
      : NoiseSource(secure), root_(root), a_(a), b_(b), rng_(seed), bulk_(bulk_seed(seed)) {}
  std::uint64_t root_, a_, b_;
  Rng rng_;
  Chacha8Rand bulk_;
};

class OsEntropyNoise final : public NoiseSource {
 public:
  explicit OsEntropyNoise(bool secure) : NoiseSource(secure) {}
  std::string name() const override {
    return secure_ ? "os_entropy(secure, chacha20)" : "os_entropy(chacha20)";
  }
  std::uint64_t next_u64() override { return rng_.next_u64(); }
  void fill_u64(std::span<std::uint64_t> out) override { rng_.fill(out.data(), out.size()); }

 private:
  Chacha20Rng rng_;
};

class ZeroNoise final : public NoiseSource {
 public:
  ZeroNoise() : NoiseSource(false) {}
  std::string name() const override { return "zero"; }
  std::uint64_t next_u64() override { return 0; }
  double gaussian(double) override { return 0.0; }
  double laplace(double) override { return 0.0; }
};

class ScriptedNoise final : public NoiseSource {
 public:
  explicit ScriptedNoise(std::vector<double> v) : NoiseSource(false), values_(std::move(v)) {}
  std::string name() const override { return "scripted"; }
  // a scripted value u in [0, 1) becomes the 64-bit word floor(u 2^64)
  std::uint64_t next_u64() override {
    const double u = take();
    if (!(u >= 0.0 && u < 1.0)) throw DataError("scripted noise: next_u64 needs values in [0, 1)");
    return static_cast<std::uint64_t>(u * 0x1.0p64);
  }
  double gaussian(double) override { return take(); }
  double laplace(double) override { return take(); }
  double uniform() override { return take(); }
  double gamma(double) override { return take(); }

 private:
  double take() {
    if (pos_ >= values_.size()) {
      throw DataError(fmt::format("scripted noise source exhausted after {} values", pos_));
    }
    return values_[pos_++];
  }
  std::vector<double> values_;
  std::size_t pos_ = 0;
};

}  // namespace

std::unique_ptr<NoiseSource> make_seeded_noise(std::uint64_t root, std::uint64_t a, std::uint64_t b,
                                               bool secure) {
  return std::make_unique<SeededNoise>(root, a, b, secure);
}
std::unique_ptr<NoiseSource> make_os_entropy_noise(bool secure) {
  return std::make_unique<OsEntropyNoise>(secure);
}
std::unique_ptr<NoiseSource> make_zero_noise() { return std::make_unique<ZeroNoise>(); }
std::unique_ptr<NoiseSource> make_scripted_noise(std::vector<double> values) {
  return std::make_unique<ScriptedNoise>(std::move(values));
}

}  // namespace dprl::privacy
