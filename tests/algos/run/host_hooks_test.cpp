// A host program's hooks on a run (RunOptions): an evaluation callback that sees what metrics.csv
// records, a stop request that leaves a resumable directory (and the resumed run writes the same
// bytes as an uninterrupted one), and a log sink that receives the run's notes instead of stderr.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stop_token>
#include <string>
#include <vector>

#include "algos/run/experiment.hpp"
#include "engine/config.hpp"
#include "engine/error.hpp"
#include "tests/test_util.hpp"

namespace fs = std::filesystem;
using dprl::algos::EvalReport;
using dprl::algos::RunOptions;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Q-learning on Taxi: evaluations every 5000 steps, checkpoints every 3000 (or none)
dprl::Node config(const fs::path& out, bool checkpoints) {
  return dprl::parse_yaml("seed: 3\nout: " + out.string() +
                              "\nenv: {id: taxi}\nalgo: {id: q_learning}\n"
                              "train: {steps: 20000, eval_every: 5000, eval_episodes: 5, "
                              "checkpoint_every: " +
                              (checkpoints ? "3000" : "0") + "}\n",
                          "hooks");
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string l; std::getline(s, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("host hooks: on_eval sees every evaluation that metrics.csv records") {
    const auto d = test_util::scratch("eval");
    RunOptions o;
    o.progress = dprl::Progress::Mode::kOff;
    std::vector<EvalReport> seen;
    o.on_eval = [&](const EvalReport& r) { seen.push_back(r); };
    const auto s = dprl::algos::run_experiment(config(d / "run", false), "hooks", o);
    const auto rows = lines(slurp(d / "run" / "metrics.csv"));
    REQUIRE(rows.size() >= 2);
    REQUIRE(seen.size() == rows.size() - 1);  // one callback per row
    for (std::size_t i = 0; i < seen.size(); ++i) {
      CAPTURE(i);
      CHECK(seen[i].step_column == "step");
      CHECK(rows[i + 1].rfind(std::to_string(seen[i].step) + ",", 0) == 0);
      CHECK(seen[i].stats.episodes == 5);
      CHECK(std::isnan(seen[i].epsilon));  // not private
    }
    CHECK(seen.back().step == 20000);
    CHECK(seen.back().stats.return_mean == s.final_eval.return_mean);
  }

  TEST_CASE("host API: a finished run of another config is refused unless RunOptions::force") {
    const auto d = test_util::scratch("force");
    RunOptions o;
    o.progress = dprl::Progress::Mode::kOff;
    dprl::algos::run_experiment(config(d / "run", false), "hooks", o);
    const std::string summary = slurp(d / "run" / "summary.json");
    RunOptions other = o;
    other.seed = 4;
    CHECK_THROWS_AS(dprl::algos::run_experiment(config(d / "run", false), "hooks", other),
                    dprl::ConfigError);
    CHECK(slurp(d / "run" / "summary.json") == summary);
    other.force = true;
    const auto s = dprl::algos::run_experiment(config(d / "run", false), "hooks", other);
    CHECK(s.seed == 4);
    CHECK(slurp(d / "run" / "summary.json") != summary);
  }

  TEST_CASE("host API: a --set value out of range is a ParamError with its key, rule and place") {
    RunOptions o;
    o.write = false;
    o.progress = dprl::Progress::Mode::kOff;
    o.overrides = {"algo.params.gamma=3"};
    try {
      dprl::algos::run_experiment(config(test_util::scratch("param") / "run", false), "hooks", o);
      FAIL("no error");
    } catch (const dprl::ParamError& e) {
      CHECK(e.key() == "q_learning.gamma");
      CHECK(e.value() == "3");
      CHECK(e.rule() == "must be in [0, 1]");
      CHECK(e.where() == "--set algo.params.gamma=3");
      CHECK(std::string(e.what()) ==
            "q_learning.gamma = 3: must be in [0, 1] (at --set algo.params.gamma=3)");
    }
  }

  TEST_CASE("host hooks: a stop request leaves a resumable run that ends with the same bytes") {
    const auto ref = test_util::scratch("stop_ref");
    RunOptions o;
    o.progress = dprl::Progress::Mode::kOff;
    dprl::algos::run_experiment(config(ref / "run", true), "hooks", o);

    const auto d = test_util::scratch("stop");
    std::stop_source stop;
    RunOptions s = o;
    s.stop = stop.get_token();
    int evals = 0;
    s.on_eval = [&](const EvalReport&) {
      if (++evals == 2) stop.request_stop();  // at step 10000: the run stops at its next checkpoint
    };
    std::int64_t stopped_at = -1;
    try {
      dprl::algos::run_experiment(config(d / "run", true), "hooks", s);
    } catch (const dprl::algos::RunStopped& e) {
      stopped_at = e.step();
    }
    CHECK(stopped_at >= 10000);
    CHECK(stopped_at < 20000);
    CHECK_FALSE(fs::exists(d / "run" / "summary.json"));
    CHECK(fs::exists(d / "run" / "checkpoint.bin"));

    RunOptions r = o;
    r.resume = true;
    dprl::algos::run_experiment(config(d / "run", true), "hooks", r);
    for (const char* f : {"metrics.csv", "policy.json"}) {  // config.yaml names its own out
      CAPTURE(f);
      CHECK(slurp(d / "run" / f) == slurp(ref / "run" / f));
    }
  }

  TEST_CASE("host hooks: without checkpoints a stop ends the run at its next evaluation") {
    const auto d = test_util::scratch("stop_nockpt");
    std::stop_source stop;
    stop.request_stop();
    RunOptions o;
    o.progress = dprl::Progress::Mode::kOff;
    o.stop = stop.get_token();
    CHECK_THROWS_AS(dprl::algos::run_experiment(config(d / "run", false), "hooks", o),
                    dprl::algos::RunStopped);
    CHECK_FALSE(fs::exists(d / "run" / "summary.json"));
  }

  TEST_CASE("host hooks: the log sink receives the run's notes instead of stderr") {
    const auto d = test_util::scratch("log");
    RunOptions o;
    o.progress = dprl::Progress::Mode::kOff;
    {
      // a run stopped at once, its checkpoints then removed: a resume with no checkpoint yet says
      // so in a note and starts from step 0
      std::stop_source stop;
      stop.request_stop();
      RunOptions first = o;
      first.stop = stop.get_token();
      CHECK_THROWS_AS(dprl::algos::run_experiment(config(d / "run", true), "hooks", first),
                      dprl::algos::RunStopped);
      fs::remove(d / "run" / "checkpoint.bin");
      fs::remove(d / "run" / "checkpoint.prev.bin");
    }
    o.resume = true;
    std::vector<std::string> got;
    o.log = [&](std::string_view line) { got.emplace_back(line); };
    dprl::algos::run_experiment(config(d / "run", true), "hooks", o);
    REQUIRE(got.size() == 1);
    CHECK(got[0].find("has no checkpoint yet") != std::string::npos);
    // the sink is the run's only: afterwards notes go to stderr again
    got.clear();
    dprl::note("dprl: note: after the run");
    CHECK(got.empty());
  }
}
