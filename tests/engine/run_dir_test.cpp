// json_number (infinities as strings); RunDir's timing.json: wall_time_s first, then the figures
// the learner wrote during the run; a previous run's file in the same directory does not leak
// into the next one.
#include "engine/run_dir.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/io.hpp"
#include "engine/json_number.hpp"

namespace fs = std::filesystem;

TEST_SUITE("unit") {
  TEST_CASE("json_number writes infinities as the strings every dprl JSON file uses") {
    CHECK(dprl::json_number(1.5).dump() == "1.5");
    CHECK(dprl::json_number(INFINITY).dump() == "\"inf\"");
    CHECK(dprl::json_number(-INFINITY).dump() == "\"-inf\"");
    CHECK(dprl::json_number(NAN).is_null());
  }

  TEST_CASE("timing.json keeps the learner's figures of this run and drops an older file's") {
    const auto d = fs::temp_directory_path() / "dprl_run_dir_test_timing";
    fs::remove_all(d);
    dprl::RunSummary s;
    s.wall_time_s = 2.5;
    {
      dprl::RunDir dir(d);
      dir.write_file("timing.json", R"({"model_s": 1.25, "wall_time_s": 99})");
      dir.write_summary(s);
    }
    auto t = nlohmann::ordered_json::parse(dprl::read_file(d / "timing.json"));
    CHECK(t.begin().key() == "wall_time_s");
    CHECK(t["wall_time_s"] == 2.5);  // the run's, not the learner's
    CHECK(t["model_s"] == 1.25);
    {
      dprl::RunDir dir(d);  // a new run in the same directory writes no figures of its own
      dir.write_summary(s);
    }
    t = nlohmann::ordered_json::parse(dprl::read_file(d / "timing.json"));
    CHECK(t.size() == 1);
    CHECK(t["wall_time_s"] == 2.5);
    fs::remove_all(d);
  }

  TEST_CASE("held metrics reach metrics.csv only through explicit flushes") {
    const auto d = fs::temp_directory_path() / "dprl_run_dir_test_held";
    fs::remove_all(d);
    {
      dprl::RunDir run(d);
      run.hold_metrics();
      run.append_metrics({{"step", 1}, {"x", 2}});
      run.flush_metrics();  // a checkpoint
      run.append_metrics({{"step", 2}, {"x", 3}});
    }  // destroyed without a flush: the second row was made after the last checkpoint
    CHECK(dprl::read_file(d / "metrics.csv") == "step,x\n1,2\n");
    {
      dprl::RunDir run(d);  // not held: the destructor flushes
      run.append_metrics({{"step", 5}, {"x", 6}});
    }
    CHECK(dprl::read_file(d / "metrics.csv") == "step,x\n5,6\n");
    fs::remove_all(d);
  }
}
