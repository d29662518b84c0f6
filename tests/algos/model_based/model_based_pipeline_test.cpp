// The PriMORL pipeline: the smoke config end to end with its guarantee record, nothing read after
// model training, the data cache, and bad input rejected before the run directory exists.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "algos/model_based/collect.hpp"
#include "algos/model_based/primorl.hpp"
#include "algos/run/experiment.hpp"
#include "engine/config.hpp"
#include "engine/data/dataset_io.hpp"
#include "engine/data/hdf5_file.hpp"
#include "engine/io.hpp"
#include "envs/register_envs.hpp"
#include "privacy/rdp_accountant.hpp"

namespace fs = std::filesystem;
namespace mb = dprl::algos::model_based;

namespace {

fs::path mb_temp_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("dprl_primorl_test_" + name);
  fs::remove_all(d);
  return d;
}

dprl::algos::RunOptions mb_quiet(const fs::path& out) {
  dprl::algos::RunOptions o;
  o.out = out;
  o.progress = dprl::Progress::Mode::kOff;
  return o;
}

// a tiny pipeline: 2 DDPG runs of 2000 steps (20 trajectories), 20 rounds, 2 SAC epochs
std::string tiny_config(const std::string& extra_params, const std::string& env = "pendulum",
                        const std::string& q = "0.2", const std::string& noise = "seeded") {
  return "seed: 3\nenv: {id: " + env +
         "}\nalgo:\n  id: primorl\n  params:\n"
         "    data_runs: 2\n    data_steps_per_run: 2000\n    data_learning_starts: 500\n"
         "    test_fraction: 0.1\n    q: " +
         q +
         "\n    rounds: 20\n    model_eval_every: 10\n"
         "    model_hidden: '16,16'\n    sac_hidden: '16,16'\n    sac_batch_size: 32\n"
         "    steps_per_epoch: 50\n    rollout_freq: 50\n    rollout_batch: 64\n"
         "    horizon: 5\n    noise: " +
         noise + "\n" + extra_params + "train: {steps: 100, eval_episodes: 2}\n";
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("smoke config runs end to end with the full guarantee record, reproducibly") {
    std::vector<std::string> metrics, policies;
    for (int rep = 0; rep < 2; ++rep) {
      const auto out = mb_temp_dir("smoke" + std::to_string(rep));
      dprl::algos::run_experiment_file(fs::path(DPRL_SOURCE_DIR) / "configs/paper004/smoke.yaml",
                                       mb_quiet(out));
      const auto s = nlohmann::json::parse(dprl::read_file(out / "summary.json"));
      const auto& pr = s["privacy"];
      CHECK(
          pr["epsilon"].get<double>() ==
          doctest::Approx(dprl::privacy::rdp_dpsgd_epsilon(
                              {.noise_multiplier = 0.8, .sampling_rate = 0.1, .steps = 100}, 1e-5))
              .epsilon(1e-9));
      CHECK(pr["delta"].get<double>() == 1e-5);
      CHECK(pr["accountant"] == "rdp");
      CHECK(pr["neighbouring"] == "add-remove");
      CHECK(pr["unit"] == "trajectory of the training split (test-split units are not protected)");
      CHECK(pr["formal"] == false);  // seeded noise
      CHECK(pr["reproducible_noise"] == true);
      CHECK(pr["covers"].size() >= 3);
      CHECK(s["final_eval"]["episodes"] == 3);
      for (const char* f : {"metrics.csv", "model_training.csv", "privacy_ledger.json",
                            "timing.json", "policy.bin", "config.yaml"})
        CHECK(fs::exists(out / f));
      const auto t = nlohmann::json::parse(dprl::read_file(out / "timing.json"));
      for (const char* k : {"wall_time_s", "data_s", "model_cpu_s", "policy_cpu_s", "total_s"})
        CHECK(t.contains(k));
      metrics.push_back(dprl::read_file(out / "metrics.csv"));
      policies.push_back(dprl::read_file(out / "policy.bin"));
    }
    CHECK(metrics[0] == metrics[1]);
    CHECK(policies[0] == policies[1]);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("nothing after model training reads the private data") {
    std::vector<std::string> policies;
    for (bool poison : {false, true}) {
      const auto out = mb_temp_dir(poison ? "poison" : "clean");
      auto algo = dprl::algos::algo_registry().make(
          "primorl",
          dprl::parse_yaml(tiny_config(""), "t").find("algo")->find("params")->to_param_map("p"));
      auto& p = static_cast<dprl::algos::Primorl&>(*algo);
      bool called = false;
      if (poison)
        p.set_after_model_hook([&](mb::TransitionTable& t) {
          called = true;
          t.x.setConstant(std::numeric_limits<float>::quiet_NaN());
          t.y.setConstant(std::numeric_limits<float>::quiet_NaN());
        });
      dprl::algos::TrainParams tp;
      tp.steps = 100;
      tp.eval_episodes = 2;
      dprl::algos::TrainContext ctx([] { return dprl::envs::env_registry().make("pendulum", {}); },
                                    3, tp, nullptr, nullptr);
      algo->train(ctx);
      CHECK(called == poison);
      fs::create_directories(out);
      algo->save_policy(out / "policy.bin");
      policies.push_back(dprl::read_file(out / "policy.bin"));
    }
    CHECK(policies[0] == policies[1]);
  }

  TEST_CASE("bad input names the key and leaves no run directory") {
    const std::pair<std::string, std::string> cases[] = {
        {"    clip_norm: 0\n", "clip_norm"},
        {"    penalty_lambda: -1\n", "penalty_lambda"},
        {"    members: 1\n    penalty: mpd\n", "members"},
        {"    real_ratio: 0.05\n", "real_ratio"},
        {"    z: 0\n", "primorl.z"},
    };
    for (const auto& [extra, key] : cases) {
      const auto out = mb_temp_dir("bad");
      CAPTURE(key);
      CHECK_THROWS_WITH_AS(
          dprl::algos::run_experiment(dprl::parse_yaml(tiny_config(extra), "t"), "t", mb_quiet(out)),
          doctest::Contains(key.c_str()), dprl::ParamError);
      CHECK(!fs::exists(out));
    }
    // q K = 0.01 * 18 < 1
    auto out = mb_temp_dir("small_qk");
    CHECK_THROWS_WITH_AS(
        dprl::algos::run_experiment(dprl::parse_yaml(tiny_config("", "pendulum", "0.01"), "t"), "t",
                                    mb_quiet(out)),
        doctest::Contains("primorl.q"), dprl::ParamError);
    CHECK(!fs::exists(out));
    out = mb_temp_dir("discrete");
    CHECK_THROWS_WITH_AS(dprl::algos::run_experiment(
                             dprl::parse_yaml(tiny_config("", "cartpole"), "t"), "t", mb_quiet(out)),
                         doctest::Contains("continuous"), dprl::ParamError);
    CHECK(!fs::exists(out));
  }

  TEST_CASE("an OS-entropy run releases snapped noise and its record is formal") {
    const auto out = mb_temp_dir("os_entropy");
    dprl::algos::run_experiment(
        dprl::parse_yaml(tiny_config("", "pendulum", "0.2", "os-entropy"), "t"), "t", mb_quiet(out));
    const auto s = nlohmann::json::parse(dprl::read_file(out / "summary.json"));
    const auto& pr = s["privacy"];
    CHECK(pr["formal"] == true);
    CHECK(pr["reproducible_noise"] == false);
    CHECK(pr["neighbouring"] == "add-remove");
    CHECK(pr["unit"] == "trajectory of the training split (test-split units are not protected)");
    CHECK(pr["noise_source"].get<std::string>().find("os_entropy(secure") == 0);
    const auto& d = pr["details"];
    const double sd = d["noise_std"].get<double>();
    // z C / (q K) with K the training trajectories (20 less the test split's), then inflated by
    // the snapping grid: at most sd (1 + sqrt(n) 2^-12) for n noised values (n < 10^4 here)
    const double K = d["K"].get<double>();
    CHECK(K == 20 - d["test_trajectories_unprotected"].get<double>());
    CHECK(sd == doctest::Approx(0.52 * 1.0 / (0.2 * K)).epsilon(1e-12));
    CHECK(d["released_noise_std"].get<double>() > sd);
    CHECK(d["released_noise_std"].get<double>() < sd * (1 + 100.0 / 4096));
    CHECK(d.contains("release"));
  }

  TEST_CASE("a noise too small for PLD still runs: RDP epsilon, PLD inf with a note") {
    // z = 1e-4 (PriMORL's HalfCheetah ablation): PLD cannot bound it, RDP gives a finite figure
    const auto out = mb_temp_dir("tiny_z");
    dprl::algos::run_experiment(dprl::parse_yaml(tiny_config("    z: 1.0e-4\n"), "t"), "t",
                                mb_quiet(out));
    const auto s = nlohmann::json::parse(dprl::read_file(out / "summary.json"));
    const auto& pr = s["privacy"];
    const double eps = pr["epsilon"].get<double>();
    CHECK(eps ==
          doctest::Approx(dprl::privacy::rdp_dpsgd_epsilon(
                              {.noise_multiplier = 1e-4, .sampling_rate = 0.2, .steps = 20}, 1e-5))
              .epsilon(1e-9));
    CHECK(pr["details"]["epsilon_pld"] == "inf");
    CHECK(pr["details"].contains("pld_note"));
    CHECK(pr["details"]["rounds_run"] == 20);
  }

  TEST_CASE("a model stage restarted after a kill composes with the first model's charges") {
    // a run killed during model training (no checkpoint yet) has released progress lines and
    // test figures of its first model; simulated by a finished run whose checkpoints and summary
    // are removed, then resumed: it trains a second model, and the run directory's ledger holds
    // both trainings' rounds (20 + 20), charged in blocks of model_eval_every = 10
    const auto out = mb_temp_dir("restart");
    auto opts = mb_quiet(out);
    const std::string config = tiny_config("");
    dprl::algos::run_experiment(dprl::parse_yaml(config, "t"), "t", opts);
    auto charges = [&] {
      return nlohmann::json::parse(dprl::read_file(out / "privacy_ledger.json"))["charges"].size();
    };
    CHECK(charges() == 2);
    for (const char* f : {"checkpoint.bin", "checkpoint.prev.bin", "summary.json"})
      fs::remove(out / f);
    opts.resume = true;
    dprl::algos::run_experiment(dprl::parse_yaml(config, "t"), "t", opts);
    CHECK(charges() == 4);
    const auto s = nlohmann::json::parse(dprl::read_file(out / "summary.json"));
    CHECK(s["privacy"]["epsilon"].get<double>() ==
          doctest::Approx(dprl::privacy::rdp_dpsgd_epsilon(
                              {.noise_multiplier = 0.52, .sampling_rate = 0.2, .steps = 40}, 1e-5))
              .epsilon(1e-9));
    CHECK(s["privacy"]["details"]["ledger_spent_before_run"].get<double>() ==
          doctest::Approx(dprl::privacy::rdp_dpsgd_epsilon(
                              {.noise_multiplier = 0.52, .sampling_rate = 0.2, .steps = 20}, 1e-5))
              .epsilon(1e-9));
  }

  TEST_CASE("public_trajectories fixes K and keeps the training split's size out of the outputs") {
    const auto out = mb_temp_dir("public_k");
    dprl::algos::run_experiment(dprl::parse_yaml(tiny_config("    public_trajectories: 25\n"), "t"),
                                "t", mb_quiet(out));
    const auto s = nlohmann::json::parse(dprl::read_file(out / "summary.json"));
    const auto& d = s["privacy"]["details"];
    CHECK(d["K"] == 25);
    CHECK(d["qK"].get<double>() == doctest::Approx(0.2 * 25));
    CHECK(d["noise_std"].get<double>() == doctest::Approx(0.52 * 1.0 / (0.2 * 25)).epsilon(1e-12));
    CHECK_FALSE(d.contains("K_train_trajectories"));
    CHECK_FALSE(d.contains("train_transitions"));
    CHECK_FALSE(s.contains("train_trajectories"));
    CHECK(dprl::read_file(out / "summary.json").find("train_trajectories") == std::string::npos);
    CHECK(dprl::read_file(out / "model_training.csv").find("mean_clients") == std::string::npos);
    // the test split is named as unprotected
    CHECK(s["privacy"]["unit"].get<std::string>().find("not protected") != std::string::npos);
    CHECK(d.contains("not_protected"));
  }

  TEST_CASE("a budget below one round fails before the run directory exists") {
    const auto out = mb_temp_dir("budget");
    CHECK_THROWS_WITH_AS(
        dprl::algos::run_experiment(
            dprl::parse_yaml(tiny_config("    budget_epsilon: 0.01\n"), "t"), "t", mb_quiet(out)),
        doctest::Contains("primorl.budget_epsilon"), dprl::BudgetExceeded);
    CHECK(!fs::exists(out));
  }

  TEST_CASE("data cache: round trip, and a cache of other spaces is refused before the run") {
    const auto cache = mb_temp_dir("cache");
    const auto out = mb_temp_dir("cache_run");
    const std::string extra = "    data_cache: " + cache.string() + "\n";
    dprl::algos::run_experiment(dprl::parse_yaml(tiny_config(extra), "t"), "t", mb_quiet(out));
    REQUIRE(fs::exists(cache));
    const auto file = fs::directory_iterator(cache)->path();
    // the cached dataset reloads bit for bit
    auto env = dprl::envs::env_registry().make("pendulum", {});
    dprl::DatasetInfo info;
    info.env_id = "pendulum";
    info.observation_space = env->spec().observation;
    info.action_space = env->spec().action;
    mb::CollectConfig cc;
    cc.runs = 2;
    cc.steps_per_run = 2000;
    cc.learning_starts = 500;
    const auto key = mb::collect_key(*env, cc, 1);
    const auto d = mb::load_dataset_cache(file, key, info);
    CHECK(d.num_episodes() == 20);
    const auto again = mb_temp_dir("cache_again");
    mb::save_dataset_cache(d, again / "x.bin", key);
    CHECK(dprl::read_file(again / "x.bin") == dprl::read_file(file));
    // a dataset of another env written under this key
    dprl::DatasetInfo other;
    other.env_id = "pendulum";
    other.observation_space = dprl::Space::box(2, -1, 1);
    other.action_space = dprl::Space::box(1, -1, 1);
    dprl::Dataset bad(other);
    bad.add_episode(std::vector<float>{0, 0, 0, 0}, std::vector<float>{0}, std::vector<float>{0},
                    std::vector<std::uint8_t>{0}, std::vector<std::uint8_t>{1}, 0);
    mb::save_dataset_cache(bad, file, key);
    const auto out2 = mb_temp_dir("cache_bad");
    CHECK_THROWS_WITH_AS(
        dprl::algos::run_experiment(dprl::parse_yaml(tiny_config(extra), "t"), "t", mb_quiet(out2)),
        doctest::Contains("data_cache"), dprl::DataError);
    CHECK(!fs::exists(out2));
  }
}

TEST_SUITE("e2e") {
  TEST_CASE(
      "data_export writes the dataset, and read back as data: (Minari or D4RL) it reproduces the "
      "run") {
    const auto dir = mb_temp_dir("export");
    const auto out1 = mb_temp_dir("export_run");
    dprl::algos::run_experiment(
        dprl::parse_yaml(tiny_config("    data_export: " + dir.string() + "\n"), "t"), "t",
        mb_quiet(out1));
    const dprl::Dataset d = dprl::load_dataset(dir);
    REQUIRE(d.num_episodes() == 20);  // 2 runs x 2000 steps of 200-step episodes
    for (std::size_t e = 0; e < d.num_episodes(); ++e)
      CHECK(d.user_id(e) == static_cast<std::int64_t>(e));
    CHECK(d.info().env_id == "pendulum");
    // a data set already there is not replaced without force, and the refusal comes before any
    // collection or file
    const std::string metadata = dprl::read_file(dir / "data" / "metadata.json");
    const auto out_again = mb_temp_dir("export_again");
    const auto export_again = dprl::parse_yaml(
        tiny_config("    data_export: " + dir.string() + "\n"), "t");
    CHECK_THROWS_WITH_AS(dprl::algos::run_experiment(export_again, "t", mb_quiet(out_again)),
                         doctest::Contains("holds a data set already"), dprl::ParamError);
    CHECK(!fs::exists(out_again));
    CHECK(dprl::read_file(dir / "data" / "metadata.json") == metadata);
    auto forced = mb_quiet(out_again);
    forced.force = true;
    dprl::algos::run_experiment(export_again, "t", forced);
    CHECK(dprl::load_dataset(dir).num_episodes() == 20);

    const auto out2 = mb_temp_dir("data_run");
    dprl::algos::run_experiment(
        dprl::parse_yaml(tiny_config("") + "data: {path: " + dir.string() + "}\n", "t"), "t",
        mb_quiet(out2));
    // the same data, split and seeds: the same model, policy and curve
    CHECK(dprl::read_file(out1 / "metrics.csv") == dprl::read_file(out2 / "metrics.csv"));
    CHECK(dprl::read_file(out1 / "policy.bin") == dprl::read_file(out2 / "policy.bin"));
    const auto s1 = nlohmann::json::parse(dprl::read_file(out1 / "summary.json"));
    const auto s2 = nlohmann::json::parse(dprl::read_file(out2 / "summary.json"));
    CHECK(s1["privacy"]["unit"] ==
          "trajectory of the training split (test-split units are not protected)");
    CHECK(s2["privacy"]["unit"] ==
          "user of the training split (test-split units are not protected)");
    CHECK(s2["privacy"]["epsilon"] == s1["privacy"]["epsilon"]);
    const auto& det = s2["privacy"]["details"];
    CHECK(det["data_source"].get<std::string>().find(dir.string()) != std::string::npos);
    CHECK(det["K_train_trajectories"] == s1["privacy"]["details"]["K_train_trajectories"]);
    CHECK(det["K_train_trajectories"].get<int>() +
              det["test_trajectories_unprotected"].get<int>() ==
          20);
    CHECK(!s1["privacy"]["details"].contains("data_source"));

    // the same data as a D4RL file (no spaces: it takes the env's; one user per episode, the
    // episode index): the same run again
    const auto d4rl = mb_temp_dir("d4rl");
    fs::create_directories(d4rl);
    {
      std::vector<float> obs, next, act, rew;
      std::vector<std::uint8_t> term, tout;
      for (std::size_t e = 0; e < d.num_episodes(); ++e)
        for (std::size_t t = d.episode_start(e); t < d.episode_start(e) + d.episode_length(e);
             ++t) {
          obs.insert(obs.end(), d.obs(t, e).begin(), d.obs(t, e).end());
          next.insert(next.end(), d.next_obs(t, e).begin(), d.next_obs(t, e).end());
          act.insert(act.end(), d.action(t).begin(), d.action(t).end());
          rew.push_back(d.reward(t));
          term.push_back(d.terminated(t) ? 1 : 0);
          tout.push_back(d.truncated(t) ? 1 : 0);
        }
      const std::uint64_t n = rew.size(), s_obs[] = {n, 3}, s_act[] = {n, 1}, s_n[] = {n};
      dprl::h5::File f = dprl::h5::File::create(d4rl / "pendulum.hdf5");
      f.write("observations", std::span<const float>(obs), s_obs);
      f.write("next_observations", std::span<const float>(next), s_obs);
      f.write("actions", std::span<const float>(act), s_act);
      f.write("rewards", std::span<const float>(rew), s_n);
      f.write_flags("terminals", term);
      f.write_flags("timeouts", tout);
      f.close();
    }
    const auto out3 = mb_temp_dir("d4rl_run");
    dprl::algos::run_experiment(
        dprl::parse_yaml(
            tiny_config("") + "data: {path: " + (d4rl / "pendulum.hdf5").string() + "}\n", "t"),
        "t", mb_quiet(out3));
    CHECK(dprl::read_file(out1 / "metrics.csv") == dprl::read_file(out3 / "metrics.csv"));
    CHECK(dprl::read_file(out1 / "policy.bin") == dprl::read_file(out3 / "policy.bin"));
    {  // values outside the adopted spaces are refused before the run: an action of 3 > 2
      const std::vector<float> obs{1, 0, 0, 1, 0, 0}, act{3}, rew{-1};
      const std::uint64_t s_obs1[] = {1, 3}, s_one[] = {1, 1}, s_n[] = {1};
      dprl::h5::File f = dprl::h5::File::create(d4rl / "bad.hdf5");
      f.write("observations", std::span<const float>(obs).first(3), s_obs1);
      f.write("next_observations", std::span<const float>(obs).last(3), s_obs1);
      f.write("actions", std::span<const float>(act), s_one);
      f.write("rewards", std::span<const float>(rew), s_n);
      f.write_flags("terminals", std::vector<std::uint8_t>{1});
      f.close();
      const auto bad3 = mb_temp_dir("d4rl_bad");
      CHECK_THROWS_WITH_AS(
          dprl::algos::run_experiment(
              dprl::parse_yaml(
                  tiny_config("") + "data: {path: " + (d4rl / "bad.hdf5").string() + "}\n", "t"),
              "t", mb_quiet(bad3)),
          doctest::Contains("actions"), dprl::DataError);
      CHECK(!fs::exists(bad3));
    }

    // data: with a data cache is ambiguous; a dataset of one user has no public split
    auto bad = mb_temp_dir("data_bad");
    CHECK_THROWS_WITH_AS(
        dprl::algos::run_experiment(
            dprl::parse_yaml(tiny_config("    data_cache: " + dir.string() + "c\n") +
                                 "data: {path: " + dir.string() + "}\n",
                             "t"),
            "t", mb_quiet(bad)),
        doctest::Contains("primorl.data_cache"), dprl::ParamError);
    CHECK(!fs::exists(bad));
    // an export path holding something else is refused before anything runs
    const auto notes = mb_temp_dir("notes");
    fs::create_directories(notes);
    dprl::write_file_atomic(notes / "keep.txt", "mine");
    CHECK_THROWS_WITH_AS(
        dprl::algos::run_experiment(
            dprl::parse_yaml(tiny_config("    data_export: " + notes.string() + "\n"), "t"), "t",
            mb_quiet(bad)),
        doctest::Contains("primorl.data_export"), dprl::ParamError);
    CHECK(dprl::read_file(notes / "keep.txt") == "mine");
    CHECK(!fs::exists(bad));
    const std::vector<std::size_t> first{0};
    const dprl::Dataset one = d.subset(first);
    const auto one_dir = mb_temp_dir("one_user");
    dprl::save_minari(one, one_dir);
    CHECK_THROWS_WITH_AS(
        dprl::algos::run_experiment(
            dprl::parse_yaml(tiny_config("") + "data: {path: " + one_dir.string() + "}\n", "t"),
            "t", mb_quiet(bad)),
        doctest::Contains("data:"), dprl::ParamError);
    CHECK(!fs::exists(bad));
  }
}

TEST_SUITE("unit") {
  TEST_CASE("DDPG data runs on threads give the serial dataset: run order, users 0..n-1") {
    auto make = [] { return dprl::envs::env_registry().make("pendulum", {}); };
    mb::CollectConfig one;
    one.runs = 1;
    one.steps_per_run = 600;
    one.learning_starts = 200;
    mb::CollectConfig three = one;
    three.runs = 3;
    const dprl::Dataset serial = mb::collect_ddpg(make, three, 9, 1);
    const dprl::Dataset parallel = mb::collect_ddpg(make, three, 9, 3);
    REQUIRE(serial.num_episodes() == 9);  // 600 steps of 200-step episodes per run
    CHECK(std::ranges::equal(serial.observations(), parallel.observations()));
    CHECK(std::ranges::equal(serial.actions(), parallel.actions()));
    CHECK(std::ranges::equal(serial.rewards(), parallel.rewards()));
    CHECK(std::ranges::equal(serial.truncations(), parallel.truncations()));
    for (std::size_t e = 0; e < serial.num_episodes(); ++e) {
      CHECK(serial.user_id(e) == static_cast<std::int64_t>(e));
      CHECK(parallel.user_id(e) == static_cast<std::int64_t>(e));
      CHECK(serial.episode_seed(e) == parallel.episode_seed(e));
      CHECK(serial.episode_start(e) == parallel.episode_start(e));
    }
    // run 0 comes first: a one-run collection with the same seed is the first three episodes
    const dprl::Dataset first = mb::collect_ddpg(make, one, 9, 2);
    REQUIRE(first.num_episodes() == 3);
    const auto n = first.num_transitions();
    CHECK(std::ranges::equal(first.rewards(), serial.rewards().first(n)));
    CHECK(std::ranges::equal(first.observations(), serial.observations().first((n + 3) * 3)));
    CHECK(!std::ranges::equal(serial.rewards().subspan(n, n), first.rewards()));
  }
}
