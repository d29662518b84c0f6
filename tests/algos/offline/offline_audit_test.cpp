// The one-run canary-user audit of the offline learners' user-level DP-SGD: a correctly run
// learner is not refuted, a learner run with half the noise (or twice the sensitivity) that
// the claim assumes is refuted, and the black-box scores see leakage when there is (almost) no
// noise. Fixed seeds: every figure below is deterministic, the margins are stated.
#include "algos/offline/offline_audit.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "algos/offline/bc.hpp"
#include "algos/offline/discrete_bcq.hpp"
#include "algos/offline/discrete_cql.hpp"
#include "engine/error.hpp"
#include "engine/rng.hpp"
#include "envs/register_envs.hpp"
#include "privacy/calibration.hpp"
#include "tests/algos/offline/offline_test_util.hpp"

namespace {

using dprl::algos::OfflineAuditParams;
using dprl::algos::OfflineAuditReport;

const dprl::Dataset& data10() {
  static const dprl::Dataset ds =
      dprl::testing::rollout_dataset("cartpole", dprl::testing::cartpole_expert, 10, 10, 0.05, 9);
  return ds;
}

template <class P>
P private_params(double z, int batch, const char* hidden) {
  P p;
  p.common.hidden_sizes = hidden;
  p.common.batch_size = batch;
  p.dp.dp = true;
  p.dp.epsilon = 10.0;
  p.dp.delta = 1e-5;
  p.dp.noise_multiplier = z;
  p.dp.accountant = "pld";
  p.dp.noise = "seeded";
  return p;
}

template <class L>
OfflineAuditReport run(const typename L::Params& p, std::int64_t steps,
                       const OfflineAuditParams& a) {
  L learner(p);
  const auto env = dprl::envs::make_env("cartpole");
  return dprl::algos::audit_offline(learner, env->spec(), data10(), steps, false, a);
}

// White box: full batch (q = 1), z = 4, T = 4 steps: the claim is the Gaussian mechanism at
// z / sqrt(T) = 2, epsilon(1e-5) = 1.993; 16000 Dirac canaries in a 17410-parameter network, 600
// guesses. Over audit seeds 0-5 the bound measured 0.96-1.18 as run and 2.19-2.55 with half the
// noise (whose true epsilon is 4.38); seed 0 is used.
OfflineAuditParams offline_white_box(const char* mis) {
  OfflineAuditParams a;
  a.canaries = 16000;
  a.guesses = 600;
  a.white_box = true;
  a.seed = 0;
  a.mis_specify = mis;
  return a;
}

// A synthetic dataset with D-dimensional observations: `users` users with two episodes of 25
// steps each, observations N(0, I), the action the sign of a fixed linear function of them.
dprl::Dataset high_dim_dataset(int D, int users) {
  dprl::DatasetInfo info;
  info.dataset_id = "test/synthetic";
  info.env_id = "synthetic";
  info.observation_space = dprl::Space::box(static_cast<std::size_t>(D), -10.0, 10.0);
  info.action_space = dprl::Space::discrete(2);
  dprl::Dataset ds(info);
  dprl::Rng r(7);
  std::vector<float> w(static_cast<std::size_t>(D));
  for (auto& v : w) v = static_cast<float>(r.normal());
  constexpr int kLen = 25;
  for (int u = 0; u < users; ++u)
    for (int e = 0; e < 2; ++e) {
      std::vector<float> o(static_cast<std::size_t>((kLen + 1) * D)), a(kLen), rw(kLen, 1.0f);
      std::vector<std::uint8_t> term(kLen, 0), trunc(kLen, 0);
      term.back() = 1;
      for (auto& v : o) v = static_cast<float>(r.normal());
      for (int t = 0; t < kLen; ++t) {
        float s = 0;
        for (int i = 0; i < D; ++i)
          s += w[static_cast<std::size_t>(i)] * o[static_cast<std::size_t>(t * D + i)];
        a[static_cast<std::size_t>(t)] = s > 0 ? 1.0f : 0.0f;
      }
      ds.add_episode(o, a, rw, term, trunc, u);
    }
  return ds;
}

}  // namespace

