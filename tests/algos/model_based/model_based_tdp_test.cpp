// DP-FedAvg for ensembles against its definition: the clip set (flat and per layer), the exact
// fixed-denominator average, the server noise scale (statistical), Poisson inclusion rates, and
// TDP training: the per-round update bound, thread-count invariance and the ledger's charges.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "algos/model_based/ensemble_train.hpp"
#include "engine/nn/nn_optim.hpp"
#include "engine/rng.hpp"
#include "privacy/dp_fedavg.hpp"
#include "privacy/ledger.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/rdp_accountant.hpp"
#include "privacy/secure_release.hpp"

namespace mb = dprl::algos::model_based;
namespace pv = dprl::privacy;

namespace {

pv::EnsembleLayout toy_layout(int members) {
  pv::EnsembleLayout l;
  l.members = members;
  l.stride = 48;
  l.blocks = {{0, 10}, {16, 5}, {32, 13}};  // padding at 10..15, 21..31, 45..47
  return l;
}

std::vector<float> random_delta(const pv::EnsembleLayout& l, dprl::Rng& rng, double scale) {
  std::vector<float> d(l.stride * l.members, 0.0f);
  for (int i = 0; i < l.members; ++i)
    for (const auto& b : l.blocks)
      for (std::size_t k = 0; k < b.size; ++k)
        d[i * l.stride + b.offset + k] = static_cast<float>(scale * rng.normal());
  return d;
}

double block_norm(const std::vector<float>& d, std::size_t off, std::size_t n) {
  double s = 0;
  for (std::size_t k = 0; k < n; ++k) s += static_cast<double>(d[off + k]) * d[off + k];
  return std::sqrt(s);
}

// A toy offline dataset: K trajectories of a 2-d linear system with a 1-d action.
dprl::Dataset toy_dataset(int K, int len, std::uint64_t seed) {
  dprl::DatasetInfo info;
  info.dataset_id = "toy";
  info.observation_space = dprl::Space::box({-10, -10}, {10, 10});
  info.action_space = dprl::Space::box({-1}, {1});
  dprl::Dataset d(info);
  dprl::Rng rng(seed);
  for (int k = 0; k < K; ++k) {
    std::vector<float> obs, act, rew;
    std::vector<std::uint8_t> term(len, 0), trunc(len, 0);
    trunc.back() = 1;
    float s0 = static_cast<float>(rng.uniform(-1, 1)), s1 = static_cast<float>(rng.uniform(-1, 1));
    for (int t = 0; t < len; ++t) {
      const float a = static_cast<float>(rng.uniform(-1, 1));
      obs.push_back(s0);
      obs.push_back(s1);
      act.push_back(a);
      rew.push_back(-s0 * s0);
      const float n0 = 0.9f * s0 + 0.1f * s1, n1 = 0.9f * s1 + 0.2f * a;
      s0 = n0;
      s1 = n1;
    }
    obs.push_back(s0);
    obs.push_back(s1);
    d.add_episode(obs, act, rew, term, trunc, k);
  }
  return d;
}

mb::ProbEnsemble toy_model() {
  mb::ProbEnsembleConfig c;
  c.in_dim = 3;
  c.out_dim = 3;
  c.hidden = {16, 16};
  c.members = 3;
  mb::ProbEnsemble m(c);
  m.init(4);
  return m;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("flat ensemble clipping bounds each member by C/sqrt(N) and the whole by C") {
    const auto l = toy_layout(4);
    pv::DpFedAvgConfig cfg;
    cfg.clip_norm = 2.0;
    dprl::Rng rng(1);
    for (int rep = 0; rep < 50; ++rep) {
      auto d = random_delta(l, rng, rep % 2 ? 10.0 : 0.01);
      const auto before = d;
      const auto r = pv::ensemble_clip(d, l, cfg);
      double total = 0;
      for (int i = 0; i < 4; ++i) {
        double sq = 0;
        for (const auto& b : l.blocks)
          sq += std::pow(block_norm(d, i * l.stride + b.offset, b.size), 2);
        CHECK(std::sqrt(sq) <= 2.0 / std::sqrt(4.0));
        total += sq;
      }
      CHECK(std::sqrt(total) <= 2.0);
      if (!r.clipped) CHECK(d == before);  // small updates pass bit for bit
      CHECK(r.clipped == (rep % 2 == 1));
      // projection is a scaling: direction kept within float rounding
      if (r.clipped) {
        double dot = 0, nb = 0, na = 0;
        for (std::size_t k = 0; k < l.stride; ++k) {  // member 0
          dot += static_cast<double>(d[k]) * before[k];
          na += static_cast<double>(d[k]) * d[k];
          nb += static_cast<double>(before[k]) * before[k];
        }
        CHECK(dot / std::sqrt(na * nb) > 1.0 - 1e-6);
      }
    }
  }

  TEST_CASE("per-layer ensemble clipping bounds each block by C/sqrt(N L)") {
    const auto l = toy_layout(3);
    pv::DpFedAvgConfig cfg;
    cfg.clip_norm = 1.5;
    cfg.clipping = pv::EnsembleClipping::kPerLayer;
    dprl::Rng rng(2);
    const double bound = 1.5 / std::sqrt(3.0 * 3.0);
    CHECK(pv::ensemble_clip_threshold(l, cfg) == doctest::Approx(bound).epsilon(1e-15));
    for (int rep = 0; rep < 50; ++rep) {
      auto d = random_delta(l, rng, 5.0);
      pv::ensemble_clip(d, l, cfg);
      double total = 0;
      for (int i = 0; i < 3; ++i)
        for (const auto& b : l.blocks) {
          const double nb = block_norm(d, i * l.stride + b.offset, b.size);
          CHECK(nb <= bound);
          CHECK(nb > bound * (1 - 1e-5));  // every block was large: each lands on its bound
          total += nb * nb;
        }
      CHECK(std::sqrt(total) <= 1.5);
    }
  }

  TEST_CASE("the release is the sum over the fixed denominator qK, exactly, padding untouched") {
    const auto l = toy_layout(2);
    pv::DpFedAvgConfig cfg;
    cfg.sampling_rate = 0.05;
    cfg.units = 100;  // qK = 5, while 3 clients were sampled
    cfg.noise_multiplier = 0.0;
    pv::DpFedAvgRound round(l, cfg);
    dprl::Rng rng(3);
    std::vector<std::vector<float>> ds;
    for (int k = 0; k < 3; ++k) ds.push_back(random_delta(l, rng, 1.0));
    std::vector<float> theta(l.stride * 2, 0.0f);
    for (int i = 0; i < 2; ++i)
      for (const auto& b : l.blocks)
        for (std::size_t k = 0; k < b.size; ++k) theta[i * l.stride + b.offset + k] = 0.25f;
    const auto theta0 = theta;
    round.begin();
    for (const auto& d : ds) round.add(d);
    round.release(theta, nullptr);
    // the sum in double (the clipped float updates are exact there), divided in double
    for (std::size_t k = 0; k < theta.size(); ++k) {
      const double s = ((0.0 + ds[0][k]) + ds[1][k]) + ds[2][k];
      CHECK(theta[k] == theta0[k] + static_cast<float>(s / 5.0));
    }
  }

  TEST_CASE("a secure source releases grid points with the scale inflated to cover snapping") {
    const auto l = toy_layout(2);  // 2 x 28 noised values
    pv::DpFedAvgConfig cfg;
    cfg.clip_norm = 1.0;
    cfg.noise_multiplier = 0.7;
    cfg.sampling_rate = 0.1;
    cfg.units = 50;  // sd = 0.7 * 1 / 5 = 0.14 for sensitivity 1 / 5 = 0.2
    pv::DpFedAvgRound round(l, cfg);
    REQUIRE(round.noised_values() == 56);
    // the sensitivity is C / qK widened by the rounding allowance of the double sum (about 6e-13)
    CHECK(round.sensitivity() == doctest::Approx(0.2 * (1 + round.accumulation_error())));
    CHECK(round.accumulation_error() < 1e-12);
    const auto plan = pv::secure_release_plan(pv::SecureNoise::kGaussian, round.noise_std(),
                                              round.sensitivity(), 56);
    CHECK(round.released_noise_std(false) ==
          doctest::Approx(0.14 * (1 + round.accumulation_error())).epsilon(1e-15));
    CHECK(round.released_noise_std(true) == plan.scale);
    CHECK(plan.scale == doctest::Approx(0.14 * (1 + std::sqrt(56.0) * plan.grid / 0.2)));
    CHECK(plan.grid <= 0.14 / 4096);
    dprl::Rng rng(4);
    const auto d = random_delta(l, rng, 0.9);
    auto noise = pv::make_seeded_noise(9, 0, 0, /*secure=*/true);
    std::vector<float> theta(l.stride * 2, 0.0f);
    round.begin();
    round.add(d);
    round.release(theta, noise.get());
    int off_grid = 0, nonzero = 0;
    for (int i = 0; i < 2; ++i)
      for (std::size_t k = 0; k < l.stride; ++k) {
        const double v = theta[i * l.stride + k];
        bool in_block = false;
        for (const auto& b : l.blocks) in_block |= k >= b.offset && k < b.offset + b.size;
        if (!in_block) {
          CHECK(v == 0.0);  // padding untouched
          continue;
        }
        nonzero += v != 0.0;
        off_grid += v / plan.grid != std::nearbyint(v / plan.grid);
      }
    CHECK(off_grid == 0);
    CHECK(nonzero > 50);
  }

  TEST_CASE("dp_fedavg rejects bad parameters naming them") {
    const auto l = toy_layout(2);
    pv::DpFedAvgConfig c;
    c.sampling_rate = 0.001;
    c.units = 500;
    CHECK_THROWS_WITH_AS(pv::check_dp_fedavg(l, c), doctest::Contains("sampling_rate * units"),
                         dprl::ParamError);
    c.units = 5000;
    c.clip_norm = 0.0;
    CHECK_THROWS_WITH_AS(pv::check_dp_fedavg(l, c), doctest::Contains("clip_norm"),
                         dprl::ParamError);
    c.clip_norm = 1.0;
    c.noise_multiplier = -1;
    CHECK_THROWS_AS(pv::check_dp_fedavg(l, c), dprl::ParamError);
  }

  TEST_CASE("a client update with a NaN or infinite value gets the clip factor 0, not an abort") {
    const auto l = toy_layout(3);
    dprl::Rng rng(17);
    for (const char* mode : {"flat", "per_layer"})
      for (const float bad : {std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(), 3e38f}) {
        pv::DpFedAvgConfig c;
        c.clipping = pv::parse_ensemble_clipping(mode, "clipping");
        c.clip_norm = 0.5;
        auto d = random_delta(l, rng, 1.0);
        // one value of the last member's last block: 3e38 is finite, its square is not a float
        // but is a double; inf and NaN are not finite anywhere
        d[2 * l.stride + 40] = bad;
        const pv::ClipResult r = pv::ensemble_clip(d, l, c);
        const bool finite = std::isfinite(bad);
        CHECK(r.non_finite == !finite);
        if (!finite) {
          for (float v : d) CHECK(v == 0.0f);  // every member, every block: exactly zero
          CHECK(r.norm == 0.0);
        } else {
          double sq = 0;
          for (float v : d) sq += double{v} * v;
          CHECK(std::sqrt(sq) <= c.clip_norm);
        }
        // the round goes on: the zero update adds nothing and the average stays finite
        pv::DpFedAvgRound round(l, [&] {
          pv::DpFedAvgConfig rc = c;
          rc.sampling_rate = 0.5;
          rc.units = 4;
          return rc;
        }());
        round.begin();
        round.add(d);
        std::vector<float> theta(d.size(), 1.0f);
        round.release(theta, nullptr);
        for (float v : theta) CHECK(std::isfinite(v));
        // without clipping (the no_clip variant: no guarantee) it stays an error
        c.clip = false;
        auto e = random_delta(l, rng, 1.0);
        e[5] = std::numeric_limits<float>::quiet_NaN();
        CHECK_THROWS_AS(pv::ensemble_clip(e, l, c), dprl::DataError);
      }
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("server noise has standard deviation z C / (q K) on every parameter") {
    pv::EnsembleLayout l;
    l.members = 4;
    l.stride = 5008;
    l.blocks = {{0, 5000}};
    pv::DpFedAvgConfig cfg;
    cfg.clip_norm = 2.0;
    cfg.noise_multiplier = 0.7;
    cfg.sampling_rate = 0.1;
    cfg.units = 50;  // sd = 0.7 * 2 / 5 = 0.28
    pv::DpFedAvgRound round(l, cfg);
    CHECK(round.noise_std() == doctest::Approx(0.28).epsilon(1e-12));
    auto noise = pv::make_seeded_noise(77);
    double s1 = 0, s2 = 0;
    long n = 0;
    std::vector<float> theta(l.stride * 4);
    for (int rep = 0; rep < 10; ++rep) {
      std::fill(theta.begin(), theta.end(), 0.0f);
      round.begin();
      round.release(theta, noise.get());
      for (int i = 0; i < 4; ++i) {
        for (std::size_t k = 0; k < 5000; ++k) {
          const double v = theta[i * l.stride + k];
          s1 += v;
          s2 += v * v;
          ++n;
        }
        for (std::size_t k = 5000; k < l.stride; ++k) CHECK(theta[i * l.stride + k] == 0.0f);
      }
    }
    // n = 2e5: the variance ratio has sd sqrt(2/n) = 3.2e-3; p = 1e-6 two-sided is 4.89 sd, so
    // |ratio - 1| < 0.0155; the mean has sd 0.28/sqrt(n) = 6.3e-4, bound 4.89 sd = 3.1e-3
    const double var = s2 / n, sd2 = 0.28 * 0.28;
    CHECK(std::abs(var / sd2 - 1.0) < 0.0155);
    CHECK(std::abs(s1 / n) < 3.1e-3);
  }

  TEST_CASE("Poisson sampling includes each unit with probability q independently") {
    auto src = pv::make_seeded_noise(5);
    const int K = 200, R = 5000;
    std::vector<int> count(K, 0);
    long pairs = 0;  // rounds with both unit 0 and unit 1
    for (int r = 0; r < R; ++r) {
      const auto s = pv::poisson_sample(K, 0.1, *src);
      for (std::size_t j = 1; j < s.size(); ++j) CHECK(s[j] > s[j - 1]);
      bool a = false, b = false;
      for (auto k : s) {
        count[k]++;
        a = a || k == 0;
        b = b || k == 1;
      }
      pairs += a && b;
    }
    // Binomial(5000, 0.1): mean 500, sd 21.2; Bonferroni over 200 units at p = 1e-6 is 5.73 sd
    for (int c : count) CHECK(std::abs(c - 500) < 5.73 * 21.22);
    // joint inclusion Binomial(5000, 0.01): mean 50, sd 7.04; 4.89 sd
    CHECK(std::abs(pairs - 50) < 4.89 * 7.04);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("tdp: one round with q = 1 moves the ensemble by at most C, and no_clip does not") {
    const auto data = toy_dataset(20, 30, 1);
    std::vector<std::int64_t> users;
    for (int k = 0; k < 20; ++k) users.push_back(k);
    const auto table = mb::make_table(data, users);
    dprl::ThreadPool pool(1);
    for (const char* variant : {"no_noise", "no_clip"}) {
      auto model = toy_model();
      const auto before = model.buffer();
      mb::TdpConfig cfg;
      cfg.variant = variant;
      cfg.q = 1.0;
      cfg.rounds = 1;
      cfg.clip_norm = 0.05;
      cfg.lr = 0.05;  // large local steps so unclipped updates exceed C
      cfg.select_best = false;
      auto src = pv::make_seeded_noise(9);
      mb::train_ensemble_tdp(model, table, table, cfg, 3, *src, nullptr, nullptr, pool);
      double sq = 0;
      for (std::size_t k = 0; k < before.size(); ++k)
        sq += std::pow(static_cast<double>(model.buffer()[k]) - before[k], 2);
      if (std::string(variant) == "no_noise")
        CHECK(std::sqrt(sq) <= 0.05 * (1 + 1e-5));
      else
        CHECK(std::sqrt(sq) > 0.05);
    }
  }

  TEST_CASE("tdp is identical at 1 and 2 threads and charges the ledger before every block") {
    const auto data = toy_dataset(60, 25, 2);
    std::vector<std::int64_t> users;
    for (int k = 0; k < 60; ++k) users.push_back(k);
    const auto table = mb::make_table(data, users);
    std::vector<dprl::nn::Buffer> out;
    for (int threads : {1, 2}) {
      auto model = toy_model();
      mb::TdpConfig cfg;
      cfg.q = 0.1;
      cfg.z = 0.8;
      cfg.rounds = 40;
      cfg.eval_every = 10;
      cfg.clip_norm = 0.5;
      auto src = pv::make_seeded_noise(11);
      pv::Ledger rdp(1e9, 1e-5, "rdp"), pld(1e9, 1e-5, "pld");
      dprl::ThreadPool pool(threads);
      cfg.pld_block = 16;
      const auto r = mb::train_ensemble_tdp(model, table, table, cfg, 5, *src, &rdp, &pld, pool);
      CHECK(r.rounds == 40);
      CHECK(rdp.entries().size() == 4);  // rounds 1-10, 11-20, ... before each evaluation
      for (const auto& e : rdp.entries()) CHECK(e.count == 10);
      CHECK(pld.entries().size() == 3);  // 16 + 16 + 8 rounds, each charged ahead
      CHECK(rdp.spent_epsilon() ==
            doctest::Approx(pv::rdp_dpsgd_epsilon(
                                {.noise_multiplier = 0.8, .sampling_rate = 0.1, .steps = 40}, 1e-5))
                .epsilon(1e-9));
      CHECK(pld.spent_epsilon() <= rdp.spent_epsilon());
      CHECK(r.curve.size() == 4);
      out.push_back(model.buffer());
    }
    CHECK(out[0] == out[1]);
  }
}
