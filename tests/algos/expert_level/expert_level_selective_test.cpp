// Selective DP-SGD (paper 000 Alg. 3) and the expert-level DP-SGD baseline (Alg. 4).
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "algos/expert_level/selective_dp_sgd.hpp"
#include "algos/offline/discrete_cql.hpp"
#include "engine/error.hpp"
#include "envs/register_envs.hpp"
#include "privacy/accountant.hpp"
#include "privacy/calibration.hpp"
#include "privacy/dp_event.hpp"
#include "tests/algos/offline/offline_test_util.hpp"

using namespace dprl;
using namespace dprl::algos;

namespace {

constexpr int kExperts = 20;

DiscreteCql make_learner() {
  DiscreteCqlParams p;
  p.common.hidden_sizes = "16,16";
  p.common.batch_size = 8;
  p.common.learning_rate = 1e-3;
  return DiscreteCql(p);
}

TrainContext make_ctx(std::uint64_t seed, int noise_threads = -1) {
  TrainParams t;
  t.steps = std::int64_t{1} << 40;
  t.noise_threads = noise_threads;
  t.eval_every = 0;
  t.eval_episodes = 2;
  return TrainContext([] { return envs::make_env("cartpole"); }, seed, t, nullptr, nullptr);
}

const Dataset& data() {
  static const Dataset ds =
      testing::rollout_dataset("cartpole", testing::cartpole_expert, 40, kExperts, 0.02, 5);
  return ds;
}

SelectiveDpSgdParams dp_params(double p, const char* accounting) {
  SelectiveDpSgdParams s;
  s.p = p;
  s.noise_multiplier = 3.0;
  s.epsilon2 = 2.0;
  s.delta2 = 1e-3;
  s.accounting = accounting;
  s.noise = "seeded";
  return s;
}

// The largest step count the budget (epsilon, 1e-3) affords at noise multiplier 3 and rate q
// (PLD).
std::int64_t budget_steps(double q, double epsilon = 2.0, bool discrete = false) {
  return privacy::steps_within_budget(
      privacy::DpEvent::poisson_sampled(
          q, discrete ? privacy::DpEvent::discrete_gaussian(3.0) : privacy::DpEvent::gaussian(3.0)),
      epsilon, 1e-3, "pld");
}

}  // namespace

TEST_CASE("expert-level DP-SGD (p = 1) takes exactly the steps the budget affords" *
          doctest::test_suite("unit")) {
  auto learner = make_learner();
  auto ctx = make_ctx(1);
  const auto p = dp_params(1.0, "sound");
  const auto r = train_selective(learner, nullptr, &data(), kExperts, 8, p, ctx);
  const double q = 8.0 / kExperts;
  const auto n = budget_steps(q);
  REQUIRE(n > 1);
  CHECK(r.noisy_steps == n);
  CHECK(r.iterations == n);
  CHECK(r.stable_steps == 0);
  CHECK(r.epsilon <= 2.0);
  // one more step would exceed the budget
  auto acc = privacy::make_accountant("pld");
  acc->compose(privacy::dpsgd_event({.noise_multiplier = 3.0, .sampling_rate = q, .steps = n + 1}));
  CHECK(acc->epsilon(1e-3) > 2.0);
  REQUIRE(r.report);
  CHECK(r.report->unit == "expert");
  CHECK(r.report->neighbouring == dprl::NeighbouringRelation::kAddRemove);
  CHECK(r.report->delta == 1e-3);
  CHECK_FALSE(r.report->formal);  // seeded noise
  CHECK(r.report->reproducible_noise);
  CHECK(learner.steps_taken() == n);
}

TEST_CASE(
    "sound accounting counts only noisy steps at q = b/m, paper counts every iteration at "
    "q = p b/m" *
    doctest::test_suite("unit")) {
  const double q = 8.0 / kExperts, p = 0.5;
  {
    auto learner = make_learner();
    auto ctx = make_ctx(2);
    const auto r =
        train_selective(learner, &data(), &data(), kExperts, 8, dp_params(p, "sound"), ctx);
    const auto n = budget_steps(q);
    CHECK(r.noisy_steps == n);
    CHECK(r.iterations == r.noisy_steps + r.stable_steps);
    CHECK(r.stable_steps > 0);
    CHECK(r.report->formal == false);  // seeded
    const auto d = nlohmann::json::parse(r.report->details_json);
    CHECK(d["accounting"] == "sound");
    CHECK(d["q_accounted"].get<double>() == doctest::Approx(q));
  }
  {
    auto learner = make_learner();
    auto ctx = make_ctx(3);
    const auto r =
        train_selective(learner, &data(), &data(), kExperts, 8, dp_params(p, "paper"), ctx);
    const auto n = budget_steps(p * q);
    CHECK(r.iterations == n);
    CHECK(r.noisy_steps + r.stable_steps == n);
    // the coins: noisy ~ Binomial(N, 1/2); |noisy - N/2| < 4.9 sd has probability > 1 - 1e-6
    const double sd = std::sqrt(n * 0.25);
    CHECK(std::abs(r.noisy_steps - 0.5 * n) < 4.9 * sd);
    const auto d = nlohmann::json::parse(r.report->details_json);
    CHECK(d["q_accounted"].get<double>() == doctest::Approx(p * q));
    CHECK_FALSE(r.report->formal);  // the paper's accounting is never a formal record
    // the paper's rule affords more noisy steps than the sound one (about 1/p times as many)
    CHECK(n * p > budget_steps(q));
  }
}

