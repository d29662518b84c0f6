// The in-memory Dataset: layout, accessors, users, validation, subsets, adopted arrays.
#include "engine/data/dataset.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/error.hpp"

namespace {

using dprl::DataError;
using dprl::Dataset;
using dprl::DatasetInfo;
using dprl::Space;

DatasetInfo box_info() {
  DatasetInfo info;
  info.dataset_id = "test/box-v0";
  info.observation_space = Space::box(2, -10, 10);
  info.action_space = Space::discrete(3);
  return info;
}

// Episode of t steps: obs row r = [base + r, -(base + r)], action r % 3, reward r, last step
// terminated.
void add(Dataset& d, int t, float base, std::int64_t user, std::int64_t seed = -1) {
  std::vector<float> obs, act, rew;
  std::vector<std::uint8_t> term(t, 0), trunc(t, 0);
  for (int r = 0; r <= t; ++r) obs.insert(obs.end(), {base + r, -(base + r)});
  for (int r = 0; r < t; ++r) act.push_back(static_cast<float>(r % 3)), rew.push_back(r);
  term.back() = 1;
  d.add_episode(obs, act, rew, term, trunc, user, seed);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("transitions index observation rows t + e, actions and rewards t") {
    Dataset d(box_info());
    add(d, 3, 0, 5, 11);
    add(d, 2, 100, 7);
    add(d, 4, 200, 5);
    REQUIRE(d.num_episodes() == 3);
    REQUIRE(d.num_transitions() == 9);
    CHECK(d.observations().size() == (9 + 3) * 2);
    CHECK(d.episode_start(1) == 3);
    CHECK(d.episode_length(1) == 2);
    CHECK(d.episode_length(2) == 4);
    CHECK(d.episode_seed(0) == 11);
    CHECK(d.episode_seed(1) == -1);
    for (std::size_t t = 0; t < d.num_transitions(); ++t) {
      const std::size_t e = d.episode_of(t);
      const std::size_t k = t - d.episode_start(e);
      const float base = 100.0f * static_cast<float>(e);
      CHECK(d.obs(t, e)[0] == base + k);
      CHECK(d.obs(t, e)[1] == -(base + k));
      CHECK(d.next_obs(t, e)[0] == base + k + 1);
      CHECK(d.discrete_action(t) == static_cast<std::int64_t>(k % 3));
      CHECK(d.action(t).size() == 1);
      CHECK(d.reward(t) == static_cast<float>(k));
      CHECK(d.terminated(t) == (k + 1 == d.episode_length(e)));
      CHECK_FALSE(d.truncated(t));
    }
    CHECK(d.episode_of(2) == 0);
    CHECK(d.episode_of(3) == 1);
    CHECK(d.episode_of(8) == 2);
    CHECK(d.episode_return(2) == 0 + 1 + 2 + 3);
  }

  TEST_CASE("users are sorted and distinct, and episodes_by_user groups episodes") {
    Dataset d(box_info());
    add(d, 1, 0, 9);
    add(d, 1, 0, 2);
    add(d, 1, 0, 9);
    add(d, 1, 0, 4);
    const auto users = d.users();
    CHECK(users == std::vector<std::int64_t>{2, 4, 9});
    const auto by = d.episodes_by_user(users);
    CHECK(by[0] == std::vector<std::size_t>{1});
    CHECK(by[1] == std::vector<std::size_t>{3});
    CHECK(by[2] == std::vector<std::size_t>{0, 2});
    d.set_user_id(0, 4);
    CHECK(d.users() == std::vector<std::int64_t>{2, 4, 9});
    CHECK(d.user_id(0) == 4);
  }

  TEST_CASE("add_episode rejects shapes that do not fit, naming the field") {
    Dataset d(box_info());
    std::vector<float> obs(6), act(2), rew(2);
    std::vector<std::uint8_t> flags(2, 0);
    CHECK_NOTHROW(d.add_episode(obs, act, rew, flags, flags, 0));
    std::vector<float> short_obs(4);
    CHECK_THROWS_WITH_AS(d.add_episode(short_obs, act, rew, flags, flags, 0),
                         doctest::Contains("'observations' has 4 values, expected 6"), DataError);
    std::vector<float> long_act(3);
    CHECK_THROWS_WITH_AS(d.add_episode(obs, long_act, rew, flags, flags, 0),
                         doctest::Contains("'actions'"), DataError);
    std::vector<std::uint8_t> bad_flags(1, 0);
    CHECK_THROWS_AS(d.add_episode(obs, act, rew, bad_flags, flags, 0), DataError);
    CHECK_THROWS_AS(d.add_episode(obs, act, rew, flags, bad_flags, 0), DataError);
    CHECK_THROWS_WITH_AS(d.add_episode({}, {}, {}, {}, {}, 0), doctest::Contains("no steps"),
                         DataError);
    CHECK(d.num_episodes() == 1);
  }

  TEST_CASE("validate names the field, episode and row of the first bad value") {
    auto make = [](auto edit) {
      Dataset d(box_info());
      std::vector<float> obs = {0, 0, 1, 1, 2, 2}, act = {0, 2}, rew = {1, 1};
      std::vector<std::uint8_t> term = {0, 1}, trunc = {0, 0};
      edit(obs, act, rew, term, trunc);
      d.add_episode(obs, act, rew, term, trunc, 0);
      return d;
    };
    using V = std::vector<float>;
    using F = std::vector<std::uint8_t>;
    CHECK_NOTHROW(make([](V&, V&, V&, F&, F&) {}).validate("w"));
    CHECK_THROWS_WITH_AS(make([](V& o, V&, V&, F&, F&) { o[3] = NAN; }).validate("w"),
                         "w: observations: episode 0 row 1 is not finite", DataError);
    CHECK_THROWS_WITH_AS(make([](V& o, V&, V&, F&, F&) { o[4] = 11; }).validate("w"),
                         doctest::Contains("w: observations: episode 0 row 2 lies outside"),
                         DataError);
    CHECK_THROWS_WITH_AS(make([](V&, V& a, V&, F&, F&) { a[1] = 3; }).validate("w"),
                         "w: actions: episode 0 step 1 lies outside Discrete(3)", DataError);
    CHECK_THROWS_WITH_AS(make([](V&, V& a, V&, F&, F&) { a[0] = 0.5f; }).validate("w"),
                         doctest::Contains("actions: episode 0 step 0"), DataError);
    CHECK_THROWS_WITH_AS(make([](V&, V&, V& r, F&, F&) { r[0] = INFINITY; }).validate("w"),
                         "w: rewards: episode 0 step 0 is not finite", DataError);
    CHECK_THROWS_WITH_AS(make([](V&, V&, V&, F& t, F&) { t[0] = 1; }).validate("w"),
                         doctest::Contains("ends at step 0 but has 2 steps"), DataError);
    CHECK_THROWS_WITH_AS(make([](V&, V&, V&, F&, F& t) { t[1] = 2; }).validate("w"),
                         doctest::Contains("is not 0/1"), DataError);
    // an episode cut without a flag is valid (as collected)
    CHECK_NOTHROW(make([](V&, V&, V&, F& t, F&) { t[1] = 0; }).validate("w"));
  }

  TEST_CASE("subset copies whole episodes in the given order with their users and seeds") {
    Dataset d(box_info());
    add(d, 3, 0, 5, 1);
    add(d, 2, 100, 7, 2);
    add(d, 4, 200, 9, 3);
    const std::size_t pick[] = {2, 0};
    const Dataset s = d.subset(pick);
    REQUIRE(s.num_episodes() == 2);
    CHECK(s.num_transitions() == 7);
    CHECK(s.user_id(0) == 9);
    CHECK(s.episode_seed(1) == 1);
    CHECK(s.obs(0, 0)[0] == 200);
    CHECK(s.obs(4, 1)[0] == 0);
    CHECK(s.info().dataset_id == "test/box-v0");
  }

  TEST_CASE("merge_datasets concatenates in order and numbers users by the chosen rule") {
    Dataset a(box_info()), b(box_info());
    add(a, 3, 0, 5, 1);
    add(a, 2, 100, 7, 2);
    add(a, 1, 150, 5, 3);
    add(b, 4, 200, 0, 4);
    add(b, 2, 300, 2, 5);
    const Dataset parts[] = {a, b};
    const std::string names[] = {"a", "b"};
    using dprl::MergeUsers;
    const Dataset off = dprl::merge_datasets(parts, names, MergeUsers::kOffset, "test/merged-v0");
    REQUIRE(off.num_episodes() == 5);
    CHECK(off.num_transitions() == 12);
    // a: ids 5..7 -> 0..2; b: ids 0..2 -> 3..5 (b never shares a user with a)
    const std::int64_t want_off[] = {0, 2, 0, 3, 5};
    const std::int64_t want_keep[] = {5, 7, 5, 0, 2};
    const Dataset keep = dprl::merge_datasets(parts, names, MergeUsers::kKeep);
    const Dataset ep = dprl::merge_datasets(parts, names, MergeUsers::kEpisode);
    for (std::size_t e = 0; e < 5; ++e) {
      CHECK(off.user_id(e) == want_off[e]);
      CHECK(keep.user_id(e) == want_keep[e]);
      CHECK(ep.user_id(e) == static_cast<std::int64_t>(e));
      CHECK(off.episode_seed(e) == static_cast<std::int64_t>(e + 1));
    }
    CHECK(off.users().size() == 4);
    CHECK(keep.users().size() == 4);  // 5 and 7 from a, 0 and 2 from b
    CHECK(ep.users().size() == 5);
    // whole episodes, in order: b's first episode starts at transition 6, observation row 9
    CHECK(off.episode_start(3) == 6);
    CHECK(off.obs(6, 3)[0] == 200);
    CHECK(off.next_obs(11, 4)[0] == 302);
    CHECK(off.reward(7) == 1);
    CHECK(off.terminated(5));
    CHECK(off.info().dataset_id == "test/merged-v0");
    CHECK(keep.info().dataset_id == "test/box-v0");
    CHECK(off.info().metadata_json.find("\"users\":\"offset\"") != std::string::npos);

    // other spaces or another env are refused, naming the part
    DatasetInfo other = box_info();
    other.action_space = Space::discrete(4);
    Dataset c(other);
    const Dataset bad[] = {a, c};
    CHECK_THROWS_WITH_AS(dprl::merge_datasets(bad, names, MergeUsers::kOffset),
                         doctest::Contains("b: action_space"), DataError);
    DatasetInfo env1 = box_info(), env2 = box_info();
    env1.env_id = "cartpole";
    env2.env_id = "acrobot";
    const Dataset envs[] = {Dataset(env1), Dataset(env2)};
    CHECK_THROWS_WITH_AS(dprl::merge_datasets(envs, names, MergeUsers::kOffset),
                         doctest::Contains("b: env 'acrobot'"), DataError);
    CHECK_THROWS_AS(dprl::parse_merge_users("users", "--users"), dprl::ParamError);
  }

  TEST_CASE("from_arrays adopts consistent arrays and rejects inconsistent ones") {
    dprl::DatasetArrays a;
    a.observations = {0, 0, 1, 1, 2, 2};
    a.actions = {0, 1};
    a.rewards = {1, 1};
    a.terminations = {0, 1};
    a.truncations = {0, 0};
    a.episode_starts = {0, 2};
    a.user_ids = {3};
    a.seeds = {-1};
    const Dataset d = Dataset::from_arrays(box_info(), a, "here");
    CHECK(d.num_transitions() == 2);
    CHECK(d.next_obs(1, 0)[1] == 2);
    auto b = a;
    b.rewards.pop_back();
    CHECK_THROWS_WITH_AS(Dataset::from_arrays(box_info(), b, "here"),
                         "here: rewards: 1 values, expected 2", DataError);
    b = a;
    b.observations.resize(8);
    CHECK_THROWS_WITH_AS(Dataset::from_arrays(box_info(), b, "here"),
                         doctest::Contains("here: observations"), DataError);
    b = a;
    b.episode_starts = {0, 2, 2};
    b.user_ids = {3, 4};
    b.seeds = {-1, -1};
    CHECK_THROWS_WITH_AS(Dataset::from_arrays(box_info(), b, "here"),
                         "here: episode 1 has no steps", DataError);
  }

  TEST_CASE("check_spaces compares Discrete sizes and Box bounds in float32") {
    dprl::EnvSpec spec;
    spec.id = "e";
    spec.observation = Space::box({-4.8, -INFINITY}, {4.8, INFINITY});
    spec.action = Space::discrete(2);
    DatasetInfo info;
    info.observation_space =
        Space::box({-4.800000190734863, -INFINITY}, {4.800000190734863, INFINITY});
    info.action_space = Space::discrete(2);
    CHECK_NOTHROW(dprl::check_spaces(info, spec, "f"));
    info.action_space = Space::discrete(3);
    CHECK_THROWS_WITH_AS(dprl::check_spaces(info, spec, "f"),
                         "f: action_space: the dataset has Discrete(3) but env 'e' has Discrete(2)",
                         DataError);
    info.action_space = Space::discrete(2);
    info.observation_space = Space::box(2, -INFINITY, INFINITY);
    CHECK_THROWS_WITH_AS(dprl::check_spaces(info, spec, "f"),
                         doctest::Contains("f: observation_space:"), DataError);
  }

  TEST_CASE("an empty space is refused") {
    DatasetInfo info;
    info.observation_space = Space::discrete(2);
    info.action_space.kind = Space::Kind::kBox;
    CHECK_THROWS_AS(Dataset{info}, DataError);
  }
}
