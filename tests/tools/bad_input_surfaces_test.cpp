// The bad-input matrix of the newer surfaces: data sets and their privacy units, merge, collect,
// private offline runs, ledgers, resume, populations, pipelines, PriMORL, plots, benchmarks and
// the privacy CLI, fed what a hostile user would feed them. Each case runs the dprl executable in
// its own scratch folder (its working directory, prefix dprl_bad_surfaces_) holding the case's
// input files and a complete run directory `existing/`, and asserts:
//   - exit status 2, within a time limit (the command runs under timeout(1));
//   - stderr is exactly one line, starting with "dprl: ", naming the culprit (file, key or flag),
//     with no control character in it (untrusted text is escaped);
//   - nothing on stdout;
//   - the folder's files are byte for byte what they were: no output file, no partial data set
//     or run directory, no lock file, no emptied metrics.csv, `existing/` untouched.
// docs/robustness.md lists the categories and their counts.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/data/dataset_io.hpp"
#include "engine/data/hdf5_file.hpp"
#include "engine/io.hpp"
#include "engine/state_io.hpp"
#include "tests/tools/bad_input_matrix.hpp"
#include "tests/test_util.hpp"

namespace fs = std::filesystem;

namespace {

using namespace bad_input;

using test_util::kSrc;

// ---- hand-written data sets ----------------------------------------------------------------

// Episode e's attributes of a hand-written Minari file: how user_id (and id, total_steps) are
// stored.
using AttrWriter =
    std::function<void(dprl::h5::File&, const std::string& group, int e, std::int64_t steps)>;

// A Minari folder with the episodes of `from` (a folder written by dprl collect), its
// main_data.hdf5 rewritten with the attributes `attrs` writes (no index: the HDF5 path is read).
void minari_with_attrs(const fs::path& from, const fs::path& to, const AttrWriter& attrs) {
  const dprl::Dataset d = dprl::load_dataset(from);
  fs::create_directories(to / "data");
  fs::copy_file(from / "data" / "metadata.json", to / "data" / "metadata.json");
  dprl::h5::File f = dprl::h5::File::create(to / "data" / "main_data.hdf5");
  for (std::size_t e = 0; e < d.num_episodes(); ++e) {
    const std::string g = "episode_" + std::to_string(e);
    const std::uint64_t t = d.episode_length(e), s = d.episode_start(e);
    f.create_group(g);
    attrs(f, g, static_cast<int>(e), static_cast<std::int64_t>(t));
    const auto obs = d.observations().subspan((s + e) * 4, (t + 1) * 4);
    const std::uint64_t oshape[] = {t + 1, 4}, shape[] = {t};
    f.write(g + "/observations", obs, oshape);
    std::vector<std::int64_t> act(t);
    for (std::uint64_t i = 0; i < t; ++i) act[i] = d.discrete_action(s + i);
    f.write(g + "/actions", std::span<const std::int64_t>(act), shape);
    f.write(g + "/rewards", d.rewards().subspan(s, t), shape);
    f.write_flags(g + "/terminations", d.terminations().subspan(s, t));
    f.write_flags(g + "/truncations", d.truncations().subspan(s, t));
  }
  f.close();
}

// The usual id and total_steps, then one user_id writer.
AttrWriter with_user(std::function<void(dprl::h5::File&, const std::string&, int)> user) {
  return [user](dprl::h5::File& f, const std::string& g, int e, std::int64_t t) {
    f.set_attr(g, "id", std::int64_t{e});
    f.set_attr(g, "total_steps", t);
    user(f, g, e);
  };
}

// A D4RL file of 6 CartPole-shaped rows in two episodes whose user column infos/user_id holds
// `users` (float32).
void d4rl_with_users(const fs::path& file, const std::vector<float>& users) {
  dprl::h5::File f = dprl::h5::File::create(file);
  const std::uint64_t n = users.size();
  std::vector<float> obs(n * 4, 0.1f), rew(n, 1.0f);
  std::vector<std::int64_t> act(n, 1);
  std::vector<std::uint8_t> term(n, 0);
  term[n / 2 - 1] = 1;
  term[n - 1] = 1;
  const std::uint64_t oshape[] = {n, 4}, shape[] = {n};
  f.write("observations", std::span<const float>(obs), oshape);
  f.write("actions", std::span<const std::int64_t>(act), shape);
  f.write("rewards", std::span<const float>(rew), shape);
  f.write_flags("terminals", term);
  f.create_group("infos");
  f.write("infos/user_id", std::span<const float>(users), shape);
  f.close();
}

// A checkpoint whose checksum is valid but whose content is damaged: the metrics section says
// no columns and no rows, and the learner's state after it is cut off. A restore reads the
// (empty) metrics, then fails.
void damage_checkpoint(const fs::path& file) {
  const std::string payload = dprl::read_checkpoint_file(file);
  std::string tag(8, '\0');
  const std::uint64_t len = 7;
  std::memcpy(tag.data(), &len, 8);
  tag += "metrics";
  const auto at = payload.find(tag);
  REQUIRE(at != std::string::npos);
  std::string damaged = payload.substr(0, at + tag.size());
  damaged += std::string(16, '\0');  // 0 columns, then an empty metrics text
  dprl::write_checkpoint_file(file, damaged);
}

// Real outputs of the executable and hand-written data sets that cases use. Made once per test
// process, in its own folder.
const fs::path& surface_fixtures() {
  static const fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("dprl_bad_surfaces_fx_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    const std::vector<std::string> make = {
        "run " + kSrc +
            "/configs/quickstart.yaml --set train.steps=2000 --set train.eval_episodes=2 "
            "--out q --quiet",
        "collect --env cartpole --policy random --episodes 3 --seed 1 --out ds",
        "collect --env cartpole --policy random --episodes 2 --seed 2 --user-id "
        "4611686018427387904 --out ds_max",
        "run " + kSrc +
            "/configs/paper001/taxi.yaml --set algo.params.dp=both --set "
            "algo.params.budget_epsilon=100 --set algo.params.episodes=2 --set "
            "train.eval_episodes=1 --set algo.params.noise=seeded --out ac --quiet",
    };
    for (const auto& m : make) {
      const auto r = run_case_in(d, m);
      INFO(m, "\n", r.err);
      REQUIRE(r.code == 0);
    }
    fs::remove(d / "ac" / "privacy_ledger.json.lock");
    // a tabular run killed after its second checkpoint (step 10000 of 20000)
    const auto k = run_case_in(d,
                          "run " + kSrc +
                              "/configs/quickstart.yaml --set train.steps=20000 --set "
                              "train.eval_every=5000 --set train.checkpoint_every=5000 --set "
                              "train.eval_episodes=2 --out killed --quiet",
                          "DPRL_TEST_KILL_AFTER_CHECKPOINTS=2");
    REQUIRE(k.code != 0);
    REQUIRE(fs::exists(d / "killed" / "checkpoint.bin"));
    fs::copy(d / "killed", d / "killed_damaged", fs::copy_options::recursive);
    damage_checkpoint(d / "killed_damaged" / "checkpoint.bin");
    // Minari folders whose privacy units are not exact integers (and two that are, at the ends
    // of int64, for merge)
    using H = dprl::h5::File;
    const auto ds = d / "ds";
    minari_with_attrs(ds, d / "u_string", with_user([](H& f, const std::string& g, int) {
                        f.set_attr_string(g, "user_id", "alice");
                      }));
    minari_with_attrs(ds, d / "u_string1", with_user([](H& f, const std::string& g, int e) {
                        if (e == 1)
                          f.set_attr_string(g, "user_id", "7");
                        else
                          f.set_attr(g, "user_id", std::int64_t{7});
                      }));
    minari_with_attrs(ds, d / "u_frac", with_user([](H& f, const std::string& g, int e) {
                        f.set_attr_double(g, "user_id", e + 0.5);
                      }));
    minari_with_attrs(ds, d / "u_huge", with_user([](H& f, const std::string& g, int) {
                        f.set_attr_double(g, "user_id", 1e19);
                      }));
    minari_with_attrs(ds, d / "u_nan", with_user([](H& f, const std::string& g, int) {
                        f.set_attr_double(g, "user_id", NAN);
                      }));
    minari_with_attrs(ds, d / "u_inf", with_user([](H& f, const std::string& g, int) {
                        f.set_attr_double(g, "user_id", -INFINITY);
                      }));
    minari_with_attrs(ds, d / "u_2p60", with_user([](H& f, const std::string& g, int) {
                        f.set_attr_double(g, "user_id", 1152921504606846977.0);  // > 2^53
                      }));
    minari_with_attrs(ds, d / "u_ctrl", with_user([](H& f, const std::string& g, int) {
                        f.set_attr_string(g, "user_id", "\x1b[2J\x1b[Hbob\r\n");
                      }));
    minari_with_attrs(ds, d / "id_frac", [](H& f, const std::string& g, int e, std::int64_t t) {
      f.set_attr_double(g, "id", e + 0.25);
      f.set_attr(g, "total_steps", t);
    });
    minari_with_attrs(ds, d / "steps_frac", [](H& f, const std::string& g, int e, std::int64_t t) {
      f.set_attr(g, "id", std::int64_t{e});
      f.set_attr_double(g, "total_steps", static_cast<double>(t) + 0.5);
    });
    minari_with_attrs(ds, d / "u_ends", with_user([](H& f, const std::string& g, int e) {
                        f.set_attr(g, "user_id",
                                   e == 0   ? std::numeric_limits<std::int64_t>::min()
                                   : e == 1 ? std::int64_t{0}
                                            : std::numeric_limits<std::int64_t>::max());
                      }));
    minari_with_attrs(ds, d / "u_zero_max", with_user([](H& f, const std::string& g, int e) {
                        f.set_attr(
                            g, "user_id",
                            e == 0 ? std::int64_t{0} : std::numeric_limits<std::int64_t>::max());
                      }));
    // D4RL files whose user column holds fractions, NaN, a value beyond int64
    d4rl_with_users(d / "d4_frac.hdf5", {0.5f, 0.5f, 0.5f, 1.5f, 1.5f, 1.5f});
    d4rl_with_users(d / "d4_trunc.hdf5", {1.0f, 1.0f, 1.0f, 1.25f, 1.25f, 1.25f});
    d4rl_with_users(d / "d4_nan.hdf5", {NAN, NAN, NAN, 1.0f, 1.0f, 1.0f});
    d4rl_with_users(d / "d4_huge.hdf5", {1e19f, 1e19f, 1e19f, 1.0f, 1.0f, 1.0f});
    return d;
  }();
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup;
  return dir;
}

