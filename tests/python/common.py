"""Shared helpers of the Python module's tests: the CLI next to the module, and scratch folders.

ctest sets DPRL_EXE (the dprl executable), DPRL_SOURCE_DIR and PYTHONPATH (build/python); run by
hand, the defaults are build/dprl and the repository holding this file.
"""
import json
import os
import subprocess
import sys
import tempfile

SOURCE_DIR = os.environ.get(
    "DPRL_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DPRL_EXE = os.environ.get("DPRL_EXE", os.path.join(SOURCE_DIR, "build", "dprl"))
if "dprl" not in sys.modules:
    sys.path.insert(0, os.path.join(os.path.dirname(DPRL_EXE), "python"))


def cli(*args, check=True, cwd=None):
    """Runs dprl with args; returns (exit status, stdout, stderr)."""
    p = subprocess.run([DPRL_EXE, *map(str, args)], capture_output=True, text=True, cwd=cwd)
    if check and p.returncode != 0:
        raise AssertionError(f"dprl {' '.join(map(str, args))}: exit {p.returncode}: {p.stderr}")
    return p.returncode, p.stdout, p.stderr


def cli_json(*args, cwd=None):
    return json.loads(cli(*args, cwd=cwd)[1])


def cli_error(*args):
    """The one-line message of a failing dprl command (without the 'dprl: ' prefix)."""
    rc, _, err = cli(*args, check=False)
    assert rc == 2, f"dprl {' '.join(map(str, args))}: exit {rc}, expected 2"
    line = err.strip().splitlines()[-1]
    assert line.startswith("dprl: "), line
    return line[len("dprl: "):]


def scratch():
    """A fresh temporary folder (removed by the caller's TemporaryDirectory context)."""
    return tempfile.TemporaryDirectory(prefix="dprl_python_")
