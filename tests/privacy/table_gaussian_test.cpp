// The table-based discrete Gaussian (privacy/table_gaussian.hpp): its tables against closed forms,
// the alias construction exactly, and its distribution against the closed-form pmf and against
// the exact sampler of secure_sampling.hpp. Statistical tests: fixed seeds, n = 10^7, critical
// values at p = 1e-6.
#include "privacy/table_gaussian.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "engine/run_dir.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/secure_release.hpp"
#include "privacy/secure_sampling.hpp"
#include "privacy/user_dp_sgd.hpp"
#include "tests/test_util.hpp"

using namespace dprl::privacy;
using u128 = unsigned __int128;

namespace {

// Poisson summation: sum_x exp(-x^2 / (2 s^2)) = sqrt(2 pi) s (1 + 2 sum_m exp(-2 pi^2 s^2 m^2))
double normaliser_closed_form(double var) {
  const double s = std::sqrt(var);
  double series = 1.0;
  for (int m = 1; m <= 4; ++m) series += 2.0 * std::exp(-2.0 * M_PI * M_PI * var * m * m);
  return std::sqrt(2.0 * M_PI) * s * series;
}

using test_util::chi2_crit;

// KS at p = 1e-6: P(sqrt(n) D > c) <= 2 exp(-2 c^2) (Kolmogorov's limit; its first term bounds
// the series), c = sqrt(ln(2e6) / 2) = 2.6934; two samples of n each: D > c sqrt(2 / n).
constexpr double kKs = 2.6934;

// The draws of the table sampler, as a release makes them.
std::vector<std::int64_t> table_draws(const TableGaussian& g, std::uint64_t seed, std::size_t n) {
  auto noise = make_seeded_noise(seed, 0, 0, true);
  HalfWords<NoiseSource> w{*noise};
  std::vector<std::int64_t> y(n);
  for (auto& v : y) v = g.sample(w);
  return y;
}

// Fixed bins of width sigma / 20 over [-4 sigma, 4 sigma) and the two tails: 162 bins, each with
// expected count above 60 at n = 10^7.
struct Bins {
  double sigma;
  int index(std::int64_t y) const {
    const double t = std::floor(double(y) / (sigma / 20.0));
    if (t < -80) return 0;
    if (t >= 80) return 161;
    return static_cast<int>(t) + 81;
  }
  static constexpr int kCount = 162;
};

// Two samples of the same size from one distribution of width sigma: the two-sample chi-square on
// the bins above (df 161) and the two-sample KS, both at p = 1e-6. Sorts a and b.
void check_same_distribution(std::vector<std::int64_t>& a, std::vector<std::int64_t>& b,
                             double sigma) {
  REQUIRE(a.size() == b.size());
  const std::size_t n = a.size();
  const Bins bins{sigma};
  std::vector<double> ca(Bins::kCount, 0.0), cb(Bins::kCount, 0.0);
  for (auto v : a) ca[static_cast<std::size_t>(bins.index(v))] += 1.0;
  for (auto v : b) cb[static_cast<std::size_t>(bins.index(v))] += 1.0;
  double chi2 = 0.0;
  for (int i = 0; i < Bins::kCount; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (ca[k] + cb[k] > 0) chi2 += (ca[k] - cb[k]) * (ca[k] - cb[k]) / (ca[k] + cb[k]);
  }
  INFO("chi2 = " << chi2);
  CHECK(chi2 < chi2_crit(Bins::kCount - 1));
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  double d = 0.0;
  std::size_t i = 0, j = 0;
  while (i < n && j < n) {
    const std::int64_t v = std::min(a[i], b[j]);
    while (i < n && a[i] == v) ++i;
    while (j < n && b[j] == v) ++j;
    d = std::max(d, std::fabs(double(i) - double(j)) / double(n));
  }
  INFO("KS D = " << d);
  CHECK(d < kKs * std::sqrt(2.0 / double(n)));
}

// CDF of D_{Z, sigma} at integer k for sigma >= 100: Phi((k + 1/2) / sigma) up to
// O(exp(-2 pi^2 sigma^2)) (Poisson summation), far below what 10^7 draws can see.
double dg_cdf(double k, double sigma) { return 0.5 * std::erfc(-(k + 0.5) / (sigma * M_SQRT2)); }

// 10^7 draws of g against the pmf of D_{Z, g.sigma()}: chi-square over 162 bins and KS at the
// integers, both at p = 1e-6
void check_matches_pmf(const TableGaussian& g, std::uint64_t seed, const char* what) {
  const std::size_t n = 10000000;
  auto y = table_draws(g, seed, n);
  const double sigma = g.sigma();
  // chi-square against the bin probabilities of D_{Z, sigma} (df 161)
  const Bins bins{sigma};
  std::vector<double> count(Bins::kCount, 0.0), p(Bins::kCount, 0.0);
  for (auto v : y) count[static_cast<std::size_t>(bins.index(v))] += 1.0;
  // bin b holds the integers y with floor(y / w) = b - 81: [lo, hi) in y
  for (int b = 0; b < Bins::kCount; ++b) {
    const double w = sigma / 20.0;
    const double lo = b == 0 ? -INFINITY : std::ceil((b - 81) * w);
    const double hi = b == Bins::kCount - 1 ? INFINITY : std::ceil((b - 80) * w);
    p[static_cast<std::size_t>(b)] = (std::isinf(hi) ? 1.0 : dg_cdf(hi - 1, sigma)) -
                                     (std::isinf(lo) ? 0.0 : dg_cdf(lo - 1, sigma));
  }
  double chi2 = 0.0;
  for (int b = 0; b < Bins::kCount; ++b) {
    const double e = double(n) * p[static_cast<std::size_t>(b)];
    chi2 += (count[static_cast<std::size_t>(b)] - e) * (count[static_cast<std::size_t>(b)] - e) / e;
  }
  INFO(what << ": sigma = " << sigma << ", chi2 = " << chi2);
  CHECK(chi2 < chi2_crit(Bins::kCount - 1));
  // KS against the CDF at the integers
  std::sort(y.begin(), y.end());
  double d = 0.0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && y[j] == y[i]) ++j;
    const double f = dg_cdf(double(y[i]), sigma), f_below = dg_cdf(double(y[i]) - 1, sigma);
    d = std::max({d, std::fabs(double(j) / n - f), std::fabs(double(i) / n - f_below)});
    i = j;
  }
  INFO(what << ": KS D = " << d);
  CHECK(d < kKs / std::sqrt(double(n)));
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("table normalising constants match the Poisson-summation closed form") {
    for (double var : {1.0, 2.25, 9.0, 27.04, 1e4, 2700.0 * 2700.0}) {
      const GaussianAliasTable t(var);
      // the table sums 113-bit values (relative error far below 1e-20) and rounds to a double
      CHECK(std::fabs(t.normaliser / normaliser_closed_form(var) - 1.0) < 1e-14);
      CHECK(t.tail_bound < 0x1p-100);
      CHECK(t.bound == static_cast<std::int64_t>(std::ceil(12.0 * std::sqrt(var))));
    }
  }

  TEST_CASE("table weights: sum 2^(bits + 110) exactly, symmetric, ratios exp(-x^2 / 2 sigma^2)") {
    for (double var : {2.25, 1e4, 2700.0 * 2700.0}) {
      const GaussianAliasTable t(var);
      const int total_bits = t.bits + 110;
      u128 sum = 0;
      for (u128 w : t.weight) sum += w;
      CHECK(sum == (u128{1} << total_bits));
      const auto b = static_cast<std::size_t>(t.bound);
      for (std::size_t x = 1; x <= b; ++x) CHECK(t.weight[b + x] == t.weight[b - x]);
      // p(0) = 1 / Z (the rounding difference, a few units of 2^-(bits + 110), moved there)
      const double p0 = std::ldexp(static_cast<double>(t.weight[b]), -total_bits);
      CHECK(std::fabs(p0 * normaliser_closed_form(var) - 1.0) < 1e-14);
      for (std::size_t x : {std::size_t{1}, b / 3, b / 2}) {
        const double ratio =
            static_cast<double>(t.weight[b + x]) / static_cast<double>(t.weight[b]);
        const double want = std::exp(-double(x) * double(x) / (2.0 * var));
        CHECK(std::fabs(ratio / want - 1.0) < 1e-13);
      }
    }
  }

  TEST_CASE("the alias slots realise the weights exactly") {
    // value j is drawn with probability sum_i [i = j] thr_i + [alias_i = j] (2^110 - thr_i) over
    // 2^(bits + 110): in integers, that sum must be the weight of j
    for (double var : {1.0, 2.25, 1e4, 2700.0 * 2700.0}) {
      const GaussianAliasTable t(var);
      const u128 cap = u128{1} << 110;
      std::vector<u128> got(t.weight.size(), 0);
      for (std::size_t i = 0; i < t.hot.size(); ++i) {
        const std::size_t alias = t.hot[i] & 0xffffu;
        if (t.threshold[i] > 0) {
          REQUIRE(i < got.size());
          got[i] += t.threshold[i];
        }
        if (t.threshold[i] < cap) {
          REQUIRE(alias < got.size());
          got[alias] += cap - t.threshold[i];
        }
        // the hot word's top bits are the threshold's (0xffff for a full slot)
        const std::uint32_t top =
            t.threshold[i] == cap ? 0xffffu : static_cast<std::uint32_t>(t.threshold[i] >> 94);
        CHECK((t.hot[i] >> 16) == top);
      }
      CHECK(got == t.weight);
    }
  }

  TEST_CASE("a tie in the first 16 bits is resolved on all 110 bits") {
    const GaussianAliasTable t(1e4);
    const u128 cap = u128{1} << 110;
    int checked = 0;
    for (std::uint32_t i = 0; i < t.hot.size() && checked < 50; ++i) {
      if (t.threshold[i] == 0 || t.threshold[i] == cap) continue;
      const auto u16 = static_cast<std::uint32_t>(t.threshold[i] >> 94);
      const std::int64_t alias = t.hot[i] & 0xffffu;
      // U = top bits then all ones: above the threshold, the alias
      CHECK(detail::resolve_tie(t, i, u16, ~0ull, ~0ull) == alias);
      // U = top bits then zeros: below unless the threshold's low 94 bits are all 0
      const bool low = (t.threshold[i] & ((u128{1} << 94) - 1)) != 0;
      CHECK(detail::resolve_tie(t, i, u16, 0, 0) == (low ? std::int64_t{i} : alias));
      ++checked;
    }
    CHECK(checked == 50);
  }

  TEST_CASE("table sampler: width >= s, distance within the stated bound, levels") {
    for (std::uint64_t s : {1ull, 2ull, 2699ull, 2700ull, 2701ull, 5000ull, 1ull << 21, 3000000ull,
                            1ull << 24, (1ull << 28) - 1}) {
      const TableGaussian g(s);
      CHECK(g.sigma() >= double(s));
      CHECK(g.sigma() / double(s) - 1.0 < 1e-9);
      CHECK(g.tv_per_value() > 0.0);
      CHECK(g.tv_per_value() <= kTableTvPerValue);
      CHECK(g.levels() == (s <= 2700 ? 1 : s <= 2800000 ? 2 : 3));
    }
    CHECK_THROWS_AS(TableGaussian(0), dprl::ParamError);
    CHECK_THROWS_AS(TableGaussian(1ull << 28), dprl::ParamError);
  }

  TEST_CASE("secure Gaussian releases: the table sampler from 4096 values, its distance planned") {
    auto noise = make_seeded_noise(3, 0, 0, true);
    const double sd = 1.0, sens = 1.0;
    const SecurePlan big = gaussian_release_plan(sd, sens, 69136, true);
    CHECK(big.sampler_tv == doctest::Approx(69136 * kTableTvPerValue));
    CHECK(gaussian_release_plan(sd, sens, 4095, true).sampler_tv == 0.0);
    CHECK(gaussian_release_plan(sd, sens, 69136, false).sampler_tv == 0.0);
    CHECK(gaussian_release_tv(4096, true) == doctest::Approx(4096 * kTableTvPerValue));
    CHECK(sampler_delta(1.0, 0.0) == 0.0);
    CHECK(sampler_delta(2.0, 1e-15) == doctest::Approx((1.0 + std::exp(2.0)) * 1e-15));
    // a vacuous bound is recorded as 1, never as an infinity (JSON would write null)
    CHECK(sampler_delta(800.0, 1e-20) == 1.0);
    CHECK(sampler_delta(600.0, 1e-20) == 1.0);
    // the released values are grid points, and the noise has the planned width
    std::vector<double> x(69136, 0.3);
    add_gaussian_release(x, big.scale, big.grid, *noise);
    double s2 = 0.0;
    for (double v : x) {
      CHECK(std::fmod(v, big.grid) == 0.0);
      s2 += (v - 0.3) * (v - 0.3);
    }
    // sd estimate from 69136 values: relative standard error 1 / sqrt(2 n) = 0.0027; 5 of them
    CHECK(std::sqrt(s2 / double(x.size())) == doctest::Approx(big.scale).epsilon(0.014));
  }
}

