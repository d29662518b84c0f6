"""Unit tests of tools/report_paper003.py's archive and seed blocks."""
import argparse
import json
import os
import shutil
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import report_paper003 as r3  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)


class ArchiveTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.args = argparse.Namespace(runs=os.path.join(t, "runs"),
                                       archive=os.path.join(t, "results"), dprl="", jobs=1,
                                       commit=False)

    def tearDown(self):
        self.tmp.cleanup()

    def run_dir(self, seed, returns):
        d = os.path.join(self.args.runs, "env", "fig2c", "decay=0.1", f"seed{seed}")
        summary = {"seed": seed, "final_eval": {"return_mean": 12.345678},
                   "extra": {"train_return_last10": -3.14159, "other": 1},
                   "privacy": {"details": {"per_query": [{"epsilon": 1}, {"epsilon": 2}],
                                           "totals": {"vacuous": True}, "huge": [0] * 100}},
                   "versions": {"x": "y"}}
        write(os.path.join(d, "summary.json"), json.dumps(summary))
        rows = "".join(f"{1000 * (i + 1)},{y},{i + 1}\n" for i, y in enumerate(returns))
        write(os.path.join(d, "metrics.csv"), "step,train_return,episodes\n" + rows)

    def test_runs_are_archived_trimmed_and_read_back_without_their_directories(self):
        self.run_dir(1, [-5.004, -1.0, 0.5])
        self.run_dir(2, [-7.0, -2.0, -1.0])
        write(os.path.join(self.args.runs, "env", "fig2c", "decay=0.1", "seed3", "metrics.csv"),
              "step,train_return,episodes\n")  # still running: no summary.json
        files = r3.sync_env(self.args, "env")
        self.assertEqual(files, [r3.archive_file(self.args, "env", "fig2c", "decay=0.1")])
        shutil.rmtree(self.args.runs)
        items = r3.curve_items(self.args, "env", "fig2c", "decay=0.1")
        self.assertEqual([s["seed"] for s, _ in items], [1, 2])
        s1, pts1 = items[0]
        self.assertEqual(pts1, [[1000.0, -5.0, 1.0], [2000.0, -1.0, 2.0], [3000.0, 0.5, 3.0]])
        self.assertEqual(s1["final_eval"]["return_mean"], 12.35)
        self.assertEqual(s1["extra"], {"train_return_last10": -3.14})
        self.assertEqual(s1["privacy"]["details"]["per_query"], [{"epsilon": 1}])
        self.assertNotIn("huge", s1["privacy"]["details"])
        self.assertNotIn("versions", s1)
        st = r3.curve_stats(items, 0.0)
        self.assertEqual(st["steps"], [3000.0, float("inf")])
        self.assertEqual(st["n"], 2)
        # syncing again with no runs on disk leaves the archive as it is
        before = open(r3.archive_file(self.args, "env", "fig2c", "decay=0.1")).read()
        r3.sync_env(self.args, "env")
        self.assertEqual(open(r3.archive_file(self.args, "env", "fig2c", "decay=0.1")).read(),
                         before)

    def test_a_seed_block_runs_the_same_sweep_with_only_those_seeds(self):
        cfg = os.path.join(self.tmp.name, "configs", "s.yaml")
        write(cfg, "# c\nbase: base.yaml\nout: runs/x\nseeds: [1, 2, 3, 4]\nset:\n  a: 1\n")
        fake = os.path.join(self.tmp.name, "fake_dprl")
        seen = os.path.join(self.tmp.name, "seen.yaml")
        write(fake, f"#!/bin/sh\ncp \"$2\" {seen}\n")
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
        self.args.dprl = fake
        r3.run_sweep_file(self.args, cfg, [2, 3])
        got = open(seen).read()
        base = os.path.join(self.tmp.name, "configs", "base.yaml")
        self.assertEqual(got, f"# c\nbase: {base}\nout: runs/x\nseeds: [2, 3]\nset:\n  a: 1\n")


if __name__ == "__main__":
    unittest.main()
