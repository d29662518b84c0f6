#include "privacy/noise_source.hpp"

#include <fmt/format.h>
#include <sys/random.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "engine/error.hpp"
#include "privacy/secure_sampling.hpp"

namespace dprl::privacy {

double NoiseSource::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double NoiseSource::uniform_open() {
  return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53;
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

// Standard normals by the ziggurat method (Marsaglia and Tsang 2000) with 128 layers, in
// Doornik's (2005) ZIGNOR form: one 64-bit draw gives both the uniform (top 53 bits) and the layer
// (low 7 bits), and the base layer's tail is sampled exactly by Marsaglia's (1964) method. About
// 99% of draws are accepted by one comparison; the rest evaluate the density. Exact in
// distribution (up to floating point), like the polar and Box-Muller methods.
namespace {

struct Ziggurat {
  static constexpr int kLayers = 128;
  static constexpr double kR = 3.442619855899;       // start of the tail
  static constexpr double kV = 9.91256303526217e-3;  // area of each layer
  double x[kLayers + 1];
  double ratio[kLayers];
  Ziggurat() {
    double f = std::exp(-0.5 * kR * kR);
    x[0] = kV / f;  // the base layer, tail included, as a box of equal area
    x[1] = kR;
    x[kLayers] = 0.0;
    for (int i = 2; i < kLayers; ++i) {
      x[i] = std::sqrt(-2.0 * std::log(kV / x[i - 1] + f));
      f = std::exp(-0.5 * x[i] * x[i]);
    }
    for (int i = 0; i < kLayers; ++i) ratio[i] = x[i + 1] / x[i];
  }
};

const Ziggurat& ziggurat() {
  static const Ziggurat z;
  return z;
}

double ziggurat_normal(Rng& rng, const Ziggurat& z) {
  for (;;) {
    const std::uint64_t bits = rng.next_u64();
    const double u = 2.0 * (static_cast<double>(bits >> 11) * 0x1.0p-53) - 1.0;  // [-1, 1)
    const int i = static_cast<int>(bits & 0x7f);
    if (std::fabs(u) < z.ratio[i]) return u * z.x[i];
    if (i == 0) {
      // the tail beyond R: x = R + E1 / R conditioned on 2 E2 > (E1 / R)^2
      double t, y;
      do {
        t = std::log(rng.uniform_open()) / Ziggurat::kR;
        y = std::log(rng.uniform_open());
      } while (-2.0 * y < t * t);
      return u < 0 ? t - Ziggurat::kR : Ziggurat::kR - t;
    }
    // the wedge between layers i and i + 1
    const double xx = u * z.x[i];
    const double f0 = std::exp(-0.5 * (z.x[i] * z.x[i] - xx * xx));
    const double f1 = std::exp(-0.5 * (z.x[i + 1] * z.x[i + 1] - xx * xx));
    if (f1 + rng.uniform() * (f0 - f1) < 1.0) return xx;
  }
}

}  // namespace

static void add_gaussian_fast(Rng& rng, std::span<double> x, double sigma) {
  const Ziggurat& z = ziggurat();
  for (double& v : x) v += sigma * ziggurat_normal(rng, z);
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

bool NoiseSource::bernoulli(double p) { return uniform() < p; }

namespace {

class SeededNoise final : public NoiseSource {
 public:
  SeededNoise(std::uint64_t root, std::uint64_t a, std::uint64_t b, bool secure)
      : NoiseSource(secure),
        root_(root),
        a_(a),
        b_(b),
        rng_(derive_seed(root, Domain::kDpNoise, a, b)) {}
  std::string name() const override {
    return fmt::format("seeded(root={}, a={}, b={}{})", root_, a_, b_, secure_ ? ", secure" : "");
  }
  std::uint64_t next_u64() override { return rng_.next_u64(); }
  void add_gaussian(std::span<double> x, double sigma) override {
    if (secure_) {
      NoiseSource::add_gaussian(x, sigma);
      return;
    }
    add_gaussian_fast(rng_, x, sigma);
  }

 private:
  std::uint64_t root_, a_, b_;
  Rng rng_;
};

class OsEntropyNoise final : public NoiseSource {
 public:
  explicit OsEntropyNoise(bool secure) : NoiseSource(secure) {}
  std::string name() const override { return secure_ ? "os_entropy(secure)" : "os_entropy"; }
  std::uint64_t next_u64() override {
    if (pos_ == kBuf) refill();
    return buf_[pos_++];
  }

 private:
  static constexpr std::size_t kBuf = 64;
  void refill() {
    std::size_t got = 0;
    auto* bytes = reinterpret_cast<unsigned char*>(buf_);
    while (got < sizeof(buf_)) {
      const ssize_t n = getrandom(bytes + got, sizeof(buf_) - got, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw Error(fmt::format("getrandom failed: {}", std::strerror(errno)));
      }
      got += static_cast<std::size_t>(n);
    }
    pos_ = 0;
  }
  std::uint64_t buf_[kBuf];
  std::size_t pos_ = kBuf;
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
  bool bernoulli(double p) override { return take() < p; }

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
