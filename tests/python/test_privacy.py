"""dprl.privacy: the same numbers as `dprl privacy` and `dprl audit`, bit for bit.

The CLI prints doubles to round-trip precision in --json, so equal values compare with ==.
"""
import json
import threading
import unittest

import numpy as np

from common import cli, cli_error, cli_json
import dprl
from dprl import privacy

CASES = [(1.0, 0.01, 1000, 1e-5), (0.8, 0.004, 10000, 1e-6), (2.5, 1.0, 50, 1e-5),
         (0.0, 0.01, 10, 1e-5)]


class Shortcuts(unittest.TestCase):
    def test_epsilon_equals_the_cli(self):
        for z, q, steps, delta in CASES:
            for acc in ("rdp", "pld", "best"):
                flags = ["-z", z, "-q", q, "-T", steps, "--delta", delta, "--accountant", acc]
                rc, out, _ = cli("privacy", "epsilon", *flags, "--json", check=False)
                if rc != 0:  # e.g. PLD refuses z = 0: the same error
                    with self.assertRaises(dprl.ParamError) as e:
                        privacy.epsilon(noise_multiplier=z, sampling_rate=q, steps=steps,
                                        delta=delta, accountant=acc)
                    self.assertEqual(str(e.exception), cli_error("privacy", "epsilon", *flags))
                    continue
                want = json.loads(out)["epsilon"]
                got = privacy.epsilon(noise_multiplier=z, sampling_rate=q, steps=steps,
                                      delta=delta, accountant=acc)
                if want == "inf":
                    self.assertEqual(got, float("inf"), (z, q, steps, acc))
                else:
                    self.assertEqual(got, want, (z, q, steps, acc))

    def test_delta_equals_the_cli(self):
        for z, q, steps, _ in CASES:
            for eps in (0.5, 2.0):
                for acc in ("rdp", "pld", "best"):
                    flags = ["-z", z, "-q", q, "-T", steps, "--epsilon", eps, "--accountant", acc]
                    rc, out, _ = cli("privacy", "delta", *flags, "--json", check=False)
                    if rc != 0:  # PLD refuses z = 0: the same error
                        with self.assertRaises(dprl.ParamError) as e:
                            privacy.delta(noise_multiplier=z, sampling_rate=q, steps=steps,
                                          epsilon=eps, accountant=acc)
                        self.assertEqual(str(e.exception), cli_error("privacy", "delta", *flags))
                        continue
                    got = privacy.delta(noise_multiplier=z, sampling_rate=q, steps=steps,
                                        epsilon=eps, accountant=acc)
                    self.assertEqual(got, json.loads(out)["delta"], (z, q, steps, eps, acc))
        # the other side of `epsilon`: delta at the epsilon it printed is the delta asked for
        eps = privacy.epsilon(noise_multiplier=1.0, sampling_rate=0.01, steps=1000, delta=1e-5,
                              accountant="pld")
        self.assertAlmostEqual(privacy.delta(noise_multiplier=1.0, sampling_rate=0.01, steps=1000,
                                             epsilon=eps, accountant="pld") / 1e-5, 1.0, 9)
        for kwargs, flag, keyword in [(dict(epsilon=-1), "--epsilon", "epsilon"),
                                      (dict(epsilon=1, accountant="x"), "--accountant",
                                       "accountant"),
                                      (dict(epsilon=1, sampling_rate=0), "--sampling-rate",
                                       "sampling_rate")]:
            args = dict(noise_multiplier=1, sampling_rate=0.1, steps=10, accountant="rdp")
            args.update(kwargs)
            flags = ["-z", args["noise_multiplier"], "-q", args["sampling_rate"], "-T",
                     args["steps"], "--epsilon", args["epsilon"], "--accountant",
                     args["accountant"]]
            with self.assertRaises(dprl.ParamError) as e:
                privacy.delta(**args)
            self.assertEqual(str(e.exception),
                             cli_error("privacy", "delta", *flags).replace(flag, keyword))

    def test_issue_example_and_published_value(self):
        eps = privacy.epsilon(noise_multiplier=1.0, sampling_rate=0.01, steps=1000, delta=1e-5,
                              accountant="pld")
        # dp_accounting 0.6.0 gives 1.8282436 for the same event (docs/embedding.md)
        self.assertAlmostEqual(eps, 1.8282436, delta=1e-4)

    def test_discrete_gaussian(self):
        want = cli_json("privacy", "epsilon", "-z", 1.1, "-q", 0.02, "-T", 500, "--delta", 1e-5,
                        "--accountant", "best", "--discrete", "--json")["epsilon"]
        got = privacy.epsilon(noise_multiplier=1.1, sampling_rate=0.02, steps=500, delta=1e-5,
                              accountant="best", discrete=True)
        self.assertEqual(got, want)

    def test_calibration_equals_the_cli(self):
        for acc, steps in (("rdp", 1000), ("pld", 100)):
            want = cli_json("privacy", "noise", "--epsilon", 2, "-q", 0.01, "-T", steps,
                            "--delta", 1e-5, "--accountant", acc, "--json")
            z = privacy.noise_multiplier(epsilon=2, sampling_rate=0.01, steps=steps, delta=1e-5,
                                         accountant=acc)
            self.assertEqual(z, want["noise_multiplier"])
            self.assertLessEqual(
                privacy.epsilon(noise_multiplier=z, sampling_rate=0.01, steps=steps, delta=1e-5,
                                accountant=acc), 2)

    def test_gaussian_and_compose_equal_the_cli(self):
        for analytic in (False, True):
            flags = ["--analytic"] if analytic else []
            want = cli_json("privacy", "gaussian", "--epsilon", 0.5, "--delta", 1e-5,
                            "--sensitivity", 2, "--json", *flags)["sigma"]
            self.assertEqual(privacy.gaussian_sigma(epsilon=0.5, delta=1e-5, sensitivity=2,
                                                    analytic=analytic), want)
        want = cli_json("privacy", "compose", "--epsilon", 0.1, "--delta", 1e-6, "--count", 100,
                        "--delta-slack", 1e-5, "--json")
        got = privacy.compose(epsilon=0.1, delta=1e-6, count=100, delta_slack=1e-5)
        self.assertEqual(got["basic"], (want["basic"]["epsilon"], want["basic"]["delta"]))
        self.assertEqual(got["advanced"], (want["advanced"]["epsilon"], want["advanced"]["delta"]))

    def test_errors_carry_the_cli_message(self):
        cases = [
            (dict(noise_multiplier=1, sampling_rate=2, steps=10, delta=1e-5),
             ["-z", 1, "-q", 2, "-T", 10, "--delta", 1e-5], "--sampling-rate", "sampling_rate"),
            (dict(noise_multiplier=-1, sampling_rate=0.1, steps=10, delta=1e-5),
             ["-z", -1, "-q", 0.1, "-T", 10, "--delta", 1e-5], "--noise-multiplier",
             "noise_multiplier"),
            (dict(noise_multiplier=1, sampling_rate=0.1, steps=0, delta=1e-5),
             ["-z", 1, "-q", 0.1, "-T", 0, "--delta", 1e-5], "--steps", "steps"),
            (dict(noise_multiplier=1, sampling_rate=0.1, steps=10, delta=1.5),
             ["-z", 1, "-q", 0.1, "-T", 10, "--delta", 1.5], "--delta", "delta"),
            (dict(noise_multiplier=1, sampling_rate=0.1, steps=10, delta=1e-5, accountant="x"),
             ["-z", 1, "-q", 0.1, "-T", 10, "--delta", 1e-5, "--accountant", "x"],
             "--accountant", "accountant"),
        ]
        for kwargs, flags, flag, keyword in cases:
            with self.assertRaises(ValueError) as e:
                privacy.epsilon(**kwargs)
            self.assertIsInstance(e.exception, dprl.ParamError)
            self.assertEqual(str(e.exception),
                             cli_error("privacy", "epsilon", *flags).replace(flag, keyword))


