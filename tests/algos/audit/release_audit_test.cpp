// The white-box audits of the learners whose releases carry every user (no subsampling): the DP
// actor-critic's noised vectors and private LSVI-UCB's Gram and target releases. Run as claimed
// they are not refuted; with half the noise, or canaries of twice the declared sensitivity, they
// are. Fixed seeds: every figure is deterministic; the margins are stated.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "algos/actor_critic/actor_critic_audit.hpp"
#include "algos/lsvi/lsvi_ucb_audit.hpp"
#include "engine/error.hpp"
#include "envs/register_envs.hpp"

using namespace dprl;
using namespace dprl::algos;

namespace {

AuditParams white_box(std::int64_t canaries, std::int64_t guesses, const char* mis) {
  AuditParams a;
  a.canaries = canaries;
  a.guesses = guesses;
  a.white_box = true;
  a.seed = 0;
  a.mis_specify = mis;
  return a;
}

// DP-Actor on a 40,000-state chain (80,000 actor values), 10 episodes of 10 steps: 100 releases
// at the paper's per-update epsilon 0.1, delta 1e-6 (sigma 53.0, noise multiplier 26.5 against
// the sensitivity 2C), composed by PLD: the run reports 1.657.
ActorCriticParams ac_params() {
  ActorCriticParams p;
  p.dp = "actor";
  p.epsilon = 0.1;
  p.delta = 1e-6;
  p.episodes = 10;
  p.clip = "fixed";
  p.accountant = "pld";
  p.noise = "seeded";
  return p;
}

AuditReport run_ac(const AuditParams& a) {
  TrainParams t;
  t.steps = 100000;
  return audit_actor_critic(
      ActorCritic(ac_params()),
      [] {
        return envs::make_env("chain_mdp",
                              {{"n", {"40000", ""}}, {"max_episode_steps", {"10", ""}}});
      },
      t, a);
}

// LSVI-UCB on a random linear MDP with d = 40 features and H = 500 steps (20,000 target entries),
// 64 episodes in 4 static batches: 3 Gram nodes and 4 target releases carry the first episode;
// the noise is calibrated to epsilon 2 at delta 1e-5 (PLD), which the run reports.
LsviUcbParams lsvi_params() {
  LsviUcbParams p;
  p.episodes = 64;
  p.lambda = 0.01;
  p.batching = "static";
  p.batches = 4;
  p.private_ = true;
  p.epsilon = 2.0;
  p.delta = 1e-5;
  p.noise = "seeded";
  return p;
}

std::unique_ptr<Env> linear_env() {
  return envs::make_env("linear_mdp", {{"kind", {"random", ""}},
                                       {"num_states", {"10", ""}},
                                       {"num_actions", {"10", ""}},
                                       {"dim", {"40", ""}},
                                       {"horizon", {"500", ""}},
                                       {"model_seed", {"0", ""}}});
}

AuditReport run_lsvi(const AuditParams& a) {
  TrainParams t;
  t.steps = 100000;
  return audit_lsvi_ucb(LsviUcb(lsvi_params()), linear_env, t, a);
}

}  // namespace

TEST_SUITE("statistical") {
  TEST_CASE("actor_critic white box: as claimed not refuted, half noise or 4C canaries refuted") {
    // 60,000 canaries, 1000 guesses. Over audit seeds 0-3: 0.91-1.04 as run, 1.94-2.14 with half
    // the noise or twice the sensitivity; seed 0
    const AuditReport ok = run_ac(white_box(60000, 1000, "none"));
    CAPTURE(ok.epsilon_lower);
    CHECK(ok.learner.empty());  // the dispatcher names it
    CHECK(ok.epsilon_claimed == doctest::Approx(1.657).epsilon(1e-3));
    CHECK_FALSE(ok.refuted);
    CHECK(ok.epsilon_lower < 0.7 * ok.epsilon_claimed);  // measured 0.95
    const auto d = nlohmann::json::parse(ok.details_json);
    CHECK(d["actor_releases"] == 100);
    CHECK(d["critic_releases"] == 0);
    const AuditReport half = run_ac(white_box(60000, 1000, "halve-noise"));
    CAPTURE(half.epsilon_lower);
    CHECK(half.refuted);  // measured 2.09 > 1.657
    const AuditReport twice = run_ac(white_box(60000, 1000, "double-sensitivity"));
    CAPTURE(twice.epsilon_lower);
    CHECK(twice.refuted);
  }

  TEST_CASE("lsvi_ucb white box: as claimed not refuted, half noise or 2x canaries refuted") {
    // 20,000 canaries, 600 guesses. Over audit seeds 0-3: 0.96-1.17 as run, 2.34-2.65 with half
    // the noise (the same figures with twice the sensitivity); seed 0
    const AuditReport ok = run_lsvi(white_box(20000, 600, "none"));
    CAPTURE(ok.epsilon_lower);
    CHECK(ok.epsilon_claimed == doctest::Approx(2.0).epsilon(1e-3));
    CHECK_FALSE(ok.refuted);
    CHECK(ok.epsilon_lower < 0.65 * ok.epsilon_claimed);  // measured 1.17
    const auto d = nlohmann::json::parse(ok.details_json);
    CHECK(d["updates"] == 4);
    CHECK(d["gram_releases_per_canary"] == 3);
    const AuditReport half = run_lsvi(white_box(20000, 600, "halve-noise"));
    CAPTURE(half.epsilon_lower);
    CHECK(half.refuted);  // measured 2.34 > 2.0
    const AuditReport twice = run_lsvi(white_box(20000, 600, "double-sensitivity"));
    CAPTURE(twice.epsilon_lower);
    CHECK(twice.refuted);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("release audits: not private, black box, too many canaries") {
    const auto chain = envs::make_env("chain_mdp", {{"n", {"10", ""}}});
    ActorCriticParams p = ac_params();
    AuditParams a = white_box(10, 0, "none");
    CHECK_NOTHROW(check_actor_critic_audit(ActorCritic(p), chain->spec(), a));
    a.canaries = 21;  // 10 states x 2 actions
    CHECK_THROWS_WITH_AS(check_actor_critic_audit(ActorCritic(p), chain->spec(), a),
                         doctest::Contains("20"), ParamError);
    a = white_box(10, 0, "none");
    a.white_box = false;
    CHECK_THROWS_WITH_AS(check_actor_critic_audit(ActorCritic(p), chain->spec(), a),
                         doctest::Contains("white-box"), ParamError);
    p.dp = "none";
    CHECK_THROWS_AS(
        check_actor_critic_audit(ActorCritic(p), chain->spec(), white_box(10, 0, "none")),
        ParamError);

    const auto lin = linear_env();
    CHECK_THROWS_WITH_AS(
        check_lsvi_ucb_audit(LsviUcb(lsvi_params()), *lin, white_box(20001, 0, "none")),
        doctest::Contains("20000"), ParamError);
    LsviUcbParams q = lsvi_params();
    q.private_ = false;
    CHECK_THROWS_AS(check_lsvi_ucb_audit(LsviUcb(q), *lin, white_box(10, 0, "none")), ParamError);
    CHECK_THROWS_AS(check_lsvi_ucb_audit(LsviUcb(lsvi_params()), *chain, white_box(10, 0, "none")),
                    ParamError);
  }
}
