#!/usr/bin/env python3
"""Paper 001 report: turns the sweep directories of configs/paper001/ into the paper's tables
(markdown) and figures (SVG, drawn by `dprl plot`).

Usage (after the sweeps in configs/paper001/ have run from the repository root):
    python3 tools/report_paper001.py [--runs runs/paper001] [--dprl build/dprl] [--out docs/paper001]
        [--archive docs/paper001/results.json] [--doc docs/paper001.md]

Every finished run under --runs is first recorded in the archive (--archive: its summary and the
metrics.csv columns read below; the Table 1 grid keeps only each run's last-100-episode return),
and the report is then computed from the archive alone, so it regenerates byte for byte where the
run directories are gone. The markdown replaces the part of --doc between the BEGIN/END GENERATED
markers.

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
  - Figures 2, 3 and 5 again at the tuned step sizes (sweeps fig*_mdp100_tuned, fig*_taxi_tuned);
  - the non-private Table 1 step-size grid (table1_mdp100_nondp): how many settings learn, the best
    ones, and the rank of the paper's Table 2 setting.
SVGs go to --out. Only the standard library is used.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import RunArchive, num, read_runs, replace_block, trim_summary  # noqa: E402
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
    labels = [a for label in runs for a in ("--label", label)]
    cmd = [dprl, "plot", *dirs, "--x", "episode", "--y", "return", "-o", out_svg, "--title", title,
           *labels]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


PAPER_TABLE2 = {"mdp100": "alpha_w=0.5,alpha_v=0.01,alpha_u=0.5,lambda=0.8"}


def grid_table(runs, env, title):
    """The non-private step-size grid: mean last-100-episode return per setting over its seeds."""
    means = []
    for label, items in runs.items():
        vals = [num((s.get("extra") or {}).get("last100")) for s, _, _ in items]
        m = mean_sd(vals)[0]
        if m is not None:
            means.append((m, label, len(items)))
    if not means:
        return ""
    means.sort(key=lambda t: (-t[0], t[1]))
    paper = PAPER_TABLE2.get(env)
    rank = next((i + 1 for i, (_, l, _) in enumerate(means) if l == paper), None)
    lines = [f"#### {title}", "",
             f"{len(means)} settings, {sum(n for *_, n in means)} runs; "
             f"{sum(1 for m, *_ in means if m > -130)} settings score better than -130 "
             "(mean over seeds of the last-100-episode return)."
             + (f" The paper's Table 2 setting ({paper}) ranks {rank} of {len(means)} at "
                f"{means[rank - 1][0]:.1f}." if rank else ""), "",
             "| rank | setting | seeds | return, last 100 episodes |", "|---|---|---|---|"]
    for i, (m, label, n) in enumerate(means[:10]):
        lines.append(f"| {i + 1} | {label} | {n} | {m:.1f} |")
    return "\n".join(lines) + "\n"


def columns_for(sweep):
    if sweep.startswith("table1_"):
        return []
    if sweep.startswith("fig2_"):
        return ["episode", "return", "cos_u", "cos_v"]
    return ["episode", "return"]


def trim(summary, rows):
    out = trim_summary(summary)
    out.pop("git_commit", None)
    out["extra"] = {k: v for k, v in (out.get("extra") or {}).items() if k == "diverged"}
    if out.get("privacy") is not None:
        out["privacy"] = {k: summary["privacy"].get(k) for k in ("epsilon", "delta", "accountant")
                          if k in summary["privacy"]}
    rets = [num(r.get("return")) for r in rows[-100:]]
    out["extra"]["last100"] = mean_sd(rets)[0]
    return out


ENVS = (("mdp100", "MDP-100", "paper 001 Table 2 parameters"),
        ("taxi", "Taxi-v3", "paper 001 Table 2 parameters"),
        ("mdp100_tuned", "MDP-100, tuned step sizes",
         "alpha_w 0.05, alpha_v 0.05, alpha_u 0.001, lambda 0.99"),
        ("taxi_tuned", "Taxi-v3, MDP-100's tuned step sizes",
         "alpha_w 0.05, alpha_v 0.05, alpha_u 0.001, lambda 0.99"))


def report(root, dprl, out):
    md = []
    for env, name, params in ENVS:
        fig2 = read_runs(os.path.join(root, f"fig2_{env}"))
        if fig2:
            md.append(performance_table(fig2, f"Figure 2 and Table 3, {name}"))
            md.append(similarity_table(fig2, f"Table 4, {name}"))
            plot(dprl, fig2, os.path.join(out, f"fig2_{env}.svg"),
                 f"{name}: non-DP and DP variants ({params})")
        fig3 = read_runs(os.path.join(root, f"fig3_{env}"))
        if fig3:
            md.append(performance_table(fig3, f"Figure 3, {name}: privacy budgets"))
            for dp in ("actor", "critic", "both"):
                sub = {k: v for k, v in fig3.items() if k.startswith(f"dp={dp},")}
                plot(dprl, sub, os.path.join(out, f"fig3_{env}_{dp}.svg"),
                     f"{name}: DP-{dp.capitalize()} by epsilon")
        fig5 = read_runs(os.path.join(root, f"fig5_{env}"))
        if fig5:
            md.append(performance_table(fig5, f"Figure 5, {name}: epsilon-greedy vs softmax"))
            plot(dprl, fig5, os.path.join(out, f"fig5_{env}.svg"),
                 f"{name}: DP-Actor, epsilon-greedy vs softmax")
    grid = read_runs(os.path.join(root, "table1_mdp100_nondp"))
    if grid:
        md.append(grid_table(grid, "mdp100", "Table 1 step-size grid, non-private, MDP-100"))
    return "\n".join(md)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="runs/paper001")
    ap.add_argument("--dprl", default="build/dprl")
    ap.add_argument("--out", default="docs/paper001")
    ap.add_argument("--archive", default="docs/paper001/results.json")
    ap.add_argument("--doc", default="docs/paper001.md")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    archive = RunArchive(args.archive)
    archive.sync(args.runs, columns_for, trim, digits=4)
    archive.save()
    with tempfile.TemporaryDirectory() as tmp:
        archive.materialise(tmp)
        body = report(tmp, args.dprl, args.out)
    replace_block(args.doc, body)


if __name__ == "__main__":
    main()