void run_surface_matrix(const std::string& group, const std::vector<Case>& cases) {
  for (const auto& c : cases) check_case(group, c, surface_fixtures(), "dprl_bad_surfaces_");
}

// an offline experiment reading the data set at {path}
std::string offline(const std::string& path, const std::string& extra = "") {
  return "name: t\nseed: 1\nenv: {id: cartpole}\nalgo: {id: discrete_cql, params: {}}\n"
         "train: {steps: 10, eval_every: 0, eval_episodes: 1}\ndata: {path: " +
         path + extra + "}\n";
}

// a tiny expert-level pipeline: one setting, two PPO runs of 512 steps, both kept (m = 2)
const std::string kPipeline =
    "pipeline: expert_level\nname: t\nseed: 1\nout: o\npopulation:\n  name: p\n  seed: 1\n"
    "  out: pop\n  env: {id: cartpole}\n  runs_per_setting: 2\n"
    "  ppo: {algo: ppo_layers, params: {hidden_sizes: \"8\"}, train: {steps: 512, eval_every: 0, "
    "eval_episodes: 1}}\n  select: {rule: top_k, k: 2}\n  action_floor: 0.02\n"
    "  demos: {episodes: 2, max_steps: 50}\nmode: selective\n"
    "privacy: {epsilon: 10, delta: auto, noise: seeded}\nrelease: {trajectories: 2}\n"
    "selective: {p: 0.8, noise_multiplier: 2.0, accounting: sound}\n"
    "learner: {id: discrete_cql, params: {hidden_sizes: \"8\", batch_size: 1}}\n"
    "train: {stable_steps: 0, eval_every: 0, eval_episodes: 1, eval_max_steps: 50}\n";

