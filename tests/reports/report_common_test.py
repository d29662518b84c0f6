"""Unit tests of tools/report_common.py's Archive: results outlive their run directories."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from report_common import (Archive, RunArchive, read_runs, replace_block,  # noqa: E402
                           seed_subset, trim_summary)


def write(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(obj if isinstance(obj, str) else json.dumps(obj))


class ArchiveTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, "runs")
        self.path = os.path.join(self.tmp.name, "doc", "results.json")

    def tearDown(self):
        self.tmp.cleanup()

    def test_runs_on_disk_are_recorded_trimmed_and_survive_their_deletion(self):
        summary = {"name": "a", "seed": 1, "final_eval": {"return_mean": 5.0}, "extra": {},
                   "privacy": None, "versions": {"dprl": "x"}, "env_steps": 10}
        write(os.path.join(self.root, "sweep", "base", "seed1", "summary.json"), summary)
        a = Archive(self.root, self.path)
        self.assertEqual(a.listdir("sweep/base"), ["seed1"])
        got = a.json("sweep/base/seed1/summary.json", trim_summary)
        self.assertNotIn("versions", got)
        self.assertNotIn("env_steps", got)
        self.assertEqual(got["final_eval"]["return_mean"], 5.0)
        a.save()
        os.remove(os.path.join(self.root, "sweep", "base", "seed1", "summary.json"))
        b = Archive(self.root, self.path)
        self.assertEqual(b.listdir("sweep"), ["base"])
        self.assertEqual(b.listdir("sweep/base"), ["seed1"])
        self.assertEqual(b.json("sweep/base/seed1/summary.json", trim_summary), got)

    def test_disk_overrides_the_archive_and_new_runs_add_up(self):
        write(os.path.join(self.root, "s", "seed1", "x.json"), {"v": 1})
        a = Archive(self.root, self.path)
        a.json("s/seed1/x.json")
        a.save()
        write(os.path.join(self.root, "s", "seed1", "x.json"), {"v": 2})
        os.rename(os.path.join(self.root, "s", "seed1"), os.path.join(self.root, "s", "seed2"))
        b = Archive(self.root, self.path)
        self.assertEqual(b.listdir("s"), ["seed1", "seed2"])
        self.assertEqual(b.json("s/seed1/x.json"), {"v": 1})
        self.assertEqual(b.json("s/seed2/x.json"), {"v": 2})
        write(os.path.join(self.root, "s", "seed1", "x.json"), {"v": 3})
        self.assertEqual(b.json("s/seed1/x.json"), {"v": 3})

    def test_missing_everywhere_is_none_and_text_and_computed_are_archived(self):
        a = Archive(self.root, self.path)
        self.assertIsNone(a.json("nothing.json"))
        self.assertEqual(a.listdir("nowhere"), [])
        write(os.path.join(self.root, "r.log"), "12.0 wall 3.0 user 1.0 sys\n")
        self.assertEqual(a.text("r.log", lambda t: t.split()[2]), "3.0")
        self.assertEqual(a.computed("k#info", lambda: {"n": 4}), {"n": 4})
        a.save()
        os.remove(os.path.join(self.root, "r.log"))
        b = Archive(self.root, self.path)
        self.assertEqual(b.text("r.log", lambda t: t.split()[2]), "3.0")
        self.assertEqual(b.computed("k#info", lambda: None), {"n": 4})

    def test_a_path_that_only_shares_a_prefix_is_not_listed(self):
        write(os.path.join(self.root, "ab", "seed1", "x.json"), {})
        a = Archive(self.root, self.path)
        a.json("ab/seed1/x.json")
        a.save()
        os.remove(os.path.join(self.root, "ab", "seed1", "x.json"))
        b = Archive(self.root, self.path)
        self.assertEqual(b.listdir("a"), [])
        self.assertEqual(b.listdir("ab"), ["seed1"])

    def test_no_archive_path_reads_disk_only(self):
        write(os.path.join(self.root, "x.json"), {"v": 1})
        a = Archive(self.root, "")
        self.assertEqual(a.json("x.json"), {"v": 1})
        a.save()
        self.assertFalse(os.path.exists(self.path))


class RunArchiveTest(unittest.TestCase):
    """RunArchive keeps per-run results of a sweep layout and writes them back as run dirs."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, "runs")
        self.path = os.path.join(self.tmp.name, "doc", "results.json")

    def tearDown(self):
        self.tmp.cleanup()

    def run_dir(self, label, seed, ret, extra_col="7"):
        d = os.path.join(self.root, "fig2", label, f"seed{seed}")
        write(os.path.join(d, "summary.json"),
              {"name": "x", "seed": seed, "final_eval": {"return_mean": ret}, "extra": {},
               "privacy": None, "versions": {"big": "y"}})
        write(os.path.join(d, "metrics.csv"),
              f"episode,return,other\n1,{ret},{extra_col}\n2,{ret + 0.123456789},{extra_col}\n")

    def test_round_trip_keeps_the_chosen_columns_rounded_and_survives_the_runs(self):
        self.run_dir("dp=actor", 1, -200.0)
        self.run_dir("dp=actor", 2, -150.0)
        self.run_dir("dp=none", 1, -110.0)
        a = RunArchive(self.path)
        keys = a.sync(self.root, lambda sweep: ["episode", "return"], digits=3)
        self.assertEqual(sorted(keys), ["fig2/dp=actor/seed1", "fig2/dp=actor/seed2",
                                        "fig2/dp=none/seed1"])
        a.save()
        import shutil
        shutil.rmtree(self.root)
        b = RunArchive(self.path)
        out = os.path.join(self.tmp.name, "mat")
        b.materialise(out)
        runs = read_runs(os.path.join(out, "fig2"))
        self.assertEqual(list(runs), ["dp=actor", "dp=none"])
        summary, rows, _ = runs["dp=actor"][1]
        self.assertEqual(summary["seed"], 2)
        self.assertNotIn("versions", summary)
        self.assertEqual(rows, [{"episode": "1", "return": "-150"},
                                {"episode": "2", "return": "-149.877"}])

    def test_disk_replaces_archived_runs_and_skipped_sweeps_are_not_recorded(self):
        self.run_dir("dp=actor", 1, -200.0)
        a = RunArchive(self.path)
        a.sync(self.root, lambda sweep: ["return"])
        a.save()
        self.run_dir("dp=actor", 1, -100.0)
        b = RunArchive(self.path)
        b.sync(self.root, lambda sweep: ["return"])
        self.assertEqual(b.data["fig2/dp=actor/seed1"]["rows"][0], [-100])
        c = RunArchive(os.path.join(self.tmp.name, "other.json"))
        self.assertEqual(c.sync(self.root, lambda sweep: None), [])
        self.assertEqual(c.data, {})

    def test_replace_block_rewrites_between_markers_and_refuses_a_page_without_them(self):
        doc = os.path.join(self.tmp.name, "p.md")
        write(doc, "head\n<!-- BEGIN GENERATED -->\nold\n<!-- END GENERATED -->\ntail\n")
        replace_block(doc, "new\n")
        with open(doc) as fh:
            self.assertEqual(fh.read(), "head\n<!-- BEGIN GENERATED -->\nnew\n"
                             "<!-- END GENERATED -->\ntail\n")
        write(doc, "no markers\n")
        with self.assertRaises(SystemExit):
            replace_block(doc, "x")



class SeedSubsetTest(unittest.TestCase):
    def test_only_the_seeds_and_the_base_path_change(self):
        with tempfile.TemporaryDirectory() as tmp:
            sweep = os.path.join(tmp, "sweeps", "s.yaml")
            os.makedirs(os.path.dirname(sweep))
            with open(sweep, "w") as f:
                f.write("# a sweep\nbase: ../cell.yaml\nseeds: [1, 2, 3, 4, 5]\nout: runs/x\n")
            text = seed_subset(sweep, [2, 4])
            want_base = os.path.abspath(os.path.join(tmp, "cell.yaml"))
            self.assertEqual(text, f"# a sweep\nbase: {want_base}\nseeds: [2, 4]\nout: runs/x\n")


if __name__ == "__main__":
    unittest.main()
