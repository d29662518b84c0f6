#include "privacy/secure_sampling.hpp"

#include <fmt/format.h>

#include <cmath>

#include "engine/error.hpp"

namespace dprl::privacy {

using u128 = unsigned __int128;

std::uint64_t uniform_below(std::uint64_t n, const BitSource& bits) {
  DPRL_CHECK(n >= 1);
  const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
  for (;;) {
    const std::uint64_t r = bits();
    if (r >= threshold) return r % n;
  }
}

namespace {

// Bernoulli(n / d) for n <= d < 2^64.
bool bernoulli_ratio(std::uint64_t n, std::uint64_t d, const BitSource& bits) {
  return uniform_below(d, bits) < n;
}

// Bernoulli(exp(-n/d)) for 0 <= n <= d < 2^58: the CKS loop over K.
bool bernoulli_exp_unit(std::uint64_t n, std::uint64_t d, const BitSource& bits) {
  std::uint64_t k = 1;
  for (;;) {
    // A ~ Bernoulli(n / (d k)); stop at the first failure, return whether k is odd
    if (!bernoulli_ratio(n, d * k, bits)) break;
    ++k;
  }
  return (k % 2) == 1;
}

}  // namespace

bool bernoulli_exp(u128 n, u128 d, const BitSource& bits) {
  DPRL_CHECK(d >= 1);
  // exp(-n/d) = exp(-1)^floor(n/d) * exp(-(n mod d)/d); reduce d to 58 bits first
  u128 whole = n / d;
  u128 rem = n % d;
  // d k must fit in 64 bits for the loop over k (k stays below 2^5 with overwhelming probability)
  DPRL_CHECK(d < (u128{1} << 58));
  for (u128 i = 0; i < whole; ++i) {
    if (!bernoulli_exp_unit(1, 1, bits)) return false;
  }
  return bernoulli_exp_unit(static_cast<std::uint64_t>(rem), static_cast<std::uint64_t>(d), bits);
}

std::int64_t discrete_laplace(std::uint64_t t, const BitSource& bits) {
  DPRL_CHECK(t >= 1);
  for (;;) {
    const std::uint64_t u = uniform_below(t, bits);
    if (!bernoulli_exp(u, t, bits)) continue;
    std::uint64_t v = 0;
    while (bernoulli_exp(1, 1, bits)) ++v;
    const std::uint64_t x = u + t * v;
    const bool negative = (bits() & 1) != 0;
    if (negative && x == 0) continue;
    return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}

std::int64_t discrete_gaussian(std::uint64_t s, const BitSource& bits) {
  DPRL_CHECK(s >= 1 && s < (std::uint64_t{1} << 14));  // keeps 2 s^2 t^2 < 2^58
  const std::uint64_t t = s + 1;                       // floor(sigma) + 1 for integer sigma
  const u128 s2 = u128{s} * s;
  for (;;) {
    const std::int64_t y = discrete_laplace(t, bits);
    const u128 ay = static_cast<u128>(y < 0 ? -y : y);
    // gamma = (|y| - s^2/t)^2 / (2 s^2) = (|y| t - s^2)^2 / (2 s^2 t^2)
    const u128 a = ay * t;
    const u128 diff = a > s2 ? a - s2 : s2 - a;
    const u128 num = diff * diff;
    const u128 den = 2 * s2 * t * t;
    if (bernoulli_exp(num, den, bits)) return y;
  }
}

double secure_grid(double scale) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    throw ParamError(fmt::format("secure noise: scale = {} must be finite and > 0", scale));
  }
  return std::ldexp(1.0, std::ilogb(scale) - 12);
}

double snap_to_grid(double value, double g) { return std::nearbyint(value / g) * g; }

double secure_laplace(double scale, const BitSource& bits) {
  const double g = secure_grid(scale);
  const auto t = static_cast<std::uint64_t>(std::ceil(scale / g));
  return g * static_cast<double>(discrete_laplace(t, bits));
}

double secure_gaussian(double sigma, const BitSource& bits) {
  const double g = secure_grid(sigma);
  const auto s = static_cast<std::uint64_t>(std::ceil(sigma / g));
  return g * static_cast<double>(discrete_gaussian(s, bits));
}

}  // namespace dprl::privacy
