// Expert populations (paper 000 sec. 6, App. B.1): grids, plans, selection, resume, determinism.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "algos/run/population.hpp"
#include "engine/config.hpp"
#include "engine/data/dataset_io.hpp"
#include "engine/error.hpp"
#include "engine/io.hpp"

using namespace dprl;
using namespace dprl::algos;
namespace fs = std::filesystem;

namespace {

Node yaml(const std::string& text) { return parse_yaml(text, "test.yaml"); }

// Two CartPole variants x 2 runs of a very short PPO with 8-unit nets; both runs kept.
std::string tiny(const fs::path& out) {
  return "name: tiny\nseed: 4\nout: " + out.string() +
         "\nenv: {id: cartpole}\nvariants:\n  grid:\n    gravity: [9.8, 10.5]\n"
         "runs_per_setting: 2\nppo: {algo: ppo_layers, params: {hidden_sizes: \"8\", num_envs: 1, "
         "num_steps: 64, num_minibatches: 2}, train: {steps: 256, eval_every: 0, eval_episodes: "
         "2}}\nselect: {rule: top_k, k: 2}\naction_floor: 0.02\ndemos: {episodes: 3, max_steps: "
         "50}\n";
}

fs::path population_scratch(const std::string& name) {
  auto d = fs::temp_directory_path() / ("dprl_population_test_" + name);
  fs::remove_all(d);
  return d;
}

}  // namespace

TEST_CASE("linspace grids include both ends and follow numpy" * doctest::test_suite("unit")) {
  const auto v = parse_grid_values(Node::scalar("linspace(8.75, 11.0, 10)", "t"), "gravity");
  REQUIRE(v.size() == 10);
  CHECK(v.front() == "8.75");
  CHECK(v[1] == "9");  // the paper's CartPole steps of 0.25
  CHECK(v.back() == "11");
  CHECK(parse_grid_values(Node::scalar("linspace(1, 2, 1)", "t"), "k") ==
        std::vector<std::string>{"1"});
  CHECK_THROWS_AS(parse_grid_values(Node::scalar("linspace(1, 2)", "t"), "k"), ConfigError);
  CHECK_THROWS_AS(parse_grid_values(Node::scalar("1.5", "t"), "k"), ConfigError);
}

TEST_CASE("the plan has one seeded run per setting and run, and tied keys are set together" *
          doctest::test_suite("unit")) {
  const auto spec = parse_population(
      yaml("name: a\nseed: 1\nout: o\nenv: {id: acrobot}\nvariants:\n  grid:\n"
           "    link_length_1+link_length_2: linspace(0.8, 1.2, 3)\n    link_mass_1: [0.9, 1.1]\n"
           "runs_per_setting: 3\nppo: {train: {steps: 1000}}\naction_floor: 0.02\n"),
      "population");
  CHECK(spec.settings() == 6);
  CHECK(spec.experts() == 18);  // top 3 of 3 per setting
  const auto plan = plan_population(spec);
  REQUIRE(plan.runs.size() == 18);
  // setting 3 = (link lengths 1.0, mass 1.1): first key slowest
  const auto& run = plan.runs[3 * 3 + 1];
  CHECK(run.label == "link_length_1_link_length_2=1,link_mass_1=1.1");
  const std::string cfg = to_yaml(run.config);
  CHECK(cfg.find("link_length_1: 1\n") != std::string::npos);
  CHECK(cfg.find("link_length_2: 1\n") != std::string::npos);
  CHECK(cfg.find("link_mass_1: 1.1") != std::string::npos);
  // seeds are derived per (setting, run): all distinct, none shared between neighbours
  std::set<std::uint64_t> seeds;
  for (const auto& r : plan.runs) seeds.insert(r.seed);
  CHECK(seeds.size() == 18);
}

