// PriMORL's neighbouring relation as implemented: adding or removing one trajectory (unit) changes
// the training table in that unit only (the test split is decided per unit), and a client's
// local training does not depend on where its unit sits in the table (streams keyed by unit id),
// so neighbouring inputs' rounds differ by one client's clipped update.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

#include "algos/model_based/ensemble_train.hpp"
#include "algos/model_based/model_data.hpp"
#include "engine/rng.hpp"
#include "privacy/noise_source.hpp"

namespace mb = dprl::algos::model_based;

namespace {

// n one-step trajectories of a 2-d state and 1-d action, user ids first_id..first_id + n - 1;
// unit u's data depend on its id only
dprl::Dataset units_dataset(std::int64_t first_id, std::int64_t n, int len = 1) {
  dprl::DatasetInfo info;
  info.dataset_id = "units";
  info.observation_space = dprl::Space::box({-10, -10}, {10, 10});
  info.action_space = dprl::Space::box({-1}, {1});
  dprl::Dataset d(info);
  for (std::int64_t id = first_id; id < first_id + n; ++id) {
    dprl::Rng rng(dprl::derive_seed(99, dprl::Domain::kDataset, static_cast<std::uint64_t>(id)));
    std::vector<float> obs, act, rew;
    std::vector<std::uint8_t> term(len, 0), trunc(len, 0);
    trunc.back() = 1;
    float s0 = static_cast<float>(rng.uniform(-1, 1)), s1 = static_cast<float>(rng.uniform(-1, 1));
    for (int t = 0; t < len; ++t) {
      const float a = static_cast<float>(rng.uniform(-1, 1));
      obs.insert(obs.end(), {s0, s1});
      act.push_back(a);
      rew.push_back(-s0 * s0);
      const float n0 = 0.9f * s0 + 0.1f * s1, n1 = 0.9f * s1 + 0.2f * a;
      s0 = n0;
      s1 = n1;
    }
    obs.insert(obs.end(), {s0, s1});
    d.add_episode(obs, act, rew, term, trunc, id);
  }
  return d;
}

std::vector<std::int64_t> sym_diff(std::vector<std::int64_t> a, std::vector<std::int64_t> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::vector<std::int64_t> out;
  std::set_symmetric_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("primorl: one added trajectory changes the training split in that unit only") {
    // the seed PriMORL derives from data_seed = 1
    const std::uint64_t seed = dprl::derive_seed(1, dprl::Domain::kDataset, 1u << 20);
    for (const std::int64_t m : {300, 3000})
      for (const double f : {0.01, 0.2}) {
        CAPTURE(m);
        CAPTURE(f);
        const auto a = mb::split_by_unit(units_dataset(0, m), f, seed);
        const auto b = mb::split_by_unit(units_dataset(0, m + 1), f, seed);
        // the test split is the same except perhaps the added unit; the training split differs
        // by the added unit or not at all
        const auto dtest = sym_diff(a.test_users, b.test_users);
        const auto dtrain = sym_diff(a.train_users, b.train_users);
        CHECK(dtest.size() + dtrain.size() == 1);
        for (auto u : dtest) CHECK(u == m);
        for (auto u : dtrain) CHECK(u == m);
        // and the fraction is what was asked for: |test| ~ Binomial(m, f); at p = 1e-6 the
        // deviation stays below 4.9 standard deviations (two-sided normal quantile)
        const double sd = std::sqrt(m * f * (1 - f));
        CHECK(std::abs(static_cast<double>(a.test_users.size()) - m * f) <= 4.9 * sd + 1);
        // removing the first unit (every position shifts) moves nothing else either
        const auto c = mb::split_by_unit(units_dataset(1, m - 1), f, seed);
        CHECK(sym_diff(a.test_users, c.test_users).size() +
                  sym_diff(a.train_users, c.train_users).size() ==
              1);
      }
  }

  TEST_CASE("primorl: a client's local training is keyed by its unit, not its table position") {
    // q = 1 and no noise: every unit is a client every round and the round is deterministic.
    // With the denominator K fixed, the table without unit 0 must give the same round as the
    // full table minus unit 0's own update: (theta_all - theta0) = (theta_rest - theta0) +
    // (theta_only0 - theta0). With position-keyed shuffles every later unit changes its update.
    const std::int64_t m = 6;
    const auto data = units_dataset(0, m, /*len=*/24);
    auto table_of = [&](std::vector<std::int64_t> users) { return mb::make_table(data, users); };
    const auto all = table_of({0, 1, 2, 3, 4, 5}), rest = table_of({1, 2, 3, 4, 5}),
               only0 = table_of({0});
    mb::ProbEnsembleConfig mc;
    mc.in_dim = 3;
    mc.out_dim = 3;
    mc.hidden = {16};
    mc.members = 2;
    mb::TdpConfig cfg;
    cfg.variant = "no_noise";
    cfg.q = 1.0;
    cfg.rounds = 1;
    cfg.units = m;  // the public K: the same denominator for all three tables
    cfg.batch_size = 4;
    cfg.local_epochs = 2;
    cfg.lr = 0.01;
    cfg.clip_norm = 1e3;  // nothing clipped: the update is the local training's own result
    cfg.select_best = false;
    dprl::ThreadPool pool(1);
    auto run = [&](const mb::TransitionTable& t) {
      mb::ProbEnsemble model(mc);
      model.init(4);
      auto src = dprl::privacy::make_seeded_noise(9);
      mb::train_ensemble_tdp(model, t, t, cfg, 3, *src, nullptr, nullptr, pool);
      return model.buffer();
    };
    mb::ProbEnsemble m0(mc);
    m0.init(4);
    const auto theta0 = m0.buffer();
    const auto a = run(all), r = run(rest), o = run(only0);
    double diff = 0, scale = 0;
    for (std::size_t k = 0; k < theta0.size(); ++k) {
      const double lhs = double{a[k]} - theta0[k];
      const double rhs = (double{r[k]} - theta0[k]) + (double{o[k]} - theta0[k]);
      diff = std::max(diff, std::abs(lhs - rhs));
      scale = std::max(scale, std::abs(lhs));
    }
    REQUIRE(scale > 1e-4);
    // float sums of 6 updates of size <= scale: a few ulps of scale, far below a changed update
    CHECK(diff <= 1e-5 * scale);
  }
}