class Accountants(unittest.TestCase):
    def test_events_and_accountants(self):
        step = privacy.DpEvent.poisson_sampled(0.01, privacy.DpEvent.gaussian(1.0))
        for name, cls in (("rdp", privacy.RdpAccountant), ("pld", privacy.PldAccountant),
                          ("best", privacy.BestAccountant)):
            acc = cls()
            self.assertEqual(acc.name, name)
            acc.compose(step, 1000)
            self.assertEqual(acc.epsilon(1e-5),
                             privacy.epsilon(noise_multiplier=1.0, sampling_rate=0.01, steps=1000,
                                             delta=1e-5, accountant=name))
            other = privacy.make_accountant(name)
            other.compose(privacy.dpsgd_event(noise_multiplier=1.0, sampling_rate=0.01, steps=1000))
            self.assertEqual(other.epsilon(1e-5), acc.epsilon(1e-5))
        with self.assertRaises(TypeError):  # keywords only: z and q cannot be swapped silently
            privacy.dpsgd_event(1.0, 0.01, 1000)
            self.assertAlmostEqual(acc.epsilon(acc.delta(1.5)), 1.5, 9)
        self.assertEqual(list(privacy.accountants()), ["rdp", "pld", "best"])
        self.assertIn("rdp | pld | best", cli("privacy", "epsilon", "--help")[1])
        eps, order = privacy.RdpAccountant().epsilon_and_order(1e-5)
        event = privacy.DpEvent.composed([step, privacy.DpEvent.laplace(2.0)])
        self.assertEqual(privacy.DpEvent.from_json(event.to_json()), event)
        with self.assertRaises(dprl.ParamError):
            privacy.DpEvent.gaussian(-1.0)
        with self.assertRaises(dprl.ParamError):
            privacy.RdpAccountant().epsilon(0.0)
        self.assertEqual(privacy.steps_within_budget(step, epsilon=1.0, delta=1e-5), 
                         privacy.steps_within_budget(step, epsilon=1.0, delta=1e-5,
                                                     accountant="rdp"))


