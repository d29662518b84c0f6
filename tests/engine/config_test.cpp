#include "engine/config.hpp"

#include <doctest/doctest.h>

#include <string>

#include "engine/error.hpp"

namespace {

template <class F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const dprl::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("values keep 1-based file:line:column") {
    auto n = dprl::parse_yaml("seed: 1\nenv:\n  id: taxi\n", "x.yaml");
    REQUIRE(n.is_map());
    CHECK(n.find("seed")->where() == "x.yaml:1:7");
    CHECK(n.find("env")->find("id")->where() == "x.yaml:3:7");
    CHECK(n.find("env")->find("id")->text() == "taxi");
  }

  TEST_CASE("malformed YAML names the file and position") {
    const auto e = config_error([] { dprl::parse_yaml("a: [1, 2\nb: 3\n", "bad.yaml"); });
    CHECK(e.rfind("bad.yaml:", 0) == 0);
    CHECK(e.find("invalid YAML") != std::string::npos);
  }

  TEST_CASE("alias bombs, deep nesting and second documents are refused with the file") {
    // ten levels of ten aliases: 10^10 values if expanded
    std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 10; ++i) {
      bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
      for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
      bomb += "]\n";
    }
    CHECK(config_error([&] { dprl::parse_yaml(bomb, "b.yaml"); }).find("b.yaml:") == 0);
    CHECK(config_error([&] { dprl::parse_yaml(bomb, "b.yaml"); }).find("more than 20000 values") !=
          std::string::npos);
    // a few aliases are fine
    CHECK(dprl::parse_yaml("a: &x [1, 2]\nb: *x\n", "ok.yaml").find("b")->elements().size() == 2);
    std::string deep = "x: ";
    for (int i = 0; i < 65; ++i) deep += "[";
    for (int i = 0; i < 65; ++i) deep += "]";
    CHECK(config_error([&] { dprl::parse_yaml(deep, "d.yaml"); }).find("nested deeper than 64") !=
          std::string::npos);
    CHECK(config_error([&] { dprl::parse_yaml("a: 1\n---\na: 2\n", "m.yaml"); }) ==
          "m.yaml: 2 YAML documents ('---'); expected one");
  }

  TEST_CASE("duplicate keys are errors") {
    const auto e = config_error([] { dprl::parse_yaml("a: 1\na: 2\n", "dup.yaml"); });
    CHECK(e.find("dup.yaml:2:1: duplicate key 'a'") != std::string::npos);
  }

  TEST_CASE("check_keys names the unknown key with its location and the valid keys") {
    auto n = dprl::parse_yaml("seed: 1\nsede: 2\n", "k.yaml");
    const auto e = config_error([&] { n.check_keys({"seed", "env"}, "the experiment"); });
    CHECK(e == "k.yaml:2:7: unknown key 'sede' in the experiment; valid: seed, env");
  }

  TEST_CASE("--set overrides nested keys and creates maps") {
    auto n = dprl::parse_yaml("env:\n  id: taxi\n", "o.yaml");
    dprl::apply_override(n, "env.params.max_episode_steps=50");
    dprl::apply_override(n, "env.id=chain_mdp");
    dprl::apply_override(n, "seeds=[1, 2]");
    CHECK(n.find("env")->find("id")->text() == "chain_mdp");
    const auto* m = n.find("env")->find("params")->find("max_episode_steps");
    REQUIRE(m != nullptr);
    CHECK(m->text() == "50");
    CHECK(m->where() == "--set env.params.max_episode_steps=50");
    CHECK(n.find("seeds")->elements().size() == 2);
    CHECK(config_error([&] {
            dprl::apply_override(n, "novalue");
          }).find("expected key.path=value") != std::string::npos);
    CHECK(config_error([&] {
            dprl::apply_override(n, "env.id.x=1");
          }).find("'id' is a value, not a map") != std::string::npos);
  }

  TEST_CASE("to_param_map rejects nested values and to_yaml round-trips") {
    auto n = dprl::parse_yaml("params: {a: 1, b: {c: 2}}\n", "p.yaml");
    const auto e = config_error([&] { n.find("params")->to_param_map("env.params"); });
    CHECK(e.find("env.params.b must be a single value, not a map") != std::string::npos);
    auto again = dprl::parse_yaml(dprl::to_yaml(n), "again");
    CHECK(again.find("params")->find("b")->find("c")->text() == "2");
  }

  TEST_CASE("missing files are data errors naming the path") {
    CHECK_THROWS_WITH_AS(dprl::load_yaml_file("/nonexistent/x.yaml"),
                         doctest::Contains("/nonexistent/x.yaml"), dprl::DataError);
  }
}
