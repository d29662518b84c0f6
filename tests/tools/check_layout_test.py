#!/usr/bin/env python3
"""tools/check_layout.py: the repository passes, and each rule fails on a tree that breaks it.

Usage: python3 tests/tools/check_layout_test.py  (ctest: layout/check_layout, label unit)
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, "tools", "check_layout.py")

# A minimal tree that keeps every rule.
GOOD = {
    "engine/rng.hpp": "",
    "engine/nn/nn_mlp.hpp": '#include "engine/rng.hpp"\n',
    "engine/data/dataset.hpp": '#include "engine/rng.hpp"\n',
    "envs/cartpole.hpp": '#include "engine/rng.hpp"\n',
    "privacy/mechanisms.hpp": '#include "engine/rng.hpp"\n',
    "algos/core/algorithm.hpp": '#include "engine/nn/nn_mlp.hpp"\n',
    "algos/core/networks.hpp": '#include "engine/nn/nn_mlp.hpp"\n',
    "algos/audit/audit_report.hpp": '#include "algos/core/algorithm.hpp"\n',
    "algos/online/dqn.hpp": '#include "algos/core/algorithm.hpp"\n',
    "algos/online/dqn.cpp": '#include "algos/online/dqn.hpp"\n#include "algos/core/networks.hpp"\n',
    "algos/online/ppo.hpp": '#include "algos/core/algorithm.hpp"\n',
    "algos/kickstart/kickstart_ppo.hpp": '#include "algos/online/ppo.hpp"\n',
    "algos/offline/bc.cpp": '#include "algos/core/networks.hpp"\n#include "algos/audit/audit_report.hpp"\n',
    "algos/run/register_algos.cpp": '#include "algos/online/dqn.hpp"\n#include "algos/offline/bc.hpp"\n',
    "algos/offline/bc.hpp": '#include "algos/core/algorithm.hpp"\n',
    "algos/run/experiment.hpp": '#include "algos/online/dqn.hpp"\n',
    "tools/cli.cpp": '#include "algos/run/experiment.hpp"\n',
    "python/src/run.cpp": '#include "algos/run/experiment.hpp"\n',
    "tests/algos/offline/offline_test_util.hpp": "",
    "tests/algos/offline/bc_test.cpp": '#include "offline_test_util.hpp"\n',
}

# Each case: (what it breaks, files added or replaced).
BAD = [
    ("engine includes envs", {"engine/env.cpp": '#include "envs/cartpole.hpp"\n'}),
    ("privacy includes algos", {"privacy/x.cpp": '#include "algos/core/algorithm.hpp"\n'}),
    ("the Python module includes the CLI", {"python/src/x.cpp": '#include "tools/cli.hpp"\n'}),
    ("engine core includes nn", {"engine/rng.cpp": '#include "engine/nn/nn_mlp.hpp"\n'}),
    ("nn includes data", {"engine/nn/x.cpp": '#include "engine/data/dataset.hpp"\n'}),
    ("a file directly in algos", {"algos/stray.cpp": "\n"}),
    ("core includes a learner", {"algos/core/x.cpp": '#include "algos/online/dqn.hpp"\n'}),
    ("audit includes a learner", {"algos/audit/x.cpp": '#include "algos/offline/bc.hpp"\n'}),
    ("a learner includes run", {"algos/offline/x.cpp": '#include "algos/run/sweep.hpp"\n'}),
    ("a learner includes another learner",
     {"algos/offline/x.cpp": '#include "algos/lsvi/lsvi_ucb.hpp"\n'}),
    ("an export used by a family it is not exported to",
     {"algos/lsvi/x.cpp": '#include "algos/online/ppo.hpp"\n'}),
    ("dqn.hpp included for the network helpers",
     {"tools/cli_population.cpp": '#include "algos/online/dqn.hpp"\n'}),
    ("a folder the layout does not name", {"algos/misc/x.cpp": '#include "algos/core/algorithm.hpp"\n'}),
    ("an include that names no file",
     {"tests/algos/offline/x_test.cpp": '#include "tests/algos/stray_util.hpp"\n'}),
    ("a cycle through run and a shared folder",
     {"algos/audit/x.cpp": '#include "algos/run/sweep.hpp"\n',
      "algos/run/sweep.hpp": '#include "algos/audit/audit_report.hpp"\n'}),
]


def run(tree):
    with tempfile.TemporaryDirectory() as d:
        for rel, text in tree.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        r = subprocess.run([sys.executable, CHECK, d], capture_output=True, text=True)
        return r.returncode, r.stdout


def main():
    failures = []
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, os.path.dirname(CHECK))
    import check_layout  # the cycle search itself (every cycle above also breaks another rule)
    if check_layout.find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) != ["a", "b", "c", "a"]:
        failures.append("find_cycle misses a -> b -> c -> a")
    if check_layout.find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is not None:
        failures.append("find_cycle reports a cycle in a diamond")
    rc, out = run(GOOD)
    if rc != 0:
        failures.append(f"the minimal good tree fails:\n{out}")
    for what, extra in BAD:
        rc, out = run({**GOOD, **extra})
        if rc != 1 or not out.strip():
            failures.append(f"not caught: {what} (exit {rc})")
    r = subprocess.run([sys.executable, CHECK, ROOT], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"the repository breaks the layout rules:\n{r.stdout}")
    for f in failures:
        print("FAIL: " + f)
    print(f"check_layout_test: {len(BAD) + 4 - len(failures)} of {len(BAD) + 4} checks pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
