// Tests of engine/nn/nn_heads (log-probs against closed forms, gradients against finite
// differences) and engine/nn/nn_io (round trip, corruption and truncation are DataErrors).
#include "engine/nn/nn_heads.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "engine/error.hpp"
#include "engine/nn/nn_io.hpp"

using namespace dprl;
using namespace dprl::nn;

TEST_SUITE("unit") {
  TEST_CASE("nn categorical log-probs entropy and masks match closed forms") {
    Mat z(3, 2);
    z << 1, 0, 2, 0, 3, 5;
    std::vector<std::uint8_t> mask = {1, 1, 1, 1, 0, 1};  // column 1: action 1 masked
    Mat lp;
    log_softmax(z, mask.data(), lp);
    const double s0 = std::exp(1) + std::exp(2) + std::exp(3);
    CHECK(lp(2, 0) == doctest::Approx(3 - std::log(s0)));
    const double s1 = std::exp(0) + std::exp(5);
    CHECK(lp(2, 1) == doctest::Approx(5 - std::log(s1)));
    Rng rng(1);
    for (int k = 0; k < 200; ++k) CHECK(sample_categorical(lp, 1, rng) != 1);
    std::vector<float> h(2);
    categorical_entropy(lp, h);
    double hh = 0;
    for (double v : {1.0, 2.0, 3.0}) hh -= std::exp(v) / s0 * (v - std::log(s0));
    CHECK(h[0] == doctest::Approx(hh));
  }

  TEST_CASE("nn categorical backward matches finite differences") {
    Mat z(4, 1);
    z << 0.3f, -1.0f, 0.7f, 0.1f;
    const std::vector<int> a = {2};
    const std::vector<float> wl = {1.5f}, we = {-0.4f};
    auto f = [&](const Mat& zz) {
      Mat lp;
      log_softmax(zz, nullptr, lp);
      std::vector<float> h(1);
      categorical_entropy(lp, h);
      return wl[0] * lp(2, 0) + we[0] * h[0];
    };
    Mat lp, d;
    log_softmax(z, nullptr, lp);
    categorical_backward(lp, a, wl, we, d);
    for (int j = 0; j < 4; ++j) {
      Mat zp = z, zm = z;
      zp(j, 0) += 1e-3f;
      zm(j, 0) -= 1e-3f;
      CHECK(d(j, 0) == doctest::Approx((f(zp) - f(zm)) / 2e-3).epsilon(2e-3));
    }
  }

  TEST_CASE("nn log-softmax of all-NaN logits throws instead of aborting") {
    Mat z(2, 2);
    z << 1, NAN, 2, NAN;  // column 1 is all NaN (a diverged or damaged network)
    Mat lp;
    CHECK_THROWS_AS(log_softmax(z, nullptr, lp), Error);
    z(0, 1) = 0.5f;  // one finite logit: no throw (the NaN spreads, as before)
    CHECK_NOTHROW(log_softmax(z, nullptr, lp));
  }

  TEST_CASE("nn gaussian log-prob and backward") {
    Mat mean(2, 1), ls(2, 1), a(2, 1);
    mean << 0.5f, -1.0f;
    ls << -0.3f, 0.2f;
    a << 0.1f, 0.4f;
    std::vector<float> lp(1), h(1);
    gaussian_log_prob(mean, ls, a, lp);
    double expect = 0;
    for (int j = 0; j < 2; ++j) {
      const double s = std::exp(ls(j)), z = (a(j) - mean(j)) / s;
      expect += -0.5 * z * z - std::log(s) - 0.5 * std::log(2 * std::numbers::pi);
    }
    CHECK(lp[0] == doctest::Approx(expect));
    gaussian_entropy(ls, h);
    CHECK(h[0] == doctest::Approx(1.0 + std::log(2 * std::numbers::pi) + ls.sum()));
    Mat dm, ds;
    const std::vector<float> w = {2.0f}, we = {0.5f};
    gaussian_backward(mean, ls, a, w, we, dm, ds);
    auto f = [&](const Mat& m, const Mat& l) {
      std::vector<float> p(1), e(1);
      gaussian_log_prob(m, l, a, p);
      gaussian_entropy(l, e);
      return 2.0 * p[0] + 0.5 * e[0];
    };
    for (int j = 0; j < 2; ++j) {
      Mat mp = mean, mm = mean, lpp = ls, lm = ls;
      mp(j) += 1e-3f;
      mm(j) -= 1e-3f;
      lpp(j) += 1e-3f;
      lm(j) -= 1e-3f;
      CHECK(dm(j) == doctest::Approx((f(mp, ls) - f(mm, ls)) / 2e-3).epsilon(2e-3));
      CHECK(ds(j) == doctest::Approx((f(mean, lpp) - f(mean, lm)) / 2e-3).epsilon(2e-3));
    }
  }

  TEST_CASE("nn tanh gaussian log-prob is the change of variables density") {
    Mat mean(1, 1), ls(1, 1), u(1, 1);
    mean << 0.2f;
    ls << -0.5f;
    for (float uu : {-3.0f, -0.4f, 0.0f, 1.3f, 6.0f}) {
      u << uu;
      Eigen::RowVectorXf lp;
      tanh_gaussian_log_prob(mean, ls, u, lp);
      const double s = std::exp(-0.5), z = (uu - 0.2) / s, a = std::tanh(double{uu});
      const double expect =
          -0.5 * z * z - std::log(s) - 0.5 * std::log(2 * std::numbers::pi) - std::log(1 - a * a);
      CHECK(lp[0] == doctest::Approx(expect).epsilon(1e-4));
    }
  }

  TEST_CASE("nn tanh gaussian reparameterised backward matches finite differences") {
    Mat mean(2, 3), ls(2, 3), dla(2, 3);
    Rng r(3);
    for (int k = 0; k < 6; ++k) {
      mean.data()[k] = static_cast<float>(r.normal());
      ls.data()[k] = static_cast<float>(0.3 * r.normal() - 0.5);
      dla.data()[k] = static_cast<float>(r.normal());
    }
    const std::vector<float> w = {0.7f, -0.2f, 1.1f};
    TanhSample s;
    Rng rng(5);
    tanh_gaussian_sample(mean, ls, rng, s);
    Mat dm, ds;
    tanh_gaussian_backward(s, w, dla, dm, ds);
    // objective with eps held fixed
    auto f = [&](const Mat& m, const Mat& l) {
      const Mat u = m.array() + l.array().exp() * s.eps.array();
      Eigen::RowVectorXf lp;
      tanh_gaussian_log_prob(m, l, u, lp);
      double v = 0;
      for (int i = 0; i < 3; ++i) v += w[i] * lp[i];
      return v + (dla.array() * u.array().tanh()).sum();
    };
    for (int k = 0; k < 6; ++k) {
      Mat mp = mean, mm = mean, lp2 = ls, lm = ls;
      mp.data()[k] += 1e-3f;
      mm.data()[k] -= 1e-3f;
      lp2.data()[k] += 1e-3f;
      lm.data()[k] -= 1e-3f;
      CHECK(dm.data()[k] == doctest::Approx((f(mp, ls) - f(mm, ls)) / 2e-3).epsilon(3e-3));
      CHECK(ds.data()[k] == doctest::Approx((f(mean, lp2) - f(mean, lm)) / 2e-3).epsilon(3e-3));
    }
  }

  TEST_CASE("nn file round trip and corruption") {
    NnFile f;
    f.kind = "test";
    f.meta = "x=1";
    MlpShape s({3, 4, 2}, Act::kSilu);
    Buffer p(s.num_params());
    for (std::size_t k = 0; k < p.size(); ++k) p[k] = 0.25f * static_cast<float>(k);
    f.nets.push_back({"net", s, p});
    f.arrays.push_back({"arr", {1.0f, 2.0f}});
    const std::string bytes = encode_nn_file(f);
    const NnFile g = decode_nn_file(bytes, "mem");
    CHECK(g.kind == "test");
    CHECK(g.meta == "x=1");
    CHECK(g.net("net").shape == s);
    CHECK(g.net("net").params == p);
    CHECK(g.array("arr").values == std::vector<float>{1.0f, 2.0f});
    CHECK_THROWS_AS(g.net("other"), DataError);
    for (std::size_t cut : {std::size_t{0}, std::size_t{5}, std::size_t{20}, bytes.size() - 1})
      CHECK_THROWS_AS(decode_nn_file(bytes.substr(0, cut), "mem"), DataError);
    for (std::size_t pos : {std::size_t{9}, std::size_t{30}, bytes.size() / 2, bytes.size() - 2}) {
      std::string bad = bytes;
      bad[pos] ^= 0x10;
      CHECK_THROWS_AS(decode_nn_file(bad, "mem"), DataError);
    }
  }
}
