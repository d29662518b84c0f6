// User-level DP-SGD in the offline learners: the private step uses the same loss gradient, the
// budget decides the step count, and the run's guarantee record is complete.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "algos/offline/discrete_bcq.hpp"
#include "algos/offline/discrete_cql.hpp"
#include "algos/run/experiment.hpp"
#include "engine/data/dataset_io.hpp"
#include "engine/io.hpp"
#include "privacy/accountant.hpp"
#include "privacy/calibration.hpp"
#include "privacy/dp_event.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/rdp_accountant.hpp"
#include "tests/algos/offline/offline_test_util.hpp"

namespace fs = std::filesystem;

namespace {

std::shared_ptr<dprl::Dataset> users_data(int episodes, int users) {
  return std::make_shared<dprl::Dataset>(dprl::testing::rollout_dataset(
      "cartpole", dprl::testing::cartpole_expert, episodes, users, 0.05, 9));
}

dprl::algos::TrainContext ctx_for(std::shared_ptr<dprl::Dataset> ds, std::int64_t steps,
                                  bool until_budget = false, int noise_threads = -1) {
  dprl::algos::TrainParams t;
  t.steps = steps;
  t.noise_threads = noise_threads;
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
    const std::int64_t steps = cql.train(ctx).gradient_steps;
    const auto step =
        dprl::privacy::DpEvent::poisson_sampled(8.0 / 40.0, dprl::privacy::DpEvent::gaussian(1.5));
    const std::int64_t expect = dprl::privacy::steps_within_budget(step, 3.0, 1e-4, "rdp");
    CHECK(steps == expect);
    const auto r = cql.privacy();
    REQUIRE(r.has_value());
    CHECK(r->epsilon <= 3.0);
    CHECK(r->epsilon ==
          doctest::Approx(
              dprl::privacy::dpsgd_epsilon(
                  {.noise_multiplier = 1.5, .sampling_rate = 0.2, .steps = expect}, 1e-4, "rdp"))
              .epsilon(1e-9));
    CHECK(dprl::privacy::dpsgd_epsilon(
              {.noise_multiplier = 1.5, .sampling_rate = 0.2, .steps = expect + 1}, 1e-4, "rdp") >
          3.0);
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
    CHECK(ra.neighbouring == dprl::NeighbouringRelation::kAddRemove);
    CHECK(ra.unit == "user");
    CHECK(ra.noise_source.find("seeded") == 0);
    const auto d = nlohmann::json::parse(ra.details_json);
    CHECK(d["num_users"] == 10);
    CHECK(d["steps"] == 60);
  }

  TEST_CASE("private runs train the same model whether the noise is drawn ahead or not") {
    // train.noise_threads 0 draws each step's noise at its release, 1 on a worker during the
    // step before: the seeded stream and so the model are the same (the secure path is tested
    // in tests/privacy/prefetched_release_test.cpp)
    auto ds = users_data(20, 10);
    auto run = [&](int threads) {
      auto p = private_cql();
      p.common.batch_size = 2;
      p.dp.epsilon = 10;
      dprl::algos::DiscreteCql cql(p);
      auto ctx = ctx_for(ds, 60, false, threads);
      cql.train(ctx);
      return cql.q().buffer();
    };
    const auto zero = run(0);
    CHECK(zero == run(1));
    CHECK(zero == run(-1));
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
    proven.compose(dprl::privacy::dpsgd_event(
        {.noise_multiplier = z, .sampling_rate = q, .steps = steps, .discrete = true}));
    CHECK(r.epsilon == doctest::Approx(proven.epsilon(p.dp.delta)).epsilon(1e-9));
    auto continuous = dprl::privacy::make_accountant(p.dp.accountant);
    continuous->compose(
        dprl::privacy::dpsgd_event({.noise_multiplier = z, .sampling_rate = q, .steps = steps}));
    CHECK(r.epsilon > continuous->epsilon(p.dp.delta));
  }
}

