// Tests of engine/nn/nn_mlp and engine/nn/nn_dp: gradients against central finite differences,
// per-example norms / gradients / clipped sums against a naive per-example loop, init properties.
#include "engine/nn/nn_mlp.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "engine/nn/nn_dp.hpp"
#include "engine/nn/nn_ensemble.hpp"
#include "engine/nn/nn_optim.hpp"
#include "engine/rng.hpp"
#include "engine/thread_pool.hpp"

using namespace dprl;
using namespace dprl::nn;

namespace {

Mat random_mat(int r, int c, Rng& rng) {
  Mat m(r, c);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(rng.normal());
  return m;
}

// L = sum_i 0.5 |f(x_i) - y_i|^2, accumulated in double.
double loss(const Mlp& net, const Mat& x, const Mat& y) {
  MlpCache c;
  const Mat& out = net.forward(x, c);
  return 0.5 * (out - y).cast<double>().squaredNorm();
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("nn mlp gradients match central finite differences for every activation") {
    for (Act act : {Act::kTanh, Act::kRelu, Act::kSilu, Act::kIdentity}) {
      Rng rng(derive_seed(1, Domain::kUser, static_cast<int>(act)));
      Mlp net(MlpShape({3, 5, 4, 2}, act));
      init_kaiming_uniform(net.shape(), net.data(), rng);
      const Mat x = random_mat(3, 6, rng), y = random_mat(2, 6, rng);
      MlpCache c;
      const Mat out = net.forward(x, c);
      Buffer g(net.size());
      backward(net.shape(), net.data(), out - y, c, g.data());
      // float forward: rounding ~1e-7 * |L| / h with h = 1e-3 gives ~1e-4; ReLU kinks are
      // avoided with probability ~1 at this h. Tolerance 2e-3 covers both with margin.
      const float h = 1e-3f;
      for (std::size_t k = 0; k < net.size(); ++k) {
        const float keep = net.data()[k];
        net.data()[k] = keep + h;
        const double lp = loss(net, x, y);
        net.data()[k] = keep - h;
        const double lm = loss(net, x, y);
        net.data()[k] = keep;
        const double fd = (lp - lm) / (2 * h);
        CHECK(std::abs(fd - g[k]) <= 2e-3 * std::max(1.0, std::abs(fd)));
      }
    }
  }

  TEST_CASE("nn input gradient matches finite differences") {
    Rng rng(3);
    Mlp net(MlpShape({3, 8, 1}, Act::kTanh));
    init_kaiming_uniform(net.shape(), net.data(), rng);
    Mat x = random_mat(3, 4, rng);
    MlpCache c;
    net.forward(x, c);
    backward_errors(net.shape(), net.data(), Mat::Ones(1, 4), c, true);
    const Mat din = c.din;
    const float h = 1e-3f;
    for (Eigen::Index k = 0; k < x.size(); ++k) {
      const float keep = x.data()[k];
      x.data()[k] = keep + h;
      MlpCache c2;
      const double fp = net.forward(x, c2).cast<double>().sum();
      x.data()[k] = keep - h;
      const double fm = net.forward(x, c2).cast<double>().sum();
      x.data()[k] = keep;
      CHECK(std::abs((fp - fm) / (2 * h) - din.data()[k]) <= 2e-3);
    }
  }

  TEST_CASE("nn double weighted sums are the same bits with a helper sharing the products") {
    // layers large enough to split (>= 16384 weights), odd widths, batches across the chunking,
    // zero weights (dropped columns); the helper takes the right half of the output columns; in
    // both arithmetics
    HelperThread helper;
    for (const auto arith : {SumArithmetic::kDouble, SumArithmetic::kFloatChunks})
    for (const auto& sizes : {std::vector<int>{8, 256, 256, 4}, std::vector<int>{5, 300, 77, 3},
                              std::vector<int>{3, 129, 200, 2}}) {
      for (const int B : {1, 32, 100, 256}) {
        CAPTURE(B);
        Rng rng(11 + B);
        Mlp net(MlpShape(sizes, Act::kRelu));
        init_kaiming_uniform(net.shape(), net.data(), rng);
        const Mat x = random_mat(sizes[0], B, rng), y = random_mat(sizes.back(), B, rng);
        MlpCache c;
        const Mat out = net.forward(x, c);
        backward_errors(net.shape(), net.data(), out - y, c);
        std::vector<double> w(B);
        for (int i = 0; i < B; ++i) w[i] = i % 7 == 3 ? 0.0 : rng.uniform();
        std::size_t n = 0;
        for (int l = 0; l < net.shape().num_layers(); ++l)
          n += static_cast<std::size_t>(net.shape().out(l)) * (net.shape().in(l) + 1);
        // equally aligned outputs (64 bytes): the bias sums' vectorisation follows the output's
        // alignment, so unequally aligned outputs may differ in their last bits anyway
        Eigen::VectorXd alone(static_cast<Eigen::Index>(n)), shared(alone.size());
        accumulate_grad_f64(net.shape(), c, w, {alone.data(), n}, nullptr, arith);
        accumulate_grad_f64(net.shape(), c, w, {shared.data(), n}, &helper, arith);
        CHECK(std::memcmp(alone.data(), shared.data(), n * sizeof(double)) == 0);
        // and the products are there: not all zero
        CHECK(alone.cwiseAbs().sum() > 0.0);
      }
    }
  }

  TEST_CASE("nn float-chunk sums scale the errors toward zero") {
    // one column with power-of-two inputs: each product is exact, so each weight entry is
    // round_toward_zero(w delta_r) times a_c bit for bit (round to nearest would differ)
    const int rows = 64, cols = 8;
    Rng rng(3);
    MlpCache c;
    c.batch = 1;
    c.a = {Mat(cols, 1)};
    c.delta = {Mat(rows, 1)};
    for (int i = 0; i < cols; ++i) c.a[0](i, 0) = std::ldexp(1.0f, i - 4);
    for (int r = 0; r < rows; ++r) c.delta[0](r, 0) = static_cast<float>(rng.normal());
    const MlpShape s({cols, rows}, Act::kIdentity);
    const std::vector<double> w = {1.0 / 3.0};
    std::vector<double> got(static_cast<std::size_t>(rows) * (cols + 1), NAN);
    accumulate_grad_f64(s, c, w, got, nullptr, SumArithmetic::kFloatChunks);
    std::vector<double> x(rows);
    std::vector<float> t(rows);
    for (int r = 0; r < rows; ++r) x[r] = static_cast<double>(c.delta[0](r, 0)) * w[0];
    round_toward_zero(x, t);
    int nearest_differs = 0;
    for (int col = 0; col < cols; ++col)
      for (int r = 0; r < rows; ++r) {
        const double want = static_cast<double>(t[r]) * c.a[0](col, 0);
        CHECK(got[static_cast<std::size_t>(col) * rows + r] == want);
        nearest_differs += static_cast<float>(x[r]) != t[r];
      }
    CHECK(nearest_differs > 0);  // the data tell the two roundings apart
  }

  TEST_CASE("nn round_toward_zero gives the float next to the double on zero's side") {
    Rng rng(5);
    std::vector<double> in = {0.0, -0.0, 1.0, -1.0, 0.1, -0.1, 1.0 + 0x1.0p-30, 1.0 - 0x1.0p-30,
                              0x1.0p-149, 0x1.8p-149, 0x1.0p-150, -0x1.8p-149, 0x1.0p-200,
                              3.5e38, -3.5e38, 1e300, std::ldexp(1.0, 127) * (2 - 0x1.0p-24)};
    for (int i = 0; i < 20000; ++i)
      in.push_back(rng.normal() * std::ldexp(1.0, static_cast<int>(rng.uniform() * 300) - 150));
    std::vector<float> out(in.size());
    round_toward_zero(in, out);
    for (std::size_t i = 0; i < in.size(); ++i) {
      CAPTURE(in[i]);
      const double x = in[i], y = out[i];
      // never farther from zero, same sign (or zero), and the next float away from zero is
      // beyond x: y is the float toward zero next to x
      CHECK(std::fabs(y) <= std::fabs(x));
      CHECK((y == 0.0 || std::signbit(y) == std::signbit(x)));
      if (std::fabs(x) < 3.4028234663852886e38) {
        const float away = std::nextafter(out[i], std::signbit(x) ? -INFINITY : INFINITY);
        CHECK(std::fabs(static_cast<double>(away)) > std::fabs(x));
      } else {
        CHECK(std::fabs(y) == 3.4028234663852886e38);
      }
    }
    std::vector<float> nan(1);
    round_toward_zero(std::vector<double>{NAN}, nan);
    CHECK(std::isnan(nan[0]));
  }

  TEST_CASE("nn float-chunk weighted sums are within their stated bound of the exact sum") {
    // every weight entry within gamma_(64 + J) sum_i |s_i,r| |a_i,c| (u = 2^-24) of the exact sum
    // over s_i = round_toward_zero(w_i delta_i), plus B 2^-124; bias entries within the double
    // bound of the exact sum of w_i delta_i. The data make rounding large: errors of one sign and
    // a spread of magnitudes, batches across the 64-column chunks.
    for (const int B : {1, 63, 64, 65, 200, 392}) {
      CAPTURE(B);
      Rng rng(21 + B);
      Mlp net(MlpShape({6, 96, 40}, Act::kTanh));
      init_kaiming_uniform(net.shape(), net.data(), rng);
      const Mat x = random_mat(6, B, rng);
      MlpCache c;
      net.forward(x, c);
      Mat dout(40, B);
      for (Eigen::Index i = 0; i < dout.size(); ++i)
        dout.data()[i] = static_cast<float>(std::exp(3.0 * rng.normal()) + 1.0);
      backward_errors(net.shape(), net.data(), dout, c);
      std::vector<double> w(B);
      for (int i = 0; i < B; ++i) w[i] = i % 11 == 5 ? 0.0 : 1.0 / 3.0 + rng.uniform();
      std::size_t n = 0;
      for (int l = 0; l < net.shape().num_layers(); ++l)
        n += static_cast<std::size_t>(net.shape().out(l)) * (net.shape().in(l) + 1);
      // NaN first: every output value must be written (no stale sums)
      std::vector<double> got(n, NAN), dbl(n, NAN);
      accumulate_grad_f64(net.shape(), c, w, got, nullptr, SumArithmetic::kFloatChunks);
      accumulate_grad_f64(net.shape(), c, w, dbl, nullptr, SumArithmetic::kDouble);
      const double J = std::ceil(B / static_cast<double>(kFloatSumChunk));
      const double uf = 0x1.0p-24, gf = (kFloatSumChunk + J) * uf / (1 - (kFloatSumChunk + J) * uf);
      const double gd = (B + 2) * 0x1.0p-53 / (1 - (B + 2) * 0x1.0p-53);
      std::size_t pos = 0;
      double worst = 0, differs = 0;
      for (int l = 0; l < net.shape().num_layers(); ++l) {
        const int rows = net.shape().out(l), cols = net.shape().in(l);
        std::vector<double> sd(static_cast<std::size_t>(rows) * B);
        std::vector<float> sf(sd.size());
        for (int i = 0; i < B; ++i)
          for (int r = 0; r < rows; ++r)
            sd[static_cast<std::size_t>(i) * rows + r] =
                w[i] == 0.0 ? 0.0 : static_cast<double>(c.delta[l](r, i)) * w[i];
        round_toward_zero(sd, sf);
        for (int col = 0; col < cols; ++col)
          for (int r = 0; r < rows; ++r) {
            long double exact = 0, mag = 0;
            for (int i = 0; i < B; ++i) {
              if (w[i] == 0.0) continue;
              const long double t =
                  static_cast<long double>(sf[static_cast<std::size_t>(i) * rows + r]) *
                  c.a[l](col, i);
              exact += t;
              mag += std::fabs(t);
            }
            const double v = got[pos + static_cast<std::size_t>(col) * rows + r];
            const double err = std::fabs(static_cast<double>(v - exact));
            CHECK(err <= gf * static_cast<double>(mag) + B * 0x1.0p-124);
            if (mag > 0) worst = std::max(worst, err / static_cast<double>(mag));
            differs = std::max(differs, std::fabs(v - dbl[pos + static_cast<std::size_t>(col) * rows + r]));
          }
        pos += static_cast<std::size_t>(rows) * cols;
        for (int r = 0; r < rows; ++r) {
          long double exact = 0, mag = 0;
          for (int i = 0; i < B; ++i) {
            const long double t = static_cast<long double>(c.delta[l](r, i)) * w[i];
            exact += t;
            mag += std::fabs(t);
          }
          CHECK(std::fabs(static_cast<double>(got[pos + r] - exact)) <= gd * static_cast<double>(mag));
        }
        pos += static_cast<std::size_t>(rows);
      }
      REQUIRE(pos == n);
      MESSAGE("B = " << B << ": largest error / sum |terms| = " << worst << " (bound " << gf << ")");
      if (B > 1) CHECK(differs > 0.0);  // the float path is taken: it differs from the double one
    }
  }

  TEST_CASE("helper thread: jobs run in order, wait rethrows a job's error") {
    HelperThread h;
    CHECK(h.idle());
    std::vector<int> order;
    for (int i = 0; i < 50; ++i) h.post([&order, i] { order.push_back(i); });
    h.wait();
    CHECK(h.idle());
    REQUIRE(order.size() == 50);
    for (int i = 0; i < 50; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
    h.post([] { throw std::runtime_error("job failed"); });
    h.post([&order] { order.push_back(50); });  // later jobs still run
    CHECK_THROWS_WITH_AS(h.wait(), "job failed", std::runtime_error);
    CHECK(order.size() == 51);
    h.wait();  // the error is reported once
  }

  TEST_CASE("nn per-example norms gradients and clipped sum match a naive per-example loop") {
    Rng rng(7);
    Mlp net(MlpShape({4, 16, 16, 3}, Act::kSilu));
    init_kaiming_uniform(net.shape(), net.data(), rng);
    const int B = 9;
    const Mat x = random_mat(4, B, rng), y = random_mat(3, B, rng);
    MlpCache c;
    const Mat out = net.forward(x, c);
    backward_errors(net.shape(), net.data(), out - y, c);
    std::vector<float> sq(B);
    per_sample_sq_norms(net.shape(), c, sq);
    Mat g;
    per_sample_grads(net.shape(), c, g);
    // naive: one backward per example
    Mat naive(net.size(), B);
    for (int i = 0; i < B; ++i) {
      MlpCache ci;
      const Mat oi = net.forward(x.col(i), ci);
      Buffer gi(net.size());
      backward(net.shape(), net.data(), oi - y.col(i), ci, gi.data());
      naive.col(i) = Eigen::Map<Eigen::VectorXf>(gi.data(), net.size());
    }
    for (int i = 0; i < B; ++i) {
      const double n2 = naive.col(i).cast<double>().squaredNorm();
      CHECK(std::abs(sq[i] - n2) <= 1e-5 * n2);
      CHECK((g.col(i) - naive.col(i)).norm() <= 1e-5 * naive.col(i).norm());
    }
    // clipped sum with zero noise vs sum_i min(1, C / |g_i|) g_i
    const double C = 0.5 * std::sqrt(sq[0]);
    Buffer clipped(net.size());
    const NormalFill no_fill = [](std::span<float>) { FAIL("noise drawn at sigma 0"); };
    dp_sgd_grad(net.shape(), c, DpSgdConfig{C, 0.0}, no_fill, clipped.data());
    Eigen::VectorXd expect = Eigen::VectorXd::Zero(net.size());
    for (int i = 0; i < B; ++i) {
      const double ni = naive.col(i).cast<double>().norm();
      expect += std::min(1.0, C / (ni + 1e-6)) * naive.col(i).cast<double>();
    }
    const Eigen::VectorXd got =
        Eigen::Map<Eigen::VectorXf>(clipped.data(), net.size()).cast<double>();
    CHECK((got - expect).norm() <= 1e-5 * expect.norm());
  }

  TEST_CASE("nn fill_standard_normal moments") {
    // n = 2^20 values: the sample mean has sd 1/1024 and the sample variance sd sqrt(2)/1024.
    // Two-sided p = 1e-6 gives |z| < 4.89: |mean| < 4.89/1024 = 0.0048, |var - 1| < 0.0068.
    // Fourth moment 3 has sd sqrt(96)/1024 ~ 0.0096: |m4 - 3| < 0.047.
    Rng rng(derive_seed(5, Domain::kDpNoise, 0));
    std::vector<float> v(1 << 20);
    fill_standard_normal(rng, v);
    double m = 0, m2 = 0, m4 = 0;
    for (float x : v) {
      m += x;
      m2 += double{x} * x;
      m4 += double{x} * x * x * x;
    }
    m /= v.size();
    m2 /= v.size();
    m4 /= v.size();
    CHECK(std::abs(m) < 0.0048);
    CHECK(std::abs(m2 - 1) < 0.0068);
    CHECK(std::abs(m4 - 3) < 0.047);
  }

  TEST_CASE("nn orthogonal init gives orthonormal columns or rows times the gain") {
    Rng rng(2);
    MlpShape s({6, 10, 3}, Act::kTanh);
    Buffer p(s.num_params());
    init_orthogonal(s, p.data(), rng, std::sqrt(2.0), 0.5);
    const Mat w0 = s.weight(p.data(), 0);  // 10 x 6: orthonormal columns
    CHECK((w0.transpose() * w0 - 2.0f * Mat::Identity(6, 6)).norm() < 1e-5);
    const Mat w1 = s.weight(p.data(), 1);  // 3 x 10: orthonormal rows
    CHECK((w1 * w1.transpose() - 0.25f * Mat::Identity(3, 3)).norm() < 1e-5);
    CHECK(s.bias(p.data(), 0).norm() == 0.0f);
  }

  TEST_CASE("nn kaiming init stays within 1 over sqrt fan-in") {
    Rng rng(4);
    MlpShape s({16, 8, 2}, Act::kRelu);
    Buffer p(s.num_params());
    init_kaiming_uniform(s, p.data(), rng);
    CHECK(s.weight(p.data(), 0).cwiseAbs().maxCoeff() <= 0.25f);
    CHECK(s.bias(p.data(), 1).cwiseAbs().maxCoeff() <= 1.0f / std::sqrt(8.0f));
  }

  TEST_CASE("nn adam decreases the loss on a fixed batch") {
    Rng rng(9);
    Mlp net(MlpShape({4, 32, 32, 2}, Act::kRelu));
    init_kaiming_uniform(net.shape(), net.data(), rng);
    const Mat x = random_mat(4, 64, rng), y = random_mat(2, 64, rng);
    Adam opt(net.size(), AdamConfig{3e-3});
    Buffer g(net.size());
    MlpCache c;
    const double l0 = loss(net, x, y);
    for (int k = 0; k < 300; ++k) {
      const Mat out = net.forward(x, c);
      backward(net.shape(), net.data(), (out - y) / 64.0f, c, g.data());
      opt.step(net.span(), g);
    }
    CHECK(loss(net, x, y) < 0.5 * l0);
  }

  TEST_CASE("nn sgd momentum global norm clip polyak and linear decay") {
    Buffer p{1.0f, 2.0f}, g{0.5f, -1.0f};
    Sgd sgd(2, 0.1, 0.9);
    sgd.step(p, g);  // v = g
    CHECK(p[0] == doctest::Approx(0.95));
    sgd.step(p, g);  // v = 0.9 g + g
    CHECK(p[0] == doctest::Approx(0.95 - 0.1 * 1.9 * 0.5));
    Buffer h{3.0f, 4.0f};
    CHECK(clip_global_norm(h, 1.0) == doctest::Approx(5.0));
    CHECK(l2_norm(h) == doctest::Approx(1.0).epsilon(1e-5));
    Buffer t{0.0f, 0.0f}, s{1.0f, 2.0f};
    polyak_update(t, s, 0.25);
    CHECK(t[1] == doctest::Approx(0.5));
    CHECK(linear_decay(1.0, 3, 4) == doctest::Approx(0.25));
  }

  TEST_CASE("nn adam first step moves each parameter by lr against its gradient sign") {
    Buffer p{0.0f, 0.0f}, g{2.0f, -0.001f};
    Adam opt(2, AdamConfig{0.01});
    opt.step(p, g);
    CHECK(p[0] == doctest::Approx(-0.01).epsilon(1e-4));
    CHECK(p[1] == doctest::Approx(0.01).epsilon(1e-3));
  }

  TEST_CASE("nn ensemble members equal separate networks") {
    Ensemble e(MlpShape({3, 8, 2}, Act::kSilu), 3);
    e.init_kaiming(17);
    Rng rng(1);
    const Mat x = random_mat(3, 5, rng);
    Mat out;
    e.forward_all(x, out);
    for (int k = 0; k < 3; ++k) {
      MlpCache c;
      const Mat& ok = forward(e.shape(), e.member(k), x, c);
      CHECK((out.middleRows(2 * k, 2) - ok).norm() == 0.0f);
    }
    CHECK(e.buffer().size() == 3 * e.shape().num_params());
  }

  TEST_CASE("nn forward_one equals the batched forward") {
    Rng rng(6);
    Mlp net(MlpShape({4, 32, 16, 3}, Act::kTanh));
    init_kaiming_uniform(net.shape(), net.data(), rng);
    const Mat x = random_mat(4, 1, rng);
    MlpCache c;
    const Mat out = net.forward(x, c);
    std::vector<float> y(3), scratch;
    forward_one(net.shape(), net.data(), x.data(), y.data(), scratch);
    for (int j = 0; j < 3; ++j) CHECK(y[j] == doctest::Approx(out(j, 0)).epsilon(1e-6));
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("nn dp noise has std sigma times C on real parameters and none on padding") {
    Mlp net(MlpShape({3, 5, 2}, Act::kRelu));
    MlpCache c;
    net.forward(Mat::Zero(3, 2), c);
    backward_errors(net.shape(), net.data(), Mat::Zero(2, 2), c);
    Buffer g(net.size());
    Rng rng(11);
    // zero errors: the gradient is pure noise, N(0, (sigma C)^2) = N(0, 9) per real parameter
    const DpSgdConfig cfg{2.0, 1.5};
    const double sd = cfg.noise_multiplier * cfg.clip_norm;
    int real = 0;
    for (int l = 0; l < net.shape().num_layers(); ++l) {
      real += net.shape().out(l) * (net.shape().in(l) + 1);
    }
    // 2000 draws of the 32 real parameters: n = 64000 values. The sample variance of n normals
    // has sd var sqrt(2 / n) = 0.56% of var; two-sided p = 1e-6 (z = 4.892): |var / 9 - 1| <
    // 0.0274. The fourth moment (3 sd^4, sd of its estimate sd^4 sqrt(96 / n)) separates a
    // normal shape from, e.g., a uniform one (1.8 sd^4): |m4 / sd^4 - 3| < 4.892 sqrt(96 / n).
    const int draws = 2000;
    double s2 = 0.0, s4 = 0.0, mean = 0.0;
    for (int r = 0; r < draws; ++r) {
      dp_sgd_grad(
          net.shape(), c, cfg, [&](std::span<float> o) { fill_standard_normal(rng, o); }, g.data());
      int nonzero = 0;
      for (int l = 0; l < net.shape().num_layers(); ++l) {
        const std::size_t end_w =
            net.shape().weight_offset(l) + net.shape().out(l) * net.shape().in(l);
        for (std::size_t k = end_w; k < net.shape().bias_offset(l); ++k) CHECK(g[k] == 0.0f);
      }
      for (float v : g) {
        nonzero += v != 0.0f;
        mean += v;
        s2 += double(v) * v;
        s4 += double(v) * v * v * v;
      }
      CHECK(nonzero == real);
    }
    const double n = double(draws) * real;
    CHECK(std::fabs(mean / n) < 4.892 * sd / std::sqrt(n));
    CHECK(std::fabs(s2 / n / (sd * sd) - 1.0) < 4.892 * std::sqrt(2.0 / n));
    CHECK(std::fabs(s4 / n / std::pow(sd, 4) - 3.0) < 4.892 * std::sqrt(96.0 / n));
  }
}
