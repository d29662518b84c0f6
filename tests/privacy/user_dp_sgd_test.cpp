// User-level DP-SGD against its definition: the released gradient is the clipped per-user sum
// plus the drawn noise over the expected batch; the noise has standard deviation sigma * C; a user
// contributes at most C whatever the number of their transitions.
#include "privacy/user_dp_sgd.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/error.hpp"
#include "engine/nn/nn_dp.hpp"
#include "engine/rng.hpp"

using dprl::nn::Act;
using dprl::nn::Mat;
using dprl::nn::Mlp;
using dprl::nn::MlpCache;
using dprl::nn::MlpShape;
using dprl::privacy::DpNetGrad;
using dprl::privacy::UserDpSgdConfig;

namespace {

// Two networks on the same inputs (like BCQ's Q and classifier), with per-example output
// gradients already back-propagated.
struct TwoNets {
  Mlp a{MlpShape({3, 5, 2}, Act::kTanh)};
  Mlp b{MlpShape({3, 4, 2}, Act::kRelu)};
  MlpCache ca, cb;
  dprl::nn::Buffer ga, gb;

  TwoNets(int columns, double dout_scale, std::uint64_t seed) {
    dprl::Rng rng(seed);
    dprl::nn::init_kaiming_uniform(a.shape(), a.data(), rng);
    dprl::nn::init_kaiming_uniform(b.shape(), b.data(), rng);
    Mat x(3, columns), da(2, columns), db(2, columns);
    for (int i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(rng.normal());
    for (int i = 0; i < da.size(); ++i)
      da.data()[i] = static_cast<float>(dout_scale * rng.normal());
    for (int i = 0; i < db.size(); ++i)
      db.data()[i] = static_cast<float>(dout_scale * rng.normal());
    a.forward(x, ca);
    b.forward(x, cb);
    dprl::nn::backward_errors(a.shape(), a.data(), da, ca);
    dprl::nn::backward_errors(b.shape(), b.data(), db, cb);
    ga.assign(a.size(), 0.0f);
    gb.assign(b.size(), 0.0f);
  }
  std::vector<DpNetGrad> nets() {
    return {{&a.shape(), &ca, ga.data()}, {&b.shape(), &cb, gb.data()}};
  }
  // Per-example gradients of both networks stacked: (params_a + params_b) x columns, in double.
  Eigen::MatrixXd per_example() const {
    Mat pa, pb;
    dprl::nn::per_sample_grads(a.shape(), ca, pa);
    dprl::nn::per_sample_grads(b.shape(), cb, pb);
    Eigen::MatrixXd g(pa.rows() + pb.rows(), pa.cols());
    g << pa.cast<double>(), pb.cast<double>();
    return g;
  }
};

// The real (non-padding) parameter positions of a shape, in the order noise is drawn.
std::vector<std::size_t> real_positions(const MlpShape& s, std::size_t base) {
  std::vector<std::size_t> out;
  for (int l = 0; l < s.num_layers(); ++l) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(s.out(l)) * s.in(l); ++i)
      out.push_back(base + s.weight_offset(l) + i);
    for (int i = 0; i < s.out(l); ++i) out.push_back(base + s.bias_offset(l) + i);
  }
  return out;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("user-level DP gradient = (sum of clipped per-user means + drawn noise) / b") {
    for (int k : {1, 3}) {
      CAPTURE(k);
      const int users = 4;
      TwoNets t(users * k, 1.0, 11);
      const Eigen::MatrixXd g = t.per_example();
      // per-user mean gradients and their norms (the joint norm over both networks)
      Eigen::MatrixXd gu = Eigen::MatrixXd::Zero(g.rows(), users);
      std::vector<double> norms;
      for (int u = 0; u < users; ++u) {
        for (int j = 0; j < k; ++j) gu.col(u) += g.col(u * k + j) / k;
        norms.push_back(gu.col(u).norm());
      }
      // C between the smallest and largest norm: some users clipped, some not
      std::vector<double> sorted = norms;
      std::sort(sorted.begin(), sorted.end());
      UserDpSgdConfig cfg;
      cfg.clip_norm = 0.5 * (sorted[1] + sorted[2]);
      cfg.noise_multiplier = 0.7;
      cfg.expected_batch = 5.0;
      cfg.num_users = 40;
      cfg.contribution = k;
      cfg.validate();
      // scripted noise: value i is 0.001 (i + 1), added in draw order
      auto nets = t.nets();
      const std::size_t n = dprl::privacy::noised_values(nets);
      std::vector<double> script(n);
      for (std::size_t i = 0; i < n; ++i) script[i] = 0.001 * static_cast<double>(i + 1);
      auto noise = dprl::privacy::make_scripted_noise(script);
      const auto st = dprl::privacy::user_dp_gradient(cfg, nets, users, *noise);
      CHECK(st.users == users);
      CHECK(st.clipped == 2);

      Eigen::VectorXd expect = Eigen::VectorXd::Zero(g.rows());
      for (int u = 0; u < users; ++u)
        expect += std::min(1.0, cfg.clip_norm / (norms[u] + 1e-6)) * gu.col(u);
      auto pos = real_positions(t.a.shape(), 0);
      const auto pos_b = real_positions(t.b.shape(), t.a.size());
      pos.insert(pos.end(), pos_b.begin(), pos_b.end());
      REQUIRE(pos.size() == n);
      for (std::size_t i = 0; i < n; ++i) expect[static_cast<Eigen::Index>(pos[i])] += script[i];
      expect /= cfg.expected_batch;
      Eigen::VectorXd got(g.rows());
      for (std::size_t i = 0; i < t.ga.size(); ++i) got[static_cast<Eigen::Index>(i)] = t.ga[i];
      for (std::size_t i = 0; i < t.gb.size(); ++i)
        got[static_cast<Eigen::Index>(t.ga.size() + i)] = t.gb[i];
      // float accumulation of O(1) terms against the double reference: 1e-5 is ~100 ulps
      CHECK((got - expect).lpNorm<Eigen::Infinity>() <=
            1e-5 * (1.0 + expect.lpNorm<Eigen::Infinity>()));
    }
  }

