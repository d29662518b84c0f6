// End-to-end tests of the dprl executable: exit codes, stdout JSON, one-line errors, run dirs.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

using cli_test::one_line;

using cli_test::kSrc;

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("envs --json lists every env with spaces and parameters") {
    auto r = cli_test::run("envs --json");
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    bool taxi = false;
    for (const auto& e : j) {
      CHECK(e.contains("observation_space"));
      CHECK(e.contains("action_space"));
      CHECK(e["params"].size() >= 1);
      if (e["id"] == "taxi") {
        taxi = true;
        CHECK(e["action_space"]["n"] == 6);
        CHECK(e["action_mask"] == true);
      }
    }
    CHECK(taxi);
  }

  TEST_CASE("run writes the run directory and reaches the quickstart target") {
    const auto d = scratch("quickstart");
    auto r = cli_test::run("run " + kSrc + "/configs/quickstart.yaml --out " + (d / "a").string());
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());  // no progress line when stderr is not a terminal
    auto s = nlohmann::json::parse(dprl::read_file(d / "a" / "summary.json"));
    for (const char* k : {"seed", "env_steps", "final_eval", "privacy", "versions", "git_commit"})
      CHECK(s.contains(k));
    // wall-clock figures live apart, so summary.json is the same bytes on every rerun
    CHECK_FALSE(s.contains("wall_time_s"));
    CHECK(nlohmann::json::parse(dprl::read_file(d / "a" / "timing.json")).contains("wall_time_s"));
    CHECK(s["privacy"].is_null());
    CHECK(s["final_eval"]["return_mean"].get<double>() >= 7.0);
    CHECK(s["final_eval"]["episodes"].get<int>() >= 100);
    CHECK(fs::exists(d / "a" / "config.yaml"));
    // it says where the results are and the plot to draw next, and that command works
    const std::string a = (d / "a").string();
    CHECK(r.out.find("results: " + a + "/ (metrics.csv") != std::string::npos);
    const auto next = r.out.find("next: dprl plot " + a + " --y return_mean -o a.svg\n");
    REQUIRE(next != std::string::npos);
    const auto plot = cli_test::run("plot " + a + " --y return_mean -o " + (d / "a.svg").string());
    CHECK(plot.code == 0);
    CHECK(fs::file_size(d / "a.svg") > 1000);
    // a learner whose metrics have no step column is offered its first column as x
    const auto l = cli_test::run("run " + kSrc + "/configs/quickstart.yaml --quiet --set algo.id=lsvi_ucb "
                            "--set env.id=linear_mdp --set algo.params={} --set train.steps=300 "
                            "--set train.eval_every=0 --set train.eval_episodes=2 --out " +
                            (d / "l").string());
    INFO(l.err);
    REQUIRE(l.code == 0);
    const std::string want = "next: dprl plot " + (d / "l").string() + " --x episode --y regret";
    REQUIRE(l.out.find(want) != std::string::npos);
    CHECK(cli_test::run(want.substr(11) + " -o " + (d / "l.svg").string()).code == 0);
    // same seed again: identical metrics; --seed changes them
    REQUIRE(cli_test::run("run " + kSrc + "/configs/quickstart.yaml --quiet --out " + (d / "b").string())
                .code == 0);
    CHECK(dprl::read_file(d / "a" / "metrics.csv") == dprl::read_file(d / "b" / "metrics.csv"));
    CHECK(dprl::read_file(d / "a" / "summary.json") == dprl::read_file(d / "b" / "summary.json"));
    // the saved policy evaluates from the CLI
    auto e = cli_test::run("eval --env taxi --policy " + (d / "a" / "policy.json").string() +
                      " --episodes 30 --seed 4 --json");
    REQUIRE(e.code == 0);
    auto ej = nlohmann::json::parse(e.out);
    CHECK(ej["episodes"] == 30);
    CHECK(ej["return_mean"].get<double>() >= 7.0);
    auto rnd = nlohmann::json::parse(cli_test::run("eval --env Taxi-v3 --policy random --episodes 20 "
                                              "--seed 1 --json")
                                         .out);
    CHECK(rnd["return_mean"].get<double>() < 0);
  }

  TEST_CASE("run refuses a folder holding a finished run of another config unless --force") {
    const auto d = scratch("other_config");
    const std::string q = "run " + kSrc + "/configs/quickstart.yaml --quiet --out " +
                          (d / "a").string() + " --set train.steps=2000";
    REQUIRE(cli_test::run(q).code == 0);
    const std::string summary = dprl::read_file(d / "a" / "summary.json");
    const std::string config = dprl::read_file(d / "a" / "config.yaml");
    // the same config runs again in place (same bytes)
    REQUIRE(cli_test::run(q).code == 0);
    CHECK(dprl::read_file(d / "a" / "summary.json") == summary);
    // another seed is another config: refused by the run and by --check, nothing touched
    for (const std::string extra : {" --seed 9", " --seed 9 --check"}) {
      CAPTURE(extra);
      const auto r = cli_test::run(q + extra);
      CHECK(r.code == 2);
      CHECK(cli_test::one_line(r.err));
      CHECK(r.err.find("holds a finished run of another config") != std::string::npos);
      CHECK(r.err.find("--force") != std::string::npos);
      CHECK(dprl::read_file(d / "a" / "summary.json") == summary);
      CHECK(dprl::read_file(d / "a" / "config.yaml") == config);
    }
    // --force replaces it
    REQUIRE(cli_test::run(q + " --seed 9 --force").code == 0);
    CHECK(dprl::read_file(d / "a" / "config.yaml") != config);
    CHECK(nlohmann::json::parse(dprl::read_file(d / "a" / "summary.json"))["seed"] == 9);
  }

  TEST_CASE("paper 002: private LSVI-UCB runs from the CLI and its time-indexed policy evaluates") {
    // per process: test runs of other checkouts share the temporary directory
    const auto d = scratch("paper002_" + std::to_string(::getpid()));
    const std::string out = (d / "run").string();
    auto r = cli_test::run("run " + kSrc + "/configs/paper002/tabular.yaml --quiet --out " + out +
                      " --set algo.params.episodes=1000 --set algo.params.private=true"
                      " --set algo.params.batching=static --set algo.params.epsilon=10");
    REQUIRE(r.code == 0);
    auto s = nlohmann::json::parse(dprl::read_file(d / "run" / "summary.json"));
    REQUIRE(s["privacy"].is_object());
    CHECK(s["privacy"]["epsilon"].get<double>() <= 10.0);
    // the target delta plus the table sampler's distance (secure releases, each on the table of
    // its channel's width)
    const double sampler_delta = s["privacy"]["sampler_delta"].get<double>();
    CHECK(sampler_delta > 0);
    CHECK(sampler_delta < 1e-12);
    CHECK(s["privacy"]["delta"].get<double>() == 1e-5 + sampler_delta);
    CHECK(s["extra"]["updates"].get<double>() == s["extra"]["batches"].get<double>());
    // secure by default: OS-entropy noise, and with the fixed initial state every published
    // figure is post-processing of the releases
    CHECK(s["privacy"]["noise_source"] == "os_entropy(secure, chacha20)");
    CHECK(s["privacy"]["reproducible_noise"] == false);
    CHECK(s["privacy"]["formal"] == true);
    CHECK(s["privacy"]["neighbouring"] == "replace");
    CHECK(r.err.empty());
    // seeded noise: reproducible, not formal, and one warning line
    auto seeded = cli_test::run("run " + kSrc + "/configs/paper002/tabular.yaml --quiet --out " +
                           (d / "seeded").string() +
                           " --set algo.params.episodes=100 --set algo.params.private=true"
                           " --set algo.params.noise=seeded");
    REQUIRE(seeded.code == 0);
    CHECK(one_line(seeded.err));
    CHECK(seeded.err.rfind("dprl: warning: lsvi_ucb: noise: seeded", 0) == 0);
    auto ss = nlohmann::json::parse(dprl::read_file(d / "seeded" / "summary.json"));
    CHECK(ss["privacy"]["reproducible_noise"] == true);
    CHECK(ss["privacy"]["formal"] == false);
    CHECK(s["extra"]["regret"].get<double>() > 0);
    // the policy file is time-indexed (horizon 5) and evaluates on the same env
    auto e = cli_test::run(
        "eval --env linear_mdp --param kind=tabular --param num_states=3 "
        "--param num_actions=2 --param horizon=5 --policy " +
        out + "/policy.json --episodes 50 --seed 2 --json");
    REQUIRE(e.code == 0);
    auto ej = nlohmann::json::parse(e.out);
    CHECK(ej["length_mean"].get<double>() == 5.0);
    // the metrics are the regret curve on a log-spaced episode grid
    const std::string m = dprl::read_file(d / "run" / "metrics.csv");
    CHECK(m.rfind("episode,regret,regret_k,updates", 0) == 0);
    // a non-linear env is refused with one line naming the learner, before anything is written
    auto bad = cli_test::run("run " + kSrc + "/configs/paper002/tabular.yaml --quiet --out " +
                        (d / "bad").string() + " --set env.id=taxi --set 'env.params={}'");
    CHECK(bad.code == 2);
    CHECK(one_line(bad.err));
    CHECK(bad.err.find("linear_mdp") != std::string::npos);
    CHECK_FALSE(fs::exists(d / "bad"));
  }

  TEST_CASE("bad input gives one line on stderr and a non-zero exit and writes nothing") {
    const auto d = scratch("bad");
    auto r = cli_test::run("run " + kSrc + "/configs/quickstart.yaml --out " + (d / "x").string() +
                      " --set algo.params.gamma=3");
    CHECK(r.code != 0);
    CHECK(one_line(r.err));
    CHECK(r.err.find("q_learning.gamma = 3") != std::string::npos);
    CHECK_FALSE(fs::exists(d / "x"));

    dprl::write_file_atomic(d / "bad.yaml", "seed: 1\nenv: {id: taxi\n");
    r = cli_test::run("run " + (d / "bad.yaml").string());
    CHECK(r.code != 0);
    CHECK(one_line(r.err));
    CHECK(r.err.find("bad.yaml:") != std::string::npos);

    r = cli_test::run("run " + (d / "missing.yaml").string());
    CHECK(r.code != 0);
    CHECK(one_line(r.err));
    CHECK(r.err.find("missing.yaml") != std::string::npos);

    r = cli_test::run("eval --env nope --policy random --episodes 3");
    CHECK(r.code != 0);
    CHECK(one_line(r.err));
    CHECK(r.err.find("unknown env 'nope'; valid: ") != std::string::npos);

    r = cli_test::run("eval --env taxi --param max_episode_steps=0 --policy random --episodes 3");
    CHECK(r.code != 0);
    CHECK(r.err.find("taxi.max_episode_steps = 0") != std::string::npos);
  }

  TEST_CASE("env replay prints steps and rejects bad actions before printing") {
    const auto d = scratch("replay");
    dprl::write_file_atomic(d / "ok.json",
                            R"({"env": "CartPole-v1", "state": [0.01, 0.0, 0.02, 0.0],
                              "actions": [1, 0, 1, 1, 0]})");
    auto r = cli_test::run("env replay " + (d / "ok.json").string());
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["steps"].size() == 5);
    CHECK(j["steps"][0]["obs"].size() == 4);
    CHECK(j["steps"][0]["reward"] == 1.0);
    // x after one Euler step with the old velocity 0 is unchanged: 0.01 in float32
    CHECK(j["steps"][0]["obs"][0].get<double>() == static_cast<double>(0.01f));

    dprl::write_file_atomic(d / "range.json",
                            R"({"env": "CartPole-v1", "state": [0, 0, 0, 0], "actions": [1, 2]})");
    r = cli_test::run("env replay " + (d / "range.json").string());
    CHECK(r.code != 0);
    CHECK(r.out.empty());
    CHECK(one_line(r.err));
    CHECK(r.err.find("actions[1] = 2 is not in Discrete(2)") != std::string::npos);

    dprl::write_file_atomic(d / "nan.json",
                            R"({"env": "Pendulum-v1", "state": [0, 0], "actions": [0.5, "nan"]})");
    r = cli_test::run("env replay " + (d / "nan.json").string());
    CHECK(r.code != 0);
    CHECK(r.out.empty());
    CHECK(r.err.find("actions[1]") != std::string::npos);

    dprl::write_file_atomic(d / "state.json",
                            R"({"env": "CartPole-v1", "state": [0, 0, 0], "actions": [1]})");
    r = cli_test::run("env replay " + (d / "state.json").string());
    CHECK(r.code != 0);
    CHECK(one_line(r.err));
  }

  TEST_CASE("bench env reports throughput as JSON") {
    auto r = cli_test::run("bench env taxi --steps 20000 --json");
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["env"] == "taxi");
    CHECK(j["steps"] == 20000);
    CHECK(j["ns_per_step"].get<double>() > 0);
    CHECK(j["steps_per_s"].get<double>() > 0);
  }

  TEST_CASE("bench noise counts the bits each source draws") {
    // seeded: one ChaCha8Rand word per value plus the words of the draws outside their box (about
    // 1.5% of 20,000, one or more words each); os-entropy at this width: one word per value and
    // two more for each of the table sampler's rare ties (probability 2^-16 a lookup)
    auto r = cli_test::run("bench noise --source seeded --n 20000 --repeats 1 --json");
    REQUIRE(r.code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["bits_per_value"].get<double>() > 64.5);
    CHECK(j["bits_per_value"].get<double>() < 68.0);
    r = cli_test::run("bench noise --source os-entropy --n 20000 --repeats 1 --json");
    REQUIRE(r.code == 0);
    j = nlohmann::json::parse(r.out);
    CHECK(j["bits_per_value"].get<double>() >= 64.0);
    CHECK(j["bits_per_value"].get<double>() < 64.5);
    CHECK(j["ns_per_value"].get<double>() > 0);
  }

  TEST_CASE("run --check and sweep --check check everything a run would and write nothing") {
    const auto d = scratch("check");
    const std::string smoke = kSrc + "/configs/paper004/smoke.yaml";
    auto r = cli_test::run("run " + smoke + " --check --out " + (d / "a").string());
    REQUIRE(r.code == 0);
    CHECK(r.out.find("ok: paper004_smoke, primorl on pendulum, seed 1") != std::string::npos);
    CHECK_FALSE(fs::exists(d / "a"));
    // a bad parameter, and a data set that is not there (found only when the data are loaded)
    r = cli_test::run("run " + smoke + " --check --set algo.params.penalty_lambda=-1");
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("penalty_lambda") != std::string::npos);
    const std::string bc = kSrc + "/configs/offline/bc_lunar.yaml";
    r = cli_test::run("run " + bc + " --check --set data.path=" + (d / "none").string());
    CHECK(r.code != 0);
    CHECK(one_line(r.err));
    CHECK(r.err.find("no such dataset") != std::string::npos);
    CHECK(cli_test::run("run " + kSrc + "/configs/paper003/cartpole.yaml --check --set "
                   "algo.params.teacher=" + (d / "none.bin").string())
              .code != 0);

    const auto sweep = d / "sweep.yaml";
    dprl::write_file_atomic(sweep, "base: " + smoke + "\nout: " + (d / "sw").string() +
                                       "\nseeds: [1, 2]\n");
    r = cli_test::run("sweep " + sweep.string() + " --check");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("2 runs checked") != std::string::npos);
    CHECK_FALSE(fs::exists(d / "sw" / "base"));
    // every failing run on its own line, then exit 2
    dprl::write_file_atomic(sweep, "base: " + bc + "\nout: " + (d / "sw2").string() +
                                       "\nseeds: [1]\ngrid:\n  data.path: [" +
                                       (d / "n1").string() + ", " + (d / "n2").string() + "]\n");
    r = cli_test::run("sweep " + sweep.string() + " --check");
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 2);
    CHECK(r.err.find("n1: no such dataset") != std::string::npos);
    CHECK(r.err.find("n2: no such dataset") != std::string::npos);
    CHECK_FALSE(fs::exists(d / "sw2" / "base"));
    // a sweep of pipeline runs (paper 000) is checked as `run --check` checks a pipeline file:
    // no population trained, nothing written; a bad pipeline value is refused on one line
    const std::string pipe = kSrc + "/configs/paper000/cartpole_cql_eps10.yaml";
    dprl::write_file_atomic(sweep, "base: " + pipe + "\nout: " + (d / "sw3").string() +
                                       "\nseeds: [1, 2]\n");
    r = cli_test::run("sweep " + sweep.string() + " --check");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("2 runs checked") != std::string::npos);
    CHECK_FALSE(fs::exists(d / "sw3"));
    dprl::write_file_atomic(sweep, "base: " + pipe + "\nout: " + (d / "sw4").string() +
                                       "\nseeds: [1, 2]\nset:\n  selective.p: 2\n");
    r = cli_test::run("sweep " + sweep.string() + " --check");
    CHECK(r.code != 0);
    CHECK(one_line(r.err));
    CHECK(r.err.find("selective.p") != std::string::npos);
    CHECK_FALSE(fs::exists(d / "sw4"));
  }

  TEST_CASE("sweep results are identical for 1 and 2 jobs") {
    const auto d = scratch("sweep");
    dprl::write_file_atomic(d / "base.yaml",
                            "seed: 1\nenv: {id: taxi}\nalgo: {id: q_learning}\n"
                            "train: {steps: 20000, eval_every: 10000, eval_episodes: 10}\n");
    for (int jobs : {1, 2}) {
      dprl::write_file_atomic(
          d / "sweep.yaml",
          "base: base.yaml\nout: " + (d / ("j" + std::to_string(jobs))).string() +
              "\nseeds: [1, 2]\ngrid:\n  algo.params.learning_rate: [0.1, 0.5]\n");
      auto r = cli_test::run("sweep " + (d / "sweep.yaml").string() + " --jobs " + std::to_string(jobs));
      REQUIRE(r.code == 0);
    }
    int runs = 0;
    for (const auto& label : {"learning_rate=0.1", "learning_rate=0.5"})
      for (const auto& seed : {"seed1", "seed2"}) {
        CHECK(dprl::read_file(d / "j1" / label / seed / "metrics.csv") ==
              dprl::read_file(d / "j2" / label / seed / "metrics.csv"));
        ++runs;
      }
    CHECK(runs == 4);
    // labels with commas are quoted, so every row has as many fields as the header
    dprl::write_file_atomic(d / "sweep2.yaml",
                            "base: base.yaml\nout: " + (d / "two").string() +
                                "\nseeds: [1]\ngrid:\n  algo.params.learning_rate: [0.5]\n"
                                "  algo.params.gamma: [0.9, 0.99]\n");
    REQUIRE(cli_test::run("sweep " + (d / "sweep2.yaml").string()).code == 0);
    const std::string csv = dprl::read_file(d / "two" / "sweep.csv");
    CHECK(csv.find("\"learning_rate=0.5,gamma=0.9\"") != std::string::npos);
    auto fields = [](const std::string& line) {
      int n = 1;
      bool quoted = false;
      for (char c : line) {
        if (c == '"') quoted = !quoted;
        if (c == ',' && !quoted) ++n;
      }
      return n;
    };
    std::size_t start = 0;
    int header_fields = -1, lines = 0;
    while (start < csv.size()) {
      const auto end = csv.find('\n', start);
      const std::string line = csv.substr(start, end - start);
      if (header_fields < 0)
        header_fields = fields(line);
      else
        CHECK(fields(line) == header_fields);
      ++lines;
      start = end + 1;
    }
    CHECK(lines == 3);
    CHECK(fs::exists(d / "two" / "summary.md"));
  }
}
