#include "engine/params.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>

namespace {

struct DemoParams {
  double gravity = 9.8;
  int steps = 500;
  bool wind = false;
  std::string task = "balance";
  template <class V>
  void visit(V& v) {
    v("gravity", gravity, dprl::Range::open(-12, 0), "gravity");
    v("steps", steps, dprl::Range::closed(1, 1000), "time limit");
    v("wind", wind, "enable wind");
    v("task", task, dprl::Choices{{"balance", "swingup"}}, "task");
  }
  void check() const {
    if (wind && steps < 10) throw dprl::ParamError("demo: wind needs steps >= 10");
  }
};

dprl::ParamMap map(std::initializer_list<std::pair<const char*, const char*>> kv) {
  dprl::ParamMap m;
  for (auto& [k, v] : kv) m.push_back({k, {v, "test.yaml:1:1"}});
  return m;
}

std::string error_of(const dprl::ParamMap& m) {
  try {
    dprl::read_params<DemoParams>(m, "demo", DemoParams{-10, 500, false, "balance"});
  } catch (const dprl::ParamError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("read_params overlays values on defaults") {
    auto p = dprl::read_params<DemoParams>(
        map({{"gravity", "-3.5"}, {"steps", "1e2"}, {"wind", "true"}, {"task", "swingup"}}),
        "demo");
    CHECK(p.gravity == -3.5);
    CHECK(p.steps == 100);
    CHECK(p.wind);
    CHECK(p.task == "swingup");
  }

  TEST_CASE("unknown keys list the valid ones with the location") {
    const std::string e = error_of(map({{"gravty", "-1"}}));
    CHECK(e.find("unknown parameter 'gravty'") != std::string::npos);
    CHECK(e.find("test.yaml:1:1") != std::string::npos);
    CHECK(e.find("valid: gravity, steps, wind, task") != std::string::npos);
  }

  TEST_CASE("bad text and out-of-range values are rejected with the rule") {
    CHECK(error_of(map({{"gravity", "abc"}})).find("'abc' is not a number") != std::string::npos);
    CHECK(error_of(map({{"gravity", "nan"}})).find("is not a number") != std::string::npos);
    CHECK(error_of(map({{"gravity", "0"}})).find("demo.gravity = 0: must be in (-12, 0)") !=
          std::string::npos);
    CHECK(error_of(map({{"steps", "2.5"}})).find("is not an integer") != std::string::npos);
    CHECK(error_of(map({{"steps", "0"}})).find("must be in [1, 1000]") != std::string::npos);
    CHECK(error_of(map({{"wind", "maybe"}})).find("is not a boolean") != std::string::npos);
    CHECK(error_of(map({{"task", "run"}})).find("must be one of balance, swingup") !=
          std::string::npos);
    CHECK(error_of(map({{"wind", "true"}, {"steps", "5"}})) == "demo: wind needs steps >= 10");
  }

  TEST_CASE("range and choice errors say where the value was set, and the last setting wins") {
    CHECK(error_of(map({{"gravity", "0"}})) ==
          "demo.gravity = 0: must be in (-12, 0) (at test.yaml:1:1)");
    CHECK(error_of(map({{"task", "run"}})) ==
          "demo.task = 'run': must be one of balance, swingup (at test.yaml:1:1)");
    dprl::ParamMap m = map({{"steps", "5000"}});
    dprl::param_map_set(m, "steps", {"0", "--set algo.params.steps=0"});
    CHECK(error_of(m) == "demo.steps = 0: must be in [1, 1000] (at --set algo.params.steps=0)");
    // a default out of range (set by code, not by the user) has no place to name
    CHECK(error_of({}) == "");
    DemoParams bad{1.0, 500, false, "balance"};
    CHECK_THROWS_WITH_AS(dprl::validate_params(bad, "demo"), "demo.gravity = 1: must be in (-12, 0)",
                         dprl::ParamError);
  }

  TEST_CASE("a parameter error carries its key, value, rule and place") {
    const auto caught = [](const dprl::ParamMap& m) {
      try {
        dprl::read_params<DemoParams>(m, "demo", DemoParams{-10, 500, false, "balance"});
      } catch (const dprl::ParamError& e) {
        return std::array<std::string, 4>{e.key(), e.value(), e.rule(), e.where()};
      }
      return std::array<std::string, 4>{};
    };
    using A = std::array<std::string, 4>;
    CHECK(caught(map({{"gravity", "0"}})) ==
          A{"demo.gravity", "0", "must be in (-12, 0)", "test.yaml:1:1"});
    CHECK(caught(map({{"gravity", "abc"}})) ==
          A{"demo.gravity", "abc", "is not a number", "test.yaml:1:1"});
    CHECK(caught(map({{"steps", "2.5"}})) ==
          A{"demo.steps", "2.5", "is not an integer", "test.yaml:1:1"});
    CHECK(caught(map({{"wind", "maybe"}})) ==
          A{"demo.wind", "maybe", "is not a boolean (true or false)", "test.yaml:1:1"});
    CHECK(caught(map({{"task", "run"}})) ==
          A{"demo.task", "'run'", "must be one of balance, swingup", "test.yaml:1:1"});
    dprl::ParamMap m = map({{"steps", "5000"}});
    dprl::param_map_set(m, "steps", {"0", "--set algo.params.steps=0"});
    CHECK(caught(m) == A{"demo.steps", "0", "must be in [1, 1000]", "--set algo.params.steps=0"});
    CHECK(caught(map({{"gravty", "-1"}})) ==
          A{"demo.gravty", "", "unknown parameter; valid: gravity, steps, wind, task",
            "test.yaml:1:1"});
    // a rule of the struct's own check() is a message only
    CHECK(caught(map({{"wind", "true"}, {"steps", "5"}})) == A{});
  }

  TEST_CASE("describe and dump list every field in order") {
    auto info = dprl::describe_params<DemoParams>();
    REQUIRE(info.size() == 4);
    CHECK(info[0].name == "gravity");
    CHECK(info[0].range == "(-12, 0)");
    CHECK(info[3].range == "{balance, swingup}");
    auto dump = dprl::dump_params(DemoParams{-1.25, 7, true, "swingup"});
    CHECK(dump[0].second.text == "-1.25");
    CHECK(dump[1].second.text == "7");
    CHECK(dump[2].second.text == "true");
  }

  TEST_CASE("ranges") {
    using dprl::Range;
    CHECK(Range::open(0, 1).contains(0.5));
    CHECK_FALSE(Range::open(0, 1).contains(0));
    CHECK(Range::closed(0, 1).contains(1));
    CHECK_FALSE(Range::positive().contains(0));
    CHECK(Range::non_negative().contains(0));
    CHECK_FALSE(Range::any().contains(std::nan("")));
    CHECK(Range::left_open(0, 1).describe() == "(0, 1]");
  }
}
