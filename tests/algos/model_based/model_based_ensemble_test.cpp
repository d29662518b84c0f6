// Probabilistic ensemble: loss gradient against central finite differences, layout and blocks,
// batched prediction equals member-by-member prediction, and a fit of a known linear system.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "algos/model_based/prob_ensemble.hpp"
#include "engine/nn/nn_optim.hpp"
#include "engine/rng.hpp"

namespace mb = dprl::algos::model_based;
using dprl::nn::Mat;

namespace {

mb::ProbEnsembleConfig small_config() {
  mb::ProbEnsembleConfig c;
  c.in_dim = 3;
  c.out_dim = 2;
  c.hidden = {5, 4};
  c.members = 2;
  c.max_logvar_init = 0.3;
  c.min_logvar_init = -1.5;  // near the outputs, so both soft bounds have non-trivial slopes
  c.weight_decay = {0.1, 0.2, 0.3};
  c.bound_coef = 0.05;
  return c;
}

Mat random_mat(int r, int c, dprl::Rng& rng, double scale) {
  Mat m(r, c);
  for (int j = 0; j < c; ++j)
    for (int i = 0; i < r; ++i) m(i, j) = static_cast<float>(scale * rng.normal());
  return m;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("ensemble blocks cover every parameter once and padding stays zero") {
    mb::ProbEnsemble e(small_config());
    e.init(3);
    std::vector<int> covered(e.stride(), 0);
    for (const auto& b : e.blocks())
      for (std::size_t k = 0; k < b.size; ++k) covered[b.offset + k]++;
    const auto& s = e.shape();
    std::size_t expect = 0;
    for (int l = 0; l < s.num_layers(); ++l) expect += s.out(l) * (s.in(l) + 1);
    expect += 2 * 2;  // max_lv and min_lv
    std::size_t total = 0;
    for (int c : covered) {
      CHECK(c <= 1);
      total += c;
    }
    CHECK(total == expect);
    for (int i = 0; i < e.members(); ++i)
      for (std::size_t k = 0; k < e.stride(); ++k)
        if (!covered[k]) CHECK(e.member(i)[k] == 0.0f);
  }

  TEST_CASE("ensemble loss gradient matches central differences") {
    mb::ProbEnsemble e(small_config());
    e.init(11);
    e.set_normalizer({0.5f, -0.2f, 0.1f}, {2.0f, 0.5f, 1.0f});
    dprl::Rng rng(5);
    // perturb the bounds per entry so every entry has its own slope
    for (int i = 0; i < e.members(); ++i)
      for (const auto& b : e.blocks())
        for (std::size_t k = 0; k < b.size; ++k)
          e.member(i)[b.offset + k] += static_cast<float>(0.2 * rng.normal());
    const Mat x = random_mat(3, 7, rng, 1.0), y = random_mat(2, 7, rng, 1.0);
    mb::EnsembleWork w;
    std::vector<float> g(e.num_params());
    e.loss(e.buffer().data(), x, y, g.data(), w);
    // float32 loss (|L| ~ 10): rounding ~ 1e-6 |L| / (2h) = 5e-4 at h = 1e-2; truncation
    // h^2 f''' / 6 ~ 1e-5; so |fd - g| <= 2e-3 + 1e-2 |g| leaves a 4x margin
    const float h = 1e-2f;
    int checked = 0;
    for (int i = 0; i < e.members(); ++i)
      for (const auto& b : e.blocks())
        for (std::size_t k = 0; k < b.size; ++k) {
          const std::size_t idx = i * e.stride() + b.offset + k;
          const float keep = e.buffer()[idx];
          e.buffer()[idx] = keep + h;
          const double lp = e.loss(e.buffer().data(), x, y, nullptr, w);
          e.buffer()[idx] = keep - h;
          const double lm = e.loss(e.buffer().data(), x, y, nullptr, w);
          e.buffer()[idx] = keep;
          const double fd = (lp - lm) / (2.0 * h);
          CHECK(std::abs(fd - g[idx]) <= 2e-3 + 1e-2 * std::abs(g[idx]));
          ++checked;
        }
    CHECK(checked == 2 * (5 * 3 + 5 + 4 * 5 + 4 + 4 * 4 + 4 + 2 + 2));
  }

  TEST_CASE("batched prediction equals each member alone and respects the bounds") {
    auto cfg = small_config();
    cfg.members = 3;
    mb::ProbEnsemble e(cfg);
    e.init(2);
    dprl::Rng rng(9);
    const Mat x = random_mat(3, 6, rng, 3.0);
    mb::EnsembleWork w;
    Mat mean, lv;
    e.predict(x, mean, lv, w);
    for (int i = 0; i < 3; ++i) {
      cfg.members = 1;
      mb::ProbEnsemble one(cfg);
      std::copy(e.member(i), e.member(i) + e.stride(), one.buffer().begin());
      Mat m1, l1;
      one.predict(x, m1, l1, w);
      CHECK((m1 - mean.middleRows(2 * i, 2)).cwiseAbs().maxCoeff() == 0.0f);
      CHECK((l1 - lv.middleRows(2 * i, 2)).cwiseAbs().maxCoeff() == 0.0f);
    }
    // the soft bounds keep logvar inside (min - log 2, max + log 2)
    CHECK(lv.maxCoeff() < 0.3f + std::log(2.0f));
    CHECK(lv.minCoeff() > -1.5f - std::log(2.0f));
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("ensemble fits a known linear system with its noise level") {
    // s' - s = A s + B a + noise(0.05), r = c . s; inputs uniform in [-1, 1]^3
    mb::ProbEnsembleConfig cfg;
    cfg.in_dim = 3;
    cfg.out_dim = 3;
    cfg.hidden = {32, 32};
    cfg.members = 2;
    mb::ProbEnsemble e(cfg);
    e.init(1);
    dprl::Rng rng(21);
    auto make = [&](int n, Mat& x, Mat& y) {
      x.resize(3, n);
      y.resize(3, n);
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < 3; ++i) x(i, j) = static_cast<float>(rng.uniform(-1, 1));
        y(0, j) = 0.5f * x(0, j) - 0.3f * x(1, j) + 0.2f * x(2, j);
        y(1, j) = -0.4f * x(0, j) + 0.1f * x(2, j);
        y(2, j) = x(0, j) + 2.0f * x(1, j);
        for (int i = 0; i < 2; ++i) y(i, j) += static_cast<float>(0.05 * rng.normal());
      }
    };
    Mat x, y, xt, yt;
    make(2048, x, y);
    make(1024, xt, yt);
    dprl::nn::Adam opt(e.num_params(), dprl::nn::AdamConfig{3e-3});
    std::vector<float> g(e.num_params());
    mb::EnsembleWork w;
    for (int it = 0; it < 1500; ++it) {
      const int b = (it * 128) % 2048;
      e.loss(e.buffer().data(), x.middleCols(b, 128), y.middleCols(b, 128), g.data(), w);
      opt.step(e.buffer(), g);
    }
    std::vector<double> mse(2);
    e.mse(e.buffer().data(), xt, yt, mse, w);
    // the irreducible error is (2/3) 0.05^2 = 1.7e-3 per dim on average; a fitted model is
    // within 2x of it (an unfitted one is ~0.5)
    for (double m : mse) CHECK(m < 3.4e-3);
    // learned noise: the noisy dims' variance near 0.05^2 (within a factor 2.5 on average)
    Mat mean, lv;
    e.predict(xt, mean, lv, w);
    for (int i = 0; i < 2; ++i)
      for (int d = 0; d < 2; ++d) {
        const double v = lv.row(3 * i + d).array().exp().mean();
        CHECK(v > 0.0025 / 2.5);
        CHECK(v < 0.0025 * 2.5);
      }
  }
}
