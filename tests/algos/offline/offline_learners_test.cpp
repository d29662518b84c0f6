// Offline learners: loss gradients against finite differences, the double-DQN / BCQ targets,
// target-network schedule, the BCQ action rule, policy files, determinism, and a short learning
// run on CartPole data.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "algos/core/bcq_policy.hpp"
#include "algos/core/policies.hpp"
#include "algos/offline/bc.hpp"
#include "algos/offline/discrete_bcq.hpp"
#include "algos/offline/discrete_cql.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"
#include "tests/algos/offline/offline_test_util.hpp"

namespace fs = std::filesystem;
using dprl::algos::OfflineBatch;
using dprl::algos::OfflineLearner;

namespace {

OfflineBatch random_batch(int obs, int actions, int n, std::uint64_t seed) {
  dprl::Rng rng(seed);
  OfflineBatch b;
  b.obs.resize(obs, n);
  b.next_obs.resize(obs, n);
  for (int i = 0; i < b.obs.size(); ++i) {
    b.obs.data()[i] = static_cast<float>(rng.normal());
    b.next_obs.data()[i] = static_cast<float>(rng.normal());
  }
  for (int i = 0; i < n; ++i) {
    b.actions.push_back(static_cast<int>(rng.below(actions)));
    b.rewards.push_back(static_cast<float>(3.0 * rng.normal()));  // some |TD| > 1: both Huber arms
    b.not_done.push_back(i % 4 == 3 ? 0.0f : 1.0f);
  }
  b.n = b.users = n;
  return b;
}

// The mean-loss gradient of every trained parameter against central differences of the loss.
void check_gradient(OfflineLearner& learner, const OfflineBatch& b) {
  learner.gradient(b);
  const auto nets = learner.trained_nets();
  std::vector<dprl::nn::Buffer> grads;
  for (std::size_t i = 0; i < nets.size(); ++i) grads.push_back(learner.last_grad(i));
  // h = 1e-3 on float32 losses of size O(1): rounding error about 2^-24 * 10 / h = 6e-4 per
  // difference and truncation h^2 |L'''| / 6 below 1e-6 (away from the ReLU/Huber kinks, which a
  // fixed-seed draw either crosses or not, deterministically); 3e-3 leaves a margin of 5
  const double h = 1e-3, tol = 3e-3;
  int checked = 0;
  for (std::size_t i = 0; i < nets.size(); ++i) {
    float* p = nets[i].net->data();
    const auto& s = nets[i].net->shape();
    for (int l = 0; l < s.num_layers(); ++l) {
      for (std::size_t j : {s.weight_offset(l), s.weight_offset(l) + 1, s.bias_offset(l)}) {
        const float saved = p[j];
        p[j] = saved + static_cast<float>(h);
        const double up = learner.gradient(b);
        p[j] = saved - static_cast<float>(h);
        const double down = learner.gradient(b);
        p[j] = saved;
        CAPTURE(i);
        CAPTURE(l);
        CAPTURE(j);
        CHECK(std::abs((up - down) / (2 * h) - grads[i][j]) < tol);
        ++checked;
      }
    }
  }
  CHECK(checked >= 6);
}

template <class L>
std::unique_ptr<L> tiny(typename L::Params p, int obs, int actions) {
  p.common.hidden_sizes = "6,5";
  auto l = std::make_unique<L>(p);
  l->setup(obs, actions, 3);
  return l;
}

std::shared_ptr<dprl::Dataset> cartpole_data(int episodes, int users, std::uint64_t seed) {
  return std::make_shared<dprl::Dataset>(dprl::testing::rollout_dataset(
      "cartpole", dprl::testing::cartpole_expert, episodes, users, 0.02, seed));
}

dprl::algos::TrainContext cartpole_ctx(std::int64_t steps, std::int64_t eval_every, int episodes,
                                       std::shared_ptr<dprl::Dataset> ds, std::uint64_t seed = 1) {
  dprl::algos::TrainParams t;
  t.steps = steps;
  t.eval_every = eval_every;
  t.eval_episodes = episodes;
  dprl::algos::TrainContext ctx([] { return dprl::envs::make_env("cartpole"); }, seed, t, nullptr,
                                nullptr);
  ctx.set_dataset(std::move(ds), "test data");
  return ctx;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("discrete_cql, discrete_bcq and bc gradients match finite differences of their loss") {
    const OfflineBatch b = random_batch(3, 4, 12, 8);
    SUBCASE("cql") {
      dprl::algos::DiscreteCqlParams p;
      p.alpha = 0.7;
      auto l = tiny<dprl::algos::DiscreteCql>(p, 3, 4);
      check_gradient(*l, b);
    }
    SUBCASE("bcq shared encoder") {
      auto l = tiny<dprl::algos::DiscreteBcq>(dprl::algos::DiscreteBcqParams{}, 3, 4);
      CHECK(l->trained_nets().size() == 3);
      check_gradient(*l, b);
    }
    SUBCASE("bcq separate classifier") {
      dprl::algos::DiscreteBcqParams p;
      p.share_encoder = false;
      p.beta = 0.5;
      auto l = tiny<dprl::algos::DiscreteBcq>(p, 3, 4);
      CHECK(l->trained_nets().size() == 4);
      check_gradient(*l, b);
    }
    SUBCASE("bc") {
      auto l = tiny<dprl::algos::Bc>(dprl::algos::BcParams{}, 3, 4);
      check_gradient(*l, b);
    }
  }

  TEST_CASE("discrete_cql loss: double-DQN Huber TD plus alpha (logsumexp - Q(s, a))") {
    dprl::algos::DiscreteCqlParams p;
    p.alpha = 2.0;
    p.target.gamma = 0.9;
    auto l = tiny<dprl::algos::DiscreteCql>(p, 3, 3);
    const OfflineBatch b = random_batch(3, 3, 5, 4);
    const double loss = l->gradient(b);
    // the loss by hand from forward passes
    dprl::nn::MlpCache c;
    const dprl::nn::Mat qs = l->q().forward(b.obs, c);
    const dprl::nn::Mat qn = l->q().forward(b.next_obs, c);
    const dprl::nn::Mat tq = l->target().forward(b.next_obs, c);
    double expect = 0;
    for (int i = 0; i < b.n; ++i) {
      int k;
      qn.col(i).maxCoeff(&k);
      const double y = b.rewards[i] + 0.9 * b.not_done[i] * tq(k, i);
      const double d = qs(b.actions[i], i) - y;
      const double huber = std::abs(d) < 1 ? 0.5 * d * d : std::abs(d) - 0.5;
      double lse = 0;
      for (int a = 0; a < 3; ++a) lse += std::exp(double{qs(a, i)});
      expect += huber + 2.0 * (std::log(lse) - qs(b.actions[i], i));
    }
    CHECK(loss == doctest::Approx(expect / b.n).epsilon(1e-5));
  }

  TEST_CASE("target network: hard copy after gradient steps 1, 1 + k, 1 + 2k (d3rlpy's schedule)") {
    dprl::algos::DiscreteCqlParams p;
    p.target.target_update_interval = 3;
    auto l = tiny<dprl::algos::DiscreteCql>(p, 3, 2);
    const OfflineBatch b = random_batch(3, 2, 8, 1);
    CHECK(l->target().buffer() == l->q().buffer());
    const std::vector<bool> equal_after = {true, false, false, true, false, false, true};
    for (bool eq : equal_after) {
      l->step(b);
      CAPTURE(l->steps_taken());
      CHECK((l->target().buffer() == l->q().buffer()) == eq);
    }
    // Polyak: tau = 0.5 moves half way
    p.target.tau = 0.5;
    p.target.target_update_interval = 1;
    auto m = tiny<dprl::algos::DiscreteCql>(p, 3, 2);
    const auto before = m->target().buffer();
    m->step(b);
    for (std::size_t i = 0; i < before.size(); i += 97)
      CHECK(m->target().buffer()[i] ==
            doctest::Approx(0.5 * before[i] + 0.5 * m->q().buffer()[i]).epsilon(1e-6));
  }

  TEST_CASE("bcq action rule: greedy in Q among actions with G / max G > threshold") {
    // log G differences: action 0 is the classifier's favourite; action 2 is at ratio e^-1 = 0.37,
    // action 1 at e^-2 = 0.14 (< 0.3: excluded although its Q is the largest)
    const float logits[3] = {1.0f, -1.0f, 0.0f};
    const float q[3] = {0.0f, 5.0f, 1.0f};
    CHECK(dprl::algos::bcq_select(q, logits, 3, std::log(0.3)) == 2);
    CHECK(dprl::algos::bcq_select(q, logits, 3, std::log(0.1)) == 1);
    CHECK(dprl::algos::bcq_select(q, logits, 3, std::log(0.5)) == 0);
    // negative Q values: the min-shift keeps allowed actions above masked ones
    const float qneg[3] = {-9.0f, -1.0f, -3.0f};
    CHECK(dprl::algos::bcq_select(qneg, logits, 3, std::log(0.3)) == 2);
    // an env mask removes actions too
    const std::uint8_t mask[3] = {1, 1, 0};
    CHECK(dprl::algos::bcq_select(q, logits, 3, std::log(0.3), mask) == 0);
  }

  TEST_CASE(
      "offline learners refuse missing data, mismatched spaces and private runs without a "
      "budget") {
    dprl::algos::DiscreteCqlParams p;
    dprl::algos::DiscreteCql cql(p);
    dprl::algos::TrainParams t;
    dprl::algos::TrainContext none([] { return dprl::envs::make_env("cartpole"); }, 1, t, nullptr,
                                   nullptr);
    CHECK_THROWS_WITH_AS(cql.train(none), doctest::Contains("data:"), dprl::ConfigError);
    auto ctx = cartpole_ctx(10, 0, 1, cartpole_data(2, 2, 1));
    dprl::algos::TrainContext acro([] { return dprl::envs::make_env("acrobot"); }, 1, t, nullptr,
                                   nullptr);
    acro.set_dataset(cartpole_data(2, 2, 1), "cp.hdf5");
    CHECK_THROWS_WITH_AS(cql.train(acro), doctest::Contains("cp.hdf5"), dprl::DataError);
    p.dp.dp = true;
    CHECK_THROWS_WITH_AS(dprl::algos::DiscreteCql{p}, doctest::Contains("discrete_cql.epsilon"),
                         dprl::ParamError);
    dprl::algos::DiscreteBcqParams q;
    q.action_flexibility = 0;
    CHECK_THROWS_AS(dprl::algos::DiscreteBcq{q}, dprl::ParamError);
  }

  TEST_CASE("bcq policy files round-trip and load through make_policy") {
    auto ds = cartpole_data(3, 3, 2);
    dprl::algos::DiscreteBcqParams p;
    p.common.hidden_sizes = "16,16";
    dprl::algos::DiscreteBcq bcq(p);
    auto ctx = cartpole_ctx(50, 0, 2, ds);
    bcq.train(ctx);
    const auto file = fs::temp_directory_path() / "dprl_offline_bcq_policy.bin";
    bcq.save_policy(file);
    auto env = dprl::envs::make_env("cartpole");
    auto loaded = dprl::algos::make_policy(file.string(), *env);
    auto live = bcq.policy();
    dprl::Rng rng(3);
    std::vector<float> obs(4);
    for (int i = 0; i < 200; ++i) {
      for (float& v : obs) v = static_cast<float>(rng.normal());
      CHECK(loaded->act_discrete(obs, {}) == live->act_discrete(obs, {}));
    }
    auto acro = dprl::envs::make_env("acrobot");
    CHECK_THROWS_AS(dprl::algos::make_policy(file.string(), *acro), dprl::DataError);
    fs::remove(file);
  }
}

TEST_SUITE("golden") {
  TEST_CASE("offline learners: the same seed gives the same networks") {
    auto ds = cartpole_data(4, 4, 3);
    auto run = [&](std::uint64_t seed) {
      dprl::algos::DiscreteBcqParams p;
      p.common.hidden_sizes = "16,16";
      dprl::algos::DiscreteBcq bcq(p);
      auto ctx = cartpole_ctx(300, 100, 2, ds, seed);
      bcq.train(ctx);
      auto nets = bcq.trained_nets();
      return nets[0].net->buffer();
    };
    const auto a = run(5), b = run(5), c = run(6);
    CHECK(a == b);
    CHECK(a != c);
  }
}

TEST_SUITE("slow") {
  TEST_CASE("bc, discrete_cql and discrete_bcq learn CartPole from expert data") {
    auto ds = cartpole_data(20, 20, 1);
    auto learn = [&](dprl::algos::Algorithm& algo) {
      auto ctx = cartpole_ctx(4000, 0, 10, ds);
      algo.train(ctx);
      return ctx.last_eval().return_mean;
    };
    dprl::algos::BcParams bp;
    dprl::algos::Bc bc(bp);
    dprl::algos::DiscreteCqlParams cp;
    cp.common.learning_rate = 1e-3;
    cp.target.target_update_interval = 1000;
    dprl::algos::DiscreteCql cql(cp);
    dprl::algos::DiscreteBcqParams qp;
    qp.common.learning_rate = 1e-3;
    qp.target.target_update_interval = 1000;
    dprl::algos::DiscreteBcq bcq(qp);
    // the expert balances for 500 steps; a random policy averages about 22
    CHECK(learn(bc) >= 400);
    CHECK(learn(cql) >= 400);
    CHECK(learn(bcq) >= 400);
  }
}
