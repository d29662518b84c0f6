// The one-run canary-trajectory audit of PriMORL's DP-FedAvg model stage: run as claimed it is
// not refuted, run with half the noise (or clients clipped at 2C) it is; black-box canaries do
// not refute a correct run; bad audit inputs throw. Fixed seeds: every figure is deterministic.
#include "algos/model_based/primorl_audit.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/error.hpp"
#include "envs/register_envs.hpp"
#include "privacy/rdp_accountant.hpp"

namespace {

using dprl::algos::AuditParams;
using dprl::algos::AuditReport;
using dprl::algos::Primorl;
using dprl::algos::PrimorlParams;

// The smoke pipeline's data (2 DDPG runs of 4000 Pendulum steps: 40 trajectories, 38 private),
// an ensemble of 3 members 4-256-256-8 with flat clipping (69,136 parameters per member), full
// participation q = 1, T = 4 rounds at z = 4: the run's RDP claim is 2.166 at delta 1e-5.
PrimorlParams primorl_params() {
  PrimorlParams p;
  p.data_runs = 2;
  p.data_steps_per_run = 4000;
  p.test_fraction = 0.05;
  p.model_hidden = "256,256";
  p.clipping = "flat";
  p.q = 1.0;
  p.z = 4.0;
  p.rounds = 4;
  p.model_eval_every = 25;
  p.noise = "seeded";
  return p;
}

AuditReport run(const PrimorlParams& p, const AuditParams& a) {
  Primorl learner(p);
  return dprl::algos::audit_primorl(
      learner, [] { return dprl::envs::make_env("pendulum"); }, 1, a);
}

// White box: 60,000 Dirac canaries (one coordinate of every member), 1000 guesses. Over audit
// seeds 0-3 the bound measured 1.15-1.32 as run and 2.47-2.72 with half the noise or twice the
// clip norm (whose true epsilon is that of z = 2 per round, about twice the claim); seed 0.
AuditParams primorl_white_box(const char* mis) {
  AuditParams a;
  a.canaries = 60000;
  a.guesses = 1000;
  a.white_box = true;
  a.seed = 0;
  a.mis_specify = mis;
  return a;
}

}  // namespace

TEST_SUITE("statistical") {
  TEST_CASE("primorl white box: as claimed not refuted, half the noise or twice C refuted") {
    const PrimorlParams p = primorl_params();
    const AuditReport ok = run(p, primorl_white_box("none"));
    CAPTURE(ok.epsilon_lower);
    CHECK(ok.learner == "primorl");
    CHECK(ok.mode == "white-box");
    CHECK(ok.epsilon_claimed == doctest::Approx(2.166).epsilon(2e-3));
    CHECK_FALSE(ok.refuted);
    CHECK(ok.epsilon_lower < 0.65 * ok.epsilon_claimed);  // measured 1.27
    CHECK(ok.epsilon_lower > 0.5);                        // the audit sees the canaries
    const auto d = nlohmann::json::parse(ok.details_json);
    CHECK(d["canary_norm"].get<double>() == doctest::Approx(1.0));  // every member has room
    CHECK(d["rounds"] == 4);

    const AuditReport half = run(p, primorl_white_box("halve-noise"));
    CAPTURE(half.epsilon_lower);
    CHECK(half.epsilon_claimed == ok.epsilon_claimed);
    CHECK(half.refuted);  // measured 2.69 > 2.166

    const AuditReport twice = run(p, primorl_white_box("double-sensitivity"));
    CAPTURE(twice.epsilon_lower);
    CHECK(twice.refuted);
  }

  TEST_CASE("primorl black box: canary trajectories, a correct run is not refuted") {
    PrimorlParams p = primorl_params();
    p.model_hidden = "32,32";
    p.q = 0.2;
    p.rounds = 40;
    p.z = 1.0;
    AuditParams a;
    a.canaries = 200;
    a.guesses = 40;
    a.seed = 1;
    const AuditReport r = run(p, a);
    CAPTURE(r.epsilon_lower);
    CHECK(r.mode == "black-box");
    CHECK_FALSE(r.refuted);
    CHECK(r.canaries == 200);
    CHECK(nlohmann::json::parse(r.details_json)["canary_length"].get<int>() >= 1);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("primorl audit: bad inputs throw before training") {
    const auto env = dprl::envs::make_env("pendulum");
    PrimorlParams p = primorl_params();
    p.variant = "no_noise";
    AuditParams a;
    CHECK_THROWS_AS(dprl::algos::check_primorl_audit(Primorl(p), env->spec(), a), dprl::ParamError);
    p = primorl_params();
    p.model_hidden = "8,8";  // a member has 192 values
    a.white_box = true;
    a.canaries = 1000;
    CHECK_THROWS_WITH_AS(dprl::algos::check_primorl_audit(Primorl(p), env->spec(), a),
                         doctest::Contains("clip group"), dprl::ParamError);
    a.canaries = 10;
    a.guesses = 20;
    CHECK_THROWS_AS(dprl::algos::check_primorl_audit(Primorl(primorl_params()), env->spec(), a),
                    dprl::ParamError);
  }
}