TEST_SUITE("unit") {
  TEST_CASE("a DP-SGD record adds sampler_delta = (1 + e^epsilon) steps sampler_tv to delta") {
    UserDpReportInput in;
    in.cfg.expected_batch = 8;
    in.cfg.num_users = 100;
    in.steps = 1000;
    in.epsilon = 2.0;
    in.delta = 1e-5;
    in.accountant = "rdp";
    in.unit = "user";
    in.noise_source = "os_entropy(secure, chacha20)";
    in.sampler_tv = gaussian_release_tv(69136, true);
    auto r = user_dp_report(in);
    const double want = (1.0 + std::exp(2.0)) * 1000 * 69136 * kTableTvPerValue;
    CHECK(r.sampler_delta == doctest::Approx(want));
    CHECK(r.delta == doctest::Approx(1e-5 + want).epsilon(1e-15));
    CHECK(r.delta > 1e-5);
    CHECK(dprl::privacy_json(r).find("\"sampler_delta\"") != std::string::npos);
    // seeded noise (no table sampler): nothing added, nothing written
    in.sampler_tv = 0;
    in.seeded = true;
    r = user_dp_report(in);
    CHECK(r.delta == 1e-5);
    CHECK(dprl::privacy_json(r).find("sampler_delta") == std::string::npos);
    // a vacuous sampler_delta (epsilon past e^epsilon's range) makes the record's delta 1, not more
    in.seeded = false;
    in.epsilon = 800.0;
    in.sampler_tv = gaussian_release_tv(69136, true);
    r = user_dp_report(in);
    CHECK(r.sampler_delta == 1.0);
    CHECK(r.delta == 1.0);
    CHECK(record_delta(1e-6, 2e-7) == doctest::Approx(1.2e-6));
  }
}

