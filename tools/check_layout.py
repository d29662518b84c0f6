#!/usr/bin/env python3
"""Checks the include rules of the source layout (docs/architecture.md).

Usage: python3 tools/check_layout.py [REPO_ROOT]   (default: the folder above tools/)

Fails (exit 1, one line per finding) when:
- a top-level folder includes one above it (engine <- envs, privacy <- algos <- tools), or the
  Python module (python/) includes the CLI (tools/): it binds the library's public API;
- inside engine/, the core includes nn/ or data/, or nn/ and data/ include each other;
- a .cpp/.hpp stands directly in algos/ (every file lives in a family folder);
- algos/core/ includes anything else of algos/, or algos/audit/ anything but core/ and audit/;
- a learner family includes run/, or another family's header other than the few building blocks
  that family exports on purpose (EXPORTS below);
- the folders of algos/ include each other in a cycle;
- a file other than online/dqn.* and run/ (registration) includes algos/online/dqn.hpp;
- a quoted include names no file (from the root or beside the including file).
Standard library only; ctest runs it (label unit).
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
TOP = ["engine", "envs", "privacy", "algos", "tools", "python"]
GENERATED = {"engine/version.hpp"}  # written into the build tree by CMake
# what each top-level folder may include (besides itself)
TOP_ALLOWED = {
    "engine": set(),
    "envs": {"engine"},
    "privacy": {"engine"},
    "algos": {"engine", "envs", "privacy"},
    "tools": {"engine", "envs", "privacy", "algos"},
    "python": {"engine", "envs", "privacy", "algos"},
}
SHARED = {"core", "audit"}
LEARNERS = {"online", "actor_critic", "lsvi", "kickstart", "offline", "expert_level", "model_based"}
RUN = "run"
# Headers a learner family exports to other families on purpose: building blocks, not learners
# to be registered. Each entry: header -> families that may include it.
EXPORTS = {
    # kickstarting trains a PPO student; the expert-level PPO layers are PPO with fixed widths
    "algos/online/ppo.hpp": {"kickstart", "expert_level"},
    # PriMORL's policy stage is the SAC update on model rollouts; its data are DDPG runs
    "algos/online/sac_learner.hpp": {"model_based"},
    "algos/online/ddpg.hpp": {"model_based"},
    # selective DP-SGD (expert-level) runs the offline learners' private step
    "algos/offline/offline_learner.hpp": {"expert_level"},
}


def sources(root, folder):
    for d, _, names in os.walk(os.path.join(root, folder)):
        for n in sorted(names):
            if n.endswith((".cpp", ".hpp")):
                p = os.path.join(d, n)
                yield os.path.relpath(p, root).replace(os.sep, "/")


def includes(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def algos_folder(path):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else None


def engine_part(path):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else "core"


def find_cycle(graph):
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def check(root):
    errors = []
    graph = {}
    for top in TOP:
        for f in sources(root, top):
            for inc in includes(root, f):
                head = inc.split("/")[0]
                if head not in TOP:
                    continue
                if head != top and head not in TOP_ALLOWED[top]:
                    errors.append(f"{f}: includes {inc} ({top}/ may not include {head}/)")
                if top == "engine" and head == "engine":
                    a, b = engine_part(f), engine_part(inc)
                    if a != b and (a == "core" or b != "core"):
                        errors.append(f"{f}: includes {inc} (engine {a} may include only the "
                                      "engine core)")
                if inc == "algos/online/dqn.hpp" and not (
                        f.startswith("algos/online/dqn.") or f.startswith("algos/run/")
                        or f.endswith("/dqn_test.cpp")):
                    errors.append(f"{f}: includes algos/online/dqn.hpp (network sizes and "
                                  "initialisation are in algos/core/networks.hpp)")
                if top != "algos" or head != "algos":
                    continue
                src, dst = algos_folder(f), algos_folder(inc)
                if src is None or dst is None or src == dst:
                    continue
                graph.setdefault(src, set()).add(dst)
                if src == "core":
                    errors.append(f"{f}: includes {inc} (core/ includes nothing else of algos/)")
                elif src == "audit" and dst != "core":
                    errors.append(f"{f}: includes {inc} (audit/ includes only core/)")
                elif src in LEARNERS and dst == RUN:
                    errors.append(f"{f}: includes {inc} (a learner never includes run/)")
                elif src in LEARNERS and dst in LEARNERS and src not in EXPORTS.get(inc, ()):
                    errors.append(f"{f}: includes {inc} (a learner includes core/, audit/ and "
                                  "its own family, not another learner's header)")
                elif src not in SHARED | LEARNERS | {RUN}:
                    errors.append(f"{f}: in algos/{src}/, a folder docs/architecture.md does not "
                                  "name")
    for top in TOP + ["tests"]:
        for f in sources(root, top):
            for inc in includes(root, f):
                if inc in GENERATED or os.path.isfile(os.path.join(root, inc)):
                    continue
                if not os.path.isfile(os.path.join(root, os.path.dirname(f), inc)):
                    errors.append(f"{f}: includes {inc}, which is no file")
    for f in sources(root, "algos"):
        if f.count("/") == 1:
            errors.append(f"{f}: stands directly in algos/ (put it in its family's folder)")
    cycle = find_cycle(graph)
    if cycle:
        errors.append("algos/ folders include each other in a cycle: " + " -> ".join(cycle))
    return errors


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    if not os.path.isdir(os.path.join(root, "algos")):
        print(f"check_layout: {root} has no algos/ folder", file=sys.stderr)
        return 2
    errors = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"check_layout: {len(errors)} finding(s)", file=sys.stderr)
        return 1
    print("check_layout: include rules hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