  TEST_CASE(
      "one user contributes at most C, however many transitions, and removing a user moves the "
      "sum by at most C") {
    const int k = 50, users = 3;
    TwoNets t(users * k, 1e3, 5);  // huge losses: every user is clipped
    UserDpSgdConfig cfg;
    cfg.clip_norm = 0.25;
    cfg.expected_batch = 2.0;
    cfg.num_users = 10;
    cfg.contribution = k;
    auto zero = dprl::privacy::make_zero_noise();
    auto sum_norm = [&](int n_users, TwoNets& nets) {
      dprl::privacy::user_dp_gradient(cfg, nets.nets(), n_users, *zero);
      double sq = 0;
      for (float v : nets.ga) sq += double{v} * v;
      for (float v : nets.gb) sq += double{v} * v;
      return std::sqrt(sq) * cfg.expected_batch;
    };
    const double all = sum_norm(users, t);
    CHECK(all <= users * cfg.clip_norm * (1 + 1e-5));
    const Eigen::VectorXf with_all = [&] {
      Eigen::VectorXf v(t.ga.size() + t.gb.size());
      for (std::size_t i = 0; i < t.ga.size(); ++i) v[i] = t.ga[i];
      for (std::size_t i = 0; i < t.gb.size(); ++i) v[t.ga.size() + i] = t.gb[i];
      return v;
    }();
    // the same data without the last user: the first (users - 1) * k columns
    TwoNets fewer(users * k, 1e3, 5);
    Mat x = fewer.ca.a[0].leftCols((users - 1) * k);
    Mat da = fewer.ca.delta.back().leftCols((users - 1) * k);
    Mat db = fewer.cb.delta.back().leftCols((users - 1) * k);
    fewer.a.forward(x, fewer.ca);
    fewer.b.forward(x, fewer.cb);
    dprl::nn::backward_errors(fewer.a.shape(), fewer.a.data(), da, fewer.ca);
    dprl::nn::backward_errors(fewer.b.shape(), fewer.b.data(), db, fewer.cb);
    dprl::privacy::user_dp_gradient(cfg, fewer.nets(), users - 1, *zero);
    double diff = 0;
    for (std::size_t i = 0; i < fewer.ga.size(); ++i)
      diff += std::pow(double{with_all[i]} - fewer.ga[i], 2);
    for (std::size_t i = 0; i < fewer.gb.size(); ++i)
      diff += std::pow(double{with_all[fewer.ga.size() + i]} - fewer.gb[i], 2);
    CHECK(std::sqrt(diff) * cfg.expected_batch <= cfg.clip_norm * (1 + 1e-5));
    // and one user alone is clipped to exactly C (1e-6 in the factor's denominator)
    TwoNets one(k, 1e3, 6);
    CHECK(sum_norm(1, one) == doctest::Approx(cfg.clip_norm).epsilon(1e-5));
  }

