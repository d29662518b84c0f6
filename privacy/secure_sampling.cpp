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

std::uint64_t BitReader::bits(int k) {
  DPRL_CHECK(k >= 1 && k <= 64);
  // word_ holds left_ unused bits (the rest are zero); take them, then the low bits of a new word
  auto low = [](std::uint64_t w, int n) { return n == 64 ? w : w & ((std::uint64_t{1} << n) - 1); };
  auto drop = [](std::uint64_t w, int n) { return n == 64 ? 0 : w >> n; };
  if (k <= left_) {
    const std::uint64_t r = low(word_, k);
    word_ = drop(word_, k);
    left_ -= k;
    return r;
  }
  const int have = left_;
  std::uint64_t r = word_;
  word_ = words_();
  const int need = k - have;
  r |= low(word_, need) << have;
  word_ = drop(word_, need);
  left_ = 64 - need;
  return r;
}

std::uint64_t uniform_below(std::uint64_t n, BitReader& bits) {
  DPRL_CHECK(n >= 1);
  if (n == 1) return 0;
  const int k = 64 - __builtin_clzll(n - 1);  // bits of n - 1: each try succeeds w.p. > 1/2
  for (;;) {
    const std::uint64_t r = bits.bits(k);
    if (r < n) return r;
  }
}

bool bernoulli_ratio(u128 n, u128 d, BitReader& bits) {
  DPRL_CHECK(d >= 1 && n <= d);
  if (n == d) return true;
  // U < n / d, U uniform in [0, 1): compare binary digits until they differ; r / d is what is
  // left of n / d after the digits so far (next digit: 2r >= d, computed without overflow)
  u128 r = n;
  while (r != 0) {
    const bool p = r >= d - r;
    r = p ? r - (d - r) : r + r;
    if (bits.bit() != p) return p;  // the first difference decides: U < n/d iff n/d has the 1
  }
  return false;  // n / d's digits ended: U >= n / d
}

namespace {

// Bernoulli(exp(-n/d)) for 0 <= n <= d < 2^120: the CKS loop over K. d k stays below 2^128: k
// reaches 256 with probability 1/255! (checked, never expected).
bool bernoulli_exp_unit(u128 n, u128 d, BitReader& bits) {
  u128 k = 1;
  for (;;) {
    // A ~ Bernoulli(n / (d k)); stop at the first failure, return whether k is odd
    if (!bernoulli_ratio(n, d * k, bits)) break;
    ++k;
    DPRL_CHECK(k < 256);
  }
  return (k % 2) == 1;
}

}  // namespace

bool bernoulli_exp(u128 n, u128 d, BitReader& bits) {
  DPRL_CHECK(d >= 1 && d < (u128{1} << 120));
  // exp(-n/d) = exp(-1)^floor(n/d) * exp(-(n mod d)/d)
  const u128 whole = n / d;
  const u128 rem = n % d;
  for (u128 i = 0; i < whole; ++i) {
    if (!bernoulli_exp_unit(1, 1, bits)) return false;
  }
  return bernoulli_exp_unit(rem, d, bits);
}

bool bernoulli_exp(u128 n, u128 d, const BitSource& bits) {
  BitReader r(bits);
  return bernoulli_exp(n, d, r);
}

std::int64_t discrete_laplace(std::uint64_t t, BitReader& bits) {
  DPRL_CHECK(t >= 1);
  for (;;) {
    const std::uint64_t u = uniform_below(t, bits);
    if (!bernoulli_exp(u, t, bits)) continue;
    std::uint64_t v = 0;
    while (bernoulli_exp(1, 1, bits)) ++v;
    const std::uint64_t x = u + t * v;
    const bool negative = bits.bit();
    if (negative && x == 0) continue;
    return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}

std::int64_t discrete_laplace(std::uint64_t t, const BitSource& bits) {
  BitReader r(bits);
  return discrete_laplace(t, r);
}

std::int64_t discrete_gaussian(std::uint64_t s, BitReader& bits) {
  DPRL_CHECK(s >= 1 && s < kMaxDiscreteGaussianSigma);  // keeps 2 s^2 t^2 < 2^120
  const std::uint64_t t = s + 1;                        // floor(sigma) + 1 for integer sigma
  const u128 s2 = u128{s} * s;
  for (;;) {
    const std::int64_t y = discrete_laplace(t, bits);
    const u128 ay = static_cast<u128>(y < 0 ? -y : y);
    // gamma = (|y| - s^2/t)^2 / (2 s^2) = (|y| t - s^2)^2 / (2 s^2 t^2)
    const u128 a = ay * t;
    const u128 diff = a > s2 ? a - s2 : s2 - a;
    // diff >= 2^64 (|y| > 2^35 s for s >= 2^28, a probability below e^-(2^33)) would overflow
    // diff^2; gamma is then > 2^128 / 2^121 = 128 and acceptance has probability < e^-128
    if (diff >> 64) continue;
    const u128 num = diff * diff;
    const u128 den = 2 * s2 * t * t;
    if (bernoulli_exp(num, den, bits)) return y;
  }
}

std::int64_t discrete_gaussian(std::uint64_t s, const BitSource& bits) {
  BitReader r(bits);
  return discrete_gaussian(s, r);
}

double secure_grid(double scale) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    throw ParamError(fmt::format("secure noise: scale = {} must be finite and > 0", scale));
  }
  return std::ldexp(1.0, std::ilogb(scale) - 12);
}