TEST_CASE("selection: top k per setting, and the HIV rule" * doctest::test_suite("unit")) {
  auto spec = parse_population(yaml(tiny("o")), "population");
  spec.grid_values = {{"a", "b", "c"}};
  spec.runs_per_setting = 3;
  // scores per (setting, run): ties go to the lower run index
  const std::vector<double> s = {1, 5, 5, 7, 2, 3, 0, 9, 8};
  spec.k = 2;
  auto top = select_experts(spec, s);
  REQUIRE(top.size() == 6);
  CHECK(top[0].setting == 0);
  CHECK(top[0].run == 1);  // 5 (run 1) before 5 (run 2)
  CHECK(top[1].run == 2);
  CHECK(top[2].run == 0);  // setting 1: 7
  CHECK(top[3].run == 2);  // then 3
  CHECK(top[4].run == 1);  // setting 2: 9, then 8
  CHECK(top[5].run == 2);
  spec.rule = "hiv";
  spec.extra = 2;  // second places: 5 (setting 0), 3 (setting 1), 8 (setting 2): keep 8 and 5
  auto hiv = select_experts(spec, s);
  REQUIRE(hiv.size() == 5);
  CHECK((hiv[0].setting == 0 && hiv[0].rank == 0 && hiv[0].run == 1));
  CHECK((hiv[1].setting == 0 && hiv[1].rank == 1 && hiv[1].run == 2));
  CHECK((hiv[2].setting == 1 && hiv[2].rank == 0));
  CHECK((hiv[3].setting == 2 && hiv[3].rank == 0 && hiv[3].run == 1));
  CHECK((hiv[4].setting == 2 && hiv[4].rank == 1 && hiv[4].score == 8));
}

TEST_CASE("population checks name the key" * doctest::test_suite("unit")) {
  auto with = [](const std::string& key, const std::string& value) {
    Node n = yaml(tiny("o"));
    apply_override(n, key + "=" + value, "test");
    return n;
  };
  CHECK_THROWS_WITH_AS(parse_population(with("select.k", "3"), "population"),
                       doctest::Contains("population.select.k"), ParamError);
  CHECK_THROWS_WITH_AS(parse_population(with("action_floor", "0.5"), "population"),
                       doctest::Contains("population.action_floor"), ParamError);
  CHECK_THROWS_WITH_AS(parse_population(with("env.id", "pendulum"), "population"),
                       doctest::Contains("continuous"), ParamError);
  CHECK_THROWS_WITH_AS(parse_population(with("select.rule", "best"), "population"),
                       doctest::Contains("population.select.rule"), ConfigError);
  CHECK_THROWS_AS(parse_population(with("colour", "red"), "population"), ConfigError);
}

TEST_CASE("a population builds, resumes without retraining and is the same at any job count" *
          doctest::test_suite("slow")) {
  const auto a = population_scratch("a"), b = population_scratch("b");
  const auto sa = parse_population(yaml(tiny(a)), "population");
  const auto sb = parse_population(yaml(tiny(b)), "population");
  const auto ra = build_population(sa, {1, true});
  CHECK(ra.experts == 4);
  CHECK(ra.trained == 4);
  CHECK_FALSE(ra.reused);
  const auto rb = build_population(sb, {2, true});
  // the same experts and demonstrations, byte for byte, whichever thread trained them
  CHECK(read_file(a / "demos" / "data" / "main_data.hdf5") ==
        read_file(b / "demos" / "data" / "main_data.hdf5"));
  CHECK(read_file(a / "experts" / "expert_00003.bin") ==
        read_file(b / "experts" / "expert_00003.bin"));
  const Dataset d = load_dataset(a / "demos", "minari");
  CHECK(d.num_episodes() == 12);
  CHECK(d.users() == std::vector<std::int64_t>{0, 1, 2, 3});
  for (std::size_t e = 0; e < d.num_episodes(); ++e) CHECK(d.episode_length(e) <= 50);
  const auto folder = read_experts(a);
  CHECK(folder.policies.size() == 4);
  CHECK(folder.action_floor == 0.02);
  // resume: nothing is trained again, the demonstrations are reused
  const auto again = build_population(sa, {2, true});
  CHECK(again.trained == 0);
  CHECK(again.reused);
}