TEST_SUITE("unit") {
  TEST_CASE("the table release equals its draw order written one value at a time, bit for bit") {
    // blocks of 256 values; a block's words are drawn first, level j of value i reads 32-bit half
    // j m + i (the low half of a word first); each level's ties then read two more words each, in
    // value order; the value is snap(v) + g sum_j K_j (pick_j - bound_j). 200,000 values at three
    // widths (one, two and three levels) meet a few dozen ties.
    for (const std::uint64_t s :
         {std::uint64_t{900}, std::uint64_t{1} << 21, std::uint64_t{1} << 27}) {
      CAPTURE(s);
      const auto tg = table_gaussian(s);
      const double g = 0x1p-12;
      const std::size_t n = 200000;
      std::vector<double> v(n), ref(n);
      for (std::size_t i = 0; i < n; ++i)
        v[i] = ref[i] = std::sin(0.37 * static_cast<double>(i)) * 1000.0;
      auto a = make_seeded_noise(17, 2, 3, true), b = make_seeded_noise(17, 2, 3, true);
      tg->release(v, g, *a);
      const int levels = tg->levels();
      std::size_t ties = 0;
      for (std::size_t done = 0; done < n;) {
        const std::size_t m = std::min<std::size_t>(256, n - done);
        const std::size_t nh = m * static_cast<std::size_t>(levels);
        std::vector<std::uint64_t> w((nh + 1) / 2);
        for (auto& x : w) x = b->next_u64();
        std::vector<std::int64_t> sum(m, 0);
        for (int j = 0; j < levels; ++j) {
          const GaussianAliasTable& t = tg->table(j);
          const std::uint32_t mask = (std::uint32_t{1} << t.bits) - 1;
          std::vector<std::size_t> tied;
          for (std::size_t i = 0; i < m; ++i) {
            const std::size_t k = static_cast<std::size_t>(j) * m + i;
            const auto c = static_cast<std::uint32_t>(k % 2 ? w[k / 2] >> 32 : w[k / 2]);
            const std::uint32_t slot = c & mask, e = t.hot[slot];
            const std::uint32_t u16 = c >> 16, t16 = e >> 16;
            const std::int64_t pick = u16 < t16 ? slot : (e & 0xffffu);
            sum[i] += tg->coefficient(j) * (pick - t.bound);
            if (u16 == t16) tied.push_back(i);
          }
          for (std::size_t i : tied) {
            const std::size_t k = static_cast<std::size_t>(j) * m + i;
            const auto c = static_cast<std::uint32_t>(k % 2 ? w[k / 2] >> 32 : w[k / 2]);
            const std::uint32_t slot = c & mask, e = t.hot[slot];
            const std::uint64_t m0 = b->next_u64(), m1 = b->next_u64();
            const std::int64_t wrong = (c >> 16) < (e >> 16) ? slot : (e & 0xffffu);
            sum[i] += tg->coefficient(j) * (detail::resolve_tie(t, slot, c >> 16, m0, m1) - wrong);
            ++ties;
          }
        }
        for (std::size_t i = 0; i < m; ++i)
          ref[done + i] = snap_to_grid(ref[done + i], g) + g * static_cast<double>(sum[i]);
        done += m;
      }
      for (std::size_t i = 0; i < n; ++i) REQUIRE(v[i] == ref[i]);
      CHECK(a->next_u64() == b->next_u64());  // the same words drawn
      MESSAGE(levels, " levels, ", ties, " ties");
    }
  }

  TEST_CASE("fill_u64 draws the words next_u64 would, in order") {
    auto a = make_seeded_noise(5, 1, 2, true), b = make_seeded_noise(5, 1, 2, true);
    std::vector<std::uint64_t> w(1000);
    a->fill_u64(w);
    for (std::uint64_t v : w) CHECK(v == b->next_u64());
    // the OS-entropy source across its 124-word refills: no word repeated
    auto os = make_os_entropy_noise(true);
    std::vector<std::uint64_t> x(1000);
    os->fill_u64({x.data(), 3});
    os->fill_u64({x.data() + 3, 997});
    std::sort(x.begin(), x.end());
    CHECK(std::adjacent_find(x.begin(), x.end()) == x.end());
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("table sampler matches the discrete Gaussian pmf at 10^7 draws (chi-square - KS)") {
    for (std::uint64_t s : {100ull, 5000ull, 1ull << 21, 3000000ull})
      check_matches_pmf(*table_gaussian(s), 11 + s, "automatic k");
    // a given first coefficient (VaryingGaussianRelease's): a narrow second table
    for (auto [s, k] : {std::pair{300ull, 8ll}, {20000ull, 512ll}, {40000ull, 1024ll}})
      check_matches_pmf(TableGaussian(s, k), 17 + s, "given k");
  }
}

TEST_SUITE("slow") {
  TEST_CASE("table sampler against the exact sampler at s = 2^21, 10^7 draws each (statistical)") {
    const std::uint64_t s = 1ull << 21;
    const std::size_t n = 10000000;
    auto a = table_draws(*table_gaussian(s), 21, n);
    auto noise = make_seeded_noise(22, 0, 0, true);
    BitSource words = [&] { return noise->next_u64(); };
    BitReader bits(words);
    std::vector<std::int64_t> b(n);
    for (auto& v : b) v = discrete_gaussian(s, bits);
    // two-sample chi-square on the bins above: sum (a - b)^2 / (a + b), df 161
    check_same_distribution(a, b, double(s));
  }
}

TEST_SUITE("unit") {
  TEST_CASE("repeated releases: on the grid, refusals, and a non-secure source's own noise") {
    const SecurePlan plan = gaussian_release_plan(2.0, 1.0, 20, true);
    const RepeatedGaussianRelease rel(plan.scale, plan.grid);
    auto noise = make_seeded_noise(5, 0, 0, true);
    std::vector<double> x(20, 0.3);
    rel(x, *noise);
    for (double v : x) CHECK(std::fmod(v, plan.grid) == 0.0);
    // the same seeded source and inputs give the same release
    auto again = make_seeded_noise(5, 0, 0, true);
    std::vector<double> y(20, 0.3);
    rel(y, *again);
    CHECK(x == y);
    // a value that is not finite is refused before any noise is drawn
    std::vector<double> bad{1.0, std::nan("")};
    CHECK_THROWS_AS(rel(bad, *noise), dprl::ParamError);
    CHECK_THROWS_AS(RepeatedGaussianRelease(0.0, plan.grid), dprl::ParamError);
    CHECK_THROWS_AS(RepeatedGaussianRelease(1.0, -1.0), dprl::ParamError);
    CHECK_THROWS_AS(RepeatedGaussianRelease(INFINITY, 0.0), dprl::ParamError);
    // grid 0 (a seeded, non-secure source): exactly add_gaussian_release
    auto a = make_seeded_noise(6), b = make_seeded_noise(6);
    std::vector<double> u(20, 0.3), w(20, 0.3);
    RepeatedGaussianRelease(2.0, 0.0)(u, *a);
    add_gaussian_release(w, 2.0, 0.0, *b);
    CHECK(u == w);
    // the distance a record counts: every value, whatever the length, when secure
    CHECK(repeated_release_tv(20, true) == doctest::Approx(20 * kTableTvPerValue));
    CHECK(repeated_release_tv(20, false) == 0.0);
  }

  TEST_CASE("varying-width releases: the ladder rounds up by at most 2^-7, few samplers a run") {
    // the ladder: s' >= s, s' < s (1 + 2^-7) + 1, a fixed point, 128 points per octave
    for (std::uint64_t s = 1; s < (1ull << 20); s += 1 + s / 1000) {
      const std::uint64_t l = VaryingGaussianRelease::ladder(s);
      CHECK(l >= s);
      CHECK(double(l) < double(s) * (1.0 + 0x1p-7) + 1.0);
      CHECK(VaryingGaussianRelease::ladder(l) == l);
    }
    std::uint64_t points = 0, last = 0;
    for (std::uint64_t s = 1ull << 14; s < (1ull << 15); ++s) {
      const std::uint64_t l = VaryingGaussianRelease::ladder(s);
      if (l != last && l < (1ull << 15)) ++points;
      last = l;
    }
    CHECK(points == 128);
    CHECK(VaryingGaussianRelease::ladder(255) == 255);  // exact below 2^8
    // DP-Actor's shape: a 200-value vector of norm C, sd = sigma C, L2 sensitivity 2C, C over 40
    // binary orders of magnitude: the grid follows C, so s stays within about one octave and the
    // run builds at most 2^7 + 2 samplers
    VaryingGaussianRelease rel;
    auto noise = make_seeded_noise(9, 0, 0, true);
    dprl::Rng rng(4);
    std::vector<double> x(200);
    double widest = 0.0;
    for (int r = 0; r < 20000; ++r) {
      const double c = std::ldexp(0.5 + rng.uniform(), static_cast<int>(rng.uniform() * 40) - 20);
      const SecurePlan plan = gaussian_release_plan(0.53 * c, 2.0 * c, x.size(), true);
      std::fill(x.begin(), x.end(), 0.25 * c);
      rel(x, plan.scale, plan.grid, *noise);
      for (double v : x) REQUIRE(std::fmod(v, plan.grid) == 0.0);
      const double s = double(secure_gaussian_steps(plan.scale, plan.grid));
      widest = std::max(widest, double(VaryingGaussianRelease::ladder(std::uint64_t(s))) / s);
    }
    CHECK(rel.samplers() <= 130);
    CHECK(rel.samplers() >= 64);
    CHECK(widest <= 1.0 + 0x1p-7);
    // refusals, and grid 0 (a non-secure source): exactly add_gaussian_release at sd
    std::vector<double> bad{1.0, INFINITY};
    CHECK_THROWS_AS(rel(bad, 1.0, 0x1p-10, *noise), dprl::ParamError);
    auto a = make_seeded_noise(6), b = make_seeded_noise(6);
    std::vector<double> u(20, 0.3), w(20, 0.3);
    rel(u, 2.0, 0.0, *a);
    add_gaussian_release(w, 2.0, 0.0, *b);
    CHECK(u == w);
    // a given first coefficient: validated, and A is the shared table of width 2.6 k
    CHECK_THROWS_AS(TableGaussian(20000, 1), dprl::ParamError);
    CHECK_THROWS_AS(TableGaussian(20000, 1100), dprl::ParamError);
    CHECK_THROWS_AS(TableGaussian(100, 64), dprl::ParamError);
    const TableGaussian g1(20000, 512), g2(20480, 512);
    CHECK(g1.levels() == 2);
    CHECK(&g1.table(0) == &g2.table(0));
    CHECK(g1.table(0).variance == doctest::Approx(2.6 * 2.6 * 512 * 512));
    CHECK(std::sqrt(g1.table(1).variance) < 64.0);
    CHECK(g1.sigma() >= 20000.0);
    CHECK(g1.sigma() / 20000.0 - 1.0 < 1e-9);
    CHECK(g1.tv_per_value() <= kTableTvPerValue);
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("repeated short releases match the exact sampler of their width (10^6 values)") {
    // LSVI-UCB's shape: 20-value vectors at one planned width, 50,000 releases
    const SecurePlan plan = gaussian_release_plan(3000.0, 1.0, 20, true);
    const std::uint64_t s = secure_gaussian_steps(plan.scale, plan.grid);
    REQUIRE(s >= 100);
    const RepeatedGaussianRelease rel(plan.scale, plan.grid);
    auto noise = make_seeded_noise(31, 0, 0, true);
    const std::size_t releases = 50000, dim = 20, n = releases * dim;
    std::vector<std::int64_t> a;
    a.reserve(n);
    std::vector<double> x(dim);
    for (std::size_t r = 0; r < releases; ++r) {
      std::fill(x.begin(), x.end(), 0.0);
      rel(x, *noise);
      for (double v : x) a.push_back(std::llround(v / plan.grid));
    }
    auto exact = make_seeded_noise(32, 0, 0, true);
    BitSource words = [&] { return exact->next_u64(); };
    BitReader bits(words);
    std::vector<std::int64_t> b(n);
    for (auto& v : b) v = discrete_gaussian(s, bits);
    check_same_distribution(a, b, double(s));
  }

  TEST_CASE("varying-width releases match the exact sampler of their ladder width (10^6 values)") {
    // DP-Actor's shape: 200-value vectors, C changing every release within one grid octave (so
    // a handful of widths, each compared with the exact sampler at its ladder width)
    VaryingGaussianRelease rel;
    auto noise = make_seeded_noise(33, 0, 0, true);
    const double grid = 0x1p-12;
    const std::vector<double> sds{1.9, 2.3, 2.9, 3.7};
    std::vector<std::vector<std::int64_t>> got(sds.size());
    std::vector<double> x(200);
    for (std::size_t r = 0; r < 5000 * sds.size(); ++r) {
      const std::size_t i = r % sds.size();
      std::fill(x.begin(), x.end(), 0.0);
      rel(x, sds[i], grid, *noise);
      for (double v : x) got[i].push_back(std::llround(v / grid));
    }
    auto exact = make_seeded_noise(34, 0, 0, true);
    BitSource words = [&] { return exact->next_u64(); };
    BitReader bits(words);
    for (std::size_t i = 0; i < sds.size(); ++i) {
      const std::uint64_t s = VaryingGaussianRelease::ladder(secure_gaussian_steps(sds[i], grid));
      std::vector<std::int64_t> want(got[i].size());
      for (auto& v : want) v = discrete_gaussian(s, bits);
      check_same_distribution(got[i], want, double(s));
    }
    CHECK(rel.samplers() == sds.size());
  }
}