class Mechanisms(unittest.TestCase):
    def test_gaussian_mechanism(self):
        mech = privacy.GaussianMechanism(l2_sensitivity=1.0, epsilon=1.0, delta=1e-5)
        self.assertEqual(mech.sigma, privacy.gaussian_sigma(epsilon=1.0, delta=1e-5,
                                                            analytic=True))
        x = np.zeros(8)
        a = mech.release(x, privacy.seeded_noise(5))
        b = mech.release(x, privacy.seeded_noise(5))
        self.assertTrue(np.array_equal(a, b))
        self.assertTrue(np.array_equal(x, np.zeros(8)))  # the input is not modified
        # a strided view is read element by element (zero noise: the values come back)
        y = np.arange(10.0)[::2]
        self.assertTrue(np.array_equal(mech.release(y, privacy.zero_noise()), y))
        # the secure release: snapped to the plan's grid, exact discrete noise
        plan = mech.secure_plan(8)
        s = mech.release(np.full(8, 0.3), privacy.seeded_noise(5, secure=True))
        self.assertTrue(np.all(s / plan["grid"] == np.round(s / plan["grid"])))
        self.assertTrue(privacy.os_entropy_noise().secure)
        self.assertEqual(mech.release(np.zeros(3)).shape, (3,))  # default: OS entropy, secure
        with self.assertRaises(dprl.ParamError):
            mech.release(np.array([np.nan]))
        with self.assertRaises(dprl.ParamError):
            privacy.GaussianMechanism(epsilon=-1)

    def test_laplace_mechanism(self):
        mech = privacy.LaplaceMechanism(l1_sensitivity=2.0, epsilon=0.5)
        self.assertEqual(mech.scale, 4.0)
        self.assertEqual(mech.event(), privacy.DpEvent.laplace(4.0 / 2.0))