TEST_SUITE("unit") {
  TEST_CASE("public_users sets q from the configuration and keeps the data's user count private") {
    auto ds = users_data(20, 20);
    for (const std::int64_t m : {std::int64_t{0}, std::int64_t{50}}) {
      CAPTURE(m);
      auto p = private_cql();
      p.common.hidden_sizes = "4";
      p.common.batch_size = 2;
      p.dp.epsilon = 10;
      p.dp.public_users = m;
      dprl::algos::DiscreteCql cql(p);
      auto ctx = ctx_for(ds, 5);
      cql.train(ctx);
      const auto d = nlohmann::json::parse(cql.privacy()->details_json);
      bool published = false;
      for (const auto& [k, v] : cql.summary_extra()) published = published || k == "dataset_users";
      if (m == 0) {
        // the data's count, declared public: used, published and said so
        CHECK(d["num_users"] == 20);
        CHECK(d["sampling_rate"].get<double>() == doctest::Approx(2.0 / 20));
        CHECK(published);
        CHECK(d["public"].get<std::string>().find("declared public") != std::string::npos);
      } else {
        CHECK(d["num_users"] == 50);
        CHECK(d["sampling_rate"].get<double>() == doctest::Approx(2.0 / 50));
        CHECK_FALSE(published);
        CHECK(d["public"].get<std::string>().find("not published") != std::string::npos);
        CHECK(d.dump().find("\"dataset_users\"") == std::string::npos);
      }
    }
  }

  TEST_CASE("public_users below the dataset's user count is refused before any step") {
    // M bounds the sampled users for the rounding allowance of the sum (user_dp_sgd.hpp)
    auto ds = users_data(20, 20);
    auto p = private_cql();
    p.common.hidden_sizes = "4";
    p.common.batch_size = 2;
    p.dp.epsilon = 10;
    p.dp.public_users = 10;
    dprl::algos::DiscreteCql cql(p);
    auto ctx = ctx_for(ds, 5);
    CHECK_THROWS_WITH_AS(cql.train(ctx),
                         doctest::Contains("public_users = 10 is below the dataset's 20 users"),
                         dprl::ParamError);
    // the record of a run that may run states C' and beta
    p.dp.public_users = 20;
    dprl::algos::DiscreteCql ok(p);
    auto ctx2 = ctx_for(ds, 5);
    ok.train(ctx2);
    const auto d = nlohmann::json::parse(ok.privacy()->details_json);
    // sum: auto (the default) takes float chunks here (b = 2: at most 21 sampled users)
    CHECK(d["sum_arithmetic"] == "float chunks, double above the cap");
    CHECK(d["float_sum_cap"] == 21);
    CHECK(d["rounding_allowance"].get<double>() > 1e-5);
    CHECK(d["rounding_allowance"].get<double>() <= 0.005);
    CHECK(d["sensitivity"].get<double>() ==
          doctest::Approx(1.0 + d["rounding_allowance"].get<double>()).epsilon(1e-15));
    CHECK(ok.privacy()->sensitivity.find("C' = C (1 + beta)") != std::string::npos);
    CHECK(ok.privacy()->sensitivity.find("in float chunks for up to 21 sampled users") !=
          std::string::npos);
    // sum: double: the double allowance alone
    p.dp.sum = "double";
    dprl::algos::DiscreteCql dbl(p);
    auto ctx3 = ctx_for(ds, 5);
    dbl.train(ctx3);
    const auto e = nlohmann::json::parse(dbl.privacy()->details_json);
    CHECK(e["sum_arithmetic"] == "double");
    CHECK(e["sensitivity"].get<double>() > 1.0);
    CHECK(e["sensitivity"].get<double>() < 1.0 + 1e-12);
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

namespace {

// A copy of ds with observation `t` of episode 0 (user 0) holding `value` in component `j`.
dprl::Dataset poisoned(const dprl::Dataset& ds, std::size_t t, std::size_t j, float value) {
  dprl::Dataset out(ds.info());
  const std::size_t D = ds.obs_dim(), A = ds.act_dim();
  for (std::size_t e = 0; e < ds.num_episodes(); ++e) {
    const std::size_t s = ds.episode_start(e), len = ds.episode_length(e);
    std::vector<float> obs(
        ds.observations().begin() + static_cast<std::ptrdiff_t>((s + e) * D),
        ds.observations().begin() + static_cast<std::ptrdiff_t>((s + e + len + 1) * D));
    if (e == 0) obs[t * D + j] = value;
    out.add_episode(obs, ds.actions().subspan(s * A, len * A), ds.rewards().subspan(s, len),
                    ds.terminations().subspan(s, len), ds.truncations().subspan(s, len),
                    ds.user_id(e), ds.episode_seed(e));
  }
  return out;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE(
      "one user with a cart velocity of 3e38 trains to the end with the clean data's record") {
    // the review's poisoned CartPole set: 64 one-episode users, user 0's observation 2 has a cart
    // velocity of 3e38 (inside the Box, whose bound is inf, so validation accepts it); q = 8/64,
    // 300 steps: user 0 is sampled with probability 1 - 0.875^300 > 1 - 1e-17
    const auto dir = fs::temp_directory_path() / "dprl_offline_dp_poison";
    fs::remove_all(dir);
    auto ds = users_data(64, 64);
    const dprl::Dataset bad = poisoned(*ds, 2, 1, 3e38f);
    CHECK_NOTHROW(bad.validate("poisoned"));
    dprl::save_minari(*ds, dir / "clean");
    dprl::save_minari(bad, dir / "poison");
    auto run = [&](const std::string& data) {
      dprl::algos::RunOptions o;
      o.out = dir / ("run_" + data);
      o.progress = dprl::Progress::Mode::kOff;
      const std::string yaml =
          "seed: 2\nenv: {id: cartpole}\n"
          "algo: {id: bc, params: {batch_size: 8, hidden_sizes: '32', dp: true, "
          "noise_multiplier: 1.0, epsilon: 100, delta: 1e-5}}\n"
          "data: {path: " +
          (dir / data).string() +
          ", format: minari}\n"
          "train: {steps: 300, eval_every: 100, eval_episodes: 2}\n";
      dprl::algos::run_experiment(dprl::parse_yaml(yaml, "inline"), "t", o);
      CHECK(fs::exists(dir / ("run_" + data) / "policy.bin"));
      return nlohmann::json::parse(dprl::read_file(dir / ("run_" + data) / "summary.json"));
    };
    const auto clean = run("clean");
    const auto poison = run("poison");
    auto record = [](nlohmann::json s) {
      auto p = s["privacy"];
      p["details"].erase("ledger");  // the run directory's path
      return p;
    };
    CHECK(record(clean) == record(poison));
    CHECK(poison["privacy"]["formal"] == true);
    CHECK(poison["privacy"]["epsilon"].get<double>() > 0);
    CHECK(poison["privacy"]["epsilon"] == clean["privacy"]["epsilon"]);
    // the released model is finite: its evaluation returns are numbers
    CHECK(poison["final_eval"]["return_mean"].is_number());
    const std::string metrics = dprl::read_file(dir / "run_poison" / "metrics.csv");
    CHECK(metrics.find("nan") == std::string::npos);
    fs::remove_all(dir);
  }
}
