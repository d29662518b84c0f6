"""docs/python.md's examples run as written: every ```python block, from the repository root, in a
fresh interpreter (the one running this test) with the build tree's module on PYTHONPATH.
"""
import os
import re
import subprocess
import sys
import unittest

from common import DPRL_EXE, SOURCE_DIR

DOC = os.path.join(SOURCE_DIR, "docs", "python.md")


def blocks():
    with open(DOC) as f:
        text = f.read()
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.M | re.S)


class Examples(unittest.TestCase):
    def test_every_python_block_runs(self):
        found = blocks()
        self.assertGreaterEqual(len(found), 5)  # envs, vector, privacy, data, runs
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.join(os.path.dirname(DPRL_EXE), "python")
        for i, code in enumerate(found):
            with self.subTest(block=i):
                p = subprocess.run([sys.executable, "-c", code], cwd=SOURCE_DIR, env=env,
                                   capture_output=True, text=True, timeout=300)
                self.assertEqual(p.returncode, 0, f"block {i}:\n{code}\n{p.stderr}")


if __name__ == "__main__":
    unittest.main()