  TEST_CASE("joint group norms equal the norms of materialised per-user gradients") {
    for (int k : {1, 4}) {
      TwoNets t(3 * k, 1.0, 21);
      std::vector<double> sq(3, 0.0);
      dprl::nn::add_group_sq_norms(t.a.shape(), t.ca, k, sq);
      dprl::nn::add_group_sq_norms(t.b.shape(), t.cb, k, sq);
      const Eigen::MatrixXd g = t.per_example();
      for (int u = 0; u < 3; ++u) {
        Eigen::VectorXd s = Eigen::VectorXd::Zero(g.rows());
        for (int j = 0; j < k; ++j) s += g.col(u * k + j);
        CHECK(sq[u] == doctest::Approx(s.squaredNorm()).epsilon(1e-5));
      }
    }
  }

  TEST_CASE("a user whose norm is NaN or infinite gets the clip factor 0: the step goes on") {
    // the step with a poisoned last user equals the step without that user, and nothing else of
    // it (NaN in the sum, an abort) depends on the poison
    for (int k : {1, 3})
      for (const float poison : {NAN, INFINITY, -INFINITY}) {
        const int users = 3;
        UserDpSgdConfig cfg;
        cfg.clip_norm = 0.3;
        cfg.expected_batch = 2.0;
        cfg.num_users = 10;
        cfg.contribution = k;
        auto zero = dprl::privacy::make_zero_noise();
        TwoNets t(users * k, 2.0, 41);
        const int c = (users - 1) * k + (k - 1);  // a column of the last user
        t.ca.delta[0](1, c) = poison;             // net a: an error of its first layer
        t.cb.a[1](2, c) = poison;                 // net b: an activation of its hidden layer
        const auto st = dprl::privacy::user_dp_gradient(cfg, t.nets(), users, *zero);
        CHECK(st.users == users);
        CHECK(st.dropped == 1);
        // the reference: the first users - 1 users only
        TwoNets fewer(users * k, 2.0, 41);
        Mat x = fewer.ca.a[0].leftCols((users - 1) * k);
        Mat da = fewer.ca.delta.back().leftCols((users - 1) * k);
        Mat db = fewer.cb.delta.back().leftCols((users - 1) * k);
        fewer.a.forward(x, fewer.ca);
        fewer.b.forward(x, fewer.cb);
        dprl::nn::backward_errors(fewer.a.shape(), fewer.a.data(), da, fewer.ca);
        dprl::nn::backward_errors(fewer.b.shape(), fewer.b.data(), db, fewer.cb);
        dprl::privacy::user_dp_gradient(cfg, fewer.nets(), users - 1, *zero);
        // the same float products; only the summation blocking of the GEMM may differ
        for (std::size_t i = 0; i < t.ga.size(); ++i) {
          REQUIRE(std::isfinite(t.ga[i]));
          CHECK(t.ga[i] == doctest::Approx(fewer.ga[i]).epsilon(1e-5).scale(1e-6));
        }
        for (std::size_t i = 0; i < t.gb.size(); ++i) {
          REQUIRE(std::isfinite(t.gb[i]));
          CHECK(t.gb[i] == doctest::Approx(fewer.gb[i]).epsilon(1e-5).scale(1e-6));
        }
      }
  }

  TEST_CASE("user-level DP-SGD parameters are validated with the rule") {
    auto bad = [](auto edit) {
      UserDpSgdConfig c;
      c.expected_batch = 4;
      c.num_users = 10;
      edit(c);
      c.validate();
    };
    CHECK_NOTHROW(bad([](UserDpSgdConfig&) {}));
    CHECK_THROWS_WITH_AS(bad([](UserDpSgdConfig& c) { c.noise_multiplier = 0; }),
                         doctest::Contains("noise_multiplier"), dprl::ParamError);
    CHECK_THROWS_WITH_AS(bad([](UserDpSgdConfig& c) { c.clip_norm = -1; }),
                         doctest::Contains("clip_norm"), dprl::ParamError);
    // small enough for the scaled errors to underflow in double
    CHECK_THROWS_WITH_AS(bad([](UserDpSgdConfig& c) { c.clip_norm = 1e-200; }),
                         doctest::Contains("clip_norm = 1e-200 must be finite and >= 1e-100"),
                         dprl::ParamError);
    CHECK_NOTHROW(bad([](UserDpSgdConfig& c) { c.clip_norm = 1e-100; }));
    CHECK_THROWS_WITH_AS(bad([](UserDpSgdConfig& c) { c.expected_batch = 11; }),
                         doctest::Contains("sampling rate q"), dprl::ParamError);
    CHECK_THROWS_WITH_AS(bad([](UserDpSgdConfig& c) { c.contribution = 0; }),
                         doctest::Contains("contribution"), dprl::ParamError);
    CHECK_THROWS_WITH_AS(bad([](UserDpSgdConfig& c) { c.num_users = 0; }),
                         doctest::Contains("num_users"), dprl::ParamError);
  }

