"""dprl.make / dprl.make_vec: Gymnasium's API over the engine's envs.

Trajectories are compared with the CLI's exact replay (`dprl env replay`): the state the Python env
holds after reset(seed=...) and the actions it took are replayed by the CLI, which must print the
same observations (as float32), rewards and flags.
"""
import json
import os
import unittest

import numpy as np

from common import cli, cli_error, cli_json, scratch
import dprl


def rollout(env, seed, actions_seed, max_steps=300):
    obs, _ = env.reset(seed=seed)
    state = env.state.tolist()
    env.action_space.seed(actions_seed)
    actions, steps = [], []
    for _ in range(max_steps):
        a = env.action_space.sample()
        obs, reward, terminated, truncated, info = env.step(a)
        actions.append(a.tolist() if isinstance(a, np.ndarray) else int(a))
        steps.append((obs, reward, terminated, truncated))
        if terminated or truncated:
            break
    return state, actions, steps


class ReplayParity(unittest.TestCase):
    def check(self, env_id, seed, **params):
        env = dprl.make(env_id, **params)
        state, actions, steps = rollout(env, seed, seed + 100)
        with scratch() as tmp:
            case = os.path.join(tmp, "case.json")
            with open(case, "w") as f:
                json.dump({"env": env_id, "params": {k: str(v) for k, v in params.items()},
                           "state": state, "actions": actions}, f)
            replay = cli_json("env", "replay", case)["steps"]
        self.assertEqual(len(replay), len(steps))
        for i, (mine, cli_step) in enumerate(zip(steps, replay)):
            obs, reward, terminated, truncated = mine
            want = np.asarray(cli_step["obs"], dtype=np.float32)
            if env.observation_space.shape == ():
                self.assertEqual(obs, int(want[0]), f"{env_id} step {i}")
            else:
                self.assertTrue(np.array_equal(obs, want), f"{env_id} step {i}: {obs} vs {want}")
            self.assertEqual(reward, cli_step["reward"], f"{env_id} step {i}")
            self.assertEqual(terminated, cli_step["terminated"])
            self.assertEqual(truncated, cli_step["truncated"])
        return steps

    def test_cartpole(self):
        for seed in (0, 1, 12345):
            self.check("CartPole-v1", seed)

    def test_acrobot(self):
        self.check("Acrobot-v1", 3)

    def test_pendulum_continuous_actions(self):
        steps = self.check("Pendulum-v1", 4)
        self.assertEqual(len(steps), 200)  # truncated at its limit
        self.assertTrue(steps[-1][3])

    def test_taxi_discrete_observations(self):
        self.check("Taxi-v3", 5)

    def test_params(self):
        self.check("cartpole", 6, gravity=12.5, max_episode_steps=50)


class Api(unittest.TestCase):
    def test_reset_and_step_conventions(self):
        env = dprl.make("CartPole-v1")
        obs, info = env.reset(seed=7)
        self.assertEqual(obs.dtype, np.float32)
        self.assertEqual(obs.shape, (4,))
        self.assertEqual(info, {})
        self.assertTrue(env.observation_space.contains(obs))
        again, _ = env.reset(seed=7)
        self.assertTrue(np.array_equal(obs, again))
        following, _ = env.reset()  # the next episode of the same root
        self.assertFalse(np.array_equal(obs, following))
        # without a seed, the first reset draws its root from the OS (two 64-bit draws colliding,
        # or two CartPole starts of four uniform floats coinciding, has probability ~1e-19)
        a, _ = dprl.make("CartPole-v1").reset()
        b, _ = dprl.make("CartPole-v1").reset()
        self.assertFalse(np.array_equal(a, b))
        # set_state does not pick a root: the reset after it still draws one
        c, d = dprl.make("CartPole-v1"), dprl.make("CartPole-v1")
        c.set_state(np.zeros(4))
        d.set_state(np.zeros(4))
        self.assertFalse(np.array_equal(c.reset()[0], d.reset()[0]))
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        self.assertIsInstance(reward, float)
        self.assertIsInstance(terminated, bool)
        self.assertIsInstance(truncated, bool)

    def test_spaces(self):
        env = dprl.make("Pendulum-v1")
        box = env.action_space
        self.assertEqual(box.shape, (1,))
        self.assertEqual(box.dtype, np.float32)
        self.assertEqual(float(box.low[0]), -2.0)
        self.assertEqual(float(box.high[0]), 2.0)
        self.assertTrue(box.contains(box.sample()))
        self.assertFalse(box.contains(np.array([3.0], dtype=np.float32)))
        disc = dprl.make("CartPole-v1").action_space
        self.assertEqual(disc.n, 2)
        self.assertTrue(disc.contains(1))
        self.assertFalse(disc.contains(2))
        self.assertFalse(disc.contains(0.5))

    def test_taxi_action_mask(self):
        env = dprl.make("Taxi-v3")
        obs, info = env.reset(seed=1)
        self.assertIsInstance(obs, int)
        self.assertEqual(info["action_mask"].shape, (6,))

    def test_errors_carry_the_cli_message(self):
        with self.assertRaises(ValueError) as e:
            dprl.make("cartpol")
        self.assertIsInstance(e.exception, dprl.UnknownName)
        self.assertEqual(str(e.exception),
                         cli_error("eval", "--env", "cartpol", "--policy", "random",
                                   "--episodes", "1", "--seed", "1"))
        with self.assertRaises(dprl.ParamError) as e:
            dprl.make("cartpole", gravity=-1)
        want = cli_error("eval", "--env", "cartpole", "--param", "gravity=-1", "--policy",
                         "random", "--episodes", "1", "--seed", "1")
        self.assertEqual(str(e.exception),
                         want.replace("--param gravity=-1", "make(gravity=-1)"))
        env = dprl.make("CartPole-v1")
        with self.assertRaises(ValueError):
            env.step(0)  # before reset
        env.reset(seed=0)
        for bad in (2, -1, 0.5, "1"):
            with self.assertRaises(dprl.InvalidAction):
                env.step(bad)
        pend = dprl.make("Pendulum-v1")
        pend.reset(seed=0)
        with self.assertRaises(dprl.InvalidAction):
            pend.step(np.array([np.nan]))
        with self.assertRaises(dprl.InvalidAction):
            pend.step(np.array([0.0, 1.0]))


