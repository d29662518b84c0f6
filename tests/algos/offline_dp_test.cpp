// User-level DP-SGD in the offline learners: the private step uses the same loss gradient, the
// budget decides the step count, and the run's guarantee record is complete.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "algos/experiment.hpp"
#include "algos/offline/discrete_bcq.hpp"
#include "algos/offline/discrete_cql.hpp"
#include "engine/dataset_io.hpp"
#include "engine/io.hpp"
#include "privacy/accountant.hpp"
#include "privacy/calibration.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/rdp_accountant.hpp"
#include "tests/algos/offline_test_util.hpp"

namespace fs = std::filesystem;

namespace {

std::shared_ptr<dprl::Dataset> users_data(int episodes, int users) {
  return std::make_shared<dprl::Dataset>(dprl::testing::rollout_dataset(
      "cartpole", dprl::testing::cartpole_expert, episodes, users, 0.05, 9));
}

dprl::algos::TrainContext ctx_for(std::shared_ptr<dprl::Dataset> ds, std::int64_t steps,
                                  bool until_budget = false) {
  dprl::algos::TrainParams t;
  t.steps = steps;
  t.eval_every = 40;
  t.eval_episodes = 1;
  t.until_budget = until_budget;
  dprl::algos::TrainContext ctx([] { return dprl::envs::make_env("cartpole"); }, 7, t, nullptr,
                                nullptr);
  ctx.set_dataset(std::move(ds), "test data");
  return ctx;
}

dprl::algos::DiscreteCqlParams private_cql() {
  dprl::algos::DiscreteCqlParams p;
  p.common.hidden_sizes = "16,16";
  p.common.batch_size = 8;
  p.dp.dp = true;
  p.dp.epsilon = 3.0;
  p.dp.delta = 1e-4;
  p.dp.noise_multiplier = 1.5;
  p.dp.accountant = "rdp";
  p.dp.noise = "seeded";
  return p;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("without clipping or noise, the private step's gradient is the mean-loss gradient") {
    // BCQ: three networks (shared encoder, Q head, classifier head) under one joint norm
    dprl::algos::DiscreteBcqParams p;
    p.common.hidden_sizes = "8,8";
    dprl::algos::DiscreteBcq plain(p), priv(p);
    plain.setup(4, 2, 1);
    priv.setup(4, 2, 1);
    auto ds = users_data(6, 6);
    const dprl::algos::BatchGatherer g(*ds);
    dprl::algos::OfflineBatch b;
    const std::vector<std::size_t> picked = {0, 17, 40, 90, 133, 250};
    g.gather(picked, b);
    plain.gradient(b);
    dprl::privacy::UserDpSgdConfig cfg;
    cfg.clip_norm = 1e9;
    cfg.expected_batch = static_cast<double>(b.n);
    cfg.num_users = 6;
    auto zero = dprl::privacy::make_zero_noise();
    priv.dp_step(b, cfg, *zero);
    for (std::size_t i = 0; i < 3; ++i) {
      const auto& a = plain.last_grad(i);
      const auto& c = priv.last_grad(i);
      REQUIRE(a.size() == c.size());
      for (std::size_t j = 0; j < a.size(); ++j)
        CHECK(c[j] == doctest::Approx(a[j]).epsilon(1e-5).scale(1e-6));
    }
  }

  TEST_CASE("private runs: until_budget trains the largest affordable step count") {
    auto ds = users_data(40, 40);
    dprl::algos::DiscreteCql cql(private_cql());
    auto ctx = ctx_for(ds, 1, true);
    const std::int64_t steps = cql.train(ctx);
    const auto step =
        dprl::privacy::DpEvent::poisson_sampled(8.0 / 40.0, dprl::privacy::DpEvent::gaussian(1.5));
    const std::int64_t expect = dprl::privacy::steps_within_budget(step, 3.0, 1e-4, "rdp");
    CHECK(steps == expect);
    const auto r = cql.privacy();
    REQUIRE(r.has_value());
    CHECK(r->epsilon <= 3.0);
    CHECK(
        r->epsilon ==
        doctest::Approx(dprl::privacy::dpsgd_epsilon(1.5, 0.2, expect, 1e-4, "rdp")).epsilon(1e-9));
    CHECK(dprl::privacy::dpsgd_epsilon(1.5, 0.2, expect + 1, 1e-4, "rdp") > 3.0);
  }

  TEST_CASE("private runs refuse step counts beyond the budget before the first step") {
    auto ds = users_data(40, 40);
    dprl::algos::DiscreteCql cql(private_cql());
    auto ctx = ctx_for(ds, 1000000);
    CHECK_THROWS_WITH_AS(cql.train(ctx), doctest::Contains("the budget affords"),
                         dprl::BudgetExceeded);
    CHECK(ctx.eval_rounds() == 0);
    // more expected users than users: q > 1
    auto p = private_cql();
    p.common.batch_size = 64;
    dprl::algos::DiscreteCql big(p);
    auto ctx2 = ctx_for(ds, 10);
    CHECK_THROWS_WITH_AS(big.train(ctx2), doctest::Contains("sampling rate q"), dprl::ParamError);
  }

  TEST_CASE("seeded private runs are reproducible and marked not formal") {
    auto ds = users_data(20, 10);
    auto run = [&] {
      auto p = private_cql();
      p.common.batch_size = 2;
      p.dp.epsilon = 10;
      dprl::algos::DiscreteCql cql(p);
      auto ctx = ctx_for(ds, 60);
      cql.train(ctx);
      return std::make_pair(cql.q().buffer(), *cql.privacy());
    };
    const auto [qa, ra] = run();
    const auto [qb, rb] = run();
    CHECK(qa == qb);
    CHECK_FALSE(ra.formal);
    CHECK(ra.reproducible_noise);
    CHECK(ra.neighbouring == "add-remove");
    CHECK(ra.unit == "user");
    CHECK(ra.noise_source.find("seeded") == 0);
    const auto d = nlohmann::json::parse(ra.details_json);
    CHECK(d["num_users"] == 10);
    CHECK(d["steps"] == 60);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("os-entropy private runs are formal and not reproducible") {
    auto ds = users_data(20, 20);
    auto p = private_cql();
    p.common.hidden_sizes = "4";
    p.common.batch_size = 2;
    p.dp.noise = "os-entropy";
    p.dp.epsilon = 10;
    dprl::algos::DiscreteCql cql(p);
    auto ctx = ctx_for(ds, 5);
    cql.train(ctx);
    const auto r = *cql.privacy();
    CHECK(r.formal);
    CHECK_FALSE(r.reproducible_noise);
    CHECK(r.noise_source == "os_entropy(secure, chacha20)");
    CHECK(r.epsilon <= 10.0);
    // the exact discrete Gaussian steps are accounted with the bound proven for them: the record's
    // epsilon is the RDP accountant's on poisson_sampled(q, discrete_gaussian(z)), above the
    // continuous curve's (which the record used at 70c808d)
    const auto d = nlohmann::json::parse(r.details_json);
    CHECK(d["event"]["event"]["event"]["kind"] == "discrete_gaussian");
    const auto steps = d["steps"].get<std::int64_t>();
    REQUIRE(steps > 0);
    const double q = d["sampling_rate"].get<double>();
    const double z = p.dp.noise_multiplier;
    dprl::privacy::RdpAccountant proven;
    proven.compose(dprl::privacy::dpsgd_event(z, q, steps, true));
    CHECK(r.epsilon == doctest::Approx(proven.epsilon(p.dp.delta)).epsilon(1e-9));
    auto continuous = dprl::privacy::make_accountant(p.dp.accountant);
    continuous->compose(dprl::privacy::dpsgd_event(z, q, steps));
    CHECK(r.epsilon > continuous->epsilon(p.dp.delta));
  }
}

TEST_SUITE("e2e") {
  TEST_CASE("a private experiment from a Minari folder: guarantee record, ledger, no loss column") {
    const auto dir = fs::temp_directory_path() / "dprl_offline_dp_experiment";
    fs::remove_all(dir);
    auto ds = users_data(30, 30);
    ds->mutable_info().metadata_json = R"({"privacy_unit": "expert"})";
    dprl::save_minari(*ds, dir / "data");
    dprl::algos::RunOptions o;
    o.out = dir / "run";
    o.progress = dprl::Progress::Mode::kOff;
    const std::string yaml =
        "seed: 3\nenv: {id: cartpole}\n"
        "algo: {id: discrete_bcq, params: {hidden_sizes: '16,16', batch_size: 6, dp: true, "
        "epsilon: 5, delta: 0.001, noise_multiplier: 2, accountant: rdp, noise: seeded}}\n"
        "data: {path: " +
        (dir / "data").string() +
        ", format: minari}\n"
        "train: {steps: 100, eval_every: 50, eval_episodes: 2}\n";
    dprl::algos::run_experiment(dprl::parse_yaml(yaml, "inline"), "t", o);
    const auto summary = nlohmann::json::parse(dprl::read_file(dir / "run" / "summary.json"));
    const auto& priv = summary["privacy"];
    CHECK(priv["neighbouring"] == "add-remove");
    CHECK(priv["unit"] == "expert");
    CHECK(priv["formal"] == false);
    CHECK(priv["reproducible_noise"] == true);
    CHECK(priv["accountant"] == "rdp");
    CHECK(priv["epsilon"].get<double>() <= 5.0);
    CHECK(priv["covers"].size() >= 3);
    // timing.json sits next to the covered files and is not covered: the record says so
    REQUIRE(priv["not_covered"].is_array());
    CHECK(priv["not_covered"][0].get<std::string>().rfind("timing.json", 0) == 0);
    CHECK(fs::exists(dir / "run" / "timing.json"));
    const std::string metrics = dprl::read_file(dir / "run" / "metrics.csv");
    CHECK(metrics.rfind("gradient_step,", 0) == 0);
    CHECK(metrics.find("loss") == std::string::npos);
    const auto ledger = nlohmann::json::parse(dprl::read_file(dir / "run" / "privacy_ledger.json"));
    CHECK(ledger["charges"].size() == 2);  // steps 1-50 and 51-100, each charged before it ran
    fs::remove_all(dir);
  }
}
