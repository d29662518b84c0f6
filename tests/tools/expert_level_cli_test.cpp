// End-to-end: the paper 000 smoke pipeline through `dprl run`, stage reuse, and bad input.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/io.hpp"
#include "tests/tools/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace {

using cli_test::one_line;

const std::string kSmoke = std::string(DPRL_SOURCE_DIR) + "/configs/paper000/smoke.yaml";

using cli_test::scratch;

std::string smoke_args(const fs::path& d) {
  return "run " + kSmoke + " --quiet --jobs 2 --out " + (d / "train").string() +
         " --set population.out=" + (d / "population").string();
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("the paper 000 smoke pipeline runs end to end and reuses its finished stages") {
    const auto d = scratch("smoke");
    const auto r = cli_test::run(smoke_args(d));
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto s = nlohmann::json::parse(dprl::read_file(d / "train" / "summary.json"));
    const auto& p = s.at("privacy");
    CHECK(p.at("unit") == "expert");
    CHECK(p.at("neighbouring") == "add-remove");
    CHECK(p.at("formal") == false);  // the smoke file uses seeded noise
    CHECK(p.at("reproducible_noise") == true);
    const auto& parts = p.at("details").at("parts");
    const double e1 = parts.at("release").at("epsilon"), e2 = parts.at("dp_sgd").at("epsilon");
    CHECK(p.at("epsilon").get<double>() == doctest::Approx(e1 + e2));
    const auto& dp = parts.at("dp_sgd");
    CHECK(dp.at("unit") == "expert");
    CHECK(dp.at("formal") == false);
    // z C' = z C (1 + beta)
    CHECK(dp.at("details").at("noise_sd_on_sum").get<double>() ==
          doctest::Approx(2.0 * (1.0 + dp.at("details").at("rounding_allowance").get<double>()))
              .epsilon(1e-12));
    CHECK(dp.at("details").at("steps") == s.at("extra").at("noisy_steps"));
    CHECK(e1 <= 7.5);  // eps1 = 3/4 of 10, the exact composition never above it
    CHECK(e2 <= 2.5);
    const double m = s.at("extra").at("experts");
    CHECK(m == 32);
    CHECK(p.at("delta").get<double>() == doctest::Approx(0.1 / 32));  // delta = 1/(10 m)
    CHECK(fs::exists(d / "population" / "manifest.json"));
    CHECK(fs::exists(d / "population" / "experts" / "expert_00031.bin"));
    CHECK(fs::exists(d / "train" / "release" / "release.json"));
    CHECK(fs::exists(d / "train" / "privacy_ledger.json"));
    // a second run reuses the population and the release (no expert is trained again)
    const auto summary = dprl::read_file(d / "train" / "summary.json");
    const auto r2 = cli_test::run(smoke_args(d));
    REQUIRE(r2.code == 0);
    CHECK(r2.err.find("releasing anew") == std::string::npos);
    CHECK(dprl::read_file(d / "train" / "summary.json") == summary);  // seeded: same bytes
    // the finished run's DP-SGD part audited with canary experts against epsilon2
    const auto au = cli_test::run("audit run " + (d / "train").string() +
                             " --white-box --canaries 100 --guesses 100 --json");
    INFO(au.err);
    CHECK(au.code == 0);
    const auto aj = nlohmann::json::parse(au.out);
    CHECK(aj.at("learner") == "expert_level (discrete_cql)");
    CHECK(aj.at("epsilon_claimed").get<double>() == doctest::Approx(e2));
    CHECK(aj.at("epsilon_reported").get<double>() == doctest::Approx(e1 + e2));
    CHECK(aj.at("refuted") == false);
    CHECK(nlohmann::json::parse(dprl::read_file(d / "train" / "audit.json")) == aj);
    // a random subset of 16 experts (paper Fig. 4): delta = 1/160, the population reused
    const auto r3 =
        cli_test::run("run " + kSmoke + " --quiet --jobs 2 --out " + (d / "train16").string() +
                 " --set population.out=" + (d / "population").string() +
                 " --set experts=16 --set audit.canaries=1000 --set audit.white_box=true");
    INFO(r3.err);
    REQUIRE(r3.code == 0);
    const auto s16 = nlohmann::json::parse(dprl::read_file(d / "train16" / "summary.json"));
    // its audit: section ran after training
    CHECK(s16.at("audit").at("canaries") == 1000);
    CHECK(s16.at("audit").at("mode") == "white-box");
    CHECK(fs::exists(d / "train16" / "audit.json"));
    CHECK(s16.at("extra").at("experts") == 16);
    CHECK(s16.at("privacy").at("delta").get<double>() == doctest::Approx(0.1 / 16));
    CHECK(cli_test::run(smoke_args(d) + " --set experts=33").code == 2);  // more than the population
    // the non-private agreement diagnostic on the built population: exact counts, never above
    // m (1 - (|A| - 1) p_min)^k, and the release's expected threshold
    const auto ag = cli_test::run("agreement " + kSmoke + " --json --jobs 2 --episodes 20 --lengths 1,3" +
                                  " --set population.out=" + (d / "population").string());
    INFO(ag.err);
    REQUIRE(ag.code == 0);
    const auto gj = nlohmann::json::parse(ag.out);
    CHECK(gj.at("experts") == 32);
    CHECK(gj.at("episodes") == 20);
    CHECK(gj.at("expected_threshold").get<double>() > gj.at("theta").get<double>());
    const double hi = 1.0 - 1.0 * gj.at("p_min").get<double>();  // CartPole: |A| = 2
    REQUIRE(gj.at("lengths").size() == 2);
    CHECK(gj.at("lengths")[0].at("length") == 1);
    CHECK(gj.at("lengths")[0].at("prefixes") == 20);
    CHECK(gj.at("lengths")[0].at("max").get<double>() <= 32 * hi * (1 + 1e-12));
    CHECK(gj.at("lengths")[0].at("median").get<double>() > 0.0);
    CHECK(gj.at("lengths")[1].at("max").get<double>() <= 32 * hi * hi * hi * (1 + 1e-12));
    // a population that is not built is refused, and nothing is trained or created
    const auto missing = cli_test::run("agreement " + kSmoke + " --set population.out=" +
                                       (d / "nothing").string());
    CHECK(missing.code == 2);
    CHECK(one_line(missing.err));
    CHECK(missing.err.find("is not built") != std::string::npos);
    CHECK_FALSE(fs::exists(d / "nothing"));
  }

  TEST_CASE("bench population trains a few runs spread over the plan and projects the rest") {
    const auto d = scratch("bench_pop");
    const auto r = cli_test::run("bench population " + kSmoke + " --runs 2 --dir " + (d / "b").string());
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("population") == "smoke");
    CHECK(j.at("hidden_sizes") == "64,64");
    CHECK(j.at("population_runs") == 48);  // 16 settings x 3 runs
    REQUIRE(j.at("runs").size() == 2);
    CHECK(j.at("runs")[0].at("run") == 0);
    CHECK(j.at("runs")[1].at("run") == 24);  // evenly spread over the plan
    CHECK(j.at("env_steps_per_run").get<double>() > 19000);
    const double cpu = j.at("cpu_s_per_run");
    CHECK(cpu > 0);
    CHECK(j.at("population_cpu_hours").get<double>() == doctest::Approx(cpu * 48 / 3600));
    CHECK(j.at("projected_wall_hours_on_ranks").at("16").get<double>() ==
          doctest::Approx(cpu * 48 / 3600 / 16));
    CHECK(fs::exists(d / "b" / "run1" / "summary.json"));
  }

  TEST_CASE("bad pipeline input: one line naming the key, exit 2, nothing created") {
    const auto d = scratch("bad");
    auto bad = [&](const std::string& set, const std::string& needle) {
      const auto out = d / "never";
      const auto r =
          cli_test::run("run " + kSmoke + " --out " + out.string() +
                   " --set population.out=" + (d / "never_pop").string() + " --set '" + set + "'");
      CAPTURE(set);
      CHECK(r.code == 2);
      CHECK(one_line(r.err));
      CHECK(r.err.find(needle) != std::string::npos);
      CHECK_FALSE(fs::exists(out));
      CHECK_FALSE(fs::exists(d / "never_pop"));
    };
    bad("privacy.epsilon2=5", "exceeds epsilon");  // eps1 + eps2 = 7.5 + 5 > 10
    bad("privacy.epsilon1=12", "exceeds epsilon");
    bad("privacy.delta2=0.03", "exceeds delta");  // delta2 = 0.03 > delta = 1/320
    bad("population.action_floor=0.5", "population.action_floor");
    bad("population.action_floor=0", "population.action_floor");
    bad("population.env.id=pendulum", "continuous actions");
    // more examined demonstrations than recorded (rollouts have no such bound)
    bad("release.source=recorded' --set 'release.trajectories=100000", "release.trajectories");
    bad("release.source=fresh", "release.source");
    bad("selective.accounting=optimistic", "selective.accounting");
    bad("mode=private", "mode");
    bad("learner.id=ppo", "offline learner");
    bad("population.variants.grid.gravity=linspace(1,2)", "linspace");
  }

  TEST_CASE("an experts folder that does not match the dataset is refused before any stage") {
    const auto d = scratch("mismatch");
    const auto r = cli_test::run(smoke_args(d));
    REQUIRE(r.code == 0);
    // drop one expert from the manifest: 31 experts against 32 users in the dataset
    auto j = nlohmann::json::parse(dprl::read_file(d / "population" / "manifest.json"));
    j["experts"].erase(j["experts"].size() - 1);
    dprl::write_file_atomic(d / "population" / "manifest.json", j.dump());
    fs::remove_all(d / "train");
    const auto r2 = cli_test::run(smoke_args(d));
    CHECK(r2.code == 2);
    CHECK(one_line(r2.err));
    CHECK(r2.err.find("manifest.json") != std::string::npos);
    CHECK_FALSE(fs::exists(d / "train"));
  }
}
