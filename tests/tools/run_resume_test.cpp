// Run resume: a run killed (SIGKILL) right after a checkpoint or between two checkpoints and then
// resumed writes the same metrics.csv, policy, summary.json and config.yaml as an uninterrupted
// run, for every learner that checkpoints; a corrupted or truncated checkpoint is refused with one
// line naming the file, and the previous checkpoint is kept to restart from; learners and envs
// without checkpoints refuse --resume.
//
// The child kills itself deterministically through the test hooks of algos/core/checkpoint.hpp
// (DPRL_TEST_KILL_AFTER_CHECKPOINTS, DPRL_TEST_KILL_AT_STEP).
#include <doctest/doctest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "engine/data/dataset_io.hpp"
#include "tests/algos/offline/offline_test_util.hpp"
#include "tests/tools/sweep_test_util.hpp"

using namespace sweep_test;

namespace {

struct ResumeCase {
  const char* name;
  std::string config;      // the experiment, with out: out
  int kill_after;          // checkpoints written before the first kill
  std::int64_t kill_step;  // a step between two checkpoints, for the second kill
};

// a small dataset of random CartPole episodes for the offline learners, made once
std::string offline_data() {
  static const std::string path = [] {
    // per process: ctest runs the cases of this file in parallel processes
    const auto d = scratch("resume_data_" + std::to_string(::getpid()));
    REQUIRE(run_in(d, "collect --env cartpole --policy random --episodes 20 --seed 3 --out data")
                .code == 0);
    return (d / "data").string();
  }();
  return path;
}

std::string offline_config(const char* algo, int seed) {
  return "seed: " + std::to_string(seed) + "\nout: out\nenv: {id: cartpole}\nalgo: {id: " + algo +
         ", params: {batch_size: 32, hidden_sizes: '32'}}\ndata: {path: " + offline_data() +
         "}\ntrain: {steps: 900, eval_every: 300, eval_episodes: 2, checkpoint_every: 200}\n";
}

// short runs: a few checkpoints each
std::vector<ResumeCase> cases() {
  static const std::vector<ResumeCase> v = {
      {"q_learning",
       "seed: 3\nout: out\nenv: {id: taxi}\nalgo: {id: q_learning}\n"
       "train: {steps: 20000, eval_every: 5000, eval_episodes: 5, checkpoint_every: 3000}\n",
       2, 13001},
      {"ppo",
       "seed: 4\nout: out\nenv: {id: cartpole}\n"
       "algo: {id: ppo, params: {num_envs: 2, num_steps: 64, num_minibatches: 2, update_epochs: "
       "2}}\n"
       "train: {steps: 2560, eval_every: 640, eval_episodes: 3, checkpoint_every: 500}\n",
       2, 1700},
      {"ppo_continuous",
       "seed: 5\nout: out\nenv: {id: pendulum}\n"
       "algo: {id: ppo_continuous, params: {num_steps: 128, num_minibatches: 4, update_epochs: "
       "2}}\n"
       "train: {steps: 1280, eval_every: 384, eval_episodes: 2, checkpoint_every: 300}\n",
       1, 900},
      {"dqn",
       "seed: 6\nout: out\nenv: {id: cartpole}\n"
       "algo: {id: dqn, params: {learning_starts: 200, buffer_size: 1000, batch_size: 32, "
       "hidden_sizes: '32', target_network_frequency: 100}}\n"
       "train: {steps: 2000, eval_every: 700, eval_episodes: 2, checkpoint_every: 450}\n",
       2, 1234},
      {"sac",
       "seed: 7\nout: out\nenv: {id: pendulum}\n"
       "algo: {id: sac, params: {learning_starts: 100, buffer_size: 500, batch_size: 16, "
       "hidden_sizes: '16,16'}}\n"
       "train: {steps: 800, eval_every: 300, eval_episodes: 1, checkpoint_every: 200}\n",
       2, 555},
      {"ddpg",
       "seed: 8\nout: out\nenv: {id: pendulum}\n"
       "algo: {id: ddpg, params: {learning_starts: 100, buffer_size: 500, batch_size: 16, "
       "hidden_sizes: '16,16'}}\n"
       "train: {steps: 800, eval_every: 300, eval_episodes: 1, checkpoint_every: 200}\n",
       1, 555},
      // LunarLander: Box2D has no world snapshot; the env's snapshot is its replay recipe
      {"ppo_lunar_lander",
       "seed: 13\nout: out\nenv: {id: lunar_lander}\n"
       "algo: {id: ppo, params: {num_envs: 2, num_steps: 64, num_minibatches: 2, update_epochs: "
       "2}}\n"
       "train: {steps: 1280, eval_every: 640, eval_episodes: 1, checkpoint_every: 300}\n",
       2, 900},
      {"sac_lunar_lander_continuous",
       "seed: 14\nout: out\nenv: {id: lunar_lander, params: {continuous: true}}\n"
       "algo: {id: sac, params: {learning_starts: 100, buffer_size: 500, batch_size: 16, "
       "hidden_sizes: '16,16'}}\n"
       "train: {steps: 700, eval_every: 300, eval_episodes: 1, checkpoint_every: 200}\n",
       2, 555},
      // checkpoints between episodes; the private run is seeded, budgeted (stopped by its budget
      // at step 2357) and has its non-private twin: the resumed run finds the ledger charges its
      // killed process made after the checkpoint, so even the ledger is byte-identical
      {"actor_critic",
       "seed: 3\nout: out\nenv: {id: taxi}\nalgo: {id: actor_critic}\n"
       "train: {steps: 3000, eval_every: 1000, eval_episodes: 2, checkpoint_every: 500}\n",
       2, 1500},
      {"actor_critic_private",
       "seed: 3\nout: out\nenv: {id: taxi}\n"
       "algo: {id: actor_critic, params: {dp: both, noise: seeded, epsilon: 0.5, "
       "trace_similarity: true, budget_epsilon: 150, charge_block: 100}}\n"
       "train: {steps: 3000, eval_every: 1000, eval_episodes: 2, checkpoint_every: 500}\n",
       3, 1500},
      // checkpoints between episodes: the statistics, the binary tree of released Gram
      // matrices, the policy and the noise stream
      {"lsvi_ucb",
       "seed: 15\nout: out\nenv: {id: linear_mdp, params: {kind: random, num_states: 5, "
       "num_actions: 4, dim: 8, horizon: 5}}\nalgo: {id: lsvi_ucb}\n"
       "train: {steps: 1500, eval_every: 500, eval_episodes: 3, checkpoint_every: 400}\n",
       2, 900},
      {"lsvi_ucb_private",
       "seed: 16\nout: out\nenv: {id: linear_mdp, params: {kind: random, num_states: 5, "
       "num_actions: 4, dim: 8, horizon: 5}}\n"
       "algo: {id: lsvi_ucb, params: {private: true, noise: seeded, epsilon: 5, accountant: rdp}}\n"
       "train: {steps: 1500, eval_every: 0, eval_episodes: 3, checkpoint_every: 400}\n",
       2, 900},
      {"lsvi_ucb_plus_private_adaptive",
       "seed: 17\nout: out\nenv: {id: linear_mdp, params: {kind: random, num_states: 5, "
       "num_actions: 4, dim: 8, horizon: 5}}\n"
       "algo: {id: lsvi_ucb, params: {variant: lsvi_ucb_plus, batching: adaptive, private: true, "
       "noise: seeded, epsilon: 5, accountant: rdp}}\n"
       "train: {steps: 1500, eval_every: 0, eval_episodes: 3, checkpoint_every: 400}\n",
       1, 1100},
      // the Dirichlet mechanism's schedule and budget and both noise streams; the teacher is
      // trained by the run (5000 steps) into teacher.bin and reloaded on resume
      {"ppo_kickstart_dirichlet",
       "seed: 18\nout: out\nenv: {id: cartpole}\n"
       "algo: {id: ppo_kickstart, params: {num_envs: 2, num_steps: 64, num_minibatches: 2, "
       "update_epochs: 2, teacher: teacher.bin, teacher_train_steps: 5000, teacher_hidden_size: "
       "16, teacher_mode: dirichlet, decay: 0.9, lambda: 0.5, eta: 0.05, tau: 0.001, adjacency: "
       "0.01, noise: seeded}}\n"
       "train: {steps: 2560, eval_every: 640, eval_episodes: 3, checkpoint_every: 500}\n",
       2, 1700},
      {"bc", offline_config("bc", 9), 2, 450},
      {"discrete_cql", offline_config("discrete_cql", 10), 1, 650},
      {"discrete_bcq", offline_config("discrete_bcq", 11), 3, 333},
  };
  return v;
}

// a private bc run: 200 CartPole episodes of a noisy expert, one user each (q = 32 / 200), three blocks of
// 300 gradient steps charged before their first step, checkpoints every 200 steps and before each
// evaluation
std::string private_config(const std::string& noise, double epsilon, int noise_threads = 1) {
  static const std::string data = [] {
    const auto d = scratch("resume_private_data_" + std::to_string(::getpid())) / "data";
    dprl::save_minari(dprl::testing::rollout_dataset("cartpole", dprl::testing::cartpole_expert,
                                                     200, 200, 0.3, 4),
                      d);
    return d.string();
  }();
  return "seed: 12\nout: out\nenv: {id: cartpole}\nalgo: {id: bc, params: {batch_size: 32, "
         "hidden_sizes: '32', dp: true, noise_multiplier: 1.0, epsilon: " +
         fmt::format("{:.17g}", epsilon) + ", noise: " + noise + "}}\ndata: {path: " + data +
         "}\ntrain: {steps: 900, eval_every: 300, eval_episodes: 2, checkpoint_every: 200, "
         "noise_threads: " +
         std::to_string(noise_threads) + "}\n";
}

// the labels of a run's ledger charges, in order
std::vector<std::string> charges(const fs::path& run) {
  std::vector<std::string> v;
  const auto j = nlohmann::json::parse(dprl::read_file(run / "privacy_ledger.json"));
  for (const auto& c : j.at("charges")) v.push_back(c.at("label").get<std::string>());
  return v;
}

std::string env_prefix(const std::string& assignment) { return "env " + assignment + " "; }

fs::path setup(const std::string& name, const std::string& config) {
  const auto d = scratch("resume_" + name);
  dprl::write_file_atomic(d / "exp.yaml", config);
  return d;
}

// the files that must match an uninterrupted run
void check_same_run(const fs::path& a, const fs::path& b) {
  CHECK(!fs::exists(b / "checkpoint.bin"));  // removed once the run is complete
  CHECK(check_same_tree(a, b) >= 4);         // config.yaml, metrics.csv, policy, summary.json
}

// Runs a pipeline whole (ref), then killed after its second checkpoint and run again (a): the
// rerun continues from the checkpoint, removes it, and ends with the reference's `files`.
// after_kill sees the killed run's directory.
void check_pipeline_resumes(const std::string& args, const std::string& name,
                            std::initializer_list<const char*> files,
                            const std::function<void(const fs::path&)>& after_kill = {}) {
  const auto ref = scratch(name + "_ref");
  const auto full = run_in(ref, args);
  INFO(full.err);
  REQUIRE(full.code == 0);
  const auto a = scratch(name + "_a");
  CHECK(run_in(a, args, env_prefix("DPRL_TEST_KILL_AFTER_CHECKPOINTS=2")).code != 0);
  REQUIRE(fs::exists(a / "out" / "checkpoint.bin"));
  if (after_kill) after_kill(a / "out");
  const auto r = run_in(a, args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("continues from its last checkpoint") != std::string::npos);
  CHECK(!fs::exists(a / "out" / "checkpoint.bin"));
  for (const char* f : files) {
    INFO(f);
    CHECK(dprl::read_file(a / "out" / f) == dprl::read_file(ref / "out" / f));
  }
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("a killed run resumes to the bytes of an uninterrupted run") {
    for (const auto& c : cases()) {
      INFO("learner: " << c.name);
      const auto ref = setup(std::string(c.name) + "_ref", c.config);
      REQUIRE(run_in(ref, "run exp.yaml --quiet").code == 0);
      CHECK(!fs::exists(ref / "out" / "checkpoint.bin"));

      // killed right after a checkpoint, resumed with dprl resume
      const auto a = setup(std::string(c.name) + "_a", c.config);
      auto r =
          run_in(a, "run exp.yaml --quiet",
                 env_prefix("DPRL_TEST_KILL_AFTER_CHECKPOINTS=" + std::to_string(c.kill_after)));
      CHECK(r.code != 0);
      REQUIRE(fs::exists(a / "out" / "checkpoint.bin"));
      CHECK(!fs::exists(a / "out" / "summary.json"));
      r = run_in(a, "resume out --quiet");
      INFO(r.err);
      REQUIRE(r.code == 0);
      check_same_run(ref / "out", a / "out");

      // killed between two checkpoints (work since the last one is lost and redone), then killed
      // again after the next checkpoint of the resumed run, resumed with run --resume
      const auto b = setup(std::string(c.name) + "_b", c.config);
      r = run_in(b, "run exp.yaml --quiet",
                 env_prefix("DPRL_TEST_KILL_AT_STEP=" + std::to_string(c.kill_step)));
      CHECK(r.code != 0);
      REQUIRE(fs::exists(b / "out" / "checkpoint.bin"));
      r = run_in(b, "run exp.yaml --resume --quiet",
                 env_prefix("DPRL_TEST_KILL_AFTER_CHECKPOINTS=1"));
      CHECK(r.code != 0);
      CHECK(fs::exists(b / "out" / "checkpoint.prev.bin"));
      r = run_in(b, "run exp.yaml --resume --quiet");
      INFO(r.err);
      REQUIRE(r.code == 0);
      check_same_run(ref / "out", b / "out");

      // checkpoints change no result: a run without them writes the same figures and policy
      const auto n = setup(std::string(c.name) + "_none", c.config);
      REQUIRE(run_in(n, "run exp.yaml --quiet --set train.checkpoint_every=0").code == 0);
      for (const char* f : {"metrics.csv", "summary.json"})
        CHECK(dprl::read_file(n / "out" / f) == dprl::read_file(ref / "out" / f));
    }
  }

  TEST_CASE("a corrupted or truncated checkpoint is refused, the previous one is kept") {
    const ResumeCase c = cases()[0];
    const auto ref = setup("bad_ref", c.config);
    REQUIRE(run_in(ref, "run exp.yaml --quiet").code == 0);
    const auto d = setup("bad", c.config);
    CHECK(
        run_in(d, "run exp.yaml --quiet", env_prefix("DPRL_TEST_KILL_AFTER_CHECKPOINTS=3")).code !=
        0);
    const auto ck = d / "out" / "checkpoint.bin";
    REQUIRE(fs::exists(ck));
    REQUIRE(fs::exists(d / "out" / "checkpoint.prev.bin"));
    const std::string good = dprl::read_file(ck);

    // one flipped byte in the payload
    std::string bad = good;
    bad[bad.size() / 2] ^= 0x20;
    dprl::write_file_atomic(ck, bad);
    auto r = run_in(d, "resume out --quiet");
    CHECK(r.code == 2);
    CHECK(count(r.err, "\n") == 1);
    CHECK(r.err.find("out/checkpoint.bin: corrupted checkpoint") != std::string::npos);
    CHECK(r.err.find("checkpoint.prev.bin") != std::string::npos);
    CHECK(!fs::exists(d / "out" / "summary.json"));

    // cut short
    dprl::write_file_atomic(ck, good.substr(0, good.size() - 100));
    r = run_in(d, "resume out --quiet");
    CHECK(r.code == 2);
    CHECK(count(r.err, "\n") == 1);
    CHECK(r.err.find("out/checkpoint.bin: truncated checkpoint") != std::string::npos);

    // not a checkpoint at all
    dprl::write_file_atomic(ck, "hello");
    r = run_in(d, "resume out --quiet");
    CHECK(r.code == 2);
    CHECK(r.err.find("out/checkpoint.bin: not a dprl checkpoint") != std::string::npos);

    // the previous checkpoint still finishes the run with the uninterrupted bytes
    fs::remove(ck);
    r = run_in(d, "resume out --quiet");
    INFO(r.err);
    REQUIRE(r.code == 0);
    check_same_run(ref / "out", d / "out");
  }

  TEST_CASE("resume refuses what it cannot continue") {
    const ResumeCase c = cases()[0];
    const auto d = setup("refuse", c.config);
    // no run there yet
    auto r = run_in(d, "run exp.yaml --resume --quiet");
    CHECK(r.code == 2);
    CHECK(r.err.find("holds no run") != std::string::npos);
    r = run_in(d, "resume nowhere");
    CHECK(r.code == 2);
    CHECK(r.err.find("nowhere is not a directory") != std::string::npos);
    // a complete run
    REQUIRE(run_in(d, "run exp.yaml --quiet").code == 0);
    r = run_in(d, "resume out");
    CHECK(r.code == 2);
    CHECK(r.err.find("holds a complete run") != std::string::npos);
    // another config in the directory
    r = run_in(d, "run exp.yaml --resume --set train.eval_episodes=6");
    CHECK(r.code == 2);
    CHECK(r.err.find("holds a run of a different config") != std::string::npos);
    // a run killed before its first checkpoint starts again from step 0, and says so
    fs::remove_all(d / "out");
    CHECK(run_in(d, "run exp.yaml --quiet", env_prefix("DPRL_TEST_KILL_AT_STEP=100")).code != 0);
    r = run_in(d, "run exp.yaml --resume --quiet");
    CHECK(r.code == 0);
    CHECK(r.err.find("has no checkpoint yet; the run starts from step 0") != std::string::npos);
    // learners without checkpoints are refused by name, before anything is written
    const std::pair<std::string, std::string> refused[] = {
        // MOPO that also learns from the real data (its checkpoint would hold the table)
        {"primorl",
         "env: {id: pendulum}\nalgo: {id: primorl, params: {variant: mopo, real_ratio: 0.5}}\n"
         "data: {path: nowhere}\n"}};
    for (const auto& [algo, body] : refused) {
      const auto a =
          setup("refuse_" + algo, "seed: 1\nout: out\n" + body + "train: {steps: 1000}\n");
      r = run_in(a, "run exp.yaml --resume");
      CHECK(r.code == 2);
      CHECK(count(r.err, "\n") == 1);
      CHECK(r.err.find("algo '" + algo + "' writes no checkpoints") != std::string::npos);
      CHECK(!fs::exists(a / "out"));
    }
  }

  TEST_CASE("a killed private run resumes without paying twice for its steps") {
    // Seeded noise: the resumed run is the uninterrupted one, ledger included, byte for byte.
    // Checkpoints: step 0, 200, 300 (before the evaluation), 400, 600 (idem), 800, 900. Killed
    // right after the third (the evaluation at 300 pending), and at step 700 (the block 601-900
    // charged after the checkpoint at 600, its model never evaluated): the resumed run finds
    // that charge again and does not repeat it.
    const std::string seeded = private_config("seeded", 1000);
    const auto ref = setup("private_ref", seeded);
    REQUIRE(run_in(ref, "run exp.yaml --quiet").code == 0);
    const std::vector<std::string> blocks = {"gradient steps 1-300", "gradient steps 301-600",
                                             "gradient steps 601-900"};
    CHECK(charges(ref / "out") == blocks);
    // the noise drawn ahead (noise_threads 1, above) changes nothing: a run drawing each step's
    // noise at its release writes the same figures, ledger and policy
    const auto ref0 = setup("private_ref_0", private_config("seeded", 1000, 0));
    REQUIRE(run_in(ref0, "run exp.yaml --quiet").code == 0);
    for (const char* f : {"metrics.csv", "privacy_ledger.json", "policy.bin"}) {
      INFO(f);
      CHECK(dprl::read_file(ref0 / "out" / f) == dprl::read_file(ref / "out" / f));
    }
    for (const std::string& kill :
         {std::string("DPRL_TEST_KILL_AFTER_CHECKPOINTS=3"), std::string("DPRL_TEST_KILL_AT_STEP=700")}) {
      INFO(kill);
      const auto a = setup("private_seeded", seeded);
      CHECK(run_in(a, "run exp.yaml --quiet", env_prefix(kill)).code != 0);
      REQUIRE(fs::exists(a / "out" / "checkpoint.bin"));
      const auto r = run_in(a, "resume out --quiet");
      INFO(r.err);
      REQUIRE(r.code == 0);
      check_same_run(ref / "out", a / "out");
      CHECK(charges(a / "out") == blocks);
    }

    // Fresh noise (os-entropy, the default): the bytes differ, the charges do not. (Its
    // discrete Gaussian is accounted with the bound proven for it, so its epsilon is not the
    // seeded run's: compared with an uninterrupted os-entropy run.)
    const std::string fresh = private_config("os-entropy", 1000);
    const auto fresh_ref = setup("private_fresh_ref", fresh);
    REQUIRE(run_in(fresh_ref, "run exp.yaml --quiet").code == 0);
    const auto f = setup("private_fresh", fresh);
    CHECK(run_in(f, "run exp.yaml --quiet", env_prefix("DPRL_TEST_KILL_AT_STEP=700")).code != 0);
    auto r = run_in(f, "resume out --quiet");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(charges(f / "out") == blocks);
    const auto spent = [](const fs::path& run) {
      return nlohmann::json::parse(dprl::read_file(run / "summary.json"))
          .at("privacy")
          .at("epsilon")
          .get<double>();
    };
    CHECK(spent(f / "out") == spent(fresh_ref / "out"));
    CHECK(spent(fresh_ref / "out") > spent(ref / "out"));  // the proven bound is above PLD's

    // Falling back to checkpoint.prev.bin with fresh noise: the newest checkpoint's model may
    // have been evaluated (released) since, so every step after the previous one is paid
    // again: 401-600 (charged before that checkpoint, drawn twice) and 601-900.
    const auto g = setup("private_prev", fresh);
    CHECK(run_in(g, "run exp.yaml --quiet", env_prefix("DPRL_TEST_KILL_AT_STEP=700")).code != 0);
    fs::remove(g / "out" / "checkpoint.bin");  // left: the checkpoint at step 400
    r = run_in(g, "resume out --quiet");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(charges(g / "out") == std::vector<std::string>{blocks[0], blocks[1], blocks[2],
                                                         "gradient steps 401-600", blocks[2]});
    CHECK(spent(g / "out") > spent(fresh_ref / "out"));
    // ... and when the budget cannot pay them again, the resume is refused in one line
    const std::string tight = private_config("os-entropy", spent(fresh_ref / "out") * 1.0001);
    const auto h = setup("private_tight", tight);
    REQUIRE(run_in(h, "run exp.yaml --quiet", env_prefix("DPRL_TEST_KILL_AT_STEP=700")).code != 0);
    fs::remove(h / "out" / "checkpoint.bin");
    r = run_in(h, "resume out --quiet");
    CHECK(r.code == 2);
    CHECK(count(r.err, "\n") == 1);
    CHECK(r.err.find("resuming needs 500 more gradient steps") != std::string::npos);
    // the same kill resumed from the newest checkpoint fits the tight budget
    const auto k = setup("private_tight_ok", tight);
    REQUIRE(run_in(k, "run exp.yaml --quiet", env_prefix("DPRL_TEST_KILL_AT_STEP=700")).code != 0);
    r = run_in(k, "resume out --quiet");
    INFO(r.err);
    CHECK(r.code == 0);

    // Private LSVI-UCB with fresh noise: its regret rows come from the releases, so they reach
    // metrics.csv only with a checkpoint (at episodes 80 and 160 here): a run killed at episode
    // 180 has published nothing its resumed run draws again, and the resumed run composes the
    // same releases as an uninterrupted one.
    const std::string lsvi =
        "seed: 16\nout: out\nenv: {id: linear_mdp, params: {kind: random, num_states: 5, "
        "num_actions: 4, dim: 8, horizon: 5}}\n"
        "algo: {id: lsvi_ucb, params: {private: true, epsilon: 5, accountant: rdp}}\n"
        "train: {steps: 1500, eval_every: 0, eval_episodes: 3, checkpoint_every: 400}\n";
    const auto l_ref = setup("private_lsvi_ref", lsvi);
    REQUIRE(run_in(l_ref, "run exp.yaml --quiet").code == 0);
    const auto l = setup("private_lsvi", lsvi);
    CHECK(run_in(l, "run exp.yaml --quiet", env_prefix("DPRL_TEST_KILL_AT_STEP=900")).code != 0);
    const std::string rows = dprl::read_file(l / "out" / "metrics.csv");
    CHECK(rows.find("\n160,") != std::string::npos);
    CHECK(rows.find("\n170,") == std::string::npos);  // logged, held, lost with the process
    r = run_in(l, "resume out --quiet");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(spent(l / "out") == spent(l_ref / "out"));
    CHECK(dprl::read_file(l / "out" / "metrics.csv").find("\n300,") != std::string::npos);
  }

  TEST_CASE("a fall-back to checkpoint.prev.bin with fresh noise pays every step again or refuses") {
    // An independent privacy review's sequence at 70c808d: bc on 64 one-episode CartPole users,
    // batch 8 (q = 0.125), z = 1, os-entropy noise, 900 steps, evaluations every 300 and
    // checkpoints every 200 (at 0, 200, 300, 400, 600, 800, 900). Killed right after the 7th
    // checkpoint (step 900, its evaluation possibly already out), checkpoint.bin removed: the
    // run resumes from 800 and draws 801-900 again with fresh noise. That run released 1000
    // steps' worth of noisy gradients, and must pay for 1000: at 70c808d it paid 900 (31.11
    // against the 1000-step 33.31 of the continuous PLD).
    const auto data = scratch("resume_fb_data_" + std::to_string(::getpid()));
    REQUIRE(run_in(data, "collect --env cartpole --policy random --episodes 64 --seed 3 --out "
                         "ds_clean")
                .code == 0);
    REQUIRE(run_in(data, "dataset merge ds_clean --users episode --out ds_users").code == 0);
    const auto fb = [&](int steps) {
      return "seed: 12\nout: out\nenv: {id: cartpole}\nalgo: {id: bc, params: {batch_size: 8, "
             "hidden_sizes: '32', dp: true, noise_multiplier: 1.0, epsilon: 1000}}\ndata: {path: " +
             (data / "ds_users").string() + "}\ntrain: {steps: " + std::to_string(steps) +
             ", eval_every: 300, eval_episodes: 2, checkpoint_every: 200}\n";
    };
    const auto spent = [](const fs::path& run) {
      return nlohmann::json::parse(dprl::read_file(run / "summary.json"))
          .at("privacy")
          .at("epsilon")
          .get<double>();
    };
    const auto b = setup("fb_prev", fb(900));
    CHECK(run_in(b, "run exp.yaml --quiet", env_prefix("DPRL_TEST_KILL_AFTER_CHECKPOINTS=7"))
              .code != 0);
    REQUIRE(fs::exists(b / "out" / "checkpoint.prev.bin"));
    fs::remove(b / "out" / "checkpoint.bin");
    auto r = run_in(b, "resume out --quiet");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(charges(b / "out") ==
          std::vector<std::string>{"gradient steps 1-300", "gradient steps 301-600",
                                   "gradient steps 601-900", "gradient steps 801-900"});
    // the 1000-step figure of the same accountant and noise: a run of 1000 steps, and the CLI
    const auto t = setup("fb_1000", fb(1000));
    REQUIRE(run_in(t, "run exp.yaml --quiet").code == 0);
    CHECK(spent(b / "out") >= spent(t / "out") * (1 - 1e-12));
    r = run_in(b, "privacy epsilon -z 1 -q 0.125 -T 1000 --delta 1e-5 --accountant pld "
                  "--discrete --json");
    REQUIRE(r.code == 0);
    const double cli = nlohmann::json::parse(r.out).at("epsilon").get<double>();
    CHECK(spent(b / "out") >= cli * (1 - 1e-12));
    CHECK(cli >= 33.31);  // above the continuous PLD's 1000-step figure too

    // actor_critic and lsvi_ucb count releases, not ledger charges: such a resume is refused in
    // one line (exit 2), nothing written
    const std::string ac =
        "seed: 3\nout: out\nenv: {id: taxi}\n"
        "algo: {id: actor_critic, params: {dp: both, epsilon: 0.5, budget_epsilon: 150, "
        "charge_block: 100}}\n"
        "train: {steps: 3000, eval_every: 1000, eval_episodes: 2, checkpoint_every: 500}\n";
    const std::string lsvi =
        "seed: 16\nout: out\nenv: {id: linear_mdp, params: {kind: random, num_states: 5, "
        "num_actions: 4, dim: 8, horizon: 5}}\n"
        "algo: {id: lsvi_ucb, params: {private: true, epsilon: 5, accountant: rdp}}\n"
        "train: {steps: 1500, eval_every: 0, eval_episodes: 3, checkpoint_every: 400}\n";
    for (const auto& [name, config, kill] :
         {std::tuple{"fb_actor_critic", ac, "DPRL_TEST_KILL_AFTER_CHECKPOINTS=3"},
          std::tuple{"fb_lsvi", lsvi, "DPRL_TEST_KILL_AT_STEP=900"}}) {
      INFO(name);
      const auto d = setup(name, config);
      CHECK(run_in(d, "run exp.yaml --quiet", env_prefix(kill)).code != 0);
      REQUIRE(fs::exists(d / "out" / "checkpoint.prev.bin"));
      REQUIRE(fs::exists(d / "out" / "checkpoint.bin"));
      fs::remove(d / "out" / "checkpoint.bin");
      const std::string metrics = dprl::read_file(d / "out" / "metrics.csv");
      r = run_in(d, "resume out --quiet");
      CHECK(r.code == 2);
      CHECK(count(r.err, "\n") == 1);
      CHECK(r.err.find("cannot continue from checkpoint.prev.bin") != std::string::npos);
      CHECK(!fs::exists(d / "out" / "summary.json"));
      CHECK(dprl::read_file(d / "out" / "metrics.csv") == metrics);
    }
  }

  TEST_CASE("a primorl run killed after its model resumes without training a second model") {
    // checkpoints: once the model is trained and its ledger and training curve are on disk, then
    // after each policy epoch but the last (500 SAC updates each); killed after the first (the
    // policy stage not begun), after the second (mid policy stage), and at update 900 (between
    // checkpoints: the second epoch is redone), each resumed run ends with the uninterrupted bytes
    const std::string config =
        "seed: 1\nout: out\nenv: {id: pendulum}\n"
        "algo: {id: primorl, params: {data_runs: 2, data_steps_per_run: 2000, test_fraction: "
        "0.2, variant: tdp, q: 0.1, z: 0.8, clip_norm: 1.0, rounds: 20, model_eval_every: 5, "
        "penalty: mpd, sac_hidden: '16,16', steps_per_epoch: 500, rollout_freq: 250, "
        "rollout_batch: 100, horizon: 5, noise: seeded}}\n"
        "train: {steps: 1500, eval_episodes: 2, checkpoint_every: 100}\n";
    const auto ref = setup("primorl_ref", config);
    REQUIRE(run_in(ref, "run exp.yaml --quiet").code == 0);
    for (const std::string& kill :
         {std::string("DPRL_TEST_KILL_AFTER_CHECKPOINTS=1"),
          std::string("DPRL_TEST_KILL_AFTER_CHECKPOINTS=2"), std::string("DPRL_TEST_KILL_AT_STEP=900")}) {
      INFO(kill);
      const auto a = setup("primorl_a", config);
      CHECK(run_in(a, "run exp.yaml --quiet", env_prefix(kill)).code != 0);
      REQUIRE(fs::exists(a / "out" / "checkpoint.bin"));
      CHECK(fs::exists(a / "out" / "privacy_ledger.json"));  // charged and written before it
      const auto r = run_in(a, "resume out --quiet");
      INFO(r.err);
      REQUIRE(r.code == 0);
      check_same_run(ref / "out", a / "out");
    }
  }

  TEST_CASE("a killed expert-level pipeline continues its DP-SGD stage from its checkpoint") {
    // the paper 000 smoke pipeline with an evaluation every 20 iterations (57 in all): the stage
    // checkpoints at 20, 40 and 57, each before that block's evaluation; killed after the second,
    // its evaluation rows held (only the row at 20 is out), then run again: it continues at 40
    // and ends with the uninterrupted bytes (the population and the release are reused)
    const auto pop = scratch("pipeline_population");
    check_pipeline_resumes("run " + std::string(DPRL_SOURCE_DIR) +
                               "/configs/paper000/smoke.yaml --quiet --jobs 2 --out out --set "
                               "train.eval_every=20 --set population.out=" + pop.string(),
                           "pipeline",
                           {"metrics.csv", "summary.json", "privacy_ledger.json", "policy.bin",
                            "config.yaml"},
                           [](const fs::path& out) {
                             const std::string rows = dprl::read_file(out / "metrics.csv");
                             CHECK(rows.find("\n20,") != std::string::npos);
                             CHECK(rows.find("\n40,") == std::string::npos);
                           });
  }

  TEST_CASE("a killed non-private expert-level pipeline (no ledger) continues from its checkpoint") {
    // the paper's non-private baseline: no DP-SGD steps, so the stage has no ledger to save
    const auto pop = scratch("pipeline_np_population");
    std::string cfg = dprl::read_file(fs::path(DPRL_SOURCE_DIR) / "configs/paper000/smoke.yaml");
    const auto from = cfg.find("mode: selective"), to = cfg.find("learner:");
    REQUIRE(from < to);
    cfg.replace(from, to - from, "mode: non_private\n");
    const auto cfg_file = scratch("pipeline_np_config") / "np.yaml";
    dprl::write_file_atomic(cfg_file, cfg);
    check_pipeline_resumes("run " + cfg_file.string() +
                               " --quiet --jobs 2 --out out --set train.stable_steps=60 --set "
                               "train.eval_every=20 --set population.out=" + pop.string(),
                           "pipeline_np", {"metrics.csv", "summary.json", "policy.bin", "config.yaml"});
  }
}
