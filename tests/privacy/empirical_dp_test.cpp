// Empirical-DP smoke tests: run each mechanism on neighbouring inputs with a fixed seed, estimate
// the privacy loss from the samples and check it stays under the claim plus a statistical margin
// at p = 1e-6 (Bonferroni over the bins checked), derived in each test.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "privacy/dirichlet_mechanism.hpp"
#include "privacy/gaussian_mechanism.hpp"
#include "privacy/laplace_mechanism.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/sparse_vector.hpp"

using namespace dprl::privacy;

TEST_SUITE("statistical") {
  TEST_CASE("Laplace mechanism: binned log-likelihood ratio <= epsilon") {
    for (bool secure : {false, true}) {
      LaplaceMechanism m({1.0, 1.0});
      auto noise = make_seeded_noise(11, secure, 0, secure);
      const int n = 400000, bins = 18;
      std::vector<double> c0(bins, 0), c1(bins, 0);
      auto bin = [](double y) { return static_cast<int>(std::floor((y + 4.0) / 0.5)); };
      for (int i = 0; i < n; ++i) {
        double a[1] = {0.0}, b[1] = {1.0};
        m.release(a, *noise);
        m.release(b, *noise);
        if (int k = bin(a[0]); k >= 0 && k < bins) c0[k] += 1;
        if (int k = bin(b[0]); k >= 0 && k < bins) c1[k] += 1;
      }
      for (int k = 0; k < bins; ++k) {
        if (c0[k] < 2000 || c1[k] < 2000) continue;
        // sd of log(c0/c1) ~ sqrt(1/c0 + 1/c1); z = 5.5 covers p = 1e-6 over 2 x 18 bins
        const double margin = 5.5 * std::sqrt(1 / c0[k] + 1 / c1[k]);
        CHECK(std::fabs(std::log(c0[k] / c1[k])) <= 1.0 + margin);
      }
    }
  }

  TEST_CASE("Gaussian mechanism: empirical hockey-stick divergence <= delta") {
    GaussianMechanism m({1.0, 1.0, 1e-3, true});
    auto noise = make_seeded_noise(12, 0, 0);
    const int n = 1000000;
    std::vector<double> y0(n), y1(n);
    for (int i = 0; i < n; ++i) {
      double a[1] = {0.0}, b[1] = {1.0};
      m.release(a, *noise);
      m.release(b, *noise);
      y0[i] = a[0];
      y1[i] = b[0];
    }
    for (double t : {0.5, 1.5, 3.0, 5.0}) {
      double p = 0, q = 0;
      for (int i = 0; i < n; ++i) {
        p += y1[i] > t;
        q += y0[i] > t;
      }
      p /= n;
      q /= n;
      // P(S) - e^eps Q(S) <= delta; binomial sd of each estimate, z = 5.3 for p = 1e-6 over 4 sets
      const double margin =
          5.3 * (std::sqrt(p * (1 - p) / n) + std::exp(1.0) * std::sqrt(q * (1 - q) / n));
      CHECK(p - std::exp(1.0) * q <= 1e-3 + margin);
    }
  }

  TEST_CASE("AboveThreshold: halting-index distribution ratio <= e^epsilon") {
    auto noise = make_seeded_noise(13, 0, 0);
    const int n = 200000, k = 4;
    std::vector<double> c0(k + 1, 0), c1(k + 1, 0);
    for (int i = 0; i < n; ++i) {
      for (int side = 0; side < 2; ++side) {
        AboveThreshold at({1.0, 2.0, 1.0}, *noise);
        int stop = k;
        for (int j = 0; j < k; ++j) {
          if (at.query(side == 0 ? 0.0 : 1.0)) {
            stop = j;
            break;
          }
        }
        (side == 0 ? c0 : c1)[stop] += 1;
      }
    }
    for (int j = 0; j <= k; ++j) {
      if (c0[j] < 1000 || c1[j] < 1000) continue;
      const double margin = 5.3 * std::sqrt(1 / c0[j] + 1 / c1[j]);  // p = 1e-6 over 5 outcomes
      CHECK(std::fabs(std::log(c0[j] / c1[j])) <= 1.0 + margin);
    }
  }

  TEST_CASE("Dirichlet mechanism: Monte Carlo delta agrees with the exact Beta value (m = 2)") {
    DirichletParams p{5.0, 0.1, 0.02, 2, 1.0, 0.1};
    auto noise = make_seeded_noise(14, 0, 0);
    const auto d = dirichlet_delta_mc(p, 200000, *noise, 1e-6);
    const double exact = dirichlet_delta_exact_m2(5.0, 0.1, 0.02);
    CHECK(exact > 0.0);
    // Hoeffding at beta = 1e-6 holds with probability 1 - 1e-6
    CHECK(exact >= d.lower);
    CHECK(exact <= d.upper);
  }

  TEST_CASE(
      "Dirichlet mechanism: outputs on b-adjacent inputs have density ratio <= e^epsilon on "
      "Delta_{m tau}") {
    // m = 2: x1 ~ Beta(k pi1, k pi2). Compare binned frequencies inside [tau, 1 - tau].
    DirichletParams p{4.0, 0.2, 0.05, 2, 1.0, 0.1};
    DirichletMechanism m(p);
    auto noise = make_seeded_noise(15, 0, 0);
    const double b = 0.1 / std::sqrt(2.0);  // pi and pi' at L2 distance 0.1
    const double pi0[2] = {0.5, 0.5}, pi1[2] = {0.5 + b, 0.5 - b};
    const int n = 300000, bins = 10;
    std::vector<double> c0(bins, 0), c1(bins, 0);
    double out[2];
    for (int i = 0; i < n; ++i) {
      m.release(pi0, out, *noise);
      if (out[0] >= 0.05 && out[0] < 0.95) c0[int((out[0] - 0.05) / 0.09)] += 1;
      m.release(pi1, out, *noise);
      if (out[0] >= 0.05 && out[0] < 0.95) c1[int((out[0] - 0.05) / 0.09)] += 1;
    }
    for (int j = 0; j < bins; ++j) {
      if (c0[j] < 1000 || c1[j] < 1000) continue;
      const double margin = 5.5 * std::sqrt(1 / c0[j] + 1 / c1[j]);
      CHECK(std::fabs(std::log(c0[j] / c1[j])) <= m.epsilon() + margin);
    }
  }
}