// a population file; cases edit one thing
const std::string kPopulation =
    "population:\n  name: p\n  seed: 1\n  out: pop\n  env: {id: cartpole}\n"
    "  runs_per_setting: 2\n"
    "  ppo: {algo: ppo_layers, params: {hidden_sizes: \"8\"}, train: {steps: 512, eval_every: 0, "
    "eval_episodes: 1}}\n  select: {rule: top_k, k: 2}\n  action_floor: 0.02\n"
    "  demos: {episodes: 2, max_steps: 50}\n";

std::string pop_edit(const std::string& from, const std::string& to) {
  auto text = kPopulation;
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return text;
}

// a linspace axis of n values
std::string axis(const std::string& key, int n) {
  return "      " + key + ": linspace(1, 2, " + std::to_string(n) + ")\n";
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("bad input: privacy units that are not exact integers are refused, never coerced") {
    std::vector<Case> cases;
    // every reader of a Minari folder: info, validate, merge, an offline run
    const std::vector<std::pair<std::string, std::string>> units = {
        {"u_string", "'alice' (a string)"},
        {"u_string1", "episode_1@user_id"},
        {"u_frac", "0.5"},
        {"u_huge", "1e+19"},
        {"u_nan", "nan"},
        {"u_inf", "inf"},
        {"u_2p60", "episode_0@user_id"},
        {"u_ctrl", "episode_0@user_id"},
    };
    for (const auto& [name, needle] : units) {
      const File data{"ds", "@copy:" + name};
      cases.push_back({"dataset info ds", {data}, needle});
      cases.push_back({"dataset validate ds --env cartpole", {data}, needle});
      cases.push_back({"dataset merge ds {fx}/ds --out m", {data}, needle});
      cases.push_back({"run c.yaml", {data, {"c.yaml", offline("ds")}}, needle});
    }
    // the structural attributes: a fractional id or step count is not rounded to fit
    for (const char* name : {"id_frac", "steps_frac"}) {
      const File data{"ds", std::string("@copy:") + name};
      const std::string needle = name[0] == 'i' ? "episode_0@id" : "episode_0@total_steps";
      cases.push_back({"dataset info ds", {data}, needle});
      cases.push_back({"run c.yaml", {data, {"c.yaml", offline("ds")}}, needle});
    }
    // D4RL user columns of fractions (also one whose fraction would truncate onto the episode's
    // neighbour), NaN and beyond int64
    for (const char* name : {"d4_frac.hdf5", "d4_trunc.hdf5", "d4_nan.hdf5", "d4_huge.hdf5"}) {
      const std::string f = std::string("{fx}/") + name;
      cases.push_back({"dataset info " + f + " --user-key infos/user_id", {}, "infos/user_id"});
      cases.push_back({"dataset validate " + f + " --user-key infos/user_id", {}, "infos/user_id"});
    }
    // merge --users offset at the ends of int64: ids would wrap round and two inputs share one
    cases.push_back({"dataset merge {fx}/u_ends {fx}/ds --out m", {}, "int64"});
    cases.push_back({"dataset merge {fx}/u_zero_max {fx}/ds --out m", {}, "int64"});
    cases.push_back({"dataset merge {fx}/ds {fx}/u_zero_max {fx}/ds --out m", {}, "int64"});
    cases.push_back(
        {"dataset merge {fx}/u_zero_max {fx}/ds_max --users offset --out m", {}, "ds_max"});
    run_surface_matrix("privacy units", cases);
  }

  TEST_CASE("bad input: refusals come before any budget is spent or any file written") {
    const std::string ac = kSrc +
                           "/configs/paper001/taxi.yaml --set algo.params.dp=both --set "
                           "algo.params.budget_epsilon=50 --set algo.params.episodes=2 --set "
                           "train.eval_episodes=1 --set algo.params.ledger=l.json --out o --quiet";
    const std::string primorl = kSrc + "/configs/paper004/smoke.yaml --out o --quiet --set ";
    const File pipe{"p.yaml", kPipeline};
    run_surface_matrix(
        "before any stage",
        {
            // a ledger of another budget: refused without leaving its lock file
            {"run " + ac, {{"l.json", "@copy:ac/privacy_ledger.json"}}, "l.json"},
            {"run " + ac + " --set algo.params.budget_epsilon=200",
             {{"l.json", "@copy:ac/privacy_ledger.json"}},
             "l.json"},
            // a pipeline whose learner batch exceeds its experts: refused before the population
            {"run p.yaml --quiet --set learner.params.batch_size=3", {pipe}, "batch_size"},
            {"run p.yaml --check --set learner.params.batch_size=3", {pipe}, "batch_size"},
            {"run p.yaml --quiet --set learner.params.batch_size=1000000", {pipe}, "batch_size"},
            // its run directory cannot be created, its ledger is damaged or spent
            {"run p.yaml --quiet --out afile", {pipe, {"afile", "x"}}, "afile"},
            {"run p.yaml --quiet --out afile/sub", {pipe, {"afile", "x"}}, "afile"},
            {"run p.yaml --quiet --out /proc/dprl_nope", {pipe}, "/proc"},
            {"run p.yaml --check --out afile", {pipe, {"afile", "x"}}, "afile"},
            {"run p.yaml --quiet", {pipe, {"o/pipeline_ledger.json", "{"}}, "pipeline_ledger"},
            {"run p.yaml --check", {pipe, {"o/pipeline_ledger.json", "[]"}}, "pipeline_ledger"},
            {"run p.yaml --quiet",
             {pipe,
              {"o/pipeline_ledger.json",
               "{\"charges\": [{\"stage\": \"release\", \"digest\": \"x\", \"label\": \"x\", "
               "\"epsilon\": 10, \"delta\": 0}], \"checksum\": \"0\"}"}},
             "pipeline_ledger"},
            {"run p.yaml --quiet --set population.out=afile/pop",
             {pipe, {"afile", "x"}},
             "population.out"},
            // PriMORL's export and cache folders, checked before any data is collected
            {"run " + primorl + "algo.params.data_export=afile/x",
             {{"afile", "x"}},
             "primorl.data_export"},
            {"run " + primorl + "algo.params.data_export=/proc/dprl_nope",
             {},
             "primorl.data_export"},
            // a data set already there is not replaced without --force
            {"run " + primorl + "algo.params.data_export={fx}/ds", {}, "holds a data set already"},
            {"run " + primorl + "algo.params.data_cache=afile", {{"afile", "x"}}, "data_cache"},
            {"run " + primorl + "algo.params.data_cache=afile/c",
             {{"afile", "x"}},
             "primorl.data_cache"},
            {"run " + primorl + "algo.params.data_cache=/proc/dprl_nope", {}, "primorl.data_cache"},
            // a checkpoint with a valid checksum but damaged content: refused, metrics.csv and
            // everything else as they were
            {"resume killed", {{"killed", "@copy:killed_damaged"}}, "checkpoint"},
            {"run killed/config.yaml --resume", {{"killed", "@copy:killed_damaged"}}, "checkpoint"},
        });
  }

  TEST_CASE("bad input: products of valid sizes are refused before anything is allocated") {
    const std::string pop = "population pop.yaml --quiet";
    const File dqn{"c.yaml",
                   "name: t\nseed: 1\nenv: {id: cartpole}\nalgo: {id: dqn, params: {batch_size: "
                   "1000000, hidden_sizes: \"100000\"}}\ntrain: {steps: 1000}\n"};
    const File cql{"c.yaml", offline("ds")};
    const File ds{"ds", "@copy:ds"};
    run_surface_matrix(
        "sizes",
        {
            {"bench nn --layers 4,60000,60000,2", {}, "--layers"},
            {"bench nn --layers 65536,65536 --batch 1048576", {}, "--layers"},
            {"bench nn --layers 4,50000,2 --batch 1048576", {}, "--batch"},
            {"bench primorl --hidden 100000,100000", {}, "--hidden"},
            {"bench primorl --hidden 60000 --members 100 --rollout-batch 10000000",
             {},
             "--rollout-batch"},
            {"bench primorl --hidden 60000 --members 100 --batch 100000", {}, "--batch"},
            {"bench primorl --clients 100000 --traj-len 1000000", {}, "--traj-len"},
            {"bench primorl --obs 0", {}, "--obs"},
            {"bench primorl --act -3", {}, "--act"},
            {"bench primorl --obs 100000000", {}, "--obs"},
            {"bench dataset --transitions 17179869184", {}, "--transitions"},
            {"bench data-release --trajectories 10000000 --length 100000", {}, "--trajectories"},
            {"bench data-release --experts 1000000 --hidden 10000,10000", {}, "--experts"},
            {"bench data-release --trajectories 10 --examined 20", {}, "--examined"},
            {"bench offline --batch 1048576 --obs 65536", {}, "--batch"},
            {"bench offline --batch 1048576 --hidden 8000,8000", {}, "--batch"},
            {"privacy dirichlet --k 5 --eta 0.1 --tau 0.01 --actions 2 --lipschitz 1 "
             "--adjacency 0.1 --samples 9000000000000000000",
             {},
             "--samples"},
            {"privacy dirichlet --k 5 --eta 0.01 --tau 0.001 --actions 2000000000 --lipschitz 1 "
             "--adjacency 0.1 --samples 1",
             {},
             "--actions"},
            // a population grid of a billion runs, and counts that would be narrowed to int
            {pop,
             {{"pop.yaml", pop_edit("  runs_per_setting: 2\n",
                                    "  variants:\n    grid:\n" + axis("gravity", 1000) +
                                        axis("force_mag", 1000) + axis("masscart", 1000) +
                                        "  runs_per_setting: 2\n")}},
             "runs"},
            {pop,
             {{"pop.yaml", pop_edit("  runs_per_setting: 2\n", "  variants:\n    grid:\n" +
                                                                   axis("gravity", 1000000000) +
                                                                   "  runs_per_setting: 2\n")}},
             "linspace"},
            {pop,
             {{"pop.yaml", pop_edit("  runs_per_setting: 2\n",
                                    "  variants:\n    grid:\n      gravity: "
                                    "linspace(1, 2, 99999999999999999999)\n"
                                    "  runs_per_setting: 2\n")}},
             "linspace"},
            {pop,
             {{"pop.yaml", pop_edit("runs_per_setting: 2", "runs_per_setting: 4294967298")}},
             "runs_per_setting"},
            {pop, {{"pop.yaml", pop_edit("k: 2}", "k: 4294967298}")}}, "select.k"},
            {pop,
             {{"pop.yaml", pop_edit("episodes: 2,", "episodes: 1000000000000,")}},
             "population.demos"},
            // learners: a batch times the hidden widths
            {"run c.yaml", {dqn}, "batch_size"},
            {"run c.yaml --set env.id=pendulum --set algo.id=sac", {dqn}, "batch_size"},
            {"run c.yaml --set env.id=pendulum --set algo.id=ddpg", {dqn}, "batch_size"},
            // PPO: a minibatch of the rollout times the hidden width
            {"run " + kSrc +
                 "/configs/ppo_cartpole.yaml --quiet --out o --set algo.params.num_envs=1000 "
                 "--set algo.params.num_steps=10000 --set algo.params.hidden_size=7000",
             {},
             "minibatch"},
            {"run c.yaml --set algo.params.batch_size=1000000 --set "
             "'algo.params.hidden_sizes=\"100000\"'",
             {cql, ds},
             "batch_size"},
            {"run c.yaml --set algo.id=bc --set 'algo.params={batch_size: 1000000, "
             "hidden_sizes: \"100000\"}'",
             {cql, ds},
             "batch_size"},
            {"run " + kSrc +
                 "/configs/paper004/smoke.yaml --out o --set algo.params.rollout_batch=10000000 "
                 "--set algo.params.members=100 --set 'algo.params.model_hidden=\"6000\"'",
             {},
             "rollout_batch"},
        });
  }

  TEST_CASE("bad input: no data set or run directory is replaced or deleted without --overwrite") {
    run_surface_matrix(
        "data loss",
        {
            {"bench dataset --transitions 100 --dir d", {{"d", "@copy:ds"}}, "--dir d"},
            {"bench dataset --transitions 100 --dir d --keep", {{"d", "@copy:ds"}}, "--overwrite"},
            {"bench dataset --transitions 100 --dir existing", {}, "existing"},
            {"bench dataset --transitions 100 --dir existing --overwrite",
             {},
             "not a Minari dataset folder"},
            {"bench dataset --transitions 100 --dir notes", {{"notes/a.txt", "mine"}}, "notes"},
            {"bench dataset --transitions 100 --dir /proc/dprl_nope", {}, "/proc"},
            {"collect --env cartpole --policy random --episodes 1 --out d",
             {{"d", "@copy:ds"}},
             "d"},
            {"dataset merge {fx}/ds --out d", {{"d", "@copy:ds"}}, "d"},
            {"dataset merge {fx}/ds --out existing --overwrite", {}, "existing"},
        });
  }

  TEST_CASE("bad input: dprl report on what is not a run or sweep directory, or an unwritable page") {
    const std::string sweep_head = "run,label,learning_rate,seed,return_mean,dir\n";
    run_surface_matrix(
        "report",
        {
            {"report nope", {}, "nope"},
            {"report f.txt", {{"f.txt", "x"}}, "f.txt: not a folder"},
            {"report notes", {{"notes/a.txt", "mine"}}, "notes: neither a run directory"},
            {"report r", {{"r/summary.json", ""}}, "r/summary.json: not valid JSON"},
            {"report r", {{"r/summary.json", "{\"privacy\": "}}, "r/summary.json"},
            {"report r", {{"r/summary.json", "[1, 2]"}}, "r/summary.json: not a JSON object"},
            {"report r", {{"r/summary.json", "{\"name\": \"x\"}"}}, "r/summary.json: no \"privacy\""},
            {"report r", {{"r/summary.json", "{\"privacy\": 3}"}}, "r/summary.json"},
            {"report r",
             {{"r/summary.json", "{\"privacy\": {\"epsilon\": \"lots\", \"delta\": 0}}"}},
             "privacy.epsilon"},
            {"report r", {{"r/summary.json", "{\"privacy\": {\"epsilon\": 1}}"}}, "privacy.delta"},
            {"report r", {{"r/summary.json", "@fifo"}}, "r/summary.json"},
            {"report r", {{"r/summary.json", "@dir"}}, "r/summary.json"},
            {"report r", {{"r/summary.json", "@link:r/summary.json"}}, "r/summary.json"},
            {"report existing --out nodir/r.html", {}, "nodir/r.html"},
            {"report existing --out /proc/dprl_nope.html", {}, "/proc/dprl_nope.html"},
            {"report existing --out existing", {}, "existing: is a folder"},
            {"report existing --out f.txt/r.html", {{"f.txt", "x"}}, "f.txt/r.html"},
            {"report s", {{"s/sweep.csv", ""}}, "s/sweep.csv: empty"},
            {"report s", {{"s/sweep.csv", "run,x\n0,1\n"}}, "s/sweep.csv: no label and seed"},
            {"report s", {{"s/sweep.csv", sweep_head + "0,\"a,0.1,1,2,d\n"}}, "s/sweep.csv:2"},
            {"report s", {{"s/sweep.csv", sweep_head + "0,a,0.1,1\n"}}, "s/sweep.csv: row 2"},
            {"report s", {{"s/sweep.csv", "@fifo"}}, "s/sweep.csv"},
        });
  }

  TEST_CASE("bad input: messages name what is wrong and echo no control characters") {
    const std::string esc = "\x1b[2J\x1b[H";
    const std::string good =
        "name: t\nseed: 1\nenv:\n  id: taxi\nalgo:\n  id: q_learning\ntrain:\n  steps: 100\n";
    run_surface_matrix(
        "messages",
        {
            // untrusted text in messages: a CSV header, YAML keys and values, flags, file names
            {"plot r --y return_mean -o f.svg",
             {{"r/metrics.csv", "step," + esc + "x\n1,2\n"}},
             "return_mean"},
            {"plot r --y x -o f.svg", {{"r/metrics.csv", "step,\x07x\x08\n1,2\n"}}, "x"},
            {"plot r --y return_mean -o f.svg",
             {{"r/metrics.csv", "step\x1b]0;pwned\x07,return_mean\n1\n"}},
             "metrics.csv"},
            {"run c.yaml", {{"c.yaml", good + "\"\\e[2Jbogus\": 1\n"}}, "bogus"},
            {"run c.yaml", {{"c.yaml", good + "\"\\e[31mred\": 1\n"}}, "red"},
            {"run c.yaml --set 'algo.params.\x1b[2Jx=1'", {{"c.yaml", good}}, "x"},
            {"run c.yaml",
             {{"c.yaml",
               "name: t\nseed: 1\nenv:\n  id: \"\\e[2Jtaxi\"\nalgo:\n  "
               "id: q_learning\ntrain:\n  steps: 100\n"}},
             "taxi"},
            {"eval --env 'cart\x1b[2Jpole' --policy random", {}, "pole"},
            {"dataset info 'x\x1b[2J.hdf5'", {}, ".hdf5"},
            {"eval --env taxi --policy p.json",
             {{"p.json", "{\"format\": \"\\u001b[2Jdprl-policy\"}"}},
             "p.json"},
            {"env replay r.json", {{"r.json", "{\"env\": \"\\u001b[2J\\u009bcart\"}"}}, "cart"},
            {"dataset info ds", {{"ds", "@copy:u_ctrl"}}, "bob"},
            {"\x1b[2Jbogus", {}, "bogus"},
            // FIFOs, folders and links where files must be: named, never waited on
            {"dataset info f.hdf5", {{"f.hdf5", "@fifo"}}, "FIFO"},
            {"dataset info ds",
             {{"ds", "@copy:ds"}, {"ds/data/metadata.json", "@dir"}},
             "metadata.json"},
            {"run c.yaml", {{"c.yaml", "@fifo"}}, "c.yaml"},
            {"sweep s.yaml", {{"s.yaml", "@fifo"}}, "s.yaml"},
            {"population p.yaml", {{"p.yaml", "@fifo"}}, "p.yaml"},
            {"env replay r.json", {{"r.json", "@fifo"}}, "r.json"},
            {"eval --env taxi --policy p.json", {{"p.json", "@fifo"}}, "p.json"},
            {"run " + kSrc +
                 "/configs/paper003/cartpole.yaml --quiet --out o --set algo.params.teacher=t.bin",
             {{"t.bin", "@fifo"}},
             "FIFO"},
            {"run " + kSrc +
                 "/configs/paper003/cartpole.yaml --quiet --out o --set algo.params.teacher=t",
             {{"t", "@dir"}},
             "is a folder"},
            {"plot r --y return_mean -o f.svg", {{"r/metrics.csv", "@fifo"}}, "metrics.csv"},
            {"dataset info d4.hdf5", {{"d4.hdf5", "@link:d4.hdf5"}}, "d4.hdf5"},
            {"dataset info ds", {{"ds/data", "x"}}, "data"},
            {"dataset info ds --format minari", {{"ds/data", "x"}}, "data/"},
            {"dataset info ds --format minari", {{"ds/data", "@fifo"}}, "FIFO"},
            {"dataset info ds",
             {{"ds/data/metadata.json", "@link:metadata.json"}},
             "metadata.json"},
            {"run c.yaml",
             {{"c.yaml", offline("ds", ", format: minari")},
              {"ds/data/metadata.json", "@copy:ds/data/metadata.json"},
              {"ds/data/main_data.hdf5", "@fifo"}},
             "FIFO"},
            // a population whose out: cannot be created: one line, before any run
            {"population p.yaml --quiet",
             {{"p.yaml", pop_edit("out: pop", "out: afile/pop")}, {"afile", "x"}},
             "population.out"},
            {"population p.yaml",
             {{"p.yaml", pop_edit("out: pop", "out: afile")}, {"afile", "x"}},
             "population.out"},
            {"population p.yaml --quiet --jobs 2",
             {{"p.yaml", pop_edit("out: pop", "out: /proc/dprl_nope")}},
             "population.out"},
        });
  }
}
