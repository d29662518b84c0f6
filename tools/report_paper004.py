#!/usr/bin/python3
"""Paper 004 (PriMORL) report: reads runs/paper004/<config>/base/seed<k>/ (the sweeps in
configs/paper004/sweeps/; runs no longer on disk come from docs/paper004/results.json) and
rewrites the generated part of docs/paper004.md (between the BEGIN/END GENERATED markers): Table 1 (returns normalised by
our MOPO, beside the paper's percentages), Table 10 (clipping x uncertainty), the (z, q, T) -> eps
table from `dprl privacy epsilon` beside the printed values, per-stage times, and one SVG learning
curve per Table 1 row (docs/paper004/).

Usage: /usr/bin/python3 tools/report_paper004.py [--runs runs/paper004] [--dprl build/dprl]
       /usr/bin/python3 tools/report_paper004.py --run-paper-scale [--commit] [--dprl PATH]

--run-paper-scale runs Table 1 Pendulum at the paper's scale (configs/paper004/pendulum_paper_*.yaml,
their sweeps in configs/paper004/sweeps/) one cell (row, seed) at a time, seed 1 of every row
first, then seed 2, ...; a cell already archived in docs/paper004/results.json is skipped, a cell
finished on disk is archived without running again, and a run directory left by a killed process
is moved to runs/paper004/killed/ and the cell run again from the start. After every cell the
archive and this page are rewritten and, with --commit, committed ("paper 004: archive <cell>"), so
a process killed at any point loses at most the cell it was running. The first cell collects the
6 x 1M-step DDPG data set into runs/paper004/data (cached for all the others).
"""
import argparse
import csv
import json
import math
import os
import statistics
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import (Archive, commit_files, dataset_info, log,  # noqa: E402
                           plot_series, run_sweep_seeds, trim_summary)

PAPER_T1 = {  # Table 1: return, percentage of MOPO, epsilon
    "pendulum_mopo": ("795.9 ± 6.5", "100%", "inf"),
    "pendulum_no_priv": ("810.4 ± 27.45", "101.8%", "inf"),
    "pendulum_low": ("817.4 ± 21.57", "102.7%", "22.3"),
    "pendulum_high": ("778.9 ± 53.5", "97.9%", "5.1"),
    "balance_mopo": ("976.3 ± 26.8", "100%", "inf"),
    "balance_no_priv": ("947.5 ± 68.3", "97.1%", "inf"),
    "balance_low": ("815.8 ± 97.2", "83.6%", "85.0"),
    "balance_high": ("758.2 ± 187.2", "77.7%", "8.2"),
    "swingup_mopo": ("804.9 ± 89.6", "100%", "inf"),
    "swingup_no_priv": ("774.1 ± 81.7", "96.17%", "inf"),
    "swingup_low": ("772.4 ± 73.9", "95.96%", "94.2"),
    "swingup_high": ("698.3 ± 57.5", "86.75%", "17.0"),
}
# A uniformly random policy's Pendulum return, the zero of the normalised score (Pendulum's returns
# are negative, so a ratio of returns misleads): `dprl eval --env pendulum --policy random
# --episodes 1000 --seed 1` (mean -1230.9, sd 283.6).
PENDULUM_RANDOM = -1230.9036488523134


def normalised(m, mopo_m):
    """100 (m - random) / (MOPO - random): 0 is the random policy, 100 our MOPO."""
    if m is None or mopo_m is None:
        return ""
    return f"{100 * (m - PENDULUM_RANDOM) / (mopo_m - PENDULUM_RANDOM):.1f}"


TASKS = (("pendulum", "Pendulum", 0.35, 0.52), ("balance", "Cartpole balance", 0.25, 0.45),
         ("swingup", "Cartpole swingup", 0.25, 0.38))
PAPER_T10 = {  # Table 10, Pendulum
    ("035", "ma", "lc"): "734.5 ± 28.9", ("035", "mpd", "lc"): "817.4 ± 21.7",
    ("035", "ma", "fc"): "638.9 ± 91.7", ("035", "mpd", "fc"): "757.9 ± 76.5",
    ("052", "ma", "lc"): "750.1 ± 75.97", ("052", "mpd", "lc"): "778.9 ± 53.5",
    ("052", "ma", "fc"): "612.4 ± 76.8", ("052", "mpd", "fc"): "723.0 ± 47.0",
}
PAPER_T11 = (  # Table 11, HalfCheetah medium-expert (last 20 epochs)
    ("half_cheetah_mopo", "MOPO", "0", "10931 ± 1326"),
    ("half_cheetah_no_clip", "PriMORL no clip", "0", "7062 ± 2230"),
    ("half_cheetah_no_noise", "PriMORL no noise", "0", "8792 ± 2053"),
    ("half_cheetah_z1e-4", "PriMORL", "1e-4", "9729 ± 2018"),
    ("half_cheetah_z1e-3", "PriMORL", "1e-3", "3697 ± 1465"),
)
LONGER = (  # (cell, the same cell with a longer policy stage, label)
    ("pendulum_no_priv", "pendulum_no_priv_long", "Pendulum, PriMORL no privacy"),
    ("pendulum_low", "pendulum_low_long", "Pendulum, PriMORL low (z 0.35)"),
    ("pendulum_high", "pendulum_high_long", "Pendulum, PriMORL high (z 0.52)"),
    ("half_cheetah_mopo", "half_cheetah_mopo_long", "HalfCheetah, MOPO"),
    (None, "half_cheetah_z1e-4_long", "HalfCheetah, PriMORL z 1e-4, per-client Adam"),
)
EPS_ROWS = [  # task, variant, z, T, printed epsilon (q = 1e-3, delta = 1e-5)
    ("Pendulum", "Low", 0.35, 7000, 22.3), ("Pendulum", "High", 0.52, 7000, 5.1),
    ("Balance", "Low", 0.25, 7000, 85.0), ("Balance", "High", 0.45, 7000, 8.2),
    ("Swingup", "Low", 0.25, 10000, 94.2), ("Swingup", "High", 0.38, 10000, 17.0),
]
# Table 1 Pendulum at the paper's scale (configs/paper004/pendulum_paper_*.yaml): rows in page order
PAPER_ROWS = (("pendulum_paper_mopo", "MOPO", "pendulum_mopo"),
              ("pendulum_paper_no_priv", "PriMORL no privacy", "pendulum_no_priv"),
              ("pendulum_paper_low", "PriMORL low (z 0.35)", "pendulum_low"),
              ("pendulum_paper_high", "PriMORL high (z 0.52)", "pendulum_high"))