TEST_CASE("p = 0 trains on the stable data only, and an empty stable set skips the coin's zeros" *
          doctest::test_suite("unit")) {
  SelectiveDpSgdParams s;
  s.p = 0.0;
  s.stable_steps = 37;
  auto learner = make_learner();
  auto ctx = make_ctx(4);
  const auto r = train_selective(learner, &data(), nullptr, kExperts, 8, s, ctx);
  CHECK(r.iterations == 37);
  CHECK(r.stable_steps == 37);
  CHECK(r.noisy_steps == 0);
  CHECK_FALSE(r.report.has_value());
  CHECK(learner.steps_taken() == 37);

  auto l2 = make_learner();
  auto c2 = make_ctx(5);
  Dataset empty(data().info());
  const auto r2 = train_selective(l2, &empty, &data(), kExperts, 8, dp_params(0.5, "sound"), c2);
  CHECK(r2.stable_steps == 0);
  CHECK(r2.skipped == r2.iterations - r2.noisy_steps);
  CHECK(l2.steps_taken() == r2.noisy_steps);  // a skipped iteration touches nothing
}

TEST_CASE("selective parameters are checked" * doctest::test_suite("unit")) {
  auto learner = make_learner();
  auto ctx = make_ctx(6);
  SelectiveDpSgdParams s;
  s.p = 0.5;  // no budget
  CHECK_THROWS_WITH_AS(train_selective(learner, &data(), &data(), kExperts, 8, s, ctx),
                       doctest::Contains("selective.p"), ParamError);
  s = dp_params(1.0, "sound");
  s.accounting = "optimistic";
  CHECK_THROWS_WITH_AS(train_selective(learner, &data(), &data(), kExperts, 8, s, ctx),
                       doctest::Contains("accounting"), ParamError);
  s = dp_params(1.0, "sound");
  // b > m: q = b/m > 1
  CHECK_THROWS_AS(train_selective(learner, &data(), &data(), 4, 8, s, ctx), ParamError);
  SelectiveDpSgdParams z;
  z.p = 0;
  z.stable_steps = 0;
  CHECK_THROWS_AS(train_selective(learner, &data(), nullptr, kExperts, 8, z, ctx), ParamError);
  z.stable_steps = 5;
  CHECK_THROWS_AS(train_selective(learner, nullptr, &data(), kExperts, 8, z, ctx), DataError);
}

TEST_CASE("os-entropy selective runs use the secure snapped release and give a formal record" *
          doctest::test_suite("unit")) {
  auto learner = make_learner();
  auto ctx = make_ctx(8);
  auto p = dp_params(0.5, "sound");
  p.noise = "os-entropy";
  // a short run (at q = 0.4 one step of the proven discrete bound costs more than 0.5)
  p.epsilon2 = 1.5;
  const auto r = train_selective(learner, &data(), &data(), kExperts, 8, p, ctx);
  REQUIRE(r.report);
  // the exact discrete Gaussian is accounted with the bound proven for it (the pld accountant
  // reports that RDP bound), never the continuous curve
  CHECK(r.noisy_steps >= 1);
  CHECK(r.noisy_steps == budget_steps(8.0 / kExperts, 1.5, true));
  CHECK(r.noisy_steps < budget_steps(8.0 / kExperts, 1.5));
  CHECK(r.report->formal);
  CHECK_FALSE(r.report->reproducible_noise);
  CHECK(r.report->noise_source.find("secure") != std::string::npos);
  CHECK(r.report->unit == "expert");
  const auto d = nlohmann::json::parse(r.report->details_json);
  // the noise std on the sum covers the snapped sensitivity C + sqrt(n) g: above z C, by at most
  // the factor 1 / (1 - z sqrt(n) 2^-12) (privacy/secure_release.hpp)
  const double n = d["noised_values"].get<double>();
  const double sd = d["noise_sd_on_sum"].get<double>();
  CHECK(sd > 3.0);
  CHECK(sd <= 3.0 / (1.0 - 3.0 * std::sqrt(n) * 0x1.0p-12));
  CHECK(d["release"].get<std::string>().rfind("secure", 0) == 0);
  CHECK(d["steps"] == r.noisy_steps);
  CHECK(d["event"]["event"]["event"]["kind"] == "discrete_gaussian");
  // the paper's accounting is never formal, whatever the noise
  auto l2 = make_learner();
  auto c2 = make_ctx(9);
  p.accounting = "paper";
  CHECK_FALSE(train_selective(l2, &data(), &data(), kExperts, 8, p, c2).report->formal);
}

TEST_CASE("seeded selective runs are reproducible" * doctest::test_suite("unit")) {
  // and train the same model whether each step's noise is drawn ahead (train.noise_threads 1)
  // or at its release (0)
  auto run = [](int threads) {
    auto learner = make_learner();
    auto ctx = make_ctx(7, threads);
    train_selective(learner, &data(), &data(), kExperts, 8, dp_params(0.5, "sound"), ctx);
    return std::vector<float>(learner.q().span().begin(), learner.q().span().end());
  };
  const auto zero = run(0);
  CHECK(zero == run(0));
  CHECK(zero == run(1));
}
