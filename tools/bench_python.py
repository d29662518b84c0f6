#!/usr/bin/env python3
"""Speed of the Python module dprl (docs/python.md, docs/benchmarks.md): standard library + numpy.

    PYTHONPATH=build/python python3 tools/bench_python.py [--repetitions 5] [--cli build/dprl]
                                                          [--json]

Measures, as medians over repetitions:
  step        env.step from a Python loop on CartPole-v1 (random actions, reset on episode end):
              ns per call, the loop included (what a Python training loop pays)
  vec         make_vec("CartPole-v1", 64).step: ns per env step, with new arrays every call
              (copy=True, the default) and with reused ones (copy=False)
Both as process CPU time and as wall time: on a shared machine (load average above the core
count) the CPU time is the figure to compare, as docs/benchmarks.md does.
  pld         dprl.privacy.epsilon(accountant="pld") for 10^4 compositions of the Poisson-
              subsampled Gaussian at delta 1e-5 (value interval 1e-4), the two cases of
              docs/benchmarks.md's privacy table; process CPU time (the PLD's second direction
              runs on a second thread) and wall time, and the ratio to dp_accounting 0.6.0's CPU
              time quoted there
Targets (issue 32): step <= 1000 ns, vec <= 40 ns per env step, pld >= 10x dp_accounting.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import time

import numpy as np

import dprl

# dp_accounting 0.6.0's CPU time for the same two inputs, quoted from docs/benchmarks.md
# ("Privacy core"): z = 0.25, q = 1e-3 and z = 0.8, q = 0.01, T = 10^4, interval 1e-4
DP_ACCOUNTING_MS = {(0.25, 1e-3): 3465.0, (0.8, 0.01): 683.0}


def bench_step(steps):
    env = dprl.make("CartPole-v1")
    actions = np.random.default_rng(0).integers(0, 2, size=steps).tolist()
    step, reset = env.step, env.reset
    reset(seed=0)
    cpu, wall = time.process_time(), time.perf_counter()
    for a in actions:
        _, _, terminated, truncated, _ = step(a)
        if terminated or truncated:
            reset()
    return ((time.process_time() - cpu) * 1e9 / steps, (time.perf_counter() - wall) * 1e9 / steps)


def bench_vec(calls, num_envs, copy):
    envs = dprl.make_vec("CartPole-v1", num_envs, copy=copy)
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    batches = [rng.integers(0, 2, size=num_envs) for _ in range(64)]
    step = envs.step
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(calls):
        step(batches[i & 63])
    n = calls * num_envs
    return ((time.process_time() - cpu) * 1e9 / n, (time.perf_counter() - wall) * 1e9 / n)


def bench_pld(z, q):
    cpu, wall = time.process_time(), time.perf_counter()
    eps = dprl.privacy.epsilon(noise_multiplier=z, sampling_rate=q, steps=10000, delta=1e-5,
                               accountant="pld")
    return (time.process_time() - cpu) * 1e3, (time.perf_counter() - wall) * 1e3, eps


def bench_cli_pld(exe, z, q):
    """The same figure from the CLI (children's CPU time, wall time): the Python layer's share."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run([exe, "privacy", "epsilon", "-z", str(z), "-q", str(q), "-T", "10000",
                    "--delta", "1e-5", "--accountant", "pld"], check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu * 1e3, wall * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--steps", type=int, default=500000, help="env.step calls per repetition")
    ap.add_argument("--vec-calls", type=int, default=20000, help="make_vec steps per repetition")
    ap.add_argument("--cli", help="the dprl executable: also time the PLD cases through the CLI "
                    "(a whole process: start-up included)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    r = a.repetitions
    out = {"load_average_before": os.getloadavg()[0]}
    runs = [bench_step(a.steps) for _ in range(r)]
    out["step_ns_cpu"] = statistics.median(x[0] for x in runs)
    out["step_ns_wall"] = statistics.median(x[1] for x in runs)
    for copy in (True, False):
        runs = [bench_vec(a.vec_calls, 64, copy) for _ in range(r)]
        name = f"vec64_copy_{copy}".lower()
        out[name + "_ns_cpu"] = statistics.median(x[0] for x in runs)
        out[name + "_ns_wall"] = statistics.median(x[1] for x in runs)
    if a.cli:
        # the engine's own loop on the same env at the same time (C++, wall ns per step): what
        # the Python figures compare with when the machine is loaded
        runs = [json.loads(subprocess.run(
            [a.cli, "bench", "env", "CartPole-v1", "--steps", "5000000", "--json"], check=True,
            capture_output=True, text=True).stdout)["ns_per_step"] for _ in range(r)]
        out["cli_bench_env_ns"] = statistics.median(runs)
    pld = []
    for (z, q), theirs in DP_ACCOUNTING_MS.items():
        runs = [bench_pld(z, q) for _ in range(r)]
        cpu = statistics.median(x[0] for x in runs)
        pld.append({"noise_multiplier": z, "sampling_rate": q, "steps": 10000,
                    "epsilon": runs[0][2], "cpu_ms": cpu,
                    "wall_ms": statistics.median(x[1] for x in runs),
                    "dp_accounting_cpu_ms": theirs, "speedup": theirs / cpu})
        if a.cli:
            runs = [bench_cli_pld(a.cli, z, q) for _ in range(r)]
            pld[-1]["cli_cpu_ms"] = statistics.median(x[0] for x in runs)
            pld[-1]["cli_wall_ms"] = statistics.median(x[1] for x in runs)
    out["pld"] = pld
    out["load_average_after"] = os.getloadavg()[0]
    if a.json:
        print(json.dumps(out))
        return
    print(f"load average (1 min): {out['load_average_before']:.2f} before, "
          f"{out['load_average_after']:.2f} after; medians of {r}")
    print(f"env.step (CartPole-v1, Python loop): {out['step_ns_cpu']:.0f} ns CPU, "
          f"{out['step_ns_wall']:.0f} ns wall per call (target <= 1000)")
    for copy in ("true", "false"):
        print(f"make_vec(64).step, copy={copy.title()}: {out[f'vec64_copy_{copy}_ns_cpu']:.1f} ns "
              f"CPU, {out[f'vec64_copy_{copy}_ns_wall']:.1f} ns wall per env step (target <= 40)")
    if "cli_bench_env_ns" in out:
        print(f"  the engine's own loop (dprl bench env CartPole-v1): "
              f"{out['cli_bench_env_ns']:.1f} ns wall per step")
    for p in pld:
        print(f"PLD epsilon, z = {p['noise_multiplier']}, q = {p['sampling_rate']}, T = 10^4: "
              f"{p['cpu_ms']:.1f} ms CPU, {p['wall_ms']:.1f} ms wall (epsilon {p['epsilon']:.4f}); "
              f"dp_accounting {p['dp_accounting_cpu_ms']:.0f} ms: {p['speedup']:.1f}x "
              f"(target >= 10x)")
        if "cli_cpu_ms" in p:
            print(f"  the same through the CLI: {p['cli_cpu_ms']:.1f} ms CPU, "
                  f"{p['cli_wall_ms']:.1f} ms wall")


if __name__ == "__main__":
    main()
