// End-to-end through the CLI: dprl collect, then a few thousand discrete CQL gradient steps from
// the committed config, then dprl eval of the saved policy; bad data fails before the run
// directory exists.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/io.hpp"
#include "tests/tools/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace {

using cli_test::Result;

using cli_test::scratch;

const std::string kConfig = std::string(DPRL_SOURCE_DIR) + "/configs/offline/cql_cartpole.yaml";

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("collect, discrete_cql from the dataset, eval of the saved policy") {
    const auto d = scratch("cql");
    const std::string data = (d / "data").string(), run = (d / "run").string();
    auto r =
        cli_test::run("collect --env cartpole --policy random --episodes 20 --seed 3 --out " + data);
    REQUIRE(r.code == 0);
    r = cli_test::run("run " + kConfig + " --quiet --out " + run + " --set data.path=" + data +
                 " --set train.steps=3000 --set train.eval_every=1000 --set train.eval_episodes=3");
    CAPTURE(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("3000 gradient steps") != std::string::npos);
    const auto summary = nlohmann::json::parse(dprl::read_file(fs::path(run) / "summary.json"));
    CHECK(summary["algo"] == "discrete_cql");
    CHECK(summary["privacy"].is_null());
    const std::string metrics = dprl::read_file(fs::path(run) / "metrics.csv");
    CHECK(metrics.rfind("gradient_step,", 0) == 0);
    CHECK(metrics.find("\n3000,") != std::string::npos);
    r = cli_test::run("eval --env cartpole --episodes 3 --json --policy " + run + "/policy.bin");
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out)["episodes"] == 3);
    fs::remove_all(d);
  }

  TEST_CASE("bad data: one line naming the file, exit 2, no run directory") {
    const auto d = scratch("bad");
    const std::string run = (d / "run").string();
    auto r = cli_test::run("run " + kConfig + " --quiet --out " + run +
                      " --set data.path=" + (d / "missing").string());
    CHECK(r.code == 2);
    CHECK(r.err.rfind("dprl: ", 0) == 0);
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(r.err.find("missing") != std::string::npos);
    CHECK_FALSE(fs::exists(run));
    // a dataset of another env: its spaces do not match
    const std::string lunar = (d / "lunar").string();
    REQUIRE(
        cli_test::run("collect --env lunar_lander --policy random --episodes 2 --seed 1 --out " + lunar)
            .code == 0);
    r = cli_test::run("run " + kConfig + " --quiet --out " + run + " --set data.path=" + lunar);
    CHECK(r.code == 2);
    CHECK(r.err.find(lunar) != std::string::npos);
    CHECK(r.err.find("observation_space") != std::string::npos);
    CHECK_FALSE(fs::exists(run));
    fs::remove_all(d);
  }
}