PAPER_SEEDS = (1, 2, 3, 4, 5)
# the order --run-paper-scale runs a seed's cells in: the private rows (the paper's claim) first,
# no privacy beside them, then MOPO (the reference, and the most expensive cell)
PAPER_RUN_ORDER = ("pendulum_paper_high", "pendulum_paper_low", "pendulum_paper_no_priv",
                   "pendulum_paper_mopo")
# Figure 3 (return against epsilon) at the paper's scale: the Table 1 rows and two more noise
# levels, so that four private epsilons span the paper's "1 to 10 range" and beyond
FIG3_EXTRA = (("pendulum_paper_z080", 0.8), ("pendulum_paper_z150", 1.5))
FIG3_ROWS = (("pendulum_paper_no_priv", 0.0), ("pendulum_paper_low", 0.35),
             ("pendulum_paper_high", 0.52)) + FIG3_EXTRA
FIGS = os.path.join("docs", "paper004")
BEGIN, END = "<!-- BEGIN GENERATED -->", "<!-- END GENERATED -->"
VERDICT_BEGIN, VERDICT_END = "<!-- BEGIN VERDICT -->", "<!-- END VERDICT -->"


ARCHIVE = None  # report_common.Archive over runs/paper004, set in main()


def seeds_of(name):
    """The finished runs of config `name`, on disk or archived, in seed order: the layout of its
    sweep (configs/paper004/sweeps/<name>.yaml), runs/paper004/<name>/base/seed<K>/."""
    d = os.path.join(name, "base")
    seeds = sorted(ARCHIVE.listdir(d), key=lambda s: (len(s), s))
    return [os.path.join(d, s) for s in seeds
            if ARCHIVE.json(os.path.join(d, s, "summary.json"), trim_summary) is not None]


def failures(name):
    """The seeds of config `name` whose run failed, with the first error (the sweep's
    failures.csv), e.g. a diverged model: 'failed (n): error'; '' when none."""
    rows = ARCHIVE.text(os.path.join(name, "failures.csv"),
                        lambda t: list(csv.DictReader(t.splitlines()))) or []
    done = {os.path.basename(d) for d in seeds_of(name)}
    rows = [r for r in rows if f"seed{r.get('seed', '')}" not in done]
    if not rows:
        return ""
    return f"failed ({len(rows)}): {rows[0].get('error', '').strip()}"


def score(run):
    s = ARCHIVE.json(os.path.join(run, "summary.json"), trim_summary)
    extra = s.get("extra", {})
    eps = s.get("privacy", {}) or {}
    return extra.get("return_last_window"), eps.get("epsilon"), s


def mean_ci(xs):
    if not xs:
        return None, None
    m = statistics.mean(xs)
    if len(xs) < 2:
        return m, None
    # Student t, two-sided 95%: with 2-5 seeds the normal 1.96 would understate the interval
    t = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571}.get(len(xs), 1.96)
    return m, t * statistics.stdev(xs) / math.sqrt(len(xs))


def fmt(m, ci):
    if m is None:
        return "not run"
    return f"{m:.1f}" + (f" ± {ci:.1f}" if ci is not None else " (1 seed)")


