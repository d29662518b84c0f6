#include "engine/rng.hpp"

#include <cmath>
#include <numbers>

#include "engine/error.hpp"

namespace dprl {

std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t splitmix64_next(std::uint64_t& state) {
  state += 0x9e3779b97f4a7c15ULL;
  return mix64(state);
}

std::uint64_t derive_seed(std::uint64_t root, Domain domain, std::uint64_t a, std::uint64_t b,
                          std::uint64_t c) {
  // fold each word in with a distinct odd multiplier, mixing between words, so that
  // permutations and shifts of the tuple land on unrelated seeds
  std::uint64_t h = mix64(root ^ 0x6a09e667f3bcc909ULL);
  h = mix64(h ^ (static_cast<std::uint64_t>(domain) * 0x9e3779b97f4a7c15ULL));
  h = mix64(h ^ (a * 0xd1b54a32d192ed03ULL + 1));
  h = mix64(h ^ (b * 0xaef17502108ef2d9ULL + 2));
  h = mix64(h ^ (c * 0xf1357aea2e62a9c5ULL + 3));
  return h;
}

Rng Rng::from_state(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2, std::uint64_t s3) {
  Rng r;
  r.s_[0] = s0;
  r.s_[1] = s1;
  r.s_[2] = s2;
  r.s_[3] = s3;
  return r;
}

void Rng::seed_with(std::uint64_t seed) {
  std::uint64_t sm = seed;
  for (auto& w : s_) w = splitmix64_next(sm);
}

std::uint64_t Rng::below(std::uint64_t n) {
  DPRL_CHECK(n > 0);
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double Rng::normal() {
  // Box-Muller; u1 in (0, 1) so the log is finite
  const double u1 = uniform_open();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Rng::laplace(double b) {
  // inverse CDF on u in (-1/2, 1/2), never exactly -1/2
  const double u = uniform_open() - 0.5;
  const double mag = -b * std::log1p(-2.0 * std::fabs(u));
  return u < 0 ? -mag : mag;
}

double Rng::gamma(double k) {
  DPRL_CHECK(k > 0);
  if (k < 1.0) {
    // Gamma(k) = Gamma(k + 1) * U^(1/k)
    const double g = gamma(k + 1.0);
    return g * std::pow(uniform_open(), 1.0 / k);
  }
  const double d = k - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform_open();
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

std::size_t Rng::categorical(std::span<const double> weights) {
  DPRL_CHECK(!weights.empty());
  double total = 0;
  for (double w : weights) total += w;
  DPRL_CHECK(total > 0);
  const double u = uniform() * total;
  double acc = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    acc += weights[i];
    if (u < acc) return i;
  }
  // rounding put u at the very top: return the last positive weight
  for (std::size_t i = weights.size(); i-- > 0;)
    if (weights[i] > 0) return i;
  return weights.size() - 1;
}

void Rng::get_state(std::uint64_t out[4]) const {
  for (int i = 0; i < 4; ++i) out[i] = s_[i];
}
void Rng::set_state(const std::uint64_t in[4]) {
  for (int i = 0; i < 4; ++i) s_[i] = in[i];
}

}  // namespace dprl
