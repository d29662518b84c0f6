// The pessimistic model and the policy stage: both penalties against hand-computed examples,
// the penalised reward, bad parameters, and that the policy stage is deterministic and reads no
// data unless the MOPO baseline asks for it.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "algos/model_based/mb_sac.hpp"
#include "algos/model_based/model_env.hpp"
#include "engine/registry.hpp"
#include "envs/register_envs.hpp"

namespace mb = dprl::algos::model_based;
using dprl::nn::Mat;

namespace {

mb::ProbEnsemble pendulum_model(int members) {
  mb::ProbEnsembleConfig c;
  c.in_dim = 4;
  c.out_dim = 4;
  c.hidden = {16, 16};
  c.members = members;
  mb::ProbEnsemble m(c);
  m.init(8);
  return m;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("u_MA in both forms on a hand-computed example") {
    // member 0 variances (1, 4), member 1 variances (9, 0.25)
    Mat lv(4, 1);
    lv << std::log(1.0f), std::log(4.0f), std::log(9.0f), std::log(0.25f);
    std::vector<float> u(1);
    mb::penalty_ma(lv, 2, 2, false, u);  // max(|(1, 4)|, |(9, 0.25)|) = sqrt(81.0625)
    CHECK(u[0] == doctest::Approx(std::sqrt(81.0625)).epsilon(1e-6));
    mb::penalty_ma(lv, 2, 2, true, u);  // max(|(1, 2)|, |(3, 0.5)|) = sqrt(9.25)
    CHECK(u[0] == doctest::Approx(std::sqrt(9.25)).epsilon(1e-6));
  }

  TEST_CASE("u_MPD is the largest pairwise distance of the members' means") {
    // members' (ds0, ds1, r): (0, 0, 5), (3, 4, -5), (1, 1, 0); two samples (second: all equal)
    Mat mean(9, 2);
    mean.col(0) << 0, 0, 5, 3, 4, -5, 1, 1, 0;
    mean.col(1).setConstant(0.5f);
    std::vector<float> u(2);
    mb::penalty_mpd(mean, 3, 3, 2, u);  // state dims: |m0 - m1| = 5
    CHECK(u[0] == doctest::Approx(5.0).epsilon(1e-6));
    CHECK(u[1] == 0.0f);
    mb::penalty_mpd(mean, 3, 3, 3, u);  // with reward: sqrt(25 + 100)
    CHECK(u[0] == doctest::Approx(std::sqrt(125.0)).epsilon(1e-6));
  }

  TEST_CASE("model env: penalised reward, box clipping, bad parameters") {
    auto model = pendulum_model(3);
    mb::ModelEnvConfig cfg;
    cfg.penalty = mb::Penalty::kMpd;
    cfg.lambda = 2.5;
    cfg.obs_low = {-1, -1, -8};
    cfg.obs_high = {1, 1, 8};
    mb::ModelEnv env(model, cfg);
    Mat s(3, 64), a(1, 64), next;
    dprl::Rng rng(3);
    for (int i = 0; i < 64; ++i) {
      s.col(i) << std::cos(i * 0.1f), std::sin(i * 0.1f), 0.1f * i - 3;
      a(0, i) = static_cast<float>(rng.uniform(-2, 2));
    }
    std::vector<float> r, raw, u;
    env.step(s, a, rng, next, r, raw, u);
    for (int i = 0; i < 64; ++i) {
      CHECK(r[i] == raw[i] - 2.5f * u[i]);
      CHECK(u[i] > 0.0f);
      for (int j = 0; j < 3; ++j) CHECK(std::abs(next(j, i)) <= (j == 2 ? 8.0f : 1.0f));
    }
    mb::ModelEnvConfig bad = cfg;
    bad.lambda = -0.1;
    CHECK_THROWS_WITH_AS(mb::ModelEnv(model, bad), doctest::Contains("penalty_lambda"),
                         dprl::ParamError);
    auto one = pendulum_model(1);
    CHECK_THROWS_WITH_AS(mb::ModelEnv(one, cfg), doctest::Contains("members >= 2"),
                         dprl::ParamError);
    cfg.penalty = mb::Penalty::kMaStd;
    CHECK_NOTHROW(mb::ModelEnv(one, cfg));
  }

  TEST_CASE("policy stage is deterministic and refuses real data it was not asked for") {
    auto model = pendulum_model(2);
    auto env = dprl::envs::env_registry().make("pendulum", {});
    mb::ModelEnvConfig ecfg;
    mb::PolicyStageConfig pc;
    pc.epochs = 2;
    pc.steps_per_epoch = 20;
    pc.batch_size = 32;
    pc.rollout_freq = 10;
    pc.rollout_batch = 50;
    pc.horizon = 5;
    dprl::algos::SacLearnerConfig sc;
    sc.hidden = {16, 16};
    std::vector<std::vector<float>> actors;
    for (int rep = 0; rep < 2; ++rep) {
      dprl::algos::SacLearner learner(3, 1, {-2}, {2}, sc, 4);
      int epochs = 0;
      mb::train_policy_in_model(model, ecfg, pc, learner, *env, 6, nullptr,
                                [&](const mb::EpochStats& st) {
                                  ++epochs;
                                  CHECK(st.updates == 20 * epochs);
                                  CHECK(std::isfinite(st.q_loss));
                                });
      CHECK(epochs == 2);
      actors.emplace_back(learner.actor().buffer().begin(), learner.actor().buffer().end());
    }
    CHECK(actors[0] == actors[1]);
    dprl::algos::SacLearner learner(3, 1, {-2}, {2}, sc, 4);
    pc.real_ratio = 0.05;
    CHECK_THROWS_AS(mb::train_policy_in_model(model, ecfg, pc, learner, *env, 6, nullptr, {}),
                    dprl::ParamError);
  }
}
