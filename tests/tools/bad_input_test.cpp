// The bad-input matrix: every command of the dprl executable fed malformed, adversarial and
// out-of-range input. Each case runs in its own scratch folder (its working directory) holding the
// case's input files and a complete run directory `existing/`, and asserts:
//   - the documented exit status (2 for bad input and usage errors);
//   - stderr is exactly one line, starting with "dprl: ", naming the culprit (file, key or flag);
//   - nothing on stdout, so no crash, sanitizer report or half a result;
//   - the folder's files are byte for byte what they were: no output file, no partial run
//     directory, `existing/` untouched.
// docs/robustness.md lists the categories and their counts.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/io.hpp"
#include "tests/tools/bad_input_matrix.hpp"
#include "tests/test_util.hpp"

namespace fs = std::filesystem;

namespace {

using namespace bad_input;

using test_util::kSrc;

// Real outputs of the executable that cases corrupt: a tabular policy.json (q/), a network
// checkpoint policy.bin (ppo/), a Minari dataset (ds/) and a privacy ledger (ac/). Made once per
// test process.
const fs::path& fixtures() {
  static const fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("dprl_bad_input_fx_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    const std::vector<std::string> make = {
        "run " + kSrc +
            "/configs/quickstart.yaml --set train.steps=2000 --set train.eval_episodes=2 "
            "--out q --quiet",
        "run " + kSrc +
            "/configs/ppo_cartpole.yaml --set train.steps=1024 --set train.eval_episodes=1 "
            "--out ppo --quiet",
        "collect --env cartpole --policy random --episodes 3 --out ds",
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
    return d;
  }();
  // removed when the test process ends
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup;
  return dir;
}

void run_matrix(const std::string& group, const std::vector<Case>& cases) {
  for (const auto& c : cases) check_case(group, c, fixtures(), "dprl_bad_input_");
}

// a small valid experiment; cases edit one thing
const std::string kGood =
    "name: t\nseed: 1\nenv:\n  id: taxi\nalgo:\n  id: q_learning\n  params:\n    gamma: 0.99\n"
    "train:\n  steps: 1000\n  eval_every: 0\n  eval_episodes: 2\n";

// a private actor-critic run (10 states x 2 actions) and its summary, for the audit cases
const std::string kAc =
    "name: ac\nseed: 1\nenv: {id: chain_mdp, params: {n: 10}}\nalgo:\n  id: actor_critic\n"
    "  params: {dp: actor, episodes: 2, noise: seeded}\ntrain: {steps: 100}\n";
const File kAcSummary{"d/summary.json", "{\"privacy\": {\"epsilon\": 5.0}}"};

Case yaml(std::string text, std::string needle) {
  return {"run c.yaml", {{"c.yaml", std::move(text)}}, std::move(needle)};
}

Case edit(const std::string& from, const std::string& to, std::string needle) {
  auto text = kGood;
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return yaml(text, std::move(needle));
}

std::string nested(int depth, const std::string& open, const std::string& close) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  s += "1";
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

std::string alias_bomb() {
  // nine levels of ten aliases each: 10^9 leaves if expanded
  std::string s = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    s += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) s += (k ? ", *a" : "*a") + std::to_string(i - 1);
    s += "]\n";
  }
  return s + kGood;
}

std::string block_nested(int depth) {
  std::string s = kGood + "extra:\n";
  for (int i = 0; i < depth; ++i) s += std::string(2 * (i + 1), ' ') + "k:\n";
  return s;
}

// a YAML list of n values (a grid axis)
std::string many(int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(i + 1);
  return s + "]";
}

}  // namespace

