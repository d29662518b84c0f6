// The sensitivity the noise is calibrated to covers the computer's arithmetic, not only exact
// arithmetic: for two neighbouring batches the released sums (before noise) differ by at most
// the std the mechanism draws divided by z, in user-level DP-SGD (one and several transitions per
// user) and in DP-FedAvg. The data are built to make rounding errors large: thousands of clipped
// contributions pointing the same way (the partial sums reach N C, so each addition rounds at
// that magnitude), and a user whose two transitions almost cancel (the computed norm of their
// sum is then mostly rounding). A float accumulation with sensitivity C fails both.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/nn/nn_mlp.hpp"
#include "engine/rng.hpp"
#include "privacy/dp_fedavg.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/user_dp_sgd.hpp"

namespace {

using dprl::nn::Mat;
using dprl::nn::MlpCache;
using dprl::nn::MlpShape;
using dprl::privacy::DpNetGrad;
using dprl::privacy::UserDpSgdConfig;

// A noise source that adds nothing and keeps what the mechanism handed it: the vector about to be
// noised and the std it asked for.
class Capture final : public dprl::privacy::NoiseSource {
 public:
  Capture() : NoiseSource(false) {}
  std::string name() const override { return "capture"; }
  std::uint64_t next_u64() override { return 0; }
  void add_gaussian(std::span<double> x, double sigma) override {
    released.assign(x.begin(), x.end());
    sd = sigma;
  }
  std::vector<double> released;
  double sd = 0;
};

double distance(const std::vector<double>& x, const std::vector<double>& y) {
  REQUIRE(x.size() == y.size());
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += (x[i] - y[i]) * (x[i] - y[i]);
  return std::sqrt(s);
}

// The neighbour tests' config: C = 1, z = 1.3, m users, expected batch b; validated.
UserDpSgdConfig neighbour_config(std::int64_t m, double b) {
  UserDpSgdConfig cfg;
  cfg.clip_norm = 1.0;
  cfg.noise_multiplier = 1.3;
  cfg.num_users = m;
  cfg.expected_batch = b;
  cfg.validate();
  return cfg;
}

// One dense layer (in -> out): the cache holds the inputs a and the per-example errors delta.
MlpCache one_layer_cache(const Mat& a, const Mat& delta) {
  MlpCache c;
  c.batch = static_cast<int>(a.cols());
  c.a = {a};
  c.delta = {delta};
  return c;
}

// The released sum of user_dp_gradient (noise 0) and the std it drew.
std::pair<std::vector<double>, double> release_of(const UserDpSgdConfig& cfg, const MlpShape& s,
                                                  const MlpCache& c, int users) {
  std::vector<float> grad(s.num_params(), 0.0f);
  const DpNetGrad net{&s, &c, grad.data()};
  Capture cap;
  dprl::privacy::user_dp_gradient(cfg, std::span<const DpNetGrad>(&net, 1), users, cap);
  return {cap.released, cap.sd};
}

// N users of one transition whose inputs (in values) and errors (out values) all point nearly
// the same way, each far above C = 1: clipped sums then grow to about N C.
std::pair<Mat, Mat> aligned_users(int N, int in, int out, std::uint64_t seed) {
  dprl::Rng rng(seed);
  Mat a(in, N), d(out, N);
  for (int i = 0; i < N; ++i) {
    for (int r = 0; r < in; ++r) a(r, i) = static_cast<float>(1.0 / 3.0 + 0.01 * rng.normal());
    for (int r = 0; r < out; ++r) d(r, i) = static_cast<float>(100.0 / 7.0 + rng.normal());
  }
  return {a, d};
}

// The batch without column range [first, first + k): the neighbour without that user.
Mat drop_cols(const Mat& m, int first, int k) {
  Mat out(m.rows(), m.cols() - k);
  out << m.leftCols(first), m.rightCols(m.cols() - first - k);
  return out;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE(
      "user-level DP-SGD: two neighbours' computed sums differ by at most the noise's "
      "sensitivity") {
    // N users whose gradients all point nearly the same way, each far above C (all clipped), so
    // the sum grows to about N C; removing one user must move it by at most sd / z
    const int N = 4096, in = 3, out = 2;
    const MlpShape s({in, out}, dprl::nn::Act::kIdentity);
    const auto [a, d] = aligned_users(N, in, out, 7);
    const UserDpSgdConfig cfg = neighbour_config(N, N / 2.0);
    const auto [x, sd] = release_of(cfg, s, one_layer_cache(a, d), N);
    const double sensitivity = sd / cfg.noise_multiplier;
    CHECK(sensitivity >= cfg.clip_norm);
    double worst = 0;
    for (int j : {0, 1, 777, N / 2, N - 2, N - 1}) {
      CAPTURE(j);
      const auto [y, sd2] =
          release_of(cfg, s, one_layer_cache(drop_cols(a, j, 1), drop_cols(d, j, 1)), N - 1);
      CHECK(sd2 == sd);
      worst = std::max(worst, distance(x, y));
    }
    MESSAGE("largest neighbour distance / C - 1 = " << worst / cfg.clip_norm - 1.0);
    CHECK(worst <= sensitivity);
    CHECK(worst > 0.999 * cfg.clip_norm);  // the removed users were clipped to C
  }

  TEST_CASE(
      "user-level DP-SGD in float chunks: two neighbours' computed sums differ by at most the "
      "noise's sensitivity") {
    // b = 256 of m = 25,600 users: steps of up to N_f = 392 sampled users sum in float chunks.
    // 300 users pointing nearly the same way, all clipped: the float rounding of the chunk sums
    // (about 64 C each) is far above the double allowance, and within the float one
    const int N = 300, in = 3, out = 2;
    const MlpShape s({in, out}, dprl::nn::Act::kIdentity);
    const auto [a, d] = aligned_users(N, in, out, 9);
    const UserDpSgdConfig cfg = neighbour_config(25600, 256);
    REQUIRE(cfg.uses_float_sums());
    CHECK(cfg.float_sum_cap() == 392);
    CHECK(cfg.step_arithmetic(N) == dprl::nn::SumArithmetic::kFloatChunks);
    CHECK(cfg.step_arithmetic(393) == dprl::nn::SumArithmetic::kDouble);
    const double double_only = 2.0 * cfg.double_sum_error() * (1.0 + 0x1.0p-20);
    CHECK(cfg.accumulation_error() > 100 * double_only);
    const auto [x, sd] = release_of(cfg, s, one_layer_cache(a, d), N);
    const double sensitivity = sd / cfg.noise_multiplier;
    double worst = 0, off = 0;
    for (int j : {0, 1, 63, 64, 150, N - 2, N - 1}) {
      CAPTURE(j);
      const auto [y, sd2] =
          release_of(cfg, s, one_layer_cache(drop_cols(a, j, 1), drop_cols(d, j, 1)), N - 1);
      CHECK(sd2 == sd);
      const double dist = distance(x, y);
      worst = std::max(worst, dist);
      off = std::max(off, std::fabs(dist / cfg.clip_norm - 1.0));
    }
    MESSAGE("float chunks: largest |neighbour distance / C - 1| = " << off);
    CHECK(worst <= sensitivity);
    CHECK(worst > 0.999 * cfg.clip_norm);
    // the rounding is real: a sensitivity with the double allowance alone would not cover it
    CHECK(off > double_only);
  }

  TEST_CASE(
      "user-level DP-SGD: neighbours summed in different arithmetics differ by at most the "
      "noise's sensitivity") {
    // N_f = 392 at b = 256: 393 users sum in double, 392 of them in float chunks. m is chosen so
    // that the double and float allowances are close (their gap was the only slack for the
    // shared users' rounding toward zero before e_f measured against the exact clipped sum)
    const int in = 3, out = 2;
    const MlpShape s({in, out}, dprl::nn::Act::kIdentity);
    const UserDpSgdConfig cfg = neighbour_config(3850000, 256);
    REQUIRE(cfg.uses_float_sums());
    const int N = static_cast<int>(cfg.float_sum_cap()) + 1;
    CHECK(std::fabs(cfg.double_sum_error() / cfg.float_sum_error() - 1.0) < 0.1);
    const auto [a, d] = aligned_users(N, in, out, 11);
    REQUIRE(cfg.step_arithmetic(N) == dprl::nn::SumArithmetic::kDouble);
    REQUIRE(cfg.step_arithmetic(N - 1) == dprl::nn::SumArithmetic::kFloatChunks);
    const auto [x, sd] = release_of(cfg, s, one_layer_cache(a, d), N);
    const double sensitivity = sd / cfg.noise_multiplier;
    double worst = 0;
    for (int j : {0, 200, N - 1}) {
      CAPTURE(j);
      const auto [y, sd2] =
          release_of(cfg, s, one_layer_cache(drop_cols(a, j, 1), drop_cols(d, j, 1)), N - 1);
      CHECK(sd2 == sd);
      worst = std::max(worst, distance(x, y));
    }
    MESSAGE("mixed arithmetics: largest neighbour distance / C - 1 = " << worst - 1.0);
    CHECK(worst <= sensitivity);
    CHECK(worst > 0.999);
  }

  TEST_CASE("user-level DP-SGD: tiny errors beside huge inputs are clipped (norms in double)") {
    // errors of 2^-80 (their squares underflow in float) and inputs of 2^60: the gradient's norm
    // is 64 2^-20, far above C = 1e-6; a float sum of squares would read 0 and pass it unclipped
    const int in = 64, out = 64;
    const MlpShape s({in, out}, dprl::nn::Act::kIdentity);
    Mat a(in, 1), d(out, 1);
    a.setConstant(0x1.0p60f);
    d.setConstant(0x1.0p-80f);
    for (const bool float_sums : {true, false}) {
      CAPTURE(float_sums);
      UserDpSgdConfig cfg;
      cfg.clip_norm = 1e-6;
      cfg.noise_multiplier = 1.0;
      cfg.num_users = 10;
      cfg.expected_batch = 1.0;
      cfg.float_sums = float_sums;
      cfg.validate();
      const auto [x, sd] = release_of(cfg, s, one_layer_cache(a, d), 1);
      const double norm = distance(x, std::vector<double>(x.size(), 0.0));
      CHECK(norm <= sd / cfg.noise_multiplier);
      CHECK(norm > 0.99 * cfg.clip_norm);
    }
  }

  TEST_CASE("user-level DP-SGD: float sums are taken only where their allowance is small") {
    UserDpSgdConfig cfg;
    cfg.num_users = 100000;
    cfg.expected_batch = 256;
    CHECK(cfg.uses_float_sums());
    CHECK(cfg.accumulation_error() <= UserDpSgdConfig::kMaxFloatSumError);
    cfg.float_sums = false;  // sum: double
    CHECK_FALSE(cfg.uses_float_sums());
    CHECK(cfg.step_arithmetic(10) == dprl::nn::SumArithmetic::kDouble);
    CHECK(cfg.accumulation_error() < 1e-5);
    cfg.float_sums = true;
    cfg.contribution = 2;  // k > 1: double
    CHECK_FALSE(cfg.uses_float_sums());
    cfg.contribution = 1;
    cfg.expected_batch = 2048;  // the float allowance would exceed 0.5%
    CHECK_FALSE(cfg.uses_float_sums());
    cfg.expected_batch = 64;
    CHECK(cfg.uses_float_sums());
    cfg.clip_norm = 1e-35;  // the underflow term dominates
    CHECK_FALSE(cfg.uses_float_sums());
    cfg.clip_norm = 1e30;  // N_f C near float's range
    CHECK_FALSE(cfg.uses_float_sums());
  }

  TEST_CASE("user-level DP-SGD: a user whose transitions almost cancel is within C, exactly") {
    // k = 2 transitions with the same input and opposite errors up to a relative difference eps:
    // the sum of their gradients is the difference times the input. At eps = 3e-7 its computed
    // squared norm (a Gram sum) is dominated by rounding, and the clip factor must use an upper
    // bound on the exact norm (the cancellation cap, 64-fold, binds there too, which only
    // shrinks the vector); at eps = 0.05 (a 40-fold cancellation) the user is clipped to C.
    // The released vector of the one sampled user is its contribution (its neighbour: nothing).
    const int in = 64, out = 64;
    const MlpShape s({in, out}, dprl::nn::Act::kIdentity);
    double worst = 0;
    for (const double eps : {3e-7, 0.05})
      for (std::uint64_t seed = 1; seed <= 40; ++seed) {
        CAPTURE(eps);
        CAPTURE(seed);
        dprl::Rng rng(seed);
        Mat a(in, 2), d(out, 2);
        for (int r = 0; r < in; ++r) a(r, 0) = a(r, 1) = static_cast<float>(rng.normal());
        for (int r = 0; r < out; ++r) {
          // errors near 1e6: the norm is far above any additive margin of the clip factor
          d(r, 0) = static_cast<float>(1e6 * rng.normal());
          d(r, 1) = static_cast<float>(-static_cast<double>(d(r, 0)) * (1.0 + eps * rng.normal()));
        }
        // the exact mean gradient of the user from the float values (the sums of two floats and
        // the products below are exact or nearly so in long double's 64-bit mantissa)
        long double sq = 0, an = 1;  // an: |a|^2 + 1 (the bias column)
        for (int c = 0; c < in; ++c) an += static_cast<long double>(a(c, 0)) * a(c, 0);
        for (int r = 0; r < out; ++r) {
          const long double e = (static_cast<long double>(d(r, 0)) + d(r, 1)) / 2;
          sq += e * e * an;
        }
        const double exact = std::sqrt(static_cast<double>(sq));
        REQUIRE(exact > 0);
        UserDpSgdConfig cfg;
        cfg.clip_norm = 0.5 * exact;  // clipping binds
        cfg.noise_multiplier = 1.0;
        cfg.num_users = 10;
        cfg.expected_batch = 1.0;
        cfg.contribution = 2;
        cfg.validate();
        const auto [x, sd] = release_of(cfg, s, one_layer_cache(a, d), 1);
        const double norm = distance(x, std::vector<double>(x.size(), 0.0));
        worst = std::max(worst, norm / cfg.clip_norm);
        CHECK(norm <= sd / cfg.noise_multiplier);
        CHECK(norm > 0);  // scaled, never dropped
        if (eps > 1e-3) CHECK(norm == doctest::Approx(cfg.clip_norm).epsilon(1e-9));
      }
    MESSAGE("largest released norm / C = " << worst);
  }

  TEST_CASE(
      "DP-FedAvg: two neighbours' computed averages differ by at most the noise's sensitivity") {
    // N clients with the same-signed clipped update of norm C each; the average of N and of N - 1
    // of them must differ by at most sd / z (the fixed denominator q K is the same for both)
    const int N = 4096;
    dprl::privacy::EnsembleLayout layout;
    layout.members = 1;
    layout.stride = 3;
    layout.blocks = {{0, 3}};
    dprl::privacy::DpFedAvgConfig cfg;
    cfg.clip_norm = 1.0;
    cfg.noise_multiplier = 0.9;
    cfg.units = 2 * N;
    cfg.sampling_rate = 0.5;
    dprl::Rng rng(3);
    std::vector<std::vector<float>> updates(N);
    for (auto& u : updates) {
      u = {static_cast<float>(100.0 / 3.0 + rng.normal()), static_cast<float>(200.0 / 7.0),
           static_cast<float>(10.0 + rng.normal())};
      dprl::privacy::ensemble_clip(u, layout, cfg);
    }
    auto average = [&](int skip) {
      dprl::privacy::DpFedAvgRound round(layout, cfg);
      round.begin();
      for (int i = 0; i < N; ++i)
        if (i != skip) round.add(updates[i]);
      std::vector<float> theta(3, 0.0f);
      Capture cap;
      round.release(theta, &cap);
      return std::pair{cap.released, cap.sd};
    };
    const auto [x, sd] = average(-1);
    const double sensitivity = sd / cfg.noise_multiplier;
    const double den = cfg.sampling_rate * static_cast<double>(cfg.units);
    CHECK(sensitivity >= cfg.clip_norm / den);
    double worst = 0;
    for (int j : {0, 1, 999, N / 2, N - 1}) {
      const auto [y, sd2] = average(j);
      CHECK(sd2 == sd);
      worst = std::max(worst, distance(x, y));
    }
    MESSAGE("largest neighbour distance / (C / qK) - 1 = " << worst * den / cfg.clip_norm - 1.0);
    CHECK(worst <= sensitivity);
    CHECK(worst > 0.999 * cfg.clip_norm / den);
  }

  TEST_CASE("the rounding allowances are the stated closed forms") {
    UserDpSgdConfig cfg;
    cfg.num_users = 1000;
    // float sums (b = 1: N_f = ceil(1 + 8 + 8) = 17 users, one chunk): beta = 2 e_f (1 + 2^-20),
    // e_f = gamma^f_(66 + 1) 17 (1 + 2^-20) + 17 (2^-104 + 2^-42) / C
    const double uf = std::ldexp(1.0, -24);
    const double ef = 67 * uf / (1 - 67 * uf) * 17 * (1 + 0x1.0p-20) + 17 * (0x1.0p-104 + 0x1.0p-42);
    CHECK(cfg.float_sum_cap() == 17);
    CHECK(cfg.accumulation_error() == doctest::Approx(2 * ef * (1 + 0x1.0p-20)).epsilon(1e-12));
    cfg.float_sums = false;
    const double u = std::ldexp(1.0, -53);
    auto gamma = [u](double n) { return n * u / (1 - n * u); };
    // in double alone: beta = 2 gamma_((m + 1) k + 2) (m + 1) R, R = 1 (k = 1) or 64 (k > 1)
    CHECK(cfg.accumulation_error() == doctest::Approx(2 * gamma(1003) * 1001).epsilon(1e-5));
    CHECK(cfg.sensitivity() == doctest::Approx(1 + 2 * gamma(1003) * 1001).epsilon(1e-15));
    cfg.contribution = 4;
    CHECK(cfg.accumulation_error() == doctest::Approx(2 * gamma(4006) * 1001 * 64).epsilon(1e-5));
    CHECK(cfg.accumulation_error() < 1e-6);
    // beta grows as m^2: beyond 1% of C the configuration is refused
    cfg.contribution = 1;
    cfg.expected_batch = 1;
    cfg.num_users = 6000000;
    CHECK_NOTHROW(cfg.validate());
    cfg.num_users = 7000000;
    CHECK_THROWS_AS(cfg.validate(), dprl::ParamError);
    dprl::privacy::EnsembleLayout layout;
    layout.stride = 1;
    layout.blocks = {{0, 1}};
    dprl::privacy::DpFedAvgConfig f;
    f.units = 100;
    f.sampling_rate = 0.1;
    f.noise_multiplier = 2.0;
    const dprl::privacy::DpFedAvgRound round(layout, f);
    CHECK(round.accumulation_error() == doctest::Approx(2 * gamma(102) * 101).epsilon(1e-5));
    CHECK(round.noise_std() ==
          doctest::Approx(2.0 * (1 + round.accumulation_error()) / 10.0).epsilon(1e-15));
  }
}
