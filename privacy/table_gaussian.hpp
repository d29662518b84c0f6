// The table-based discrete Gaussian: the fast sampler behind every secure Gaussian release.
//
// Source: table (alias) samplers for a small-sigma discrete Gaussian combined by convolution, as
// in constant-time lattice samplers (Micciancio and Walter, "Gaussian sampling over the integers:
// efficient, generic, constant-time", CRYPTO 2017; Poeppelmann, Ducas and Gueneysu, "Enhanced
// lattice-based signatures on reconfigurable hardware", CHES 2014). The exact sampler of
// secure_sampling.hpp (Canonne, Kamath and Steinke 2020) stays the reference it is tested against.
//
// Construction (docs/privacy.md, "The table-based discrete Gaussian"): for an integer target s,
//   X = A_1 + k_1 (A_2 + k_2 (... + k_{m-1} A_m)),  A_j ~ alias table of D_{Z, sigma_j}
// with sigma_j = 2.6 k_j for j < m (so each convolution's residual width sigma' >= 2.59) and the
// last width chosen (rounded up) so that the total variance is >= s^2: X is within statistical
// distance tv_per_value() of D_{Z, sigma()} with sigma() >= s. Each table holds D_{Z, sigma_j}
// on [-ceil(12 sigma_j), ceil(12 sigma_j)] in at most 2^16 slots with 110-bit thresholds; a draw
// reads 32 random bits (slot index and the first 16 bits of the threshold comparison; the rare
// tie, probability 2^-16, reads two more 64-bit words and compares exactly). So a value costs
// m * 32 bits: one 64-bit word for s up to 2^21.4 (m = 2), 1.5 words up to 2^28 (m = 3).
//
// tv_per_value() bounds the statistical distance of one value from D_{Z, sigma()} (at most
// 4.1e-22 for every s, so below kTableTvPerValue = 1e-21, checked at construction): the tables'
// truncation, the quantisation of their thresholds, the error of the 113-bit arithmetic that
// computed them, and each convolution's distance (Poisson summation: at most 2 theta / (1 - 2
// theta), theta = sum_m exp(-2 pi^2 sigma'^2 m^2)). A release of d values is within d
// kTableTvPerValue of the exact release; secure_release.hpp returns that as SecurePlan::sampler_tv,
// and a record adds (1 + e^epsilon) times the sum over releases to delta.
//
// Parameters: s in [1, 2^28) (kMaxDiscreteGaussianSigma; ParamError otherwise).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "privacy/noise_source.hpp"

namespace dprl::privacy {

// A bound on tv_per_value() for every s in [1, 2^28) (docs/privacy.md).
inline constexpr double kTableTvPerValue = 1e-21;

// One alias table of D_{Z, sqrt(variance)} truncated to [-bound, bound] (public for tests).
struct GaussianAliasTable {
  double variance = 0;                       // of the untruncated discrete Gaussian
  std::int64_t bound = 0;                    // ceil(12 sigma)
  int bits = 0;                              // 2^bits >= 2 bound + 1 slots
  std::vector<std::uint32_t> hot;            // per slot: (top 16 threshold bits << 16) | alias slot
  std::vector<unsigned __int128> threshold;  // per slot: keep the slot when U < threshold / 2^110
  std::vector<unsigned __int128> weight;     // per value + bound: probability * 2^(bits + 110)
  double tv = 0;                             // statistical distance bound from D_{Z, sigma}
  // diagnostics: the 113-bit normalising constant sum_x exp(-x^2 / (2 variance)) over the table
  // and the tail mass bound beyond the bound
  double normaliser = 0;
  double tail_bound = 0;
  explicit GaussianAliasTable(double variance);
};

class TableGaussian {
 public:
  // first_coefficient = 0 picks k_1 as above (the smallest k_1 that fits B's width in a table).
  // A given k_1 >= 2 (with 2.6 k_1 <= 2700 and 2.6 k_1 < s; ParamError otherwise) makes B
  // narrower, about s / k_1, and takes A's table of width 2.6 k_1 from alias_table() below, shared
  // with every sampler of the same k_1; the distance bound is computed the same way.
  explicit TableGaussian(std::uint64_t s, std::int64_t first_coefficient = 0);
  double sigma() const { return sigma_; }  // realised sqrt(variance) >= s
  double tv_per_value() const { return tv_; }
  // tables, so 32-bit draws per value (ties aside)
  int levels() const { return static_cast<int>(tables_.size()); }
  const GaussianAliasTable& table(int j) const { return *tables_[static_cast<std::size_t>(j)]; }
  std::int64_t coefficient(int j) const { return coef_[static_cast<std::size_t>(j)]; }

  // One value from 64-bit words: see TableGaussianDraws below.
  template <class Words>
  std::int64_t sample(Words& w) const;
  // values[i] = snap(values[i], grid) + grid * X_i for every i, words from noise.fill_u64() in
  // blocks of 256 values (each block's draws first, then the words of its rare ties; the same
  // distribution as sample(), another order of the words).
  void release(std::span<double> values, double grid, NoiseSource& noise) const;

 private:
  std::vector<std::shared_ptr<const GaussianAliasTable>> tables_;
  std::vector<std::int64_t> coef_;  // K_j = k_1 ... k_{j-1}
  double sigma_ = 0;
  double tv_ = 0;
};

// The sampler for s, shared: the last 8 built are kept (thread-safe; about 10 ms to build).
std::shared_ptr<const TableGaussian> table_gaussian(std::uint64_t s);

// The alias table of D_{Z, sqrt(variance)}, shared: the last 8 built are kept (thread-safe).
std::shared_ptr<const GaussianAliasTable> alias_table(double variance);

// 32-bit halves of 64-bit words, low half first; word() takes whole words (tie resolution).
template <class Source>
struct HalfWords {
  Source& src;
  std::uint64_t held = 0;
  bool have = false;
  std::uint32_t half() {
    if (have) {
      have = false;
      return static_cast<std::uint32_t>(held >> 32);
    }
    held = src.next_u64();
    have = true;
    return static_cast<std::uint32_t>(held);
  }
  std::uint64_t word() { return src.next_u64(); }
};

namespace detail {
std::int64_t resolve_tie(const GaussianAliasTable& t, std::uint32_t slot, std::uint32_t u16,
                         std::uint64_t w1, std::uint64_t w2);
}

template <class Words>
std::int64_t TableGaussian::sample(Words& w) const {
  std::int64_t x = 0;
  for (std::size_t j = 0; j < tables_.size(); ++j) {
    const GaussianAliasTable& t = *tables_[j];
    const std::uint32_t c = w.half();
    const std::uint32_t i = c & ((std::uint32_t{1} << t.bits) - 1);
    const std::uint32_t e = t.hot[i];
    const std::uint32_t u16 = c >> 16, t16 = e >> 16;
    std::int64_t slot = u16 < t16 ? std::int64_t{i} : std::int64_t{e & 0xffffu};
    if (u16 == t16) [[unlikely]] {
      const std::uint64_t w1 = w.word();
      const std::uint64_t w2 = w.word();
      slot = detail::resolve_tie(t, i, u16, w1, w2);
    }
    x += coef_[j] * (slot - t.bound);
  }
  return x;
}

}  // namespace dprl::privacy
