// End-to-end: dprl collect, dataset info and dataset validate; one-line errors with exit 2.
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

using cli_test::Result;

using cli_test::scratch;

// "dprl: <message>\n" and exit 2.
void check_error(const Result& r, const std::string& part) {
  CAPTURE(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.rfind("dprl: ", 0) == 0);
  CHECK(r.err.find('\n') == r.err.size() - 1);
  CHECK(r.err.find(part) != std::string::npos);
}

const std::string kFixtures = std::string(DPRL_SOURCE_DIR) + "/tests/engine/fixtures/";

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("collect writes a Minari folder that info and validate read") {
    const auto d = scratch("collect");
    const std::string out = (d / "cp").string();
    auto r = cli_test::run(
        "collect --env CartPole-v1 --policy random --episodes 8 --seed 5 --user-id 3"
        " --action-floor 0.02 --json --out " +
        out);
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["episodes"] == 8);
    CHECK(j["users"] == 1);
    CHECK(j["env_id"] == "cartpole");
    CHECK(fs::exists(d / "cp" / "data" / "main_data.hdf5"));
    CHECK(fs::exists(d / "cp" / "data" / "metadata.json"));
    auto info = cli_test::run("dataset info " + out + " --json");
    REQUIRE(info.code == 0);
    auto ij = nlohmann::json::parse(info.out);
    CHECK(ij["transitions"] == j["transitions"]);
    CHECK(ij["return_histogram"]["counts"].size() == 10);
    auto text = cli_test::run("dataset info " + out);
    REQUIRE(text.code == 0);
    CHECK(text.out.find("episodes     8") != std::string::npos);
    CHECK(text.out.find('#') != std::string::npos);
    auto v = cli_test::run("dataset validate " + out + " --env cartpole");
    CHECK(v.code == 0);
    CHECK(v.out.find("valid (8 episodes") != std::string::npos);
    // the same seed gives the same bytes
    REQUIRE(cli_test::run("collect --env CartPole-v1 --policy random --episodes 8 --seed 5 --user-id 3"
                     " --action-floor 0.02 --out " +
                     (d / "cp2").string())
                .code == 0);
    CHECK(dprl::read_file(d / "cp" / "data" / "main_data.hdf5") ==
          dprl::read_file(d / "cp2" / "data" / "main_data.hdf5"));
    // spaces that do not match the named env
    check_error(cli_test::run("dataset validate " + out + " --env pendulum"),
                "observation_space: the dataset has");
    // an existing folder is kept unless --overwrite
    check_error(cli_test::run("collect --env cartpole --policy random --out " + out),
                "exists and is not empty");
    CHECK(cli_test::run("collect --env cartpole --policy random --overwrite --out " + out).code == 0);
  }

  TEST_CASE("collect: built-in heuristic on LunarLander, continuous env with action noise") {
    const auto d = scratch("heuristic");
    auto r = cli_test::run(
        "collect --env lunar_lander --policy lunar_lander_heuristic --episodes 2"
        " --seed 1 --action-floor 0.1 --out " +
        (d / "ll").string());
    REQUIRE(r.code == 0);
    CHECK(cli_test::run("dataset validate " + (d / "ll").string() + " --env LunarLander-v3").code == 0);
    r = cli_test::run(
        "collect --env Pendulum-v1 --policy random --episodes 1 --action-noise 0.3 --out " +
        (d / "pd").string());
    REQUIRE(r.code == 0);
    CHECK(cli_test::run("dataset validate " + (d / "pd").string() + " --env pendulum").code == 0);
  }

  TEST_CASE("collect and dataset errors are one line with exit 2") {
    const auto d = scratch("errors");
    const std::string out = (d / "x").string();
    check_error(cli_test::run("collect --env cartpole --policy random --action-floor 0.5 --out " + out),
                "action_floor = 0.5: must lie in [0, 1/|A|)");
    check_error(cli_test::run("collect --env nope --policy random --out " + out), "nope");
    check_error(cli_test::run("collect --env cartpole --policy nope.json --out " + out), "nope.json");
    CHECK_FALSE(fs::exists(d / "x"));
    check_error(cli_test::run("dataset info " + (d / "missing").string()), "no such file or folder");
    dprl::write_file_atomic(d / "junk.hdf5", "junk");
    check_error(cli_test::run("dataset info " + (d / "junk.hdf5").string()),
                "junk.hdf5: /: not a readable HDF5 file");
    check_error(cli_test::run("dataset info " + kFixtures + "d4rl_absurd.hdf5"),
                "observations: shape claims");
    check_error(cli_test::run("dataset info " + kFixtures + "minari_box --format parquet"),
                "format 'parquet'");
    // a Minari folder whose actions lie outside its declared space
    fs::copy(kFixtures + "minari_discrete", d / "md", fs::copy_options::recursive);
    auto meta = nlohmann::json::parse(dprl::read_file(d / "md" / "data" / "metadata.json"));
    meta["action_space"] = R"({"type": "Discrete", "dtype": "int64", "start": 0, "n": 1})";
    dprl::write_file_atomic(d / "md" / "data" / "metadata.json", meta.dump());
    check_error(cli_test::run("dataset validate " + (d / "md").string()),
                "actions: episode 0 step 1 lies outside Discrete(1)");
  }

  TEST_CASE("dataset merge writes one Minari folder, and bad inputs are one-line errors") {
    const auto d = scratch("merge");
    const std::string m = (d / "m").string(), e = (d / "e").string(), out = (d / "me").string();
    REQUIRE(cli_test::run("collect --env Pendulum-v1 --policy random --episodes 3 --seed 1 --out " + m)
                .code == 0);
    REQUIRE(cli_test::run("collect --env Pendulum-v1 --policy random --episodes 2 --seed 2 --user-id 9"
                     " --out " +
                     e)
                .code == 0);
    auto r = cli_test::run("dataset merge " + m + " " + e +
                      " --users episode --dataset-id x/y-v0"
                      " --json --out " +
                      out);
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["episodes"] == 5);
    CHECK(j["transitions"] == 1000);
    CHECK(j["users"] == 5);
    CHECK(j["dataset_id"] == "x/y-v0");
    CHECK(j["metadata"]["users"] == "episode");
    auto info = nlohmann::json::parse(cli_test::run("dataset info " + out + " --json").out);
    CHECK(info["users"] == 5);
    CHECK(info["env_id"] == "pendulum");
    // offset (the default): each input's single user stays distinct
    REQUIRE(cli_test::run("dataset merge " + m + " " + e + " --overwrite --out " + out).code == 0);
    CHECK(nlohmann::json::parse(cli_test::run("dataset info " + out + " --json").out)["users"] == 2);
    check_error(cli_test::run("dataset merge " + m + " " + e + " --out " + out), "exists");
    // --overwrite replaces a dataset folder, never a folder of something else
    fs::create_directories(d / "notes");
    dprl::write_file_atomic(d / "notes" / "keep.txt", "mine");
    check_error(cli_test::run("dataset merge " + m + " --overwrite --out " + (d / "notes").string()),
                "not a Minari dataset folder");
    CHECK(dprl::read_file(d / "notes" / "keep.txt") == "mine");
    check_error(cli_test::run("dataset merge " + m + " --users nope --out " + (d / "x").string()),
                "--users = 'nope'");
    REQUIRE(cli_test::run("collect --env CartPole-v1 --policy random --episodes 1 --out " +
                     (d / "c").string())
                .code == 0);
    check_error(
        cli_test::run("dataset merge " + m + " " + (d / "c").string() + " --out " + (d / "x").string()),
        (d / "c").string() + ": observation_space");
    CHECK_FALSE(fs::exists(d / "x"));
  }

  TEST_CASE("dataset info reads D4RL files, with per-row user ids") {
    auto r = cli_test::run("dataset info " + kFixtures +
                      "d4rl_next_obs.hdf5 --json --user-key "
                      "infos/user_id");
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["episodes"] == 2);
    CHECK(j["users"] == 2);
    CHECK(j["transitions"] == 6);
    auto g = cli_test::run("dataset validate " + kFixtures + "d4rl_gzip.hdf5 --format d4rl");
    CHECK(g.code == 0);
  }
}
