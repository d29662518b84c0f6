// Shared by the dataset tests: scratch folders, fixtures, seeded random datasets.
#pragma once

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/data/dataset.hpp"
#include "engine/rng.hpp"
#include "tests/test_util.hpp"

namespace dprl::test {

// An empty folder private to this process and name.
using test_util::scratch;

inline std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(DPRL_SOURCE_DIR) / "tests" / "engine" / "fixtures" / name;
}

// kind 0: Box(3) observations, Discrete(4) actions; 1: Box observations and Box(2) actions;
// 2: Discrete(6) observations, Discrete(3) actions. Episodes of 1..20 steps, users among
// {0, 1, 2, 2^40}, seeds -1 or random, every flag combination at the last step.
inline Dataset random_dataset(int kind, int episodes, std::uint64_t seed) {
  Rng rng(seed);
  DatasetInfo info;
  info.dataset_id = "test/random/kind" + std::to_string(kind) + "-v0";
  info.env_id = "testenv";
  info.env_params = {{"gravity", {"9.8", ""}}, {"name", {"a b", ""}}};
  info.metadata_json = R"({"k":[1,2],"s":"x","f":0.1})";
  info.observation_space =
      kind == 2 ? Space::discrete(6) : Space::box({-5.0, -INFINITY, 0.0}, {5.0, INFINITY, 1e30});
  info.action_space = kind == 1 ? Space::box(2, -1, 1) : Space::discrete(kind == 2 ? 3 : 4);
  Dataset d(info);
  const std::size_t od = d.obs_dim(), ad = d.act_dim();
  for (int e = 0; e < episodes; ++e) {
    const std::size_t t = 1 + rng.below(20);
    std::vector<float> obs, act, rew;
    for (std::size_t r = 0; r < (t + 1) * od; ++r) {
      const std::size_t c = r % od;
      obs.push_back(kind == 2 ? static_cast<float>(rng.below(6))
                    : c == 0  ? static_cast<float>(rng.uniform(-5, 5))
                    : c == 1  ? static_cast<float>(rng.normal() * 1e6)
                              : static_cast<float>(rng.uniform()));
    }
    for (std::size_t r = 0; r < t * ad; ++r)
      act.push_back(kind == 1 ? static_cast<float>(rng.uniform(-1, 1))
                              : static_cast<float>(rng.below(d.info().action_space.n)));
    for (std::size_t r = 0; r < t; ++r) rew.push_back(static_cast<float>(rng.normal() * 1e-3));
    std::vector<std::uint8_t> term(t, 0), trunc(t, 0);
    term.back() = rng.below(2);
    trunc.back() = rng.below(2);
    const std::int64_t users[] = {0, 1, 2, std::int64_t{1} << 40};
    const std::int64_t s = rng.below(2) ? -1 : static_cast<std::int64_t>(rng.next_u64() >> 1);
    d.add_episode(obs, act, rew, term, trunc, users[rng.below(4)], s);
  }
  return d;
}

}  // namespace dprl::test
