"""Unit tests of tools/report_paper000.py's until-the-budget section: finished runs and runs
stopped before their budget is spent (how far they got), read from run directories and then
from the archive alone."""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import report_common  # noqa: E402
import report_paper000 as r0  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


METRICS = "iteration,episodes,return_mean,epsilon,noisy_steps,stable_steps\n"


class BudgetSectionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, "runs", "paper000")
        self.archive = os.path.join(self.tmp.name, "results.json")
        r0.ARCHIVE = report_common.Archive(self.root, self.archive)

    def tearDown(self):
        self.tmp.cleanup()

    def summary(self, rel, seed, ret, noisy=None, rnd=-200.0):
        extra = {"random_return": rnd}
        if noisy is not None:
            extra["noisy_steps"] = noisy
        write(os.path.join(self.root, rel, f"seed{seed}", "summary.json"),
              json.dumps({"seed": seed, "final_eval": {"return_mean": ret}, "extra": extra}))

    def populate(self):
        # the m = 3000 non-private CQL baseline (-100) and the reduced DP-SGD cell (random -200)
        self.summary("m3000/lunar_lander/lunar_lander_cql_nonprivate/base", 1, -100.0)
        self.summary("m3000/lunar_lander/lunar_lander_cql_eps7_5_dpsgd/base", 1, -150.0)
        budget = "m3000_budget/lunar_lander/lunar_lander_cql_eps7_5_dpsgd/base"
        # seed 1 finished; seeds 2 and 3 stopped at their last evaluation
        self.summary(budget, 1, -120.0, noisy=2419862)
        write(os.path.join(self.root, budget, "seed1", "metrics.csv"),
              METRICS + "10000,0,-300,1.0,10000,0\n")
        write(os.path.join(self.root, budget, "seed2", "metrics.csv"),
              METRICS + "10000,0,-300,1.0,10000,0\n20000,0,-180,2.0,20000,0\n")
        write(os.path.join(self.root, budget, "seed3", "metrics.csv"),
              METRICS + "10000,0,-160,1.5,30000,0\n")
        write(os.path.join(self.root, budget, "seed4", "metrics.csv"), METRICS)  # no row yet

    def test_last_metrics_reads_the_last_row(self):
        self.assertEqual(r0.last_metrics(METRICS + "1,0,-5,0.5,7,0\n2,0,-4,0.75,9,0\n"),
                         {"noisy_steps": 9.0, "epsilon": 0.75, "return_mean": -4.0})
        self.assertIsNone(r0.last_metrics(METRICS))

    def test_unfinished_skips_finished_runs_and_survives_the_run_directories(self):
        self.populate()
        data = r0.Data("m3000_budget")
        want = [{"noisy_steps": 20000.0, "epsilon": 2.0, "return_mean": -180.0},
                {"noisy_steps": 30000.0, "epsilon": 1.5, "return_mean": -160.0}]
        cell = ("lunar_lander", "lunar_lander_cql_eps7_5_dpsgd")
        rows = [row for _, row in r0.unfinished(data, *cell)]
        self.assertEqual(rows, want)
        r0.ARCHIVE.save()
        shutil.rmtree(self.root)
        r0.ARCHIVE = report_common.Archive(self.root, self.archive)
        rows = [row for _, row in r0.unfinished(r0.Data("m3000_budget"), *cell)]
        self.assertEqual(rows, want)

    def test_section_rows_for_finished_and_stopped_runs(self):
        self.populate()
        md = r0.budget_section()
        rows = [line for line in md.splitlines() if line.startswith("| LunarLander")]
        self.assertEqual(len(rows), 2, md)
        # finished: seed 1, (-120 - -200) / (-100 - -200) = 0.80
        self.assertEqual(rows[0], "| LunarLander | CQL | 7.5 | 2419862 (n=1) | 0.80 (n=1) | "
                                  "0.50 (n=1) |")
        # stopped: seeds 2 and 3 at 20000 and 30000 steps, eps 2.0 and 1.5, scores 0.20 and 0.40
        self.assertTrue(rows[1].startswith(
            "| LunarLander | CQL | 7.5 | 25000 ± 63530 (n=2) | 1.75 ± 3.18 (n=2) | "
            "0.30 ± 1.27 (n=2) | 0.50 (n=1) |"), rows[1])
        self.assertIn("Cells stopped before the budget was spent", md)
        self.assertIn("partial: 1 of 12 runs finished", md)

    def test_stopped_runs_are_scored_against_their_own_seeds_random_return(self):
        self.populate()
        # seed 2's evaluation envs give the uniform policy -400: (-180 + 400) / (-100 + 400);
        # seed 3 has no run of its own, so the mean of seeds 1 and 2 (-300): (-160 + 300) / 200
        self.summary("m3000/lunar_lander/lunar_lander_cql_eps7_5_dpsgd/base", 2, -150.0, rnd=-400.0)
        rows = [line for line in r0.budget_section().splitlines()
                if line.startswith("| LunarLander")]
        self.assertIn("| 0.72 ± 0.21 (n=2) |", rows[1])


if __name__ == "__main__":
    unittest.main()
