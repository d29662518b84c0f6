// Samplers: per-user Poisson inclusion rates (statistical, fixed seeds), one transition per user
// per shuffle-interleave batch, epochs that use every transition once, deterministic splits.
#include "engine/data/dataset_sampler.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "engine/error.hpp"

namespace {

using dprl::Dataset;
using dprl::Rng;
using dprl::Space;

// users[e] owns episode e of lengths[e] steps.
Dataset make(const std::vector<std::int64_t>& users, const std::vector<int>& lengths) {
  dprl::DatasetInfo info;
  info.observation_space = Space::box(1, -1e9, 1e9);
  info.action_space = Space::discrete(2);
  Dataset d(info);
  for (std::size_t e = 0; e < users.size(); ++e) {
    const int t = lengths[e];
    std::vector<float> obs(t + 1, static_cast<float>(e)), act(t, 0), rew(t, 0);
    std::vector<std::uint8_t> flags(t, 0);
    d.add_episode(obs, act, rew, flags, flags, users[e]);
  }
  return d;
}

// m users, each with 1 + (u % 4) episodes of 1 + (u + e) % 5 steps, interleaved.
Dataset population(int m) {
  std::vector<std::int64_t> users;
  std::vector<int> lengths;
  for (int round = 0; round < 4; ++round)
    for (int u = 0; u < m; ++u)
      if (round <= u % 4) users.push_back(1000 + 3 * u), lengths.push_back(1 + (u + round) % 5);
  return make(users, lengths);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("UserIndex enumerates each user's transitions in episode order") {
    const Dataset d = make({7, 3, 7, 9}, {2, 3, 1, 2});
    const dprl::UserIndex idx(d);
    REQUIRE(idx.num_users() == 3);
    CHECK(idx.user_id(0) == 3);
    CHECK(idx.num_transitions(0) == 3);
    CHECK(idx.num_transitions(1) == 3);
    std::vector<std::size_t> seven;
    for (std::size_t k = 0; k < 3; ++k) seven.push_back(idx.transition(1, k));
    CHECK(seven == std::vector<std::size_t>{0, 1, 5});
    CHECK(idx.transition(0, 2) == 4);
    CHECK(idx.transition(2, 1) == 7);
  }

  TEST_CASE("parameters are checked") {
    const Dataset d = population(4);
    const dprl::UserIndex idx(d);
    CHECK_THROWS_AS(dprl::PoissonUserSampler(idx, 1.5), dprl::ParamError);
    CHECK_THROWS_AS(dprl::PoissonUserSampler(idx, -0.1), dprl::ParamError);
    CHECK_THROWS_AS(dprl::PoissonUserSampler(idx, NAN), dprl::ParamError);
    CHECK_THROWS_AS(dprl::PoissonUserSampler(idx, 0.5, 0), dprl::ParamError);
    CHECK_THROWS_AS(dprl::ShuffleInterleaveSampler(idx, 0), dprl::ParamError);
    Rng rng(1);
    CHECK_THROWS_AS(dprl::split_by_user(d, 1.5, rng), dprl::ParamError);
  }
}

TEST_SUITE("statistical") {
  TEST_CASE("Poisson users: each user included at rate q, one of its own transitions each") {
    const Dataset d = population(200);
    const dprl::UserIndex idx(d);
    const double q = 0.1;
    const dprl::PoissonUserSampler s(idx, q);
    CHECK(s.expected_users() == doctest::Approx(20.0));
    const int batches = 5000;
    std::vector<int> hits(idx.num_users(), 0);
    long total = 0;
    dprl::UserBatch b;
    for (int i = 0; i < batches; ++i) {
      Rng rng(dprl::derive_seed(11, dprl::Domain::kMinibatch, 0, i));
      s.sample(rng, b);
      REQUIRE(b.offsets.size() == b.users.size() + 1);
      REQUIRE(b.transitions.size() == b.users.size());
      for (std::size_t j = 0; j < b.num_users(); ++j) {
        const std::size_t u = b.users[j];
        ++hits[u];
        // the transition is the user's own
        const std::size_t t = b.transitions[b.offsets[j]];
        CHECK(d.user_id(d.episode_of(t)) == idx.user_id(u));
        if (j > 0) CHECK(b.users[j - 1] < u);
      }
      total += static_cast<long>(b.num_users());
    }
    // total ~ Binomial(10^6, 0.1): sd 300; two-sided p = 1e-6 needs |z| < 4.89: 1467
    CHECK(std::abs(total - 100000) < 1467);
    // each user ~ Binomial(5000, 0.1): sd 21.2; p = 1e-6 / 200 users (Bonferroni): |z| < 5.9: 125
    for (int h : hits) CHECK(std::abs(h - 500) < 125);
  }

  TEST_CASE("Poisson users: the transition is uniform among the user's transitions") {
    const Dataset d = make({4, 4, 4}, {3, 5, 2});  // one user, 10 transitions over 3 episodes
    const dprl::UserIndex idx(d);
    const dprl::PoissonUserSampler s(idx, 1.0);
    std::vector<int> count(10, 0);
    dprl::UserBatch b;
    Rng rng(3);
    for (int i = 0; i < 100000; ++i) {
      s.sample(rng, b);
      REQUIRE(b.transitions.size() == 1);
      ++count[b.transitions[0]];
    }
    // each ~ Binomial(10^5, 0.1): sd 94.9; p = 1e-6 / 10: |z| < 5.3: 503
    for (int c : count) CHECK(std::abs(c - 10000) < 503);
  }

  TEST_CASE("Poisson users, fixed contribution k: distinct transitions, inclusion k / count") {
    const Dataset d = make({1, 1, 2}, {2, 3, 2});  // user 1: 5 transitions; user 2: 2
    const dprl::UserIndex idx(d);
    const dprl::PoissonUserSampler s(idx, 1.0, 3);
    std::vector<int> count(7, 0);
    dprl::UserBatch b;
    Rng rng(8);
    for (int i = 0; i < 100000; ++i) {
      s.sample(rng, b);
      REQUIRE(b.num_users() == 2);
      REQUIRE(b.offsets == std::vector<std::size_t>{0, 3, 6});
      const std::set<std::size_t> first(b.transitions.begin(), b.transitions.begin() + 3);
      CHECK(first.size() == 3);  // without replacement when the user has >= k
      for (std::size_t j = 0; j < 3; ++j) ++count[b.transitions[j]];
      for (std::size_t j = 3; j < 6; ++j) CHECK(b.transitions[j] >= 5);  // user 2's own
    }
    // each of user 1's ~ Binomial(10^5, 3/5): sd 154.9; p = 1e-6 / 5: |z| < 5.2: 806
    for (int t = 0; t < 5; ++t) CHECK(std::abs(count[t] - 60000) < 806);
  }

  TEST_CASE("shuffle-interleave: at most one transition per user per batch, each once an epoch") {
    const Dataset d = population(50);
    const dprl::UserIndex idx(d);
    dprl::ShuffleInterleaveSampler s(idx, 16);
    for (int epoch = 0; epoch < 3; ++epoch) {
      Rng rng(dprl::derive_seed(5, dprl::Domain::kMinibatch, epoch));
      s.begin_epoch();
      std::vector<int> seen(d.num_transitions(), 0);
      std::vector<std::size_t> batch;
      std::size_t batches = 0, full = 0;
      while (s.next(rng, batch)) {
        ++batches;
        CHECK(batch.size() <= 16);
        full += batch.size() == 16 ? 1 : 0;
        std::set<std::int64_t> users;
        for (std::size_t t : batch) {
          ++seen[t];
          users.insert(d.user_id(d.episode_of(t)));
        }
        CHECK(users.size() == batch.size());
      }
      CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
      CHECK(s.remaining() == 0);
      // weighted interleaving keeps batches full until few users are left
      CHECK(full * 16 >= d.num_transitions() * 3 / 4);
    }
    // same stream, same batches
    std::vector<std::size_t> a, b;
    Rng r1(9), r2(9);
    s.begin_epoch();
    s.next(r1, a);
    s.begin_epoch();
    s.next(r2, b);
    CHECK(a == b);
  }

  TEST_CASE("uniform transitions cover the range evenly") {
    const Dataset d = population(10);
    Rng rng(4);
    std::vector<std::size_t> out;
    std::vector<int> count(d.num_transitions(), 0);
    const int draws = 200;
    for (int i = 0; i < draws; ++i) {
      dprl::sample_uniform(d, 1000, rng, out);
      REQUIRE(out.size() == 1000);
      for (auto t : out) ++count[t];
    }
    const double p = 1.0 / static_cast<double>(d.num_transitions()), n = draws * 1000.0;
    const double sd = std::sqrt(n * p * (1 - p));
    // p = 1e-6 / transitions (Bonferroni, < 100 transitions): |z| < 6
    for (int c : count) CHECK(std::abs(c - n * p) < 6 * sd);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("splits by episode and by user: disjoint, complete, sized, seeded") {
    const Dataset d = population(40);
    Rng a(1), b(1), c(2);
    const auto s1 = dprl::split_by_episode(d, 0.25, a);
    const auto s2 = dprl::split_by_episode(d, 0.25, b);
    CHECK(s1.test == s2.test);
    CHECK(s1.test.size() == static_cast<std::size_t>(std::llround(0.25 * d.num_episodes())));
    CHECK(s1.train.size() + s1.test.size() == d.num_episodes());
    std::vector<std::size_t> all = s1.train;
    all.insert(all.end(), s1.test.begin(), s1.test.end());
    std::sort(all.begin(), all.end());
    for (std::size_t e = 0; e < all.size(); ++e) CHECK(all[e] == e);
    CHECK(dprl::split_by_episode(d, 0.25, c).test != s1.test);

    Rng u(7);
    const auto su = dprl::split_by_user(d, 0.3, u);
    std::set<std::int64_t> train_users, test_users;
    for (auto e : su.train) train_users.insert(d.user_id(e));
    for (auto e : su.test) test_users.insert(d.user_id(e));
    CHECK(test_users.size() == 12);
    for (auto x : test_users) CHECK(train_users.count(x) == 0);
    CHECK(su.train.size() + su.test.size() == d.num_episodes());
    CHECK(d.subset(su.test).users().size() == 12);
  }
}