TEST_SUITE("statistical") {
  TEST_CASE(
      "black box refutes near-zero noise on 256-dimensional observations, not a correct run") {
    // 20 users of the synthetic 256-dimensional dataset, bc 256-256-2, full batch (q = 1),
    // T = 16 steps at z = 16: the PLD claim is 0.926 (the Gaussian mechanism at z / sqrt(T) = 4).
    // 200 black-box canary users (one out-of-distribution transition each), 100 guesses: in 256
    // dimensions the canaries are nearly orthogonal, so the model can single each one out, which
    // four-dimensional CartPole observations do not allow (there the same setting with
    // near-zero noise measured 0.13). Over audit seeds 0-3: 0-0.13 as run (55-62 right), 0.26-0.52
    // with a quarter of the noise (not enough to refute: black-box scores see about half of what
    // the white-box canaries see), 2.72-3.49 with the noise at 1/100 (98-100 right; 3.49 is the
    // ceiling of 100 guesses at confidence 0.95); seed 0.
    static const dprl::Dataset data = high_dim_dataset(256, 20);
    dprl::EnvSpec spec;
    spec.id = "synthetic";
    spec.observation = data.info().observation_space;
    spec.action = data.info().action_space;
    auto p = private_params<dprl::algos::BcParams>(16.0, 20, "256,256");
    p.dp.epsilon = 1e6;
    OfflineAuditParams a;
    a.canaries = 200;
    a.guesses = 100;
    a.seed = 0;
    auto audit = [&](const char* mis) {
      a.mis_specify = mis;
      dprl::algos::Bc learner(p);
      return dprl::algos::audit_offline(learner, spec, data, 16, false, a);
    };
    const auto ok = audit("none");
    CAPTURE(ok.epsilon_lower);
    CHECK(ok.mode == "black-box");
    CHECK(ok.epsilon_claimed == doctest::Approx(0.926).epsilon(1e-3));
    CHECK_FALSE(ok.refuted);
    const auto quarter = audit("quarter-noise");
    CAPTURE(quarter.epsilon_lower);
    CHECK_FALSE(quarter.refuted);
    const auto tiny = audit("near-zero-noise");
    CAPTURE(tiny.epsilon_lower);
    CHECK(tiny.noise_sd == doctest::Approx(0.01 * ok.noise_sd));
    CHECK(tiny.refuted);  // measured 3.49 > 0.926
    CHECK(tiny.correct >= 95);
  }

  TEST_CASE("white box: bc run as claimed is not refuted, with half the noise or twice C it is") {
    const auto p = private_params<dprl::algos::BcParams>(4.0, 10, "128,128");
    const auto ok = run<dprl::algos::Bc>(p, 4, offline_white_box("none"));
    CAPTURE(ok.epsilon_lower);
    CHECK(ok.epsilon_claimed == doctest::Approx(1.993).epsilon(1e-3));
    CHECK(ok.epsilon_claimed ==
          dprl::privacy::dpsgd_epsilon({.noise_multiplier = 4.0, .sampling_rate = 1.0, .steps = 4},
                                       1e-5, "pld"));
    CHECK(ok.mode == "white-box");
    CHECK(ok.steps == 4);
    CHECK(ok.sampling_rate == 1.0);
    CHECK_FALSE(ok.refuted);
    // measured 1.18 at this seed, at most 1.18 over seeds 0-5: far below the claim
    CHECK(ok.epsilon_lower < 0.6 * ok.epsilon_claimed);
    CHECK(ok.epsilon_lower > 0.0);  // the audit sees the canaries at all

    const auto half = run<dprl::algos::Bc>(p, 4, offline_white_box("halve-noise"));
    CAPTURE(half.epsilon_lower);
    CHECK(half.noise_sd == doctest::Approx(0.5 * ok.noise_sd));
    CHECK(half.epsilon_claimed == ok.epsilon_claimed);
    CHECK(half.refuted);  // measured 2.54 > 1.993 (the true epsilon at z / 2 is 4.38)

    const auto twice = run<dprl::algos::Bc>(p, 4, offline_white_box("double-sensitivity"));
    CAPTURE(twice.epsilon_lower);
    CHECK(twice.refuted);
  }

  TEST_CASE("white box: discrete_cql's release behaves the same way") {
    const auto p = private_params<dprl::algos::DiscreteCqlParams>(4.0, 10, "128,128");
    const auto ok = run<dprl::algos::DiscreteCql>(p, 4, offline_white_box("none"));
    CAPTURE(ok.epsilon_lower);
    CHECK_FALSE(ok.refuted);
    const auto half = run<dprl::algos::DiscreteCql>(p, 4, offline_white_box("halve-noise"));
    CAPTURE(half.epsilon_lower);
    CHECK(half.refuted);
  }

  TEST_CASE("white box under Poisson sampling: half the noise is refuted, correct noise is not") {
    // 200 CartPole users, q = 10 / 200 = 0.05, z = 2, T = 185 steps: the PLD claim is 1.499 at
    // 1e-5; 60,000 Dirac canaries in the 67,586 noised values of a 4-256-256-2 network, 1000
    // guesses. Each canary is sampled in about q T = 9 of the releases: the per-release log
    // likelihood ratio (poisson_llr) weighs those, where the summed coordinate averaged them with
    // the 176 releases without it. Over audit seeds 0-3: 0.81-0.88 as run, 2.04-2.17 with half the
    // noise (the summed score gave 1.72-1.82 at seeds 0-2 of the same setting in the expert-level
    // audit); seed 0.
    static const dprl::Dataset users200 = dprl::testing::rollout_dataset(
        "cartpole", dprl::testing::cartpole_expert, 200, 200, 0.05, 9);
    auto p = private_params<dprl::algos::BcParams>(2.0, 10, "256,256");
    p.dp.epsilon = 1e6;
    OfflineAuditParams a;
    a.canaries = 60000;
    a.guesses = 1000;
    a.white_box = true;
    a.seed = 0;
    const auto env = dprl::envs::make_env("cartpole");
    auto audit = [&](const char* mis) {
      a.mis_specify = mis;
      dprl::algos::Bc learner(p);
      return dprl::algos::audit_offline(learner, env->spec(), users200, 185, false, a);
    };
    const auto ok = audit("none");
    CAPTURE(ok.epsilon_lower);
    CHECK(ok.sampling_rate == doctest::Approx(0.05));
    CHECK(ok.epsilon_claimed == doctest::Approx(1.499).epsilon(1e-3));
    CHECK_FALSE(ok.refuted);
    CHECK(ok.epsilon_lower < 0.7 * ok.epsilon_claimed);  // measured 0.88
    const auto half = audit("halve-noise");
    CAPTURE(half.epsilon_lower);
    CHECK(half.refuted);  // measured 2.04 > 1.499
  }

  TEST_CASE("black box: every learner run as claimed is not refuted") {
    // Poisson sampling q = 4 / 10, z = 1, 300 steps: a claim of several epsilon, scores from the
    // released model only
    OfflineAuditParams a;
    a.canaries = 200;
    a.guesses = 60;
    a.seed = 5;
    const auto bc =
        run<dprl::algos::Bc>(private_params<dprl::algos::BcParams>(1.0, 4, "32,32"), 300, a);
    const auto cql = run<dprl::algos::DiscreteCql>(
        private_params<dprl::algos::DiscreteCqlParams>(1.0, 4, "32,32"), 300, a);
    const auto bcq = run<dprl::algos::DiscreteBcq>(
        private_params<dprl::algos::DiscreteBcqParams>(1.0, 4, "32,32"), 300, a);
    for (const auto* r : {&bc, &cql, &bcq}) {
      CAPTURE(r->epsilon_lower);
      CAPTURE(r->epsilon_claimed);
      CHECK(r->mode == "black-box");
      CHECK(r->steps == 300);
      CHECK(r->sampling_rate == doctest::Approx(4.0 / 10.0));
      CHECK_FALSE(r->refuted);
    }
  }
}

