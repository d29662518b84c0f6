"""dprl.data: Minari folders and D4RL files as numpy arrays, and Minari folders written from them.

Round trips: a data set built in Python from dprl.make rollouts is saved, validated and described
by the CLI, and loaded back with the same arrays; a folder written by `dprl collect` and the
engine's fixture files load with the counts, users and returns `dprl dataset info` reports.
"""
import os
import unittest

import numpy as np

from common import SOURCE_DIR, cli, cli_error, cli_json, scratch
import dprl
from dprl import data

FIXTURES = os.path.join(SOURCE_DIR, "tests", "engine", "fixtures")


def rollouts(episodes, seed, user_of=lambda e: e):
    env = dprl.make("CartPole-v1")
    rng = np.random.default_rng(seed)
    obs, act, rew, term, trunc, starts, users = [], [], [], [], [], [0], []
    for e in range(episodes):
        o, _ = env.reset(seed=seed) if e == 0 else env.reset()
        obs.append(o)
        while True:
            a = int(rng.integers(2))
            o, r, te, tr, _ = env.step(a)
            obs.append(o)
            act.append([a])
            rew.append(r)
            term.append(te)
            trunc.append(tr)
            if te or tr:
                break
        starts.append(len(rew))
        users.append(user_of(e))
    return dict(observations=np.array(obs), actions=np.array(act, dtype=np.float32),
                rewards=np.array(rew, dtype=np.float32), terminations=np.array(term),
                truncations=np.array(trunc), episode_starts=np.array(starts),
                user_ids=np.array(users))


def info_matches(test, ds, info):
    test.assertEqual(ds.num_episodes, info["episodes"])
    test.assertEqual(ds.num_transitions, info["transitions"])
    test.assertEqual(len(ds.users()), info["users"])
    returns = [float(np.sum(ds.episode(e)["rewards"], dtype=np.float64))
               for e in range(ds.num_episodes)]
    test.assertAlmostEqual(float(np.mean(returns)), info["return_mean"], places=9)
    test.assertEqual(min(returns), info["return_min"])
    test.assertEqual(max(returns), info["return_max"])


class RoundTrip(unittest.TestCase):
    def test_python_written_folder(self):
        arrays = rollouts(6, seed=4, user_of=lambda e: 100 + e // 2)
        ds = data.Dataset(env_id="CartPole-v1", dataset_id="test/cartpole/python-v0",
                          metadata={"made_by": "test_data"}, **arrays)
        self.assertEqual(ds.num_episodes, 6)
        with scratch() as tmp:
            out = os.path.join(tmp, "ds")
            ds.save(out)
            cli("dataset", "validate", out)
            info_matches(self, ds, cli_json("dataset", "info", out, "--json"))
            back = data.load(out)
            for key in ("observations", "actions", "rewards", "terminations", "truncations",
                        "episode_starts", "user_ids"):
                mine, theirs = np.asarray(arrays[key]), getattr(back, key)
                self.assertTrue(np.array_equal(mine.reshape(theirs.shape).astype(theirs.dtype),
                                               theirs), key)
            self.assertEqual(back.users(), [100, 101, 102])
            self.assertEqual(back.dataset_id, "test/cartpole/python-v0")
            self.assertEqual(back.env_id, "cartpole")
            self.assertEqual(back.metadata, {"made_by": "test_data"})
            self.assertEqual(back.observation_space, dprl.make("CartPole-v1").observation_space)
            # the arrays are read-only views that outlive the Dataset object
            obs = back.observations
            del back
            self.assertFalse(obs.flags.writeable)
            self.assertEqual(obs.shape, (arrays["observations"].shape[0], 4))
            # no silent replacement
            with self.assertRaises(dprl.DataError):
                ds.save(out)
            ds.save(out, overwrite=True)

    def test_cli_collected_folder(self):
        with scratch() as tmp:
            out = os.path.join(tmp, "c")
            cli("collect", "--env", "CartPole-v1", "--policy", "random", "--episodes", 7,
                "--seed", 3, "--user-id", 9, "--out", out)
            ds = data.load(out)
            info_matches(self, ds, cli_json("dataset", "info", out, "--json"))
            self.assertEqual(ds.users(), [9])
            self.assertTrue(np.all(ds.user_ids == 9))
            self.assertEqual(ds.metadata["collect"]["seed"], 3)
            ep = ds.episode(0)
            self.assertEqual(ep["observations"].shape[0], ep["rewards"].shape[0] + 1)
            self.assertTrue(ep["terminations"][-1] or ep["truncations"][-1])
            # write it again from Python: the CLI reads the same data
            again = os.path.join(tmp, "again")
            data.Dataset(observations=ds.observations, actions=ds.actions, rewards=ds.rewards,
                         terminations=ds.terminations, truncations=ds.truncations,
                         episode_starts=ds.episode_starts, user_ids=ds.user_ids, seeds=ds.seeds,
                         env_id=ds.env_id, dataset_id=ds.dataset_id).save(again)
            a = cli_json("dataset", "info", out, "--json")
            b = cli_json("dataset", "info", again, "--json")
            for key in ("episodes", "transitions", "users", "return_mean", "return_histogram",
                        "observation_space", "action_space", "env_params"):
                self.assertEqual(a[key], b[key], key)

    def test_fixture_files(self):
        for name in ("minari_box", "minari_discrete", "d4rl_next_obs.hdf5", "d4rl_gzip.hdf5"):
            path = os.path.join(FIXTURES, name)
            ds = data.load(path)
            info_matches(self, ds, cli_json("dataset", "info", path, "--json"))

    def test_errors(self):
        missing = os.path.join(FIXTURES, "no_such_dataset")
        with self.assertRaises(OSError) as e:
            data.load(missing)
        self.assertIsInstance(e.exception, ValueError)
        self.assertIsInstance(e.exception, dprl.DataError)
        self.assertEqual(str(e.exception), cli_error("dataset", "info", missing))
        bad = os.path.join(FIXTURES, "d4rl_absurd.hdf5")
        with self.assertRaises(dprl.DataError) as e:
            data.load(bad)
        self.assertEqual(str(e.exception), cli_error("dataset", "info", bad))
        arrays = rollouts(2, seed=1)
        arrays["rewards"] = arrays["rewards"][:-1]
        with self.assertRaises(dprl.DataError):
            data.Dataset(env_id="CartPole-v1", **arrays)
        arrays = rollouts(2, seed=1)
        arrays["actions"][0] = 5  # outside Discrete(2)
        with self.assertRaises(dprl.DataError):
            data.Dataset(env_id="CartPole-v1", **arrays)


if __name__ == "__main__":
    unittest.main()
