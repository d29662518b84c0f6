#!/usr/bin/env python3
"""Paper 001 report: turns the sweep directories of configs/paper001/ into the paper's tables
(markdown) and figures (SVG, drawn by `dprl plot`).

Usage (after the sweeps in configs/paper001/ have run from the repository root):
    python3 tools/report_paper001.py [--runs runs/paper001] [--dprl build/dprl] [--out docs/paper001]

It reads each run's metrics.csv (one row per episode: step, episode, return, length, epsilon,
cos_u, cos_v) and summary.json, and prints markdown to stdout:
  - Figure 2: mean training return over the last 100 episodes and the final evaluation, per variant,
    with the number of runs whose weights diverged (training stopped early; their figures describe
    a broken learner);
  - Table 3: standard deviation of performance, two readings: the pooled standard deviation of the
    per-episode returns over all runs and episodes, and the standard deviation across runs of each
    run's mean return;
  - Table 4: mean (variance over episodes, averaged over runs) of the cosine similarity between the
    traces of each private run and its paired non-private twin;
  - Figure 3: last-100-episode return per privacy budget and variant;
  - Figure 5: epsilon-greedy against softmax target selection for DP-Actor.
SVGs go to --out. Only the standard library is used.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import num, read_runs  # noqa: E402
from report_common import mean_sd as mean_sd_in  # noqa: E402


def mean_sd(xs):
    """Mean and sample sd; sd 0 for a single value."""
    return mean_sd_in(xs, 0.0)


def fmt(m, sd=None, digits=1):
    if m is None:
        return "-"
    return f"{m:.{digits}f}" if sd is None else f"{m:.{digits}f} ± {sd:.{digits}f}"


def performance_table(runs, title):
    lines = [f"#### {title}", "",
             "| variant | runs | diverged | return, last 100 episodes | final evaluation | "
             "pooled sd of episode returns | sd across runs of mean return |",
             "|---|---|---|---|---|---|---|"]
    for label, items in runs.items():
        last100 = [mean_sd([num(r["return"]) for r in rows[-100:]])[0] for _, rows, _ in items]
        evals = [s["final_eval"]["return_mean"] for s, _, _ in items]
        pooled = [num(r["return"]) for _, rows, _ in items for r in rows]
        run_means = [mean_sd([num(r["return"]) for r in rows])[0] for _, rows, _ in items]
        diverged = sum(1 for summary, _, _ in items if summary.get("extra", {}).get("diverged") == 1)
        lines.append(f"| {label} | {len(items)} | {diverged} | {fmt(*mean_sd(last100))} | "
                     f"{fmt(*mean_sd(evals))} | {fmt(mean_sd(pooled)[1])} | "
                     f"{fmt(mean_sd(run_means)[1])} |")
    return "\n".join(lines) + "\n"


def similarity_table(runs, title):
    lines = [f"#### {title}", "", "| variant | cos(e_u) mean (var) | cos(e_v) mean (var) |",
             "|---|---|---|"]
    for label, items in runs.items():
        cells = []
        for key in ("cos_u", "cos_v"):
            means, variances = [], []
            for _, rows, _ in items:
                m, sd = mean_sd([num(r.get(key)) for r in rows])
                if m is not None:
                    means.append(m)
                    variances.append(sd * sd)
            cells.append("-" if not means else
                         f"{sum(means) / len(means):.4f} ({sum(variances) / len(variances):.4f})")
        if cells != ["-", "-"]:
            lines.append(f"| {label} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


def plot(dprl, runs, out_svg, title):
    dirs = [d for items in runs.values() for _, _, d in items]
    if not dirs:
        return
    cmd = [dprl, "plot", *dirs, "--x", "episode", "--y", "return", "-o", out_svg, "--title", title]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="runs/paper001")
    ap.add_argument("--dprl", default="build/dprl")
    ap.add_argument("--out", default="docs/paper001")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    md = []
    for env, name in (("mdp100", "MDP-100"), ("taxi", "Taxi-v3")):
        fig2 = read_runs(os.path.join(args.runs, f"fig2_{env}"))
        if fig2:
            md.append(performance_table(fig2, f"Figure 2 and Table 3, {name}"))
            md.append(similarity_table(fig2, f"Table 4, {name}"))
            plot(args.dprl, fig2, os.path.join(args.out, f"fig2_{env}.svg"),
                 f"{name}: non-DP and DP variants (paper 001 Table 2 parameters)")
        fig3 = read_runs(os.path.join(args.runs, f"fig3_{env}"))
        if fig3:
            md.append(performance_table(fig3, f"Figure 3, {name}: privacy budgets"))
            for dp in ("actor", "critic", "both"):
                sub = {k: v for k, v in fig3.items() if k.startswith(f"dp={dp},")}
                plot(args.dprl, sub, os.path.join(args.out, f"fig3_{env}_{dp}.svg"),
                     f"{name}: DP-{dp.capitalize()} by epsilon")
        fig5 = read_runs(os.path.join(args.runs, f"fig5_{env}"))
        if fig5:
            md.append(performance_table(fig5, f"Figure 5, {name}: epsilon-greedy vs softmax"))
            plot(args.dprl, fig5, os.path.join(args.out, f"fig5_{env}.svg"),
                 f"{name}: DP-Actor, epsilon-greedy vs softmax")
    sys.stdout.write("\n".join(md))


if __name__ == "__main__":
    main()
