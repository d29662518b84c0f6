#include "privacy/table_gaussian.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <deque>
#include <mutex>
#include <type_traits>

#include "engine/error.hpp"
#include "privacy/secure_sampling.hpp"
#include "privacy/snapped_values.hpp"

namespace dprl::privacy {

using u128 = unsigned __int128;
using f128 = __float128;

namespace {

constexpr double kTableTailSigmas = 12.0;  // tables cover [-ceil(12 sigma), ceil(12 sigma)]
constexpr double kMaxBaseSigma = 2700;     // 2 ceil(12 sigma) + 1 <= 2^16 slots
constexpr double kSmoothing = 2.6;         // sigma_a = 2.6 k at each convolution
constexpr int kThresholdBits = 110;        // thresholds are multiples of 2^-110
// Relative error bound of exp_neg() below in 113-bit arithmetic, with a margin of 16 (docs).
constexpr double kExpRelErr = 0x1p-104;

// e^-a for 0 < a <= 1 by its Taylor series in binary128 (+, *, / only, each correctly rounded):
// 60 terms leave a remainder below 1/60! < 2^-270.
f128 exp_neg(f128 a) {
  f128 term = 1, sum = 1;
  for (int n = 1; n <= 60; ++n) {
    term = term * a / n;
    sum = (n % 2) ? sum - term : sum + term;
  }
  return sum;
}

// T(key), shared: the last 8 made are kept, oldest evicted first (a holder keeps its own alive);
// thread-safe, one cache per T.
template <class T, class Key>
std::shared_ptr<const T> recently_made(Key key) {
  constexpr std::size_t kCached = 8;
  static std::mutex mu;
  static std::deque<std::pair<Key, std::shared_ptr<const T>>> cache;
  const std::lock_guard<std::mutex> lock(mu);
  for (const auto& [k, made] : cache)
    if (k == key) return made;
  auto made = std::make_shared<const T>(key);
  cache.emplace_back(key, made);
  if (cache.size() > kCached) cache.pop_front();
  return made;
}

// Statistical distance of A + k B from D_{Z, sigma} for exact A ~ D_{sigma_a}, B ~ D_{sigma_b}:
// 2 theta / (1 - 2 theta), theta = sum_{m >= 1} exp(-2 pi^2 sigma'^2 m^2) <= e1 / (1 - e1^3),
// e1 = exp(-2 pi^2 sigma'^2) (docs/privacy.md).
double convolution_tv(double sigma_prime) {
  const double e1 = std::exp(-2.0 * M_PI * M_PI * sigma_prime * sigma_prime);
  const double theta = e1 / (1.0 - e1 * e1 * e1);
  return 2.0 * theta / (1.0 - 2.0 * theta);
}

}  // namespace

GaussianAliasTable::GaussianAliasTable(double var) : variance(var) {
  DPRL_CHECK(var >= 1.0 && std::sqrt(var) <= kMaxBaseSigma);
  const double sigma = std::sqrt(var);
  bound = static_cast<std::int64_t>(std::ceil(kTableTailSigmas * sigma));
  const std::int64_t n = 2 * bound + 1;
  bits = 1;
  while ((std::int64_t{1} << bits) < n) ++bits;
  DPRL_CHECK(bits <= 16);
  const std::size_t slots = std::size_t{1} << bits;
  // rho(x) = exp(-x^2 / (2 var)) for x = 0..bound by rho(x + 1) = rho(x) r_x, r_x = q Q^x,
  // q = exp(-1 / (2 var)), Q = exp(-1 / var)
  const f128 v = var;  // exact
  const f128 q = exp_neg(f128(1) / (2 * v)), big_q = exp_neg(f128(1) / v);
  std::vector<f128> rho(static_cast<std::size_t>(bound) + 1);
  rho[0] = 1;
  f128 r = q;
  for (std::int64_t x = 0; x < bound; ++x) {
    rho[static_cast<std::size_t>(x) + 1] = rho[static_cast<std::size_t>(x)] * r;
    r = r * big_q;
  }
  f128 z = rho[0];
  for (std::int64_t x = 1; x <= bound; ++x) z += 2 * rho[static_cast<std::size_t>(x)];
  normaliser = static_cast<double>(z);
  // weights: floor(p(x) 2^(bits + 110)), the rounding difference moved to x = 0, so they sum
  // to exactly 2^(bits + 110) = slots * 2^110
  const int total_bits = bits + kThresholdBits;
  const u128 total = u128{1} << total_bits;
  const f128 scale = static_cast<f128>(total);
  weight.assign(static_cast<std::size_t>(n), 0);
  u128 sum = 0;
  for (std::int64_t x = -bound; x <= bound; ++x) {
    const f128 p = rho[static_cast<std::size_t>(x < 0 ? -x : x)] / z;
    const u128 w = static_cast<u128>(p * scale);
    weight[static_cast<std::size_t>(x + bound)] = w;
    sum += w;
  }
  // the sum is within a few units of 2^(bits + 110) either way (the p are rounded)
  u128& centre = weight[static_cast<std::size_t>(bound)];
  if (sum <= total) {
    centre += total - sum;
  } else {
    DPRL_CHECK(sum - total < centre);
    centre -= sum - total;
  }
  // the realised probabilities differ from rho / z by the floors and the deficit
  f128 quant = 0;
  for (std::int64_t x = -bound; x <= bound; ++x) {
    const f128 p = rho[static_cast<std::size_t>(x < 0 ? -x : x)] / z;
    const f128 d = static_cast<f128>(weight[static_cast<std::size_t>(x + bound)]) / scale - p;
    quant += d < 0 ? -d : d;
  }
  // Vose's alias method in exact integers: every slot holds 2^110; slot i keeps its own value
  // when U < threshold_i and gives its alias otherwise
  const u128 cap = u128{1} << kThresholdBits;
  std::vector<u128> w(slots, 0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) w[i] = weight[i];
  threshold.assign(slots, cap);
  std::vector<std::uint32_t> alias(slots);
  std::vector<std::uint32_t> small, large;
  for (std::size_t i = 0; i < slots; ++i) {
    alias[i] = static_cast<std::uint32_t>(i);
    (w[i] < cap ? small : large).push_back(static_cast<std::uint32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    const std::uint32_t s = small.back(), l = large.back();
    small.pop_back();
    threshold[s] = w[s];
    alias[s] = l;
    w[l] -= cap - w[s];
    if (w[l] < cap) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // what is left holds exactly 2^110 (the weights sum to slots * 2^110)
  for (std::uint32_t i : small) DPRL_CHECK(w[i] == cap);
  for (std::uint32_t i : large) DPRL_CHECK(w[i] == cap);
  hot.resize(slots);
  for (std::size_t i = 0; i < slots; ++i) {
    // a full slot keeps itself either way: top bits 0xffff, alias itself
    const std::uint32_t top =
        threshold[i] == cap ? 0xffffu
                            : static_cast<std::uint32_t>(threshold[i] >> (kThresholdBits - 16));
    if (threshold[i] == cap) alias[i] = static_cast<std::uint32_t>(i);
    hot[i] = (top << 16) | alias[i];
  }
  // the distance from D_{Z, sigma}: tail beyond the bound (Mills ratio, rho(Z) >= sigma:
  // 2 (sigma / T) e^(-T^2 / (2 sigma^2))), the quantisation above, and the 113-bit arithmetic:
  // rho(x) has relative error <= (x + 1)^2 kExpRelErr, z and p = rho / z twice that, plus
  // one rounding per term and per operation (docs/privacy.md)
  const double t = static_cast<double>(bound);
  tail_bound = 2.0 * (sigma / t) * std::exp(-t * t / (2.0 * var));
  const double arith = 4.0 * (t + 1) * (t + 1) * kExpRelErr + double(n + 8) * 0x1p-112;
  tv = tail_bound + 0.5 * static_cast<double>(quant) + arith;
}

namespace detail {

std::int64_t resolve_tie(const GaussianAliasTable& t, std::uint32_t slot, std::uint32_t u16,
                         std::uint64_t w1, std::uint64_t w2) {
  // U = u16 2^94 + w1 2^30 + (w2 >> 34): a uniform 110-bit integer whose top 16 bits are u16
  const u128 u = (u128{u16} << 94) | (u128{w1} << 30) | u128{w2 >> 34};
  if (u < t.threshold[slot]) return slot;
  return t.hot[slot] & 0xffffu;
}

}  // namespace detail

TableGaussian::TableGaussian(std::uint64_t s, std::int64_t first_coefficient) {
  if (s < 1 || s >= kMaxDiscreteGaussianSigma)
    throw ParamError(fmt::format("table gaussian: s = {} must be in [1, 2^28)", s));
  if (first_coefficient != 0 &&
      (first_coefficient < 2 || kSmoothing * double(first_coefficient) > kMaxBaseSigma ||
       kSmoothing * double(first_coefficient) >= double(s)))
    throw ParamError(fmt::format(
        "table gaussian: first coefficient k = {} must be 0 or >= 2 with 2.6 k <= {} and "
        "2.6 k < s = {}",
        first_coefficient, kMaxBaseSigma, s));
  // the remaining variance v, at coefficient k_total; each step peels A + k B off it
  long double v = static_cast<long double>(s) * static_cast<long double>(s);
  std::int64_t k_total = 1;
  long double realised = 0;
  for (;;) {
    const long double sigma = std::sqrt(v);
    const bool given_k = first_coefficient != 0 && k_total == 1;
    if (sigma <= kMaxBaseSigma && !given_k) {
      // round the variance up to a double
      double vd = static_cast<double>(v);
      if (static_cast<long double>(vd) < v) vd = std::nextafter(vd, HUGE_VAL);
      tables_.push_back(std::make_shared<const GaussianAliasTable>(std::max(vd, 1.0)));
      coef_.push_back(k_total);
      realised += static_cast<long double>(k_total) * k_total * tables_.back()->variance;
      tv_ += tables_.back()->tv;
      break;
    }
    // k: B's width about sigma / k just under the largest table, A's width 2.6 k within it
    const auto k =
        given_k
            ? first_coefficient
            : static_cast<std::int64_t>(std::min<long double>(
                  std::floor(kMaxBaseSigma / kSmoothing), std::ceil(sigma / (kMaxBaseSigma - 50))));
    const double va = kSmoothing * kSmoothing * double(k) * double(k);
    tables_.push_back(given_k ? alias_table(va) : std::make_shared<const GaussianAliasTable>(va));
    coef_.push_back(k_total);
    realised += static_cast<long double>(k_total) * k_total * va;
    tv_ += tables_.back()->tv;
    // B carries the rest, (v - va) / k^2, widened by 2^-40 so that no rounding can leave the
    // total below s^2 (checked at the end); sigma' = sigma_a sigma_b / sigma grows with sigma_b
    const long double vb = (v - va) / (static_cast<long double>(k) * k) * (1.0L + 0x1p-40L);
    const long double sp = std::sqrt(static_cast<long double>(va) * vb / v);
    tv_ += convolution_tv(static_cast<double>(sp));
    k_total *= k;
    v = vb;
  }
  sigma_ = static_cast<double>(std::sqrt(realised));
  DPRL_CHECK(realised >= static_cast<long double>(s) * static_cast<long double>(s));
  DPRL_CHECK(tv_ <= kTableTvPerValue);
  // release() multiplies in 32 bits and converts the sum exactly by the 2^52 + 2^51 trick: every
  // coefficient below 2^31 and every sum of level draws below 2^51 in magnitude (at most 1038^2
  // and 2^37 with three levels of at most 2^16 slots)
  long double reach = 0;
  for (std::size_t j = 0; j < tables_.size(); ++j) {
    DPRL_CHECK(coef_[j] >= 1 && coef_[j] < (std::int64_t{1} << 31));
    reach += static_cast<long double>(coef_[j]) *
             static_cast<long double>(std::int64_t{1} << tables_[j]->bits);
  }
  DPRL_CHECK(reach < 0x1p51L);
}

void TableGaussian::release(std::span<double> values, double grid, NoiseSource& noise) const {
  // blocks of kBlock values: their 32-bit draws fetched at once (level j of value i takes half
  // j m + i of the block's words, low half first), then each level's lookups over the whole
  // block, independent of each other; then that level's ties, each reading two more words
  constexpr std::size_t kBlock = 256;
  const std::size_t levels = tables_.size();
  alignas(32) std::uint64_t words[kBlock * 3 / 2 + 1];
  alignas(32) std::int64_t x[kBlock];
  DPRL_CHECK(levels <= 3);
  // the 32-bit half k of the block's words (little-endian: the low half first), read in place
  const auto* bytes = reinterpret_cast<const unsigned char*>(words);
  const auto half = [bytes](std::size_t k) {
    std::uint32_t h;
    std::memcpy(&h, bytes + 4 * k, sizeof h);
    return h;
  };
  for (std::size_t done = 0; done < values.size();) {
    const std::size_t m = std::min(kBlock, values.size() - done);
    const std::size_t nh = m * levels, nw = (nh + 1) / 2;
    noise.fill_u64({words, nw});
    for (std::size_t j = 0; j < levels; ++j) {
      const GaussianAliasTable& t = *tables_[j];
      const std::uint32_t mask = (std::uint32_t{1} << t.bits) - 1;
      const std::uint32_t* hot = t.hot.data();
      // |pick - bound| < 2^16 and coef < 2^31 (checked at construction): a 32 x 32 -> 64-bit
      // product, which vectorises (a 64-bit one has no AVX2 instruction)
      const auto coef = static_cast<std::int32_t>(coef_[j]);
      const auto bound = static_cast<std::int32_t>(t.bound);
      // branch-free over the block (a tie is only flagged), then the rare ties in order; the
      // first level sets x, the others add to it
      const std::size_t h = j * m;
      std::uint32_t ties = 0;
      const auto level = [&](auto first) {
        for (std::size_t i = 0; i < m; ++i) {
          const std::uint32_t c = half(h + i);
          const std::uint32_t slot = c & mask;
          const std::uint32_t e = hot[slot];
          const std::uint32_t u16 = c >> 16, t16 = e >> 16;
          const std::uint32_t pick = u16 < t16 ? slot : (e & 0xffffu);
          ties |= static_cast<std::uint32_t>(u16 == t16);
          const std::int64_t d =
              static_cast<std::int64_t>(coef) * (static_cast<std::int32_t>(pick) - bound);
          x[i] = first ? d : x[i] + d;
        }
      };
      if (j == 0)
        level(std::true_type{});
      else
        level(std::false_type{});
      if (ties != 0) [[unlikely]] {
        for (std::size_t i = 0; i < m; ++i) {
          const std::uint32_t c = half(h + i);
          const std::uint32_t slot = c & mask;
          const std::uint32_t e = hot[slot];
          const std::uint32_t u16 = c >> 16, t16 = e >> 16;
          if (u16 != t16) continue;
          std::uint64_t more[2];
          noise.fill_u64(more);
          const std::int64_t wrong = u16 < t16 ? slot : (e & 0xffffu);
          x[i] +=
              std::int64_t{coef} * (detail::resolve_tie(t, slot, u16, more[0], more[1]) - wrong);
        }
      }
    }
    // |x| < 2^51 (checked at construction)
    snap_and_add_steps(values.subspan(done, m), x, grid);
    done += m;
  }
}

std::shared_ptr<const GaussianAliasTable> alias_table(double variance) {
  return recently_made<GaussianAliasTable>(variance);
}

std::shared_ptr<const TableGaussian> table_gaussian(std::uint64_t s) {
  return recently_made<TableGaussian>(s);
}

}  // namespace dprl::privacy
