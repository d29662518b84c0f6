"""Unit tests of tools/report_common.py's Archive: results outlive their run directories."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from report_common import Archive, trim_summary  # noqa: E402


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


if __name__ == "__main__":
    unittest.main()
