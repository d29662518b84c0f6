// The shared SAC update: update() is exactly one critic, one actor-and-temperature and one target
// step; critic steps fit fixed targets; the temperature moves towards its target entropy.
#include "algos/online/sac_learner.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "engine/rng.hpp"

namespace {

using dprl::algos::SacLearner;
using dprl::algos::SacLearnerConfig;

// obs 3, act 1 in [-2, 2] (Pendulum's shapes); rewards in [-1, 1]
dprl::algos::ReplayBatch random_batch(int n, std::uint64_t seed, bool terminal) {
  dprl::Rng rng(seed);
  dprl::algos::ReplayBatch b;
  b.obs.resize(3, n);
  b.next_obs.resize(3, n);
  b.actions.resize(1, n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < 3; ++j) {
      b.obs(j, i) = static_cast<float>(rng.uniform(-1, 1));
      b.next_obs(j, i) = static_cast<float>(rng.uniform(-1, 1));
    }
    b.actions(0, i) = static_cast<float>(rng.uniform(-2, 2));
    b.rewards.push_back(static_cast<float>(rng.uniform(-1, 1)));
    b.terminated.push_back(terminal ? 1.0f : 0.0f);
  }
  return b;
}

SacLearnerConfig small() {
  SacLearnerConfig c;
  c.hidden = {16, 16};
  return c;
}

std::vector<float> actor_bytes(const SacLearner& l) {
  return {l.actor().buffer().begin(), l.actor().buffer().end()};
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("update is one critic, one actor-and-temperature and one target step") {
    SacLearner a(3, 1, {-2}, {2}, small(), 11), b(3, 1, {-2}, {2}, small(), 11);
    for (int k = 0; k < 3; ++k) {
      const auto batch = random_batch(32, 100 + k, false);
      a.update(batch);
      b.critic_update(batch);
      b.actor_update(batch.obs);
      b.target_update();
    }
    CHECK(actor_bytes(a) == actor_bytes(b));
    CHECK(a.alpha() == b.alpha());
    CHECK(a.last_q_loss() == b.last_q_loss());
    CHECK(a.alpha() != 1.0);  // autotuned from log alpha = 0
  }

  TEST_CASE("critic steps fit fixed targets (terminal transitions: y = r)") {
    auto cfg = small();
    cfg.critic_lr = 1e-3;
    SacLearner l(3, 1, {-2}, {2}, cfg, 5);
    const auto batch = random_batch(64, 7, true);
    l.critic_update(batch);
    const double first = l.last_q_loss();
    for (int k = 0; k < 1000; ++k) l.critic_update(batch);
    // the initial critics output about 0 against r ~ U(-1, 1) (loss ~ 2 x 1/3 for both critics);
    // 1000 Adam steps (lr 1e-3) on 64 fixed points must take it well below half
    CHECK(first > 0.3);
    CHECK(l.last_q_loss() < 0.5 * first);
  }

  TEST_CASE("the temperature moves towards its target entropy") {
    auto cfg = small();
    cfg.target_entropy = 10.0;  // far above any tanh-Gaussian entropy here: alpha must grow
    SacLearner up(3, 1, {-2}, {2}, cfg, 3);
    cfg.target_entropy = -10.0;  // far below: alpha must shrink
    SacLearner down(3, 1, {-2}, {2}, cfg, 3);
    const auto batch = random_batch(32, 9, false);
    for (int k = 0; k < 5; ++k) {
      up.actor_update(batch.obs);
      down.actor_update(batch.obs);
    }
    CHECK(up.alpha() > 1.0);
    CHECK(down.alpha() < 1.0);
  }
}