  TEST_CASE("the guarantee record: relation, unit, sensitivity, formal only without a seed") {
    dprl::privacy::UserDpReportInput in;
    in.cfg.expected_batch = 8;
    in.cfg.num_users = 100;
    in.cfg.clip_norm = 1.5;
    in.steps = 1000;
    in.epsilon = 2.0;
    in.delta = 1e-5;
    in.accountant = "pld";
    in.unit = "expert";
    in.noise_source = "os_entropy(secure, chacha20)";
    in.covers = {"policy.bin"};
    auto r = dprl::privacy::user_dp_report(in);
    CHECK(r.neighbouring == dprl::NeighbouringRelation::kAddRemove);
    CHECK(r.unit == "expert");
    CHECK(r.sensitivity.find("1.5") != std::string::npos);
    CHECK(r.formal);
    CHECK_FALSE(r.reproducible_noise);
    const auto d = nlohmann::json::parse(r.details_json);
    CHECK(d["sampling_rate"].get<double>() == doctest::Approx(0.08));
    CHECK(d["event"]["kind"] == "self_composed");
    in.seeded = true;
    r = dprl::privacy::user_dp_report(in);
    CHECK_FALSE(r.formal);
    CHECK(r.reproducible_noise);
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("the released noise has standard deviation sigma * C (chi-squared, p = 1e-6)") {
    // no sampled user: the gradient is noise / b, so x = grad * b / (sigma C) should be N(0, 1)
    Mlp net(MlpShape({8, 256, 256, 4}, Act::kRelu));
    MlpCache cache;
    dprl::nn::Buffer grad(net.size(), 1.0f);
    UserDpSgdConfig cfg;
    cfg.noise_multiplier = 1.3;
    cfg.clip_norm = 0.7;
    cfg.expected_batch = 16;
    cfg.num_users = 1000;
    std::vector<DpNetGrad> nets = {{&net.shape(), &cache, grad.data()}};
    auto noise = dprl::privacy::make_seeded_noise(2024, 0);
    dprl::privacy::user_dp_gradient(cfg, nets, 0, *noise);
    const double scale = cfg.expected_batch / (cfg.noise_multiplier * cfg.clip_norm);
    double sum = 0, sq = 0;
    std::size_t n = 0;
    for (std::size_t p : real_positions(net.shape(), 0)) {
      const double x = grad[p] * scale;
      sum += x;
      sq += x * x;
      ++n;
    }
    // padding is never noised
    std::size_t nonzero_padding = 0;
    std::vector<bool> real(net.size(), false);
    for (std::size_t p : real_positions(net.shape(), 0)) real[p] = true;
    for (std::size_t i = 0; i < net.size(); ++i) nonzero_padding += !real[i] && grad[i] != 0.0f;
    CHECK(nonzero_padding == 0);
    // n = 69,124 values. sum x^2 ~ chi^2(n): mean n, variance 2n, skewness sqrt(8 / n) = 0.011,
    // so z = (sum x^2 - n) / sqrt(2 n) is standard normal to within 1e-3 in the tail; two-sided
    // p = 1e-6 gives |z| < 4.892. The mean: sum x / sqrt(n) ~ N(0, 1), the same bound.
    const double dn = static_cast<double>(n);
    CHECK(std::abs((sq - dn) / std::sqrt(2 * dn)) < 4.892);
    CHECK(std::abs(sum / std::sqrt(dn)) < 4.892);
    // a wrong scale (say sigma instead of sigma * C, ratio 1 / 0.7) would give z of about 190
  }
}