class Audits(unittest.TestCase):
    def test_mechanism_audit_equals_the_cli(self):
        for mech, flags, kwargs in (
                ("laplace", ["--epsilon", 1], dict(epsilon=1.0)),
                ("gaussian", ["-z", 1.0, "--dim", 4], dict(noise_multiplier=1.0, dim=4)),
                ("gaussian", ["-z", 1.0, "--mis-specify", "quarter-noise"],
                 dict(noise_multiplier=1.0, mis_specify="quarter-noise"))):
            rc, out, _ = cli("audit", "mechanism", "--mechanism", mech, "--samples", 20000,
                             "--seed", 3, "--json", *flags, check=False)
            want = json.loads(out)
            self.assertEqual(rc, 3 if want["refuted"] else 0)
            got = privacy.audit_mechanism(mechanism=mech, samples=20000, seed=3, **kwargs)
            self.assertEqual(got, want, mech)  # every field, the best event's too
        self.assertTrue(got["refuted"])  # a quarter of the noise is caught

    def test_dpsgd_audit_equals_the_cli(self):
        rc_out = cli_json("audit", "dpsgd", "--canaries", 200, "--steps", 5, "--seed", 2, "--json")
        got = privacy.audit_dpsgd(canaries=200, steps=5, seed=2)
        self.assertEqual(got, rc_out)
        self.assertEqual(got["canaries"], 200)


class Dirichlet(unittest.TestCase):
    def test_dirichlet_is_the_clis(self):
        for actions in (2, 4):
            got = privacy.dirichlet(k=50.0, eta=0.05, tau=0.01, actions=actions, lipschitz=1.0,
                                    adjacency=0.1, samples=20000, seed=7)
            want = cli_json("privacy", "dirichlet", "--k", 50, "--eta", 0.05, "--tau", 0.01,
                            "--actions", actions, "--lipschitz", 1, "--adjacency", 0.1,
                            "--samples", 20000, "--seed", 7, "--json")
            self.assertEqual(got, want, actions)
            self.assertEqual("delta_exact" in got, actions == 2)
        # m = 2: the Monte Carlo interval holds the exact delta (confidence 1 - 1e-6)
        got = privacy.dirichlet(k=50.0, eta=0.05, tau=0.01, actions=2, lipschitz=1.0,
                                adjacency=0.1, samples=20000, seed=7)
        self.assertLessEqual(got["delta_ci"][0], got["delta_exact"])
        self.assertLessEqual(got["delta_exact"], got["delta_ci"][1])

    def test_bad_input_raises_value_error_before_any_work(self):
        with self.assertRaisesRegex(ValueError, "gamma draws"):
            privacy.dirichlet(k=50.0, eta=0.001, tau=0.0001, actions=1000, lipschitz=1.0,
                              adjacency=0.1, samples=10**9)
        with self.assertRaisesRegex(ValueError, "samples = 0"):
            privacy.dirichlet(k=50.0, eta=0.05, tau=0.01, actions=2, lipschitz=1.0,
                              adjacency=0.1, samples=0)
        with self.assertRaises(ValueError):
            privacy.dirichlet(k=-1.0, eta=0.05, tau=0.01, actions=2, lipschitz=1.0,
                              adjacency=0.1, samples=10)


class SparseVector(unittest.TestCase):
    def test_svt_params_are_the_clis(self):
        got = privacy.svt_params(epsilon=1.0, delta=1e-5, queries=1000, max_length=200, pmin=0.02)
        want = cli_json("privacy", "svt-params", "--epsilon", 1, "--delta", 1e-5, "--queries",
                        1000, "--max-length", 200, "--pmin", 0.02, "--json")
        self.assertEqual(got, want)
        self.assertGreater(got["threshold_noise_scale"], 0)
        with self.assertRaises(ValueError):
            privacy.svt_params(epsilon=-1.0, delta=1e-5, queries=10, max_length=10)


class Threads(unittest.TestCase):
    def test_a_long_accounting_call_releases_the_gil(self):
        # while a PLD epsilon (about 0.2 s of C++) runs on another thread, this thread keeps
        # executing Python; a call that held the GIL would let it run only before and after
        started, done = threading.Event(), threading.Event()

        def work():
            started.set()
            privacy.epsilon(noise_multiplier=0.25, sampling_rate=0.001, steps=10000, delta=1e-5,
                            accountant="pld")
            done.set()

        t = threading.Thread(target=work)
        t.start()
        started.wait()
        n = 0
        while not done.is_set():
            n += 1
        t.join()
        self.assertGreater(n, 100000)


if __name__ == "__main__":
    unittest.main()
