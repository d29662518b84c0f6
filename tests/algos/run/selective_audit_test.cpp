// The one-run canary-expert audit of the expert-level pipeline's DP-SGD part: the expert-level
// DP-SGD baseline run as claimed is not refuted, with half the noise or experts clipped at 2C it
// is (under Poisson sampling of the experts); selective DP-SGD with stable data and black-box
// canary experts is not refuted; bad inputs throw. Fixed seeds: every figure is deterministic.
#include "algos/run/selective_audit.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "algos/offline/discrete_cql.hpp"
#include "engine/error.hpp"
#include "envs/register_envs.hpp"
#include "tests/algos/offline/offline_test_util.hpp"

using namespace dprl;
using namespace dprl::algos;

namespace {

// 200 experts with two CartPole episodes each
const Dataset& experts200() {
  static const Dataset ds =
      testing::rollout_dataset("cartpole", testing::cartpole_expert, 400, 200, 0.02, 5);
  return ds;
}

DiscreteCqlParams cql(const char* hidden) {
  DiscreteCqlParams p;
  p.common.hidden_sizes = hidden;
  p.common.batch_size = 10;
  return p;
}

// b = 10 of m = 200 experts (q0 = 0.05), noise multiplier 2, budget epsilon2 = 1.5 at delta2 =
// 1e-5 (PLD): 185 noisy steps.
SelectiveDpSgdParams dp_sgd(double p) {
  SelectiveDpSgdParams s;
  s.p = p;
  s.noise_multiplier = 2.0;
  s.epsilon2 = 1.5;
  s.delta2 = 1e-5;
  s.noise = "seeded";
  return s;
}

AuditReport run(const DiscreteCqlParams& lp, const Dataset* stable, const Dataset* unstable,
                const SelectiveDpSgdParams& s, const AuditParams& a) {
  DiscreteCql learner(lp);
  return audit_selective(
      learner, stable, unstable, 200, 10, s, [] { return envs::make_env("cartpole"); }, 1, a);
}

// White box: 60,000 Dirac canaries in the 67,586 noised values of a 4-256-256-2 Q-network, 1000
// guesses. Over audit seeds 0-3: 0.80-0.95 as run, 2.08-2.27 with half the noise or twice the
// clip norm; seed 0.
AuditParams white_box(const char* mis) {
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
  TEST_CASE("expert-level DP-SGD white box: as claimed not refuted, half noise or 2C refuted") {
    const auto lp = cql("256,256");
    const auto ok = run(lp, nullptr, &experts200(), dp_sgd(1.0), white_box("none"));
    CAPTURE(ok.epsilon_lower);
    const auto d = nlohmann::json::parse(ok.details_json);
    CHECK(d["noisy_steps"] == 185);
    CHECK(d["q0"].get<double>() == doctest::Approx(0.05));
    CHECK(ok.epsilon_claimed == doctest::Approx(1.499).epsilon(1e-3));  // epsilon2 spent
    CHECK(ok.delta == 1e-5);
    CHECK_FALSE(ok.refuted);
    CHECK(ok.epsilon_lower < 0.7 * ok.epsilon_claimed);  // measured 0.90

    const auto half = run(lp, nullptr, &experts200(), dp_sgd(1.0), white_box("halve-noise"));
    CAPTURE(half.epsilon_lower);
    CHECK(half.epsilon_claimed == ok.epsilon_claimed);
    CHECK(half.refuted);  // measured 2.14 > 1.499
    const auto twice =
        run(lp, nullptr, &experts200(), dp_sgd(1.0), white_box("double-sensitivity"));
    CAPTURE(twice.epsilon_lower);
    CHECK(twice.refuted);
  }

  TEST_CASE("selective DP-SGD with stable data, black-box canary experts: not refuted") {
    // the first 100 experts' episodes are stable (as a release would leave them), the rest
    // unstable; p = 0.5: ordinary steps on the stable data between the noisy ones
    std::vector<std::size_t> st, un;
    for (std::size_t e = 0; e < experts200().num_episodes(); ++e)
      (experts200().user_id(e) < 100 ? st : un).push_back(e);
    const Dataset stable = experts200().subset(st), unstable = experts200().subset(un);
    AuditParams a;
    a.canaries = 300;
    a.guesses = 60;
    a.seed = 2;
    const auto r = run(cql("32,32"), &stable, &unstable, dp_sgd(0.5), a);
    CAPTURE(r.epsilon_lower);
    CHECK(r.mode == "black-box");
    CHECK_FALSE(r.refuted);
    const auto d = nlohmann::json::parse(r.details_json);
    CHECK(d["noisy_steps"] == 185);
    CHECK(d["stable_steps"].get<int>() > 0);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("selective audit: no DP step, too many white-box canaries, bad guesses") {
    AuditParams a;
    a.canaries = 10;
    CHECK_THROWS_AS(run(cql("8,8"), nullptr, &experts200(), dp_sgd(0.0), a), ParamError);
    a.white_box = true;
    a.canaries = 1000;  // the 8,8 Q-network has 130 parameters
    CHECK_THROWS_WITH_AS(run(cql("8,8"), nullptr, &experts200(), dp_sgd(1.0), a),
                         doctest::Contains("130"), ParamError);
    a.canaries = 10;
    a.guesses = 11;
    CHECK_THROWS_AS(run(cql("8,8"), nullptr, &experts200(), dp_sgd(1.0), a), ParamError);
  }
}