def epsilon(dprl, z, q, T, acc):
    out = subprocess.run([dprl, "privacy", "epsilon", "-z", str(z), "-q", str(q), "-T", str(T),
                          "--delta", "1e-5", "--accountant", acc, "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["epsilon"]


def curve(run):
    """(SAC updates, 10-episode evaluation mean) of every epoch of a run."""
    rows = ARCHIVE.text(os.path.join(run, "metrics.csv"), lambda t: [
        [float(r["step"]), float(r["return_mean"])] for r in csv.DictReader(t.splitlines())])
    return [tuple(r) for r in rows or []]


def generate(dprl):
    out = ["### Table 1 (our reduced scale)", "",
           "Return = mean over the last `final_window` epochs of the 10-episode evaluation "
           "means (Pendulum-v1 native reward, 200 steps: higher is better, 0 is the maximum; "
           "DMC cartpole: reward in [0, 1] per step, 1000 steps); ± is a 95% Student-t interval "
           "over seeds when there are several (wide with 2-3 seeds); the per-seed returns are "
           "listed in seed order. Percentages are of our MOPO (ours) and of the paper's MOPO "
           "(paper); the paper's Pendulum returns use an unstated reward transform, so only the "
           "percentages compare there.", "",
           "| task | method | seeds | our epsilon (RDP; PLD) | our return | per seed | % of our "
           "MOPO | paper epsilon | paper return | paper % |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for task, task_label, z_low, z_high in TASKS:
        out += table1_rows(task, task_label, z_low, z_high)
    out += ["", "For negative returns the percentage is MOPO / method (so 100% means equal and "
            "below 100% worse), the reading that keeps 'higher is better'.", "",
            "### Learning curves", "",
            "Real-environment return (10-episode mean) after each SAC epoch of 1000 updates; the "
            "line is the mean over seeds and the band its 95% interval (`dprl plot`; one seed: "
            "no band).", ""]
    for task, task_label, *_ in TASKS:
        series = {}
        for var in ("mopo", "no_priv", "low", "high"):
            for k, run in enumerate(seeds_of(f"{task}_{var}")):
                series[(var, k + 1)] = curve(run)
        if series:
            out.append(plot_series(series, "sac_updates", os.path.join(FIGS, f"{task}.svg"), dprl,
                                   FIGS, f"{task_label}: return per SAC epoch", y="return"))
    out += table10_and_rest(dprl)
    out += table11(dprl)
    out += longer_policy_stage()
    out += table1_paper_scale(dprl)
    out += figure3_paper_scale()
    out += paper_scale()
    out += datasets(dprl)
    return "\n".join(out)


def table1_rows(task, task_label, z_low, z_high):
    out = []
    mopo = [score(d)[0] for d in seeds_of(f"{task}_mopo")]
    mopo_m = statistics.mean(mopo) if mopo else None
    for name, label in ((f"{task}_mopo", "MOPO"), (f"{task}_no_priv", "PriMORL no privacy"),
                        (f"{task}_low", f"PriMORL low (z {z_low})"),
                        (f"{task}_high", f"PriMORL high (z {z_high})")):
        dirs = seeds_of(name)
        vals = [score(d)[0] for d in dirs]
        m, ci = mean_ci(vals)
        eps = "inf"
        if dirs:
            s = score(dirs[0])[2]
            pr = s.get("privacy") or {}
            det = json.loads(pr["details_json"]) if isinstance(pr.get("details_json"), str) else {}
            e = pr.get("epsilon")
            if e not in (None, "inf"):
                pld = (pr.get("details") or det).get("epsilon_pld")
                eps = f"{e:.1f}" + (f"; {pld:.1f}" if isinstance(pld, (int, float)) else "")
        # percentages of a negative-return MOPO: ratio of returns (both negative) is inverted
        pct = "" if m is None or not mopo_m else f"{100 * mopo_m / m:.1f}%" if m < 0 else \
            f"{100 * m / mopo_m:.1f}%"
        pe, pr_ret, pp = PAPER_T1[name][2], PAPER_T1[name][0], PAPER_T1[name][1]
        per = ", ".join(f"{v:.0f}" for v in vals)
        out.append(f"| {task_label} | {label} | {len(dirs)} | {eps} | {fmt(m, ci)} | {per} | "
                   f"{pct} | {pe} | {pr_ret} | {pp} |")
    return out


def table10_and_rest(dprl):
    out = ["### Table 10 (Pendulum, clipping x uncertainty)", "",
            "| z | MA + LC | MPD + LC | MA + FC | MPD + FC |", "|---|---|---|---|---|"]
    for zn, z in (("035", "0.35"), ("052", "0.52")):
        cells = []
        for pn, cn in (("ma", "lc"), ("mpd", "lc"), ("ma", "fc"), ("mpd", "fc")):
            # MPD + LC is Table 1's low (z 0.35) and high (z 0.52) configuration: its runs
            name = f"pendulum_{'low' if zn == '035' else 'high'}" if (pn, cn) == ("mpd", "lc") \
                else f"pendulum_t10_{pn}_{cn}_z{zn}"
            vals = [score(d)[0] for d in seeds_of(name)]
            m, ci = mean_ci(vals)
            cells.append(f"{fmt(m, ci)}, {len(vals)} seeds (paper {PAPER_T10[(zn, pn, cn)]})")
        out.append(f"| {z} | " + " | ".join(cells) + " |")
    out += ["", "### (z, q, T) -> epsilon (delta = 1e-5)", "",
            "| task | variant | z | q | T | printed | ours RDP (CKS) | ours PLD |",
            "|---|---|---|---|---|---|---|---|"]
    for task, var, z, T, printed in EPS_ROWS:
        r, p = epsilon(dprl, z, 1e-3, T, "rdp"), epsilon(dprl, z, 1e-3, T, "pld")
        out.append(f"| {task} | {var} | {z} | 0.001 | {T} | {printed} | {r:.2f} | {p:.2f} |")
    # the reduced configs' (q, T): Pendulum 600 trajectories, DMC cartpole 300 (q K ~ 30)
    for (task, label, z_low, z_high), q, T in zip(TASKS, (0.05, 0.1, 0.1), (3000, 2000, 2000)):
        for var, z in (("Low", z_low), ("High", z_high)):
            r, p = epsilon(dprl, z, q, T, "rdp"), epsilon(dprl, z, q, T, "pld")
            out.append(f"| {label}, our scale | {var} | {z} | {q} | {T} | - | {r:.2f} | {p:.2f} |")
    out += ["", "### Time per stage (CPU seconds of the run, wall in brackets)", "",
            "\\* CPU seconds of the whole process, recorded before runs measured their own: "
            "these runs shared a `--jobs 2` sweep process with another run, so the figure "
            "counts both (the wall time is the run's own, stretched by whatever else ran).", "",
            "| config | seed | data | model | policy | total |", "|---|---|---|---|---|---|"]
    names = [f"{t}_{v}" for t, *_ in TASKS for v in ("mopo", "no_priv", "low", "high")]
    for name in names + [n for n, *_ in PAPER_T11]:
        for d in seeds_of(name):
            t = ARCHIVE.json(os.path.join(d, "timing.json"))
            if t is None or "model_s" not in t:
                continue
            seed = score(d)[2].get("seed")
            # before cpu_scope "run", stage CPU was the process's: in a 2-job sweep both runs
            mark = "" if t.get("cpu_scope") == "run" else "*"
            out.append(f"| {name} | {seed} | {t['data_cpu_s']:.0f}{mark} ({t['data_s']:.0f}) | "
                       f"{t['model_cpu_s']:.0f}{mark} ({t['model_s']:.0f}) | "
                       f"{t['policy_cpu_s']:.0f}{mark} ({t['policy_s']:.0f}) | "
                       f"{t['total_cpu_s']:.0f}{mark} ({t['total_s']:.0f}) |")
    return out


def epsilon_cell(s):
    """'RDP; PLD' epsilon of a summary, 'inf' without a finite one."""
    pr = s.get("privacy") or {}
    e = pr.get("epsilon")
    if e in (None, "inf") or (isinstance(e, float) and math.isinf(e)):
        return "inf"
    pld = (pr.get("details") or {}).get("epsilon_pld")
    if pld == "inf":
        return f"{e:.3g}; inf"
    return f"{e:.3g}" + (f"; {pld:.3g}" if isinstance(pld, (int, float)) else "")


def table11(dprl):
    if not any(seeds_of(n) for n, *_ in PAPER_T11):
        return []
    out = ["", "### Table 11 (HalfCheetah, our medium-expert mixture)", "",
           "Return = mean of the last 20 epochs' 10-episode evaluation means (HalfCheetah-v5, "
           "1000 steps); ± a 95% Student-t interval over seeds. The data are ours (see 'Scale "
           "actually run'), not D4RL's, so the returns do not compare with the paper's; the "
           "ordering of the rows does. Model test MSE: the selected ensemble snapshot's mean squared "
           "error of (delta s, r) on the public test split, mean over seeds.", "",
           "| method | z | seeds | our epsilon (RDP; PLD) | model test MSE | our return | per seed "
           "| paper return |",
           "|---|---|---|---|---|---|---|---|"]
    for name, label, z, paper in PAPER_T11:
        dirs = seeds_of(name)
        vals = [score(d)[0] for d in dirs]
        m, ci = mean_ci(vals)
        eps = epsilon_cell(score(dirs[0])[2]) if dirs else ""
        mse = [score(d)[2].get("extra", {}).get("model_best_test_mse") for d in dirs]
        mse = [v for v in mse if v is not None]
        mse_cell = f"{statistics.mean(mse):.3g}" if mse else ""
        per = ", ".join(f"{v:.0f}" for v in vals)
        failed = failures(name)
        ret = fmt(m, ci) if dirs or not failed else failed
        if dirs and failed:
            per += f"; {failed}"
        if not dirs and not failed:
            continue  # an optional row not run
        out.append(f"| {label} | {z} | {len(dirs)} | {eps} | {mse_cell} | {ret} | {per} | {paper} |")
    series = {}
    for name, *_ in PAPER_T11:
        for k, run in enumerate(seeds_of(name)):
            series[(name.replace("half_cheetah_", ""), k + 1)] = curve(run)
    if dprl and series:
        out += ["", plot_series(series, "sac_updates", os.path.join(FIGS, "half_cheetah.svg"), dprl,
                                FIGS, "HalfCheetah: return per SAC epoch", y="return")]
    return out


def longer_policy_stage():
    """The cells rerun with more SAC epochs (configs/paper004/*_long.yaml), beside the same seeds
    of the cell itself: does the policy stage's length explain the gap to MOPO?"""
    rows = []
    for short, long, label in LONGER:
        runs = seeds_of(long)
        if not runs:
            continue
        seeds = [os.path.basename(r) for r in runs]
        base = {os.path.basename(r): r for r in seeds_of(short)} if short else {}
        before = {k: score(base[k])[0] for k in seeds if k in base}
        after = [score(r)[0] for r in runs]
        a = list(before.values())
        per = "; ".join(f"{k[4:]}: {before[k]:.0f} -> {v:.0f}" if k in before else f"{k[4:]}: {v:.0f}"
                        for k, v in zip(seeds, after))
        short_epochs = len(curve(base[seeds[0]])) if seeds[0] in before else "-"
        rows.append(f"| {label} | {len(runs)} | {short_epochs} | {fmt(*mean_ci(a)) if a else '-'} | "
                    f"{len(curve(runs[0]))} | {fmt(*mean_ci(after))} | {per} |")
    if not rows:
        return []
    return ["", "### A longer policy stage", "",
            "The same configuration, data and seeds with more SAC epochs (`<cell>_long.yaml`); "
            "returns are the mean over the same final window of epochs (Pendulum the last 5, "
            "HalfCheetah the last 20), ± a 95% Student-t interval over seeds. The HalfCheetah PriMORL row trains its members with "
            "per-client Adam instead of Table 11's SGD, so it has no short counterpart.", "",
            "| cell | seeds | epochs | return | epochs (long) | return (long) | per seed |",
            "|---|---|---|---|---|---|---|"] + rows


def last_mean(run, k):
    """Mean of the last k epochs' evaluation means of a run (its metrics.csv), None without k."""
    c = curve(run)
    return statistics.mean(r for _, r in c[-k:]) if len(c) >= k else None


def table1_paper_scale(dprl):
    """Table 1 Pendulum at the paper's scale (configs/paper004/pendulum_paper_*.yaml), as far as
    its cells have finished; labelled partial until every row has its 5 seeds."""
    runs = {name: seeds_of(name) for name, *_ in PAPER_ROWS}
    done = sum(len(r) for r in runs.values())
    if not done:
        return []
    total = len(PAPER_ROWS) * len(PAPER_SEEDS)
    shape = f"{len(PAPER_ROWS)} rows x {len(PAPER_SEEDS)} seeds"
    status = (f"complete: all {total} runs ({shape}) finished" if done >= total else
              f"**partial: {done} of {total} runs finished** ({shape}; the missing cells are "
              "still running or not yet started; the runs go seed 1 of every row first, then "
              "seed 2, ...)")
    out = ["", "### Table 1 at the paper's scale (Pendulum)", "",
           f"Status: {status}.", "",
           "The paper's data and rounds: 6 DDPG runs x 1M steps (30,000 trajectories of 200 steps, "
           "1% public test split), q = 0.001 (q K ~ 30 trajectories per round), T = 7000 rounds, "
           "z 0.35 (low) and 0.52 (high), per-layer clipping, u_MPD with lambda 2, horizon 30; "
           "MOPO with 5% real data, data start states and u_MA (std form), lambda 2. Policy stage: "
           "30 SAC epochs of 1000 updates, each followed by a 10-episode evaluation; the return is "
           "the mean of the last 10 epochs (the paper's window; the last 5 beside it). ± is a 95% "
           "Student-t interval over seeds; per-seed returns in seed order. The normalised score "
           "puts a uniformly random policy at 0 (its return, -1230.9 over 1000 episodes: `dprl "
           "eval --env pendulum --policy random --episodes 1000 --seed 1`) and our MOPO at 100, "
           "so it reads as the share of MOPO's gain over random that a method keeps; the return "
           "ratio (MOPO / method for negative returns, as in the reduced table) is the paper's "
           "kind of percentage, which on negative returns near MOPO's exaggerates small gaps. "
           "Run with "
           "`python3 tools/report_paper004.py --run-paper-scale` "
           "(`configs/paper004/pendulum_paper_{mopo,no_priv,low,high}.yaml`).", "",
           "| method | seeds | our epsilon (RDP; PLD) | return (last 10) | per seed | return "
           "(last 5) | normalised (random 0, our MOPO 100) | return ratio to our MOPO | reduced "
           "scale (600 trajectories, 10 epochs) | paper epsilon | paper return | paper % |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    mopo = [score(d)[0] for d in runs["pendulum_paper_mopo"]]
    mopo_m = statistics.mean(mopo) if mopo else None
    for name, label, reduced in PAPER_ROWS:
        dirs = runs[name]
        vals = [score(d)[0] for d in dirs]
        m, ci = mean_ci(vals)
        last5 = [v for v in (last_mean(d, 5) for d in dirs) if v is not None]
        eps = epsilon_cell(score(dirs[0])[2]) if dirs else ""
        pct = "" if m is None or not mopo_m else f"{100 * mopo_m / m:.1f}%" if m < 0 else \
            f"{100 * m / mopo_m:.1f}%"
        red = [score(d)[0] for d in seeds_of(reduced)]
        seeds = ", ".join(f"{score(d)[2].get('seed')}: {v:.0f}" for d, v in zip(dirs, vals))
        failed = failures(name)
        if failed:
            seeds += ("; " if seeds else "") + failed
        pe, pr_ret, pp = PAPER_T1[reduced][2], PAPER_T1[reduced][0], PAPER_T1[reduced][1]
        out.append(f"| {label} | {len(dirs)} of {len(PAPER_SEEDS)} | {eps} | {fmt(m, ci)} | "
                   f"{seeds} | "
                   f"{fmt(*mean_ci(last5)) if last5 else ''} | {normalised(m, mopo_m)} | {pct} | "
                   f"{fmt(*mean_ci(red)) if red else ''} | {pe} | {pr_ret} | {pp} |")
    out += ["", "Cost per run (CPU minutes of the run; data collection counted in the run that "
            "collected the cached data set):", "",
            "| method | seed | data | model | policy | total | wall |", "|---|---|---|---|---|---|---|"]
    for name, label, _ in PAPER_ROWS:
        for d in runs[name]:
            t = ARCHIVE.json(os.path.join(d, "timing.json"))
            if t is None or "model_s" not in t:
                continue
            out.append(f"| {label} | {score(d)[2].get('seed')} | {t['data_cpu_s'] / 60:.1f} | "
                       f"{t['model_cpu_s'] / 60:.1f} | {t['policy_cpu_s'] / 60:.1f} | "
                       f"{t['total_cpu_s'] / 60:.1f} | {t['total_s'] / 60:.1f} |")
    out += ["", "What differs from the paper here: the clip norm (C = 0.3; the paper gives none "
            "for Pendulum) and Alg. 2's local SGD at lr 0.01 instead of 1e-3 (see 'Choices'); a "
            "fixed T = 7000 with the best public-test-MSE snapshot (every 350 rounds) instead of "
            "early stopping; 5,000 rollout start states per 1000 SAC updates (the MOPO code: "
            "50,000); 30 SAC epochs (the paper does not state its count; the MOPO code runs 200); "
            "PriMORL's rollouts start from rho_0 and the model buffer; every seed shares one data "
            "set (data seed 1), so the seeds vary the model, the noise and SAC; native Gym "
            "rewards, so only the percentages compare with the paper; our epsilon is the RDP "
            "(CKS) and PLD accounting of the rounds run (the paper prints 22.3 and 5.1; our RDP "
            "gives 22.84 and 5.13 at T = 7000)."]
    series = {}
    for name, *_ in PAPER_ROWS:
        for k, run in enumerate(runs[name]):
            series[(name.replace("pendulum_paper_", ""), k + 1)] = curve(run)
    if dprl and series:
        out += ["", plot_series(series, "sac_updates", os.path.join(FIGS, "pendulum_paper.svg"),
                                dprl, FIGS, "Pendulum, paper scale: return per SAC epoch",
                                y="return")]
    return out


def figure3_paper_scale():
    """Figure 3's points at the paper's scale: the return (last 10 epochs) of each noise level
    against the epsilon of its runs, as far as its cells have finished."""
    runs = {name: seeds_of(name) for name, _ in FIG3_ROWS}
    if not any(runs[name] for name, _ in FIG3_EXTRA):
        return []
    done = sum(len(runs[name]) for name, _ in FIG3_ROWS)
    total = len(FIG3_ROWS) * len(PAPER_SEEDS)
    status = (f"complete: all {total} runs finished" if done >= total else
              f"**partial: {done} of {total} runs finished** (the two extra levels run after "
              "Table 1's cells, seed by seed)")
    mopo = [score(d)[0] for d in seeds_of("pendulum_paper_mopo")]
    mopo_m = statistics.mean(mopo) if mopo else None
    out = ["", "### Figure 3 at the paper's scale (Pendulum, return against epsilon)", "",
           f"Status: {status}.", "",
           "The Table 1 runs above (no privacy, z 0.35 and 0.52) and two more noise levels, z 0.8 "
           "and 1.5 (`configs/paper004/pendulum_paper_z080.yaml`, `pendulum_paper_z150.yaml`; "
           "everything else as the high row), so that four private epsilons span the paper's "
           "claim, \"no performance degradation until epsilon reaches the 1 to 10 range\". "
           "Epsilon is the record's (the discrete Gaussian's proven RDP bound; PLD beside it), "
           "delta 1e-5; the return is the mean of the last 10 SAC epochs, ± a 95% Student-t "
           "interval over seeds. The paper's figure has no numbers to compare with.", "",
           "| z | our epsilon (RDP; PLD) | seeds | return (last 10) | per seed | normalised "
           "(random 0, our MOPO 100) | return ratio to our MOPO |",
           "|---|---|---|---|---|---|---|"]
    for name, z in FIG3_ROWS:
        dirs = runs[name]
        vals = [score(d)[0] for d in dirs]
        m, ci = mean_ci(vals)
        eps = epsilon_cell(score(dirs[0])[2]) if dirs else ""
        pct = "" if m is None or not mopo_m else f"{100 * mopo_m / m:.1f}%" if m < 0 else \
            f"{100 * m / mopo_m:.1f}%"
        seeds = ", ".join(f"{score(d)[2].get('seed')}: {v:.0f}" for d, v in zip(dirs, vals))
        failed = failures(name)
        if failed:
            seeds += ("; " if seeds else "") + failed
        out.append(f"| {z:g} | {eps} | {len(dirs)} of {len(PAPER_SEEDS)} | {fmt(m, ci)} | "
                   f"{seeds} | {normalised(m, mopo_m)} | {pct} |")
    return out


def paper_scale():
    """The paper-scale Pendulum run (runs/paper004/paper_scale/pendulum_high): its stages."""
    d = os.path.join("paper_scale", "pendulum_high")
    t = ARCHIVE.json(os.path.join(d, "timing.json"))
    s = ARCHIVE.json(os.path.join(d, "summary.json"), trim_summary)
    if t is None or s is None:
        return []
    ex = s.get("extra", {})
    return ["", "### Paper-scale Pendulum, end to end (one seed)", "",
            "`pendulum_high` with the paper's data and rounds: 6 DDPG runs x 1M steps (30,000 "
            "trajectories), q = 0.001, T = 7000, `threads` 2; SAC as in our configs (10 epochs).",
            "", "| stage | CPU s | wall s |", "|---|---|---|",
            f"| data (6 x 1M DDPG steps) | {t['data_cpu_s']:.0f} | {t['data_s']:.0f} |",
            f"| model (7000 DP-FedAvg rounds) | {t['model_cpu_s']:.0f} | {t['model_s']:.0f} |",
            f"| policy (SAC in the model, with evaluation) | {t['policy_cpu_s']:.0f} | "
            f"{t['policy_s']:.0f} |",
            f"| total | {t['total_cpu_s']:.0f} | {t['total_s']:.0f} |", "",
            f"Epsilon {epsilon_cell(s)} at T = {ex.get('model_rounds', 7000):.0f}; return "
            f"{ex.get('return_last_window', float('nan')):.1f} (mean of the last 5 epochs)."]


def datasets(dprl):
    """The offline data sets' returns (the paper's data histograms, as a table), from the Minari
    folders that `algo.params.data_export` writes (runs/paper004/data/<task>-minari)."""
    out = ["", "### The data sets", "",
           "Every training episode of the DDPG runs, one trajectory per user, as the configs "
           "collect them (HalfCheetah: the SAC mixture of scripts/paper004_half_cheetah_data.sh; "
           "exported with `--set algo.params.data_export=runs/paper004/data/"
           "<task>-minari`; `dprl dataset info --json`). The histogram has 10 equal bins from the "
           "minimum to the maximum return. These statistics are of the private data, without "
           "noise: a description of the benchmark, not a private release.", "",
           "| data set | DDPG runs x steps | trajectories | transitions | return mean ± sd | min | "
           "max | histogram counts |", "|---|---|---|---|---|---|---|---|"]
    rows = 0
    sets = [(f"{task}-minari", label) for task, label, *_ in TASKS]
    sets.insert(1, ("pendulum-paper-minari", "Pendulum, paper scale"))
    sets.append(("half_cheetah-medium-expert", "HalfCheetah (SAC 50k + 100k policies)"))
    for folder, label in sets:
        rel = os.path.join("data", folder)
        j = ARCHIVE.computed(rel + "#info",
                             lambda: dataset_info(dprl, os.path.join(ARCHIVE.root, rel)))
        if j is None:
            continue
        meta = (j.get("metadata") or {})
        scale = f"{meta['runs']} x {meta['steps_per_run']}" if "runs" in meta else "-"
        h = j.get("return_histogram", {}).get("counts", [])
        out.append(f"| {label} | {scale} | {j['episodes']} | {j['transitions']} | "
                   f"{j['return_mean']:.1f} ± {j['return_std']:.1f} | {j['return_min']:.1f} | "
                   f"{j['return_max']:.1f} | {' '.join(str(c) for c in h)} |")
        rows += 1
    return out if rows else []


# ----- running Table 1 Pendulum at the paper's scale, cell by cell -----
def paper_cells():
    """(config, seed) in run order: Table 1 (seed 1 of every row, then seed 2, ...), then Figure
    3's two extra noise levels in the same order."""
    return ([(name, k) for k in PAPER_SEEDS for name in PAPER_RUN_ORDER] +
            [(name, k) for k in PAPER_SEEDS for name, _ in FIG3_EXTRA])


def cell_archived(name, seed):
    """Whether the archive (docs/paper004/results.json as loaded or rewritten since) holds the cell;
    a run finished on disk only is archived by the caller."""
    return os.path.join(name, "base", f"seed{seed}", "summary.json") in ARCHIVE.data


def run_cell(a, name, seed):
    """One seed of one paper-scale sweep, in the sweep's own run directory (so that
    `dprl sweep configs/paper004/sweeps/<name>.yaml` later finds it finished). A directory a killed
    process left (no summary.json) is moved to runs/paper004/killed/ first: the cell starts again
    from the data stage with a fresh privacy ledger. Returns True when the run finished."""
    d = os.path.join(a.runs, name, "base", f"seed{seed}")
    if os.path.isdir(d) and not os.path.exists(os.path.join(d, "summary.json")):
        dest = os.path.join(a.runs, "killed", f"{name}-seed{seed}-{int(time.time())}")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.move(d, dest)
        log(f"{name} seed {seed}: moved the unfinished run directory to {dest}")
    sweep = os.path.join("configs", "paper004", "sweeps", f"{name}.yaml")
    r = run_sweep_seeds(a.dprl, sweep, [seed], jobs=1, check=False)
    ok = os.path.exists(os.path.join(d, "summary.json"))
    if r.returncode != 0 or not ok:
        log(f"{name} seed {seed}: failed (dprl sweep exit {r.returncode}); see "
            f"{os.path.join(a.runs, name, 'failures.csv')}")
    return ok


def verdict():
    """The page's verdict line, from Table 1 at the paper's scale as far as it has run: the private
    rows' normalised scores (random 0, our MOPO 100) against the paper's bar of competitiveness,
    within 10% of MOPO."""
    mean = {}
    for name, *_ in PAPER_ROWS:
        vals = [score(d)[0] for d in seeds_of(name)]
        mean[name] = (statistics.mean(vals) if vals else None, len(vals))
    mopo = mean["pendulum_paper_mopo"][0]
    done = sum(n for _, n in mean.values())
    total = len(PAPER_ROWS) * len(PAPER_SEEDS)

    def norm(name):
        m = mean[name][0]
        return None if m is None or mopo is None else \
            100 * (m - PENDULUM_RANDOM) / (mopo - PENDULUM_RANDOM)

    def show(name):
        v = norm(name)
        return "not run" if v is None else f"{v:.0f}"

    def ratio(name):
        m = mean[name][0]
        if m is None or mopo is None:
            return "not run"
        return f"{100 * mopo / m:.0f}%" if m < 0 else f"{100 * m / mopo:.0f}%"
    scale = ("Pendulum at the paper's scale (30,000 trajectories, q = 0.001, T = 7000, 30 SAC "
             f"epochs), {done} of {total} Table 1 runs finished")
    close = [name for name in ("pendulum_paper_low", "pendulum_paper_high")
             if norm(name) is not None and norm(name) >= 90.0]
    answer = {0: "no", 1: "partly", 2: "yes"}[len(close)]
    claim = ("PriMORL is competitive with MOPO" if len(close) == 2 else
             "PriMORL is competitive with MOPO at one of the paper's two epsilons" if close else
             "PriMORL is not competitive with MOPO")
    return (f"Headline reproduces: {answer}" + ("" if done >= total else " (so far)") + ".\n"
            f"{claim} on Pendulum (the bar: a normalised score of at least 90, where a random "
            f"policy scores 0 and our MOPO 100): PriMORL without noise scores "
            f"{show('pendulum_paper_no_priv')}, the private rows {show('pendulum_paper_low')} "
            f"(z 0.35, epsilon 34.6 by the discrete Gaussian's proven bound) and "
            f"{show('pendulum_paper_high')} (z 0.52, epsilon 5.9), with a wide spread over seeds "
            f"(as return ratios to MOPO, the paper's kind of percentage: "
            f"{ratio('pendulum_paper_no_priv')}, {ratio('pendulum_paper_low')} and "
            f"{ratio('pendulum_paper_high')}, where the paper has 102%, 103% and 98%); the "
            "balance and swing-up tasks and HalfCheetah ran at reduced scale only (tables below); "
            f"scale: {scale}.")


def write_page(a):
    body = generate(a.dprl)
    with open(a.doc) as f:
        doc = f.read()
    i, j = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    doc = doc[:i] + "\n" + body + "\n" + doc[j:]
    i, j = doc.index(VERDICT_BEGIN) + len(VERDICT_BEGIN), doc.index(VERDICT_END)
    doc = doc[:i] + "\n" + verdict() + "\n" + doc[j:]
    with open(a.doc + ".tmp", "w") as f:
        f.write(doc)
    os.replace(a.doc + ".tmp", a.doc)
    ARCHIVE.save()


def commit(a, what):
    """git-commits the archive, the page and its figures and figure data (docs/paper004/)."""
    files = [a.doc, FIGS] + ([a.archive] if a.archive else [])
    if commit_files(files, f"paper 004: archive {what}"):
        log(f"committed: paper 004: archive {what}")


def run_paper_scale(a):
    cells = paper_cells()
    log(f"Table 1 Pendulum at the paper's scale: {len(cells)} cells, dprl {a.dprl}")
    for n, (name, seed) in enumerate(cells, 1):
        if cell_archived(name, seed):
            log(f"cell {n}/{len(cells)} {name} seed {seed}: archived, skipped")
            continue
        d = os.path.join(a.runs, name, "base", f"seed{seed}")
        if os.path.exists(os.path.join(d, "summary.json")):
            log(f"cell {n}/{len(cells)} {name} seed {seed}: finished on disk, archiving")
        else:
            log(f"cell {n}/{len(cells)} {name} seed {seed}: running")
            t0 = time.time()
            if not run_cell(a, name, seed):
                write_page(a)
                if a.commit:
                    commit(a, f"{name} seed {seed} (failed)")
                continue
            ret = (ARCHIVE.json(os.path.join(name, "base", f"seed{seed}", "summary.json"),
                                trim_summary) or {}).get("extra", {}).get("return_last_window")
            log(f"cell {n}/{len(cells)} {name} seed {seed}: done in {(time.time() - t0) / 60:.1f} "
                f"min wall, return (last 10 epochs) {ret}")
        write_page(a)
        if a.commit:
            commit(a, f"{name} seed {seed}")
    done = sum(cell_archived(name, seed) for name, seed in cells)
    log(f"Table 1 Pendulum at the paper's scale: {done}/{len(cells)} cells archived")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", default="runs/paper004")
    ap.add_argument("--dprl", default="build/dprl")
    ap.add_argument("--doc", default="docs/paper004.md")
    ap.add_argument("--archive", default="docs/paper004/results.json",
                    help="results kept from earlier runs ('' for runs on disk only)")
    ap.add_argument("--run-paper-scale", action="store_true",
                    help="run Table 1 Pendulum at the paper's scale cell by cell (resumable)")
    ap.add_argument("--commit", action="store_true",
                    help="with --run-paper-scale: git-commit the archive and page after each cell")
    a = ap.parse_args()
    global ARCHIVE
    ARCHIVE = Archive(a.runs, a.archive)
    if a.run_paper_scale:
        run_paper_scale(a)
        return
    write_page(a)


if __name__ == "__main__":
    main()