class Vector(unittest.TestCase):
    def test_slot0_is_the_single_env_with_next_step_autoreset(self):
        """Slot 0 of make_vec(seed=s) is make() reset with seed s, then reset() per episode; the
        step after an episode ends returns the reset observation with reward 0 and no flags."""
        n = 8
        vec = dprl.make_vec("CartPole-v1", n)
        self.assertEqual(vec.metadata["autoreset_mode"], "NextStep")
        single = dprl.make("CartPole-v1")
        vobs, _ = vec.reset(seed=11)
        sobs, _ = single.reset(seed=11)
        self.assertTrue(np.array_equal(vobs[0], sobs))
        rng = np.random.default_rng(0)
        ended, resets = False, 0
        for _ in range(2000):
            actions = rng.integers(0, 2, size=n)
            vobs, rew, term, trunc, _ = vec.step(actions)
            if ended:
                sobs, _ = single.reset()
                resets += 1
                self.assertEqual(rew[0], 0.0)
                self.assertFalse(term[0] or trunc[0])
                ended = False
            else:
                sobs, r, te, tr, _ = single.step(int(actions[0]))
                self.assertEqual(rew[0], r)
                self.assertEqual((bool(term[0]), bool(trunc[0])), (te, tr))
                ended = te or tr
            self.assertTrue(np.array_equal(vobs[0], sobs))
        self.assertGreater(resets, 10)
        self.assertEqual(vobs.shape, (n, 4))
        self.assertEqual(vobs.dtype, np.float32)
        self.assertEqual(rew.dtype, np.float64)
        self.assertEqual(term.dtype, np.bool_)

    def test_slots_differ_and_action_of_resetting_slot_is_ignored(self):
        vec = dprl.make_vec("CartPole-v1", 4)
        obs, _ = vec.reset(seed=3)
        self.assertEqual(len({tuple(o) for o in obs}), 4)
        # push every cart the same way until all have ended, then step with invalid actions for
        # the slots being reset
        done = np.zeros(4, dtype=bool)
        for _ in range(600):
            _, _, term, trunc, _ = vec.step(np.ones(4, dtype=np.int64))
            done = term | trunc
            if done.any():
                break
        actions = np.where(done, -1, 0)
        vec.step(actions)  # slots that ended ignore their action
        with self.assertRaises(dprl.InvalidAction):
            vec.step(np.full(4, -1))

    def test_copy_false_reuses_buffers(self):
        vec = dprl.make_vec("CartPole-v1", 2, copy=False)
        vec.reset(seed=0)
        a = vec.step(np.zeros(2, dtype=np.int64))[0]
        b = vec.step(np.zeros(2, dtype=np.int64))[0]
        self.assertIs(a, b)

    def test_taxi_vector_observations_are_integers(self):
        vec = dprl.make_vec("Taxi-v3", 3)
        obs, _ = vec.reset(seed=0)
        self.assertEqual(obs.dtype, np.int64)
        self.assertTrue(vec.observation_space.contains(obs))

    def test_continuous(self):
        vec = dprl.make_vec("Pendulum-v1", 3)
        vec.reset(seed=0)
        obs, rew, *_ = vec.step(np.zeros((3, 1)))
        self.assertEqual(obs.shape, (3, 3))


if __name__ == "__main__":
    unittest.main()