TEST_SUITE("slow") {
  TEST_CASE("black box: leakage without noise is seen more than with noise") {
    // the same bc training at z = 0.02 (noise negligible against the clipped canary gradients)
    // and at z = 8 (claim 10.4); measured 138 and 123 right of 200 guesses (bounds 0.54, 0.22).
    // Both are valid (z = 8 is far from private at q = 0.4 over 1500 steps); the test is that the
    // black-box score sees more when there is more to see
    OfflineAuditParams a;
    a.canaries = 1000;
    a.guesses = 200;
    a.seed = 7;
    auto p = private_params<dprl::algos::BcParams>(0.02, 4, "256,256");
    p.dp.accountant = "rdp";
    const auto leak = run<dprl::algos::Bc>(p, 1500, a);
    p.dp.noise_multiplier = 8.0;
    const auto quiet = run<dprl::algos::Bc>(p, 1500, a);
    CAPTURE(leak.correct);
    CAPTURE(quiet.correct);
    CHECK(leak.epsilon_lower > 0.0);
    CHECK(leak.correct > quiet.correct);
    CHECK(leak.epsilon_lower > quiet.epsilon_lower);
    CHECK_FALSE(quiet.refuted);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("audit inputs: a non-private learner, too many white-box canaries, bad guesses") {
    auto p = private_params<dprl::algos::BcParams>(1.0, 4, "8,8");
    p.dp.dp = false;
    OfflineAuditParams a;
    a.canaries = 10;
    CHECK_THROWS_AS(run<dprl::algos::Bc>(p, 5, a), dprl::ParamError);
    p.dp.dp = true;
    a.white_box = true;
    a.canaries = 100000;  // the 8,8 network has 130 parameters
    CHECK_THROWS_AS(run<dprl::algos::Bc>(p, 5, a), dprl::ParamError);
    a.white_box = false;
    a.canaries = 10;
    a.guesses = 11;
    CHECK_THROWS_AS(run<dprl::algos::Bc>(p, 5, a), dprl::ParamError);
    a.guesses = 0;
    a.mis_specify = "no-noise";
    CHECK_THROWS_AS(run<dprl::algos::Bc>(p, 5, a), dprl::ParamError);
  }

  TEST_CASE("audit.json carries the claim, the bound, its confidence and the mode") {
    auto p = private_params<dprl::algos::BcParams>(2.0, 4, "8,8");
    OfflineAuditParams a;
    a.canaries = 20;
    const auto r = run<dprl::algos::Bc>(p, 10, a);
    const auto j = nlohmann::json::parse(dprl::algos::audit_json(r, "bc", 1.5));
    CHECK(j["learner"] == "bc");
    CHECK(j["epsilon_reported"] == 1.5);
    CHECK(j["epsilon_claimed"].get<double>() == r.epsilon_claimed);
    CHECK(j["confidence"] == 0.95);
    CHECK(j["mode"] == "black-box");
    CHECK(j["canaries"] == 20);
    CHECK(j["guesses"] == 4);
    CHECK(j["refuted"] == false);
  }
}