double snap_to_grid(double value, double g) {
  // |value| >= 2^53 g: its ulp is >= g, so it is a multiple of g already (and value / g could
  // overflow)
  if (std::fabs(value) >= 0x1p53 * g) return value;
  return std::nearbyint(value / g) * g;
}

namespace {

void check_grid(double scale, double g, double max_ratio, const char* what) {
  if (!(g > 0.0) || std::ilogb(g) < -1022 || std::ldexp(1.0, std::ilogb(g)) != g) {
    throw ParamError(fmt::format("{}: grid = {} must be a normal power of two", what, g));
  }
  if (!(scale >= g && scale / g <= max_ratio) || !std::isfinite(scale)) {
    throw ParamError(
        fmt::format("{}: scale / grid = {} / {} must be in [1, {}]", what, scale, g, max_ratio));
  }
}

}  // namespace

double secure_laplace(double scale, double g, BitReader& bits) {
  check_grid(scale, g, kMaxSecureLaplaceRatio, "secure laplace");
  const auto t = static_cast<std::uint64_t>(std::ceil(scale / g));
  return g * static_cast<double>(discrete_laplace(t, bits));
}

std::uint64_t secure_gaussian_steps(double sigma, double g) {
  check_grid(sigma, g, kMaxSecureGaussianRatio, "secure gaussian");
  return static_cast<std::uint64_t>(std::ceil(sigma / g));
}

double secure_gaussian(double sigma, double g, BitReader& bits) {
  return g * static_cast<double>(discrete_gaussian(secure_gaussian_steps(sigma, g), bits));
}

double secure_laplace(double scale, double g, const BitSource& bits) {
  BitReader r(bits);
  return secure_laplace(scale, g, r);
}

double secure_gaussian(double sigma, double g, const BitSource& bits) {
  BitReader r(bits);
  return secure_gaussian(sigma, g, r);
}

double secure_laplace(double scale, const BitSource& bits) {
  return secure_laplace(scale, secure_grid(scale), bits);
}

double secure_gaussian(double sigma, const BitSource& bits) {
  return secure_gaussian(sigma, secure_grid(sigma), bits);
}

SecurePlan plan_secure_release(double scale, double sensitivity, std::size_t dim,
                               SensitivityNorm norm, double max_ratio) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    throw ParamError(fmt::format("secure release: scale = {} must be finite and > 0", scale));
  }
  if (!(sensitivity > 0.0) || !std::isfinite(sensitivity)) {
    throw ParamError(
        fmt::format("secure release: sensitivity = {} must be finite and > 0", sensitivity));
  }
  if (dim < 1) throw ParamError("secure release: dimension must be >= 1");
  // snapping moves each coordinate of both neighbours by <= g/2: the snapped difference grows by
  // at most c g, c = d (L1) or sqrt(d) (L2)
  const double c = norm == SensitivityNorm::kL1 ? double(dim) : std::sqrt(double(dim));
  // the grid that keeps both the inflation c g / Delta and the rounding g / scale <= 2^-12, made
  // coarser while the inflated scale is too many grid steps for the sampler
  double g = std::ldexp(1.0, std::ilogb(std::min(scale, sensitivity / c)) - 12);
  auto inflated = [&](double grid) { return scale * (1.0 + c * grid / sensitivity); };
  // scale / g grows by at most 2^13 per halving of min(...); c scale / Delta bounds it from below
  while (inflated(g) / g > max_ratio) {
    g *= 2.0;
    if (c * scale / sensitivity >= max_ratio || !std::isfinite(g)) {
      throw ParamError(fmt::format(
          "secure release: {} coordinates at scale {} (sensitivity {}) need more than {} grid "
          "steps per noise scale; the exact sampler cannot cover the snapping",
          dim, scale, sensitivity, max_ratio));
    }
  }
  if (std::ilogb(g) < -1022) {
    throw ParamError(fmt::format(
        "secure release: the grid {} for scale {} and sensitivity {} is below the normal range", g,
        scale, sensitivity));
  }
  return {g, inflated(g), 1.0 + c * g / sensitivity};
}

}  // namespace dprl::privacy
