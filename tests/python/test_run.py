"""dprl.run / dprl.sweep: a run from Python writes the bytes the CLI writes for the same config and
seed (every file but timing.json, the wall-clock one), and returns summary.json as a dict.
"""
import json
import os
import shutil
import unittest

from common import SOURCE_DIR, cli, cli_error, scratch
import dprl

QUICKSTART = os.path.join(SOURCE_DIR, "configs", "quickstart.yaml")
SHORT = ["train.steps=30000", "train.eval_every=10000", "train.eval_episodes=20"]


def tree_bytes(root):
    """{relative path: bytes} of every file below root except timing.json (wall-clock figures) and
    dprl_index.bin (a data set's load cache, keyed by its HDF5 file's modification time)."""
    out = {}
    for folder, _, files in os.walk(root):
        for f in files:
            if f in ("timing.json", "dprl_index.bin"):
                continue
            p = os.path.join(folder, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


class Run(unittest.TestCase):
    def test_another_config_in_a_finished_run_needs_force(self):
        with scratch() as tmp:
            out = os.path.join(tmp, "run")
            dprl.run(QUICKSTART, seed=3, out=out, set=SHORT, quiet=True)
            with open(os.path.join(out, "summary.json"), "rb") as fh:
                before = fh.read()
            with self.assertRaises(dprl.ConfigError) as e:
                dprl.run(QUICKSTART, seed=4, out=out, set=SHORT, quiet=True)
            self.assertIn("another config", str(e.exception))
            with open(os.path.join(out, "summary.json"), "rb") as fh:
                self.assertEqual(fh.read(), before)
            summary = dprl.run(QUICKSTART, seed=4, out=out, set=SHORT, quiet=True, force=True)
            self.assertEqual(summary["seed"], 4)

    def test_a_pipeline_file_gives_the_cli_bytes(self):
        # a tiny expert-level pipeline (population, release, selective DP-SGD): well under a second
        pipeline = (
            "pipeline: expert_level\nname: t\nseed: 1\nout: o\npopulation:\n  name: p\n"
            "  seed: 1\n  out: pop\n  env: {id: cartpole}\n  runs_per_setting: 2\n"
            "  ppo: {algo: ppo_layers, params: {hidden_sizes: \"8\"}, train: {steps: 512, "
            "eval_every: 0, eval_episodes: 1}}\n  select: {rule: top_k, k: 2}\n"
            "  action_floor: 0.02\n  demos: {episodes: 2, max_steps: 50}\nmode: selective\n"
            "privacy: {epsilon: 10, delta: auto, noise: seeded}\nrelease: {trajectories: 2}\n"
            "selective: {p: 0.8, noise_multiplier: 2.0, accounting: sound}\n"
            "learner: {id: discrete_cql, params: {hidden_sizes: \"8\", batch_size: 1}}\n"
            "train: {stable_steps: 0, eval_every: 0, eval_episodes: 1, eval_max_steps: 50}\n")
        with scratch() as tmp:
            trees = []
            for who in ("cli", "python"):
                folder = os.path.join(tmp, who)
                os.makedirs(folder)
                with open(os.path.join(folder, "p.yaml"), "w") as fh:
                    fh.write(pipeline)
                if who == "cli":
                    cli("run", "p.yaml", "--quiet", "--jobs", 1, cwd=folder)
                else:
                    here = os.getcwd()
                    os.chdir(folder)
                    try:
                        summary = dprl.run("p.yaml", quiet=True, jobs=1)
                    finally:
                        os.chdir(here)
                    self.assertEqual(summary["algo"], "discrete_cql")
                    self.assertGreater(summary["privacy"]["epsilon"], 0)
                trees.append(tree_bytes(folder))
            self.assertIn(os.path.join("o", "summary.json"), trees[0])
            self.assertEqual(trees[1], trees[0])

    def test_same_bytes_as_the_cli(self):
        with scratch() as tmp:
            out = os.path.join(tmp, "run")
            sets = [a for s in SHORT for a in ("--set", s)]
            cli("run", QUICKSTART, "--seed", 3, "--out", out, "--quiet", *sets)
            want = tree_bytes(out)
            self.assertIn("metrics.csv", want)
            self.assertIn("policy.json", want)
            shutil.rmtree(out)
            summary = dprl.run(QUICKSTART, seed=3, out=out, set=SHORT, quiet=True)
            self.assertEqual(tree_bytes(out), want)
            with open(os.path.join(out, "summary.json")) as f:
                on_disk = json.load(f)
            self.assertEqual({k: v for k, v in summary.items() if k not in ("dir", "wall_time_s")},
                             on_disk)
            self.assertEqual(summary["dir"], out)
            self.assertEqual(summary["env_steps"], 30000)

            # the same experiment as a dict: the same resolved config and results
            shutil.rmtree(out)
            config = {"name": "quickstart", "seed": 1, "env": {"id": "taxi"},
                      "algo": {"id": "q_learning",
                               "params": {"learning_rate": 0.5, "gamma": 0.99,
                                          "epsilon_start": 1.0, "epsilon_end": 0.05,
                                          "exploration_fraction": 0.5}},
                      "train": {"steps": 30000, "eval_every": 10000, "eval_episodes": 20}}
            dprl.run(config, seed=3, out=out, quiet=True)
            self.assertEqual(tree_bytes(out), want)

    def test_check_and_errors(self):
        s = dprl.run(QUICKSTART, check=True)
        self.assertEqual((s["name"], s["algo"], s["env"]), ("quickstart", "q_learning", "taxi"))
        with self.assertRaises(dprl.ParamError) as e:
            dprl.run(QUICKSTART, set=["algo.params.gamma=3"], check=True)
        self.assertEqual(str(e.exception),
                         cli_error("run", QUICKSTART, "--set", "algo.params.gamma=3", "--check"))
        with self.assertRaises(ValueError) as e:
            dprl.run({"seed": 1, "env": {"id": "taxi"}, "algo": {"id": "q_learning",
                      "params": {"lerning_rate": 0.5}}}, check=True)
        self.assertIn("config['algo']['params']['lerning_rate']", str(e.exception))
        with self.assertRaises(ValueError):
            dprl.run(QUICKSTART, seed=-1)


class Sweep(unittest.TestCase):
    def test_same_bytes_as_the_cli(self):
        with scratch() as tmp:
            shutil.copy(QUICKSTART, os.path.join(tmp, "base.yaml"))
            sweep = os.path.join(tmp, "sweep.yaml")
            with open(sweep, "w") as f:
                f.write("base: base.yaml\nout: %s\nseeds: [1, 2]\n"
                        "set:\n  train.steps: 20000\n  train.eval_every: 0\n"
                        "  train.eval_episodes: 10\n"
                        "grid:\n  algo.params.learning_rate: [0.3, 0.6]\n"
                        % os.path.join(tmp, "out"))
            cli("sweep", sweep, "--quiet", "--jobs", 2)
            want = tree_bytes(os.path.join(tmp, "out"))
            shutil.rmtree(os.path.join(tmp, "out"))
            result = dprl.sweep(sweep, jobs=2, quiet=True)
            self.assertEqual(tree_bytes(os.path.join(tmp, "out")), want)
            self.assertEqual((result["ran"], result["skipped"], result["failed"]), (4, 0, 0))
            self.assertEqual(len(result["runs"]), 4)
            self.assertEqual(result["summary_md"].encode(), want["summary.md"])
            self.assertEqual(result["runs"][0]["summary"]["env_steps"], 20000)
            again = dprl.sweep(sweep, quiet=True)  # complete runs are skipped
            self.assertEqual((again["ran"], again["skipped"]), (0, 4))


if __name__ == "__main__":
    unittest.main()
