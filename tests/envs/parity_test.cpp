// Reference parity: replays the Gymnasium fixtures of tests/envs/fixtures (written by
// tools/fixtures/gen_classic_fixtures.py, never edited by hand) and requires bit-identical
// float32 observations, float64 rewards and identical flags on every step, and the reference's
// float64 state after the last step.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "envs/register_envs.hpp"
#include "tests/test_util.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fixture_dir() { return fs::path(DPRL_SOURCE_DIR) / "tests" / "envs" / "fixtures"; }

// every replay case (a JSON object with env, state and actions) directly in the fixture folder
std::vector<fs::path> replay_cases() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fixture_dir())) {
    if (e.path().extension() != ".json") continue;
    const json c = test_util::load_json(e.path());
    if (c.contains("env") && c.contains("actions") && c.contains("expected"))
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Replays one case and requires every recorded step to match.
void check_case(const fs::path& path) {
  const json c = test_util::load_json(path);
  dprl::ParamMap params;
  for (auto it = c["params"].begin(); it != c["params"].end(); ++it) {
    const auto& v = it.value();
    params.push_back({it.key(), {v.is_string() ? v.get<std::string>() : v.dump(), "fixture"}});
  }
  auto env = dprl::envs::make_env(c["env"].get<std::string>(), params);
  const auto& spec = env->spec();
  std::vector<float> obs(env->obs_dim());
  env->reset(0, obs);
  env->set_state(c["state"].get<std::vector<double>>());
  const json& steps = c["expected"]["steps"];
  const json* masks =
      c["expected"].contains("action_masks") ? &c["expected"]["action_masks"] : nullptr;
  std::vector<std::uint8_t> mask(spec.action.is_discrete() ? spec.action.n : 0);
  std::size_t i = 0;
  for (; i < c["actions"].size(); ++i) {
    CAPTURE(i);
    const json& a = c["actions"][i];
    dprl::StepResult r;
    if (spec.action.is_discrete()) {
      r = env->step(a.get<std::int64_t>(), obs);
    } else {
      std::vector<double> u =
          a.is_array() ? a.get<std::vector<double>>() : std::vector<double>{a.get<double>()};
      r = env->step(std::span<const double>(u), obs);
    }
    REQUIRE(i < steps.size());
    const json& e = steps[i];
    const auto want = e["obs"].get<std::vector<double>>();
    REQUIRE(want.size() == obs.size());
    for (std::size_t k = 0; k < obs.size(); ++k) {
      CAPTURE(k);
      REQUIRE(obs[k] == static_cast<float>(want[k]));
    }
    REQUIRE(r.reward == e["reward"].get<double>());
    REQUIRE(r.terminated == e["terminated"].get<bool>());
    REQUIRE(r.truncated == e["truncated"].get<bool>());
    if (masks) {
      env->action_mask(mask);
      REQUIRE(std::vector<int>(mask.begin(), mask.end()) == (*masks)[i].get<std::vector<int>>());
    }
    if (r.terminated || r.truncated) break;
  }
  CHECK(std::min(i + 1, c["actions"].size()) == steps.size());
  // the float64 state after the last step, bit for bit
  if (c["expected"].contains("final_state")) {
    const auto want = c["expected"]["final_state"].get<std::vector<double>>();
    const auto got = env->state();
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      CAPTURE(k);
      CHECK(got[k] == want[k]);
    }
  }
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE("Gymnasium replay fixtures match bit for bit") {
    const auto cases = replay_cases();
    REQUIRE(cases.size() >= 15);
    for (const auto& p : cases) {
      SUBCASE(p.stem().string().c_str()) { check_case(p); }
    }
  }

  TEST_CASE("Taxi model and initial distribution and masks equal Gymnasium's") {
    const json m = test_util::load_json(fixture_dir() / "taxi_model.json");
    auto env = dprl::envs::make_env("Taxi-v3");
    const auto* model = env->tabular_model();
    REQUIRE(model != nullptr);
    std::vector<float> obs(1);
    std::vector<std::uint8_t> mask(6);
    for (int s = 0; s < 500; ++s) {
      CAPTURE(s);
      REQUIRE(std::abs(model->initial[s] - m["initial"][s].get<double>()) <= 1e-15);
      for (int a = 0; a < 6; ++a) {
        const json& t = m["transitions"][s * 6 + a];
        const auto out = model->at(s, a);
        REQUIRE(out.size() == 1);
        CHECK(out[0].next_state == t[0].get<int>());
        CHECK(out[0].prob == t[1].get<double>());
        CHECK(out[0].reward == t[2].get<double>());
        CHECK(out[0].terminal == t[3].get<bool>());
      }
      env->reset(0, obs);
      env->set_state(std::vector<double>{double(s)});
      env->action_mask(mask);
      CHECK(std::vector<int>(mask.begin(), mask.end()) == m["masks"][s].get<std::vector<int>>());
    }
  }

}  // TEST_SUITE