TEST_SUITE("e2e") {
  TEST_CASE("bad input: malformed and adversarial experiment YAML") {
    run_matrix(
        "yaml",
        {
            yaml("", "c.yaml"),
            yaml("# only a comment\n", "c.yaml"),
            yaml("hello\n", "c.yaml"),
            yaml("[1, 2, 3]\n", "c.yaml"),
            yaml("seed: 1\nenv: {id: taxi\n", "c.yaml:"),
            yaml("seed: 1\n\tenv: taxi\n", "c.yaml:"),
            yaml("seed: 1\n  env: taxi\n", "c.yaml:"),
            yaml(std::string("seed: 1\n\0\x01\x02garbage\n", 20), "c.yaml"),
            yaml("seed: \xff\xfe\xfd\n" + kGood.substr(8), "c.yaml"),
            yaml(kGood + "seed: 2\n", "seed"),
            yaml(kGood + "train:\n  steps: 5\n", "train"),
            yaml(kGood + "bogus: 1\n", "bogus"),
            edit("  id: taxi\n", "  id: taxi\n  colour: red\n", "colour"),
            edit("    gamma: 0.99\n", "    gamma: 0.99\n    lerning_rate: 1\n", "lerning_rate"),
            edit("  eval_episodes: 2\n", "  eval_episodes: 2\n  stepz: 3\n", "stepz"),
            edit("id: taxi", "id: nope", "nope"),
            edit("id: q_learning", "id: nope", "nope"),
            edit("id: taxi", "id: [taxi]", "env.id"),
            edit("id: q_learning", "id: {a: 1}", "algo.id"),
            edit("env:\n  id: taxi\n", "env: taxi\n", "env"),
            edit("env:\n  id: taxi\n", "", "env"),
            edit("algo:\n  id: q_learning\n  params:\n    gamma: 0.99\n", "", "algo"),
            edit("seed: 1", "seed: -1", "seed"),
            edit("seed: 1", "seed: abc", "seed"),
            edit("seed: 1", "seed: [1]", "seed"),
            edit("seed: 1", "seed: 1.5", "seed"),
            edit("seed: 1", "seed: 1e400", "seed"),
            edit("seed: 1", "seed: 99999999999999999999999999", "seed"),
            edit("seed: 1", "seed: " + std::string(5000, '9'), "seed"),
            edit("seed: 1", "seed: .nan", "seed"),
            edit("seed: 1", "seed: ~", "seed"),
            edit("steps: 1000", "steps: -5", "steps"),
            edit("steps: 1000", "steps: .nan", "steps"),
            edit("steps: 1000", "steps: .inf", "steps"),
            edit("steps: 1000", "steps: 1.5", "steps"),
            edit("steps: 1000", "steps: 1e30", "steps"),
            edit("steps: 1000", "steps: 0x", "steps"),
            edit("steps: 1000", "steps: {a: 1}", "steps"),
            edit("eval_every: 0", "eval_every: -1", "eval_every"),
            edit("eval_episodes: 2", "eval_episodes: 0", "eval_episodes"),
            edit("eval_episodes: 2", "eval_episodes: 100000000000000", "eval_episodes"),
            edit("gamma: 0.99", "gamma: .nan", "gamma"),
            edit("gamma: 0.99", "gamma: .inf", "gamma"),
            edit("gamma: 0.99", "gamma: -.inf", "gamma"),
            edit("gamma: 0.99", "gamma: 3", "gamma"),
            edit("gamma: 0.99", "gamma: fast", "gamma"),
            edit("gamma: 0.99", "gamma: [0.9]", "gamma"),
            edit("gamma: 0.99", "gamma: {a: 1}", "gamma"),
            edit("gamma: 0.99", "gamma: 1e400", "gamma"),
            edit("gamma: 0.99", "gamma: ''", "gamma"),
            edit("  params:\n    gamma: 0.99\n", "  params: [1, 2]\n", "params"),
            edit("  id: taxi\n", "  id: taxi\n  params: 7\n", "params"),
            edit("  id: taxi\n", "  id: taxi\n  params: {max_episode_steps: 0}\n",
                 "max_episode_steps"),
            edit("  id: taxi\n", "  id: taxi\n  params: {max_episode_steps: -3}\n",
                 "max_episode_steps"),
            edit("  id: taxi\n", "  id: taxi\n  params: {max_episode_steps: .nan}\n",
                 "max_episode_steps"),
            edit("  id: taxi\n", "  id: taxi\n  params: {max_episode_steps: 1e300}\n",
                 "max_episode_steps"),
            edit("  id: taxi\n", "  id: taxi\n  params: {wind: 1}\n", "wind"),
            edit("train:\n", "checkpoint: maybe\ntrain:\n", "checkpoint"),
            edit("  steps: 1000\n", "  steps: 1000\n  checkpoint: maybe\n", "checkpoint"),
            edit("name: t", "name: [t]", "name"),
            edit("name: t", "name: ''", "name"),
            edit("name: t", "name: " + std::string(5000, 'n'), "name"),
            yaml(alias_bomb(), "c.yaml"),
            yaml("seed: *nope\n" + kGood.substr(8), "c.yaml"),
            yaml("x: &x [*x]\n" + kGood, "c.yaml"),
            yaml("extra: " + nested(100000, "[", "]") + "\n" + kGood, "c.yaml"),
            yaml("extra: " + nested(100000, "{a: ", "}") + "\n" + kGood, "c.yaml"),
            yaml(block_nested(3000), "c.yaml"),
            yaml(kGood + "---\nseed: 2\n", "c.yaml"),
            yaml("<<: {seed: 1}\n" + kGood.substr(8), "<<"),
            yaml("seed: !!binary aGVsbG8=\n" + kGood.substr(8), "seed"),
            yaml("? [a, b]\n: 1\n" + kGood, "c.yaml"),
            {"run missing.yaml", {}, "missing.yaml"},
            {"run adir", {{"adir", "@dir"}}, "adir"},
            {"run /dev/null", {}, "/dev/null"},
            {"run {d}", {}, "dprl_bad_input_"},
        });
  }

  TEST_CASE("bad input: run flags and --set overrides") {
    const File c{"c.yaml", kGood};
    run_matrix("run flags",
               {
                   {"run c.yaml --set gamma", {c}, "--set gamma"},
                   {"run c.yaml --set =1", {c}, "--set =1"},
                   // a document that is not a map (libFuzzer, config target: it aborted)
                   {"run l.yaml --set env.id=cartpole", {{"l.yaml", "- a\n- b\n"}}, "--set"},
                   {"run c.yaml --set algo.params.nope=1", {c}, "nope"},
                   // the README's example, word for word (the place of the override included)
                   {"run c.yaml --set algo.params.gamma=3", {c},
                    "q_learning.gamma = 3: must be in [0, 1] (at --set algo.params.gamma=3)"},
                   {"run c.yaml --set algo.params.gamma=-1", {c}, "(at --set algo.params.gamma=-1)"},
                   {"run c.yaml --set algo.params.gamma=.nan", {c}, "gamma"},
                   {"run c.yaml --set 'algo.params.gamma=[1'", {c}, "--set"},
                   {"run c.yaml --set seed=abc", {c}, "seed"},
                   {"run c.yaml --set env.id=nope", {c}, "nope"},
                   {"run c.yaml --set algo.id=nope", {c}, "nope"},
                   {"run c.yaml --set a.b.c.d.e=1", {c}, "a.b.c.d.e"},
                   {"run c.yaml --set train.steps.x=1", {c}, "train.steps"},
                   {"run c.yaml --set ..=1", {c}, "--set ..=1"},
                   {"run c.yaml --set train.steps=-1", {c}, "steps"},
                   {"run c.yaml --set env.params.max_episode_steps=0", {c}, "max_episode_steps"},
                   {"run c.yaml --seed -1", {c}, "--seed"},
                   {"run c.yaml --seed abc", {c}, "--seed"},
                   {"run c.yaml --seed 1e99", {c}, "--seed"},
                   {"run c.yaml --seed 99999999999999999999999", {c}, "--seed"},
                   {"run", {}, "config"},
                   {"run c.yaml --bogus", {c}, "--bogus"},
                   {"run c.yaml extra.yaml", {c}, "extra.yaml"},
                   {"run c.yaml --out", {c}, "--out"},
                   {"bogus-command", {}, "bogus-command"},
                   {"", {}, "subcommand"},
               });
  }

  TEST_CASE("bad input: output folders that cannot be written") {
    const File c{"c.yaml", kGood};
    run_matrix(
        "output",
        {
            {"run c.yaml --out afile", {c, {"afile", "x"}}, "afile"},
            {"run c.yaml --out afile/sub", {c, {"afile", "x"}}, "afile"},
            {"run c.yaml --out /proc/dprl_nope", {c}, "/proc/dprl_nope"},
            {"run c.yaml --out /proc/version/x", {c}, "/proc/version"},
            {"run c.yaml --out ''", {c}, "out"},
            {"collect --env cartpole --policy random --out existing", {}, "existing"},
            {"collect --env cartpole --policy random --out afile", {{"afile", "x"}}, "afile"},
            {"collect --env cartpole --policy random --out /proc/dprl_nope", {}, "/proc/dprl_nope"},
            {"plot existing --y return_mean -o /proc/dprl_nope.svg", {}, "/proc/dprl_nope.svg"},
            {"plot existing --y return_mean -o nodir/x.svg", {}, "nodir"},
            {"plot existing --y return_mean -o adir", {{"adir", "@dir"}}, "adir"},
            {"bench dataset --transitions 100 --dir afile", {{"afile", "x"}}, "afile"},
        });
  }

  TEST_CASE("bad input: sweep files") {
    const File base{"base.yaml", kGood};
    auto sweep = [&](const std::string& text, const std::string& needle) {
      return Case{"sweep s.yaml", {base, {"s.yaml", text}}, needle};
    };
    run_matrix(
        "sweep",
        {
            sweep("", "s.yaml"),
            sweep("out: o\nseeds: [1]\n", "base"),
            sweep("base: nope.yaml\nout: o\nseeds: [1]\n", "nope.yaml"),
            sweep("base: s.yaml\nout: o\nseeds: [1]\n", "s.yaml"),
            sweep("base: base.yaml\nout: o\nseeds: 1\n", "seeds"),
            sweep("base: base.yaml\nout: o\nseeds: [-1]\n", "seeds"),
            sweep("base: base.yaml\nout: o\nseeds: [a]\n", "seeds"),
            sweep("base: base.yaml\nout: o\nseeds: []\n", "seeds"),
            sweep("base: base.yaml\nout: o\nseeds: [1]\ngrid: 3\n", "grid"),
            sweep("base: base.yaml\nout: o\nseeds: [1]\ngrid: {algo.params.gamma: 0.5}\n", "gamma"),
            sweep("base: base.yaml\nout: o\nseeds: [1]\ngrid: {algo.params.gamma: []}\n", "gamma"),
            sweep("base: base.yaml\nout: o\nseeds: [1]\ngrid: {algo.params.gamma: [0.5, 3]}\n",
                  "gamma"),
            sweep("base: base.yaml\nout: o\nseeds: [1]\ngrid: {algo.params.nope: [1]}\n", "nope"),
            sweep("base: base.yaml\nout: o\nseeds: [1]\nset: {train.steps: -1}\n", "steps"),
            sweep("base: base.yaml\nout: o\nseeds: [1]\nset: [1]\n", "set"),
            sweep("base: base.yaml\nout: o\nseeds: [1]\nbogus: 1\n", "bogus"),
            sweep("base: base.yaml\nout: o\nseeds: [1, 1]\n", "seeds"),
            Case{"sweep s.yaml",
                 {base, {"afile", "x"}, {"s.yaml", "base: base.yaml\nout: afile\nseeds: [1]\n"}},
                 "afile"},
            {"sweep s.yaml --jobs 0",
             {base, {"s.yaml", "base: base.yaml\nout: o\nseeds: [1]\n"}},
             "--jobs"},
            {"sweep s.yaml --jobs 100000",
             {base, {"s.yaml", "base: base.yaml\nout: o\nseeds: [1]\n"}},
             "--jobs"},
            sweep("base: base.yaml\nout: o\nseeds: [1, 2]\ngrid:\n  algo.params.gamma: " +
                      many(200) + "\n  algo.params.learning_rate: " + many(200) +
                      "\n  train.eval_episodes: " + many(200) + "\n",
                  "runs"),
            {"sweep missing.yaml", {}, "missing.yaml"},
            {"sweep adir", {{"adir", "@dir"}}, "adir"},
        });
  }

  TEST_CASE("bad input: eval flags, policies and network checkpoints") {
    const std::string ev = "eval --env taxi --episodes 2 --policy ";
    const std::string evc = "eval --env cartpole --episodes 2 --policy ";
    run_matrix(
        "eval",
        {
            {"eval --env nope --policy random", {}, "nope"},
            {"eval --env taxi --param max_episode_steps=0 --policy random",
             {},
             "max_episode_steps"},
            {"eval --env taxi --param max_episode_steps --policy random", {}, "max_episode_steps"},
            {"eval --env taxi --param nope=1 --policy random", {}, "nope"},
            {"eval --env taxi --param max_episode_steps=abc --policy random",
             {},
             "max_episode_steps"},
            {"eval --env taxi --policy random --episodes 0", {}, "--episodes"},
            {"eval --env taxi --policy random --episodes -3", {}, "--episodes"},
            {"eval --env taxi --policy random --seed -1", {}, "--seed"},
            {"eval --env taxi", {}, "--policy"},
            {ev + "nope", {}, "nope"},
            {ev + "p.json", {{"p.json", ""}}, "p.json"},
            {ev + "p.json", {{"p.json", "{"}}, "p.json"},
            {ev + "p.json", {{"p.json", "[1, 2]"}}, "p.json"},
            {ev + "p.json", {{"p.json", "{\"format\": \"dprl-policy\"}"}}, "p.json"},
            {ev + "p.json", {{"p.json", "@trunc:q/policy.json:300"}}, "p.json"},
            {ev + "p.json",
             {{"p.json", "@sub:q/policy.json|\"num_states\":500|\"num_states\":5"}},
             "p.json"},
            {ev + "p.json",
             {{"p.json", "@sub:q/policy.json|\"num_actions\":6|\"num_actions\":-6"}},
             "p.json"},
            {ev + "p.json",
             {{"p.json", "@sub:q/policy.json|\"version\":1|\"version\":99"}},
             "p.json"},
            {ev + "p.json", {{"p.json", "@sub:q/policy.json|-0.9975|-0.9976"}}, "p.json"},
            {ev + "p.json",
             {{"p.json", "@sub:q/policy.json|\"type\":\"tabular_greedy\"|\"type\":1"}},
             "p.json"},
            {ev + "p.json",
             {{"p.json", "@sub:q/policy.json|\"type\":\"tabular_greedy\"|\"type\":\"x\""}},
             "p.json"},
            {ev + "adir", {{"adir", "@dir"}}, "adir"},
            {evc + "p.json", {{"p.json", "@copy:q/policy.json"}}, "p.json"},
            {ev + "p.bin", {{"p.bin", "@copy:ppo/policy.bin"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", ""}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "DPRLNN"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@trunc:ppo/policy.bin:40"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@trunc:ppo/policy.bin:200"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@trunc:ppo/policy.bin:18000"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@flip:ppo/policy.bin:0"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@flip:ppo/policy.bin:8"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@flip:ppo/policy.bin:12"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@flip:ppo/policy.bin:16"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@flip:ppo/policy.bin:20"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@flip:ppo/policy.bin:1000"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@flip:ppo/policy.bin:18633"}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@sub:ppo/policy.bin|env=cartpole|env=acrobot "}}, "p.bin"},
            {evc + "p.bin", {{"p.bin", "@sub:ppo/policy.bin|action_dim=2|action_dim=9"}}, "p.bin"},
        });
  }

  TEST_CASE("bad input: env replay cases") {
    auto replay = [](const std::string& text, const std::string& needle) {
      return Case{"env replay r.json", {{"r.json", text}}, needle};
    };
    run_matrix(
        "replay",
        {
            replay("", "r.json"),
            replay("{", "r.json"),
            replay("[1, 2]", "r.json"),
            replay("null", "r.json"),
            replay(R"({"state": [0, 0, 0, 0], "actions": [1]})", "env"),
            replay(R"({"env": "nope", "state": [0], "actions": [1]})", "nope"),
            replay(R"({"env": 7, "state": [0], "actions": [1]})", "env"),
            replay(R"({"env": "CartPole-v1", "actions": [1]})", "state"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0], "actions": [1]})", "state"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0, "x"], "actions": [1]})", "state"),
            replay(R"({"env": "CartPole-v1", "state": 5, "actions": [1]})", "state"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0, 1e400], "actions": [1]})",
                   "r.json"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0, 0]})", "actions"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0, 0], "actions": 1})", "actions"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0, 0], "actions": [1, 2]})",
                   "actions[1]"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0, 0], "actions": [-1]})",
                   "actions[0]"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0, 0], "actions": [0.5]})",
                   "actions[0]"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0, 0], "actions": ["nan"]})",
                   "actions[0]"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0, 0], "actions": [[1]]})",
                   "actions[0]"),
            replay(R"({"env": "CartPole-v1", "state": [0, 0, 0, 0], "actions": [1e300]})",
                   "actions[0]"),
            replay(R"({"env": "Pendulum-v1", "state": [0, 0], "actions": ["nan"]})", "actions[0]"),
            replay(R"({"env": "Pendulum-v1", "state": [0, 0], "actions": ["inf"]})", "actions[0]"),
            replay(R"({"env": "Pendulum-v1", "state": [0, 0], "actions": [[0.1, 0.2]]})",
                   "actions[0]"),
            replay(R"({"env": "Pendulum-v1", "state": [0, 0], "actions": [true]})", "actions[0]"),
            replay(R"({"env": "Pendulum-v1", "state": [0, 0], "actions": [{"a": 1}]})",
                   "actions[0]"),
            replay(R"({"env": "Pendulum-v1", "state": ["nan", 0], "actions": [0.1]})", "state"),
            replay(R"({"env": "Taxi-v3", "state": [500], "actions": [0]})", "state"),
            replay(R"({"env": "Taxi-v3", "state": [-1], "actions": [0]})", "state"),
            replay(R"({"env": "Taxi-v3", "state": [1.5], "actions": [0]})", "state"),
            replay(R"({"env": "Taxi-v3", "state": [0], "actions": [6]})", "actions[0]"),
            replay(R"({"env": "chain_mdp", "state": [-1], "actions": [0]})", "state"),
            replay(R"({"env": "chain_mdp", "state": [1e18], "actions": [0]})", "state"),
            replay(
                R"({"env": "CartPole-v1", "params": {"nope": 1}, "state": [0,0,0,0], "actions": [1]})",
                "nope"),
            replay(R"({"env": "CartPole-v1", "params": {"max_episode_steps": 0}, "state": [0,0,0,0],
                 "actions": [1]})",
                   "max_episode_steps"),
            replay(R"({"env": "CartPole-v1", "params": [1], "state": [0,0,0,0], "actions": [1]})",
                   "params"),
            replay(R"({"env": "CartPole-v1", "state": [0,0,0,0], "actions": [1], "bogus": 1})",
                   "bogus"),
            replay(nested(100000, "[", "]"), "r.json"),
            replay(nested(100000, "{\"a\": ", "}"), "r.json"),
            replay("\xff\xfe{}", "r.json"),
            {"env replay missing.json", {}, "missing.json"},
            {"env replay adir", {{"adir", "@dir"}}, "adir"},
        });
  }

  TEST_CASE("bad input: bench flags and resource limits") {
    const File ppo{"c.yaml",
                   "name: t\nseed: 1\nenv: {id: cartpole}\nalgo:\n  id: ppo\n  params:\n"
                   "    hidden_size: 1000000000\ntrain: {steps: 1000}\n"};
    run_matrix(
        "bench and limits",
        {
            {"bench env nope", {}, "nope"},
            {"bench env cartpole --steps 0", {}, "--steps"},
            {"bench env cartpole --param max_episode_steps=0", {}, "max_episode_steps"},
            {"bench nn --layers 0", {}, "--layers"},
            {"bench nn --layers 4,-5,2", {}, "--layers"},
            {"bench nn --layers 4", {}, "--layers"},
            {"bench nn --layers 4,1000000000,2", {}, "--layers"},
            {"bench nn --layers 4,100000,100000,2", {}, "--layers"},
            {"bench nn --batch 0", {}, "--batch"},
            {"bench dataset --transitions 0", {}, "--transitions"},
            {"bench offline --hidden abc", {}, "hidden_sizes"},
            {"bench offline --hidden 1000000000", {}, "hidden_sizes"},
            {"bench offline --obs 0", {}, "--obs"},
            {"bench offline --algo nope", {}, "nope"},
            // 10^9 hidden units, 10^12 replay entries, 4096 x 10^6 rollout steps: refused up front
            {"run c.yaml", {ppo}, "hidden_size"},
            {"run c.yaml --set algo.params.hidden_size=100000 --set algo.params.hidden_layers=50",
             {ppo},
             "hidden"},
            {"run c.yaml --set algo.params.hidden_size=64 --set algo.params.num_envs=4096 --set "
             "algo.params.num_steps=1000000",
             {ppo},
             "num_steps"},
            {"run c.yaml --set algo.id=dqn --set 'algo.params={buffer_size: 1000000000000}'",
             {ppo},
             "buffer_size"},
            {"run c.yaml --set algo.id=dqn --set 'algo.params={hidden_sizes: \"1000000000\"}'",
             {ppo},
             "hidden_sizes"},
            {"run c.yaml --set algo.id=dqn --set 'algo.params={hidden_sizes: \"100000,100000\"}'",
             {ppo},
             "hidden_sizes"},
            {"run c.yaml --set env.id=pendulum --set algo.id=sac --set "
             "'algo.params={buffer_size: 100000000, hidden_sizes: \"40000,40000\"}'",
             {ppo},
             "hidden_sizes"},
        });
  }

  TEST_CASE("bad input: collect and datasets") {
    const std::string col = "collect --env cartpole --policy random --out o ";
    run_matrix(
        "datasets",
        {
            {col + "--episodes 0", {}, "--episodes"},
            {col + "--action-floor 2", {}, "action_floor"},
            {col + "--action-floor -0.1", {}, "action_floor"},
            {col + "--action-floor nan", {}, "action_floor"},
            {col + "--action-noise 0.1", {}, "action_noise"},
            {"collect --env pendulum --policy random --out o --action-noise -1",
             {},
             "action_noise"},
            {"collect --env pendulum --policy random --out o --action-noise nan",
             {},
             "action_noise"},
            {"collect --env pendulum --policy random --out o --action-floor 0.1",
             {},
             "action_floor"},
            {col + "--user-id -1", {}, "--user-id"},
            {"collect --env nope --policy random --out o", {}, "nope"},
            {"collect --env cartpole --policy nope.json --out o", {}, "nope.json"},
            {"collect --env cartpole --policy p.bin --out o",
             {{"p.bin", "@trunc:ppo/policy.bin:100"}},
             "p.bin"},
            {"collect --env taxi --policy p.bin --out o",
             {{"p.bin", "@copy:ppo/policy.bin"}},
             "p.bin"},
            {"dataset info missing", {}, "missing"},
            {"dataset info empty.hdf5", {{"empty.hdf5", ""}}, "empty.hdf5"},
            {"dataset info junk.hdf5", {{"junk.hdf5", "junk"}}, "junk.hdf5"},
            {"dataset info adir", {{"adir", "@dir"}}, "adir"},
            {"dataset info ds --format parquet", {{"ds", "@copy:ds"}}, "parquet"},
            {"dataset info ds --format d4rl", {{"ds", "@copy:ds"}}, "ds"},
            {"dataset info t.hdf5", {{"t.hdf5", "@trunc:ds/data/main_data.hdf5:3000"}}, "t.hdf5"},
            {"dataset info t.hdf5", {{"t.hdf5", "@trunc:ds/data/main_data.hdf5:600"}}, "t.hdf5"},
            {"dataset info " + kSrc + "/tests/engine/fixtures/d4rl_absurd.hdf5",
             {},
             "observations"},
            {"dataset info " + kSrc + "/tests/engine/fixtures/d4rl_gzip.hdf5 --user-key nope",
             {},
             "nope"},
            {"dataset info ds",
             {{"ds", "@copy:ds"}, {"ds/data/main_data.hdf5", "@trunc:ds/data/main_data.hdf5:3000"}},
             "main_data.hdf5"},
            {"dataset info ds",
             {{"ds", "@copy:ds"}, {"ds/data/main_data.hdf5", "junk"}},
             "main_data.hdf5"},
            {"dataset info ds",
             {{"ds", "@copy:ds"}, {"ds/data/metadata.json", "{"}},
             "metadata.json"},
            {"dataset info ds",
             {{"ds", "@copy:ds"}, {"ds/data/metadata.json", "[]"}},
             "metadata.json"},
            {"dataset info ds",
             {{"ds", "@copy:ds"},
              {"ds/data/metadata.json",
               "@sub:ds/data/metadata.json|\"total_steps\": 65|"
               "\"total_steps\": 1000000000000000"}},
             "total_steps"},
            {"dataset validate ds",
             {{"ds", "@copy:ds"},
              {"ds/data/metadata.json", "@sub:ds/data/metadata.json|\\\"n\\\": 2|\\\"n\\\": 1"}},
             "actions"},
            {"dataset validate ds",
             {{"ds", "@copy:ds"},
              {"ds/data/metadata.json", "@sub:ds/data/metadata.json|\\\"n\\\": 2|\\\"n\\\": -2"}},
             "action_space"},
            {"dataset validate ds",
             {{"ds", "@copy:ds"},
              {"ds/data/metadata.json",
               "@sub:ds/data/metadata.json|\\\"shape\\\": [4]|"
               "\\\"shape\\\": [5]"}},
             "observation_space"},
            {"dataset validate ds",
             {{"ds", "@copy:ds"},
              {"ds/data/metadata.json",
               "@sub:ds/data/metadata.json|\\\"shape\\\": [4]|"
               "\\\"shape\\\": [1000000000000000]"}},
             "observation_space"},
            {"dataset validate ds --env taxi", {{"ds", "@copy:ds"}}, "taxi"},
            {"dataset validate ds --env nope", {{"ds", "@copy:ds"}}, "nope"},
        });
  }

  TEST_CASE("bad input: offline experiments, teachers and the privacy ledger") {
    const std::string off =
        "name: t\nseed: 1\nenv: {id: cartpole}\nalgo: {id: discrete_cql, params: {}}\n"
        "train: {steps: 10, eval_every: 0, eval_episodes: 1}\n";
    const std::string ac = kSrc +
                           "/configs/paper001/taxi.yaml --set algo.params.dp=both --set "
                           "algo.params.budget_epsilon=100 --set algo.params.episodes=2 --set "
                           "train.eval_episodes=1 --set algo.params.ledger=l.json --out o --quiet";
    const std::string ks = kSrc +
                           "/configs/paper003/smoke.yaml --set algo.params.teacher=t.bin --set "
                           "train.steps=100 --out o --quiet";
    run_matrix(
        "offline and ledger",
        {
            {"run c.yaml", {{"c.yaml", off}}, "data"},
            {"run c.yaml", {{"c.yaml", off + "data: {path: nope}\n"}}, "nope"},
            {"run c.yaml",
             {{"c.yaml", off + "data: {path: j.hdf5}\n"}, {"j.hdf5", "junk"}},
             "j.hdf5"},
            {"run c.yaml",
             {{"c.yaml", off + "data: {path: ds, format: csv}\n"}, {"ds", "@copy:ds"}},
             "csv"},
            {"run c.yaml",
             {{"c.yaml", off + "data: {path: ds, colour: 1}\n"}, {"ds", "@copy:ds"}},
             "colour"},
            {"run c.yaml", {{"c.yaml", off + "data: [ds]\n"}, {"ds", "@copy:ds"}}, "data"},
            {"run c.yaml --set env.id=acrobot",
             {{"c.yaml", off + "data: {path: ds}\n"}, {"ds", "@copy:ds"}},
             "ds"},
            {"run c.yaml --set env.id=taxi",
             {{"c.yaml", off + "data: {path: ds}\n"}, {"ds", "@copy:ds"}},
             "ds"},
            {"run " + ac, {{"l.json", ""}}, "l.json"},
            {"run " + ac, {{"l.json", "{"}}, "l.json"},
            {"run " + ac, {{"l.json", "[]"}}, "l.json"},
            {"run " + ac, {{"l.json", "@trunc:ac/privacy_ledger.json:200"}}, "l.json"},
            {"run " + ac,
             {{"l.json", "@sub:ac/privacy_ledger.json|\"count\": 3|\"count\": 2"}},
             "l.json"},
            {"run " + ac,
             {{"l.json", "@sub:ac/privacy_ledger.json|\"epsilon\": 100.0|\"epsilon\": 50.0"}},
             "l.json"},
            {"run " + ac,
             {{"l.json", "@sub:ac/privacy_ledger.json|\"kind\": \"gaussian\"|\"kind\": 1"}},
             "l.json"},
            {"run " + ac, {{"l.json", "@dir"}}, "l.json"},
            {"run " + ac + " --set algo.params.budget_epsilon=-1", {}, "budget_epsilon"},
            {"run " + ac + " --set algo.params.budget_epsilon=.nan", {}, "budget_epsilon"},
            {"run " + ac + " --set algo.params.budget_epsilon=0.001", {}, "budget"},
            {"run " + ks, {{"t.bin", ""}}, "t.bin"},
            {"run " + ks, {{"t.bin", "@trunc:ppo/policy.bin:500"}}, "t.bin"},
            {"run " + ks, {{"t.bin", "@flip:ppo/policy.bin:3000"}}, "t.bin"},
            {"run " + ks, {{"t.bin", "@copy:q/policy.json"}}, "t.bin"},
            {"run " + ks, {{"t.bin", "@dir"}}, "t.bin"},
        });
  }

  TEST_CASE("bad input: render flags, envs without pictures and outputs") {
    const std::string rc = "render --env cartpole --policy random --out ";
    run_matrix(
        "render",
        {
            {"render --env nope --policy random --out x.svg", {}, "nope"},
            {"render --env cartpole --param length=0 --policy random --out x.svg", {}, "length"},
            {"render --env cartpole --out x.svg", {}, "--policy"},
            {"render --env cartpole --policy random", {}, "--out"},
            {rc + "x.svg --episodes 0", {}, "--episodes"},
            {rc + "x.svg --episodes -2", {}, "--episodes"},
            {rc + "x.svg --max-steps 0", {}, "--max-steps"},
            {rc + "x.svg --max-steps 1000000", {}, "--max-steps"},
            {rc + "x.svg --episodes 1000", {}, "--episodes"},
            {rc + "x.svg --episodes 100000 --max-steps 1000000000", {}, "--episodes"},
            {rc + "x.svg --fps 0", {}, "--fps"},
            {rc + "x.svg --fps nan", {}, "--fps"},
            {rc + "x.svg --seed -1", {}, "--seed"},
            {rc + "missing/x.svg", {}, "--out"},
            {rc + "existing", {}, "--out"},
            {rc + "f/x.svg", {{"f", "a file"}}, "--out"},
            {rc + "''", {}, "--out"},
            {"render --env cartpole --policy p.json --out x.svg", {{"p.json", "{"}}, "p.json"},
            {"render --env cartpole --policy p.json --out x.svg",
             {{"p.json", "@copy:q/policy.json"}},
             "p.json"},
        });
  }

  TEST_CASE("bad input: plot, privacy and audit flags") {
    const File broken{"r/metrics.csv", "step,return_mean\n1,2\n3\n"};
    run_matrix(
        "plot privacy audit",
        {
            {"plot missing --y return_mean -o f.svg", {}, "missing"},
            {"plot adir --y return_mean -o f.svg", {{"adir", "@dir"}}, "adir"},
            {"plot r --y return_mean -o f.svg", {broken}, "metrics.csv"},
            {"plot r --y return_mean -o f.svg", {{"r/metrics.csv", ""}}, "metrics.csv"},
            {"plot r --y return_mean -o f.svg",
             {{"r/metrics.csv", "\xff\xfe\x00\x01"}},
             "metrics.csv"},
            {"plot existing --y nope -o f.svg", {}, "nope"},
            {"plot existing --y return_mean --x nope -o f.svg", {}, "nope"},
            {"plot existing --y return_mean -o f.svg --width 0", {}, "--width"},
            {"plot existing --y return_mean -o f.svg --height -5", {}, "--height"},
            {"plot existing --y return_mean -o f.svg --width 100000000", {}, "--width"},
            {"plot existing --y return_mean -o f.svg --stat mode", {}, "--stat"},
            {"plot existing --y return_mean -o f.svg --stat median --percentiles 90,10",
             {},
             "--percentiles"},
            {"plot existing --y return_mean -o f.svg --stat median --percentiles 10,nan",
             {},
             "--percentiles"},
            {"plot existing --y return_mean -o f.svg --label a --label b", {}, "--label"},
            {"privacy epsilon -z -1 -q 0.01 -T 100 --delta 1e-5", {}, "noise"},
            {"privacy epsilon -z 1 -q 1.5 -T 100 --delta 1e-5", {}, "sampling"},
            {"privacy epsilon -z 1 -q 0.01 -T 0 --delta 1e-5", {}, "steps"},
            {"privacy epsilon -z 1 -q 0.01 -T 100 --delta 0", {}, "delta"},
            {"privacy epsilon -z nan -q 0.01 -T 100 --delta 1e-5", {}, "noise"},
            {"privacy epsilon -z 1 -q 0.01 -T 100 --delta 1e-5 --accountant nope", {}, "nope"},
            {"privacy noise --epsilon 0 -q 0.01 -T 100 --delta 1e-5", {}, "epsilon"},
            {"privacy noise --epsilon inf -q 0.01 -T 100 --delta 1e-5", {}, "epsilon"},
            {"privacy gaussian --epsilon 1 --delta 2", {}, "delta"},
            {"privacy gaussian --epsilon -1 --delta 1e-5", {}, "epsilon"},
            {"privacy gaussian --epsilon 1 --delta 1e-5 --sensitivity -1", {}, "sensitivity"},
            {"privacy compose --epsilon 1 --delta 1e-5 --count 0 --delta-slack 1e-5", {}, "count"},
            {"privacy compose --epsilon 1 --delta 1e-5 --count 10 --delta-slack -1", {}, "slack"},
            {"privacy dirichlet --k 0 --eta 0.1 --tau 0.01 --actions 2 --lipschitz 1 --adjacency "
             "0.1",
             {},
             "k"},
            {"privacy dirichlet --k 5 --eta 0.1 --tau 0.01 --actions 1 --lipschitz 1 --adjacency "
             "0.1",
             {},
             "actions"},
            {"privacy dirichlet --k 5 --eta 0.1 --tau 0.01 --actions 2 --lipschitz 1 --adjacency "
             "0.1 "
             "--samples 0",
             {},
             "samples"},
            {"privacy svt-params --epsilon 1 --delta 1e-5 --queries 0 --max-length 10 --pmin 0.1",
             {},
             "queries"},
            {"privacy svt-params --epsilon 1 --delta 1e-5 --queries 10 --max-length 10 --pmin 2",
             {},
             "pmin"},
            {"audit mechanism --mechanism nope -z 1", {}, "nope"},
            {"audit mechanism -z 1 --samples 0", {}, "samples"},
            {"audit mechanism -z 1 --confidence 1.5", {}, "confidence"},
            {"audit mechanism -z 1 --dim 0", {}, "dim"},
            {"audit mechanism -z 1 --pair abc", {}, "pair"},
            {"audit mechanism -z 1 --mis-specify nope", {}, "nope"},
            {"audit mechanism -z 1 --attack svm", {}, "--attack"},
            {"audit mechanism -z 1 --attack classifier", {}, "--attack"},
            {"audit mechanism -z 1 --dim 65 --attack both", {}, "--attack"},
            {"audit mechanism -z 1 --mis-specify unnoised-coordinate", {}, "unnoised-coordinate"},
            {"audit mechanism -z -1", {}, "noise"},
            {"audit mechanism -z 1 --samples 1000000000000", {}, "samples"},
            {"audit dpsgd --canaries 0", {}, "canaries"},
            {"audit dpsgd --steps 0", {}, "steps"},
            {"audit dpsgd -z nan", {}, "noise"},
            {"audit dpsgd --confidence 0", {}, "confidence"},
            // training audits of the other learners
            {"audit dpsgd ac.yaml", {{"ac.yaml", kAc}}, "actor_critic"},
            {"audit run d --set audit.samples=5", {{"d/config.yaml", kAc}, kAcSummary}, "samples"},
            {"audit run d --set audit.mis_specify=nope",
             {{"d/config.yaml", kAc}, kAcSummary},
             "nope"},
            {"audit run d", {{"d/config.yaml", kAc}, kAcSummary}, "white-box"},
            {"audit run d --white-box --canaries 21", {{"d/config.yaml", kAc}, kAcSummary}, "20"},
            {"run c.yaml --set audit.canaries=10", {{"c.yaml", kGood}}, "no private release"},
        });
  }
}
