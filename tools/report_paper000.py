#!/usr/bin/env python3
"""Paper 000 report: writes docs/paper000.md (the guide, then Tables 1-3 beside the paper's
numbers and Figures 3-4 as SVG) from the runs of configs/paper000/sweeps/reduced/.

Paper: Sharma, Vinod, Thakurta, Agarwal, Balle, Dann, Raghuveer, "Preserving Expert-Level Privacy
in Offline Reinforcement Learning", TMLR.

Usage, from the repository root, after the sweeps have run (a missing sweep is reported as "not
run"):
    python3 tools/report_paper000.py [--runs runs/paper000/reduced] [--dprl build/dprl]
                                     [--doc docs/paper000.md] [--figs docs/paper000]
The m = 3000 LunarLander and HIV populations and their Table 1 cells (about 7 CPU-hours of
experts, then the cells), resumable, the page rewritten after each step:
    python3 tools/report_paper000.py --run-m3000 [--jobs 2] [--commit]
Runs are <runs>/<env>/<sweep>/<label>/seed<N>/summary.json (`dprl sweep` layout). The score of a
run is (R - R_random) / (R_nonprivate - R_random): R its final evaluation return (10 episodes on
the default env), R_random the uniform policy's return on the same env and horizon (summary
"extra.random_return"), R_nonprivate the mean final return of the non-private sweep of the same
env and learner. Means are over seeds with a 95% t-interval. Standard library only.
"""
import argparse
import csv
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import (Archive, commit_files, dataset_info, log, num,  # noqa: E402
                           plot_series, trim_summary)
from gen_paper000_configs import REDUCED, TABLE3  # noqa: E402

ENVS = ("cartpole", "acrobot", "lunar_lander", "hiv")
ENV_NAME = {"cartpole": "CartPole", "acrobot": "Acrobot", "lunar_lander": "LunarLander",
            "hiv": "HIV Treatment"}
EPS = (5, 7.5, 10)
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571}  # two-sided 95% t quantiles by df

# the paper's Table 1 (best p) and Table 2 (normalised scores)
PAPER_T1 = {("lunar_lander", "cql"): (1.0, 0.8, 0.8), ("lunar_lander", "bcq"): (1.0, 0.5, 0.5),
            ("acrobot", "cql"): (0.0, 0.0, 0.0), ("acrobot", "bcq"): (0.0, 0.0, 0.0),
            ("cartpole", "cql"): (1.0, 0.9, 0.8), ("cartpole", "bcq"): (1.0, 0.5, 0.5),
            ("hiv", "cql"): (1.0, 0.0, 0.0), ("hiv", "bcq"): (1.0, 0.9, 0.9)}
PAPER_T2_P = {("lunar_lander", "cql"): {"0": "inf", "0.8": "0.75", "1": "0.67"},
              ("lunar_lander", "bcq"): {"0": "inf", "0.5": "0.57", "1": "0.54"},
              ("cartpole", "cql"): {"0": "0.67", "0.8": "1.03", "1": "0.92"},
              ("cartpole", "bcq"): {"0": "0.31", "0.5": "0.99", "1": "0.67"}}
PAPER_T2_ALLOC = {("acrobot", "2.5"): ("0.74", "0.95"), ("cartpole", "2.5"): ("0.28", "0.58"),
                  ("cartpole", "5"): ("0.56", "0.60")}


ARCHIVE = None  # report_common.Archive over runs/paper000, set in main()


def read_sweep(d):
    """{label: [summary, ...]} of the finished runs under sweep directory d (relative to
    runs/paper000), on disk or archived."""
    out = {}
    for label in ARCHIVE.listdir(d):
        for s in ARCHIVE.listdir(os.path.join(d, label)):
            if not s.startswith("seed"):
                continue
            j = ARCHIVE.json(os.path.join(d, label, s, "summary.json"), trim_summary)
            if j is not None:
                out.setdefault(label, []).append(j)
    return out


def extra(s, key):
    return num(s.get("extra", {}).get(key))


def ret(s):
    return num(s["final_eval"]["return_mean"])


def ci(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None, 0
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, None, 1
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return m, T95.get(len(xs) - 1, 1.96) * sd / math.sqrt(len(xs)), len(xs)


def fmt_ci(m, h, n, digits=2):
    if m is None:
        return "not run"
    s = f"{m:.{digits}f}"
    return s + (f" ± {h:.{digits}f}" if h is not None else "") + f" (n={n})"


class Data:
    def __init__(self, root):
        self.root = root
        self.cache = {}

    def sweep(self, env, name):
        key = (env, name)
        if key not in self.cache:
            self.cache[key] = read_sweep(os.path.join(self.root, env, name))
        return self.cache[key]

    def baseline(self, env, algo):
        runs = self.sweep(env, f"{env}_{algo}_nonprivate").get("base", [])
        rs = [ret(s) for s in runs]
        rs = [r for r in rs if r is not None]
        return sum(rs) / len(rs) if rs else None

    def scores(self, env, algo, runs):
        """Normalised scores of runs' final returns (see score())."""
        return self.score_all(env, algo, [(ret(s), extra(s, "random_return")) for s in runs])

    def score_all(self, env, algo, pairs):
        """(r - r_random) / (r_nonprivate - r_random) for each (return, random return) pair that
        has both and a baseline to compare with; the others are left out."""
        base = self.baseline(env, algo)
        return [(r - rnd) / (base - rnd) for r, rnd in pairs
                if None not in (base, r, rnd) and base != rnd]

    def empty(self, env, name):
        """{label: seeds} whose run stopped because D_stable was empty (p = 0 has nothing to
        train on: the paper's "inf"), from the sweep's failures.csv."""
        rows = ARCHIVE.text(os.path.join(self.root, env, name, "failures.csv"),
                            lambda t: list(csv.DictReader(t.splitlines()))) or []
        out = {}
        for r in rows:
            if "stable data only, and it is empty" in r.get("error", ""):
                out[r["label"]] = out.get(r["label"], 0) + 1
        return out

    def cell(self, env, algo, eps, dpsgd=False):
        name = f"{env}_{algo}_eps{str(eps).replace('.', '_')}" + ("_dpsgd" if dpsgd else "")
        runs = self.sweep(env, name).get("base", [])
        if not runs and dpsgd and eps == 5 and env != "acrobot":
            # at eps = 5 the paper's method is pure expert-level DP-SGD: the same runs
            runs = self.sweep(env, name[: -len("_dpsgd")]).get("base", [])
        return runs


def with_empty(text, n_empty):
    """A score cell with the seeds whose D_stable was empty (they have no score)."""
    if not n_empty:
        return text
    return f"D_stable empty (n={n_empty})" if text == "not run" else \
        f"{text}; D_stable empty (n={n_empty})"


TABLE1_HEADER = ["| env | learner | eps | paper's best p | ours | DP-SGD | stable transitions | "
                 "noisy steps | epsilon spent (release + DP-SGD) |",
                 "|---|---|---|---|---|---|---|---|---|"]


def table1(data):
    md = ["### Table 1 and Figure 3: normalised scores at the paper's best p\n",
          "Ours is the paper's method at the p its Table 1 reports best (and Table 3's learning "
          "rate and batch size); DP-SGD is expert-level DP-SGD on all the data at the same eps. "
          "Scores are (R - R_random) / (R_nonprivate - R_random), mean ± 95% CI over seeds. The "
          "paper prints no scores for these cells (Figure 3 plots them; Table 1 lists only the "
          "best p), so the paper column is its best p.\n"] + TABLE1_HEADER
    return "\n".join(md + table1_rows(data, ENVS)) + "\n"


def table1_rows(data, envs):
    md = []
    for env in envs:
        for algo in ("cql", "bcq"):
            for i, eps in enumerate(EPS):
                ours = data.cell(env, algo, eps)
                dp = data.cell(env, algo, eps, dpsgd=True)
                if not ours and not dp:
                    continue
                so, sd = data.scores(env, algo, ours), data.scores(env, algo, dp)
                name = f"{env}_{algo}_eps{str(eps).replace('.', '_')}"
                n_empty = data.empty(env, name).get("base", 0)
                stab = [extra(s, "stable_transitions") or 0 for s in ours]
                noisy = [extra(s, "noisy_steps") for s in ours]
                epsn = [num(s["privacy"]["epsilon"]) for s in ours if s.get("privacy")]
                md.append(
                    f"| {ENV_NAME[env]} | {algo.upper()} | {eps} | {PAPER_T1[(env, algo)][i]} | "
                    f"{with_empty(fmt_ci(*ci(so)), n_empty)} | {fmt_ci(*ci(sd))} | "
                    f"{fmt_ci(*ci(stab), digits=0) if ours else '-'} | "
                    f"{fmt_ci(*ci(noisy), digits=0) if ours else '-'} | "
                    f"{fmt_ci(*ci(epsn)) if epsn else '-'} |")
    return md


# The first decisive step for LunarLander and HIV: m = 3000 populations of the reduced experts
# (configs/paper000/{env}_population_m3000.yaml) and the Table 1 cells on them
# (configs/paper000/sweeps/m3000/), run by --run-m3000
M3000_ENVS = ("lunar_lander", "hiv")


def m3000_sweeps(env):
    """The m = 3000 sweep files of env, the non-private baselines first (the scores need them)."""
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "paper000",
                     "sweeps", "m3000")
    files = sorted(f for f in os.listdir(d) if f.startswith(env + "_") and f.endswith(".yaml"))
    return [os.path.join(d, f) for f in sorted(files, key=lambda f: "nonprivate" not in f)]


def m3000_section(data):
    """Table 1 for LunarLander and HIV at m = 3000, as far as its sweeps have run ('' before)."""
    rows = table1_rows(data, M3000_ENVS)
    if not rows:
        return ""
    status = run_status(data, [f for env in M3000_ENVS for f in m3000_sweeps(env)])
    md = ["### Table 1 at m = 3000 (LunarLander and HIV)\n",
          f"Status: {status}. "
          "The paper's m = 3000 experts (its settings grid: 1000 LunarLander settings x 3 runs; "
          "2000 HIV settings, the best of each plus the best 1000 second-placed), with the reduced "
          "experts and PPO budget and the reduced training of the cells above (noise calibrated "
          "to 1e4 noisy steps, seeded). Run with `python3 tools/report_paper000.py --run-m3000`. "
          "Scores as in Table 1, against the non-private baselines on the same populations.\n"]
    md += TABLE1_HEADER + rows
    for env in M3000_ENVS:
        w = ARCHIVE.computed(f"{env}_m3000/population#run_wall", lambda: population_wall(env))
        if w:
            md.append("")
            md.append(f"{ENV_NAME[env]} population: {w['runs']} PPO runs whose wall times sum to "
                      f"{w['wall_s'] / 3600:.1f} hours (two at a time on the 2-core VM, "
                      "beside other work).")
    return "\n".join(md) + "\n"


def budget_sweeps():
    """configs/paper000/sweeps/m3000_budget/*.yaml: DP-SGD at Table 3's s until the budget is
    spent, on the m = 3000 populations."""
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "paper000",
                     "sweeps", "m3000_budget")
    return [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".yaml")]


def last_metrics(text):
    """The last row of a run's metrics.csv as {noisy_steps, epsilon, return_mean}: how far a run
    got (it is written at every evaluation)."""
    rows = list(csv.DictReader(text.splitlines()))
    if not rows:
        return None
    return {k: num(rows[-1].get(k)) for k in ("noisy_steps", "epsilon", "return_mean")}


def unfinished(data, env, name):
    """(seed, last metrics row) of each run of a sweep that has started but not finished (its
    seed is not among the sweep's finished runs), on disk or archived: where a cell stopped when
    it was not run to its end."""
    d = os.path.join(data.root, env, name, "base")
    done = {r["seed"] for r in data.sweep(env, name).get("base", [])}
    out = []
    for s in ARCHIVE.listdir(d):
        if s.startswith("seed") and int(s[4:]) not in done:
            row = ARCHIVE.text(os.path.join(d, s, "metrics.csv"), last_metrics)
            if row is not None:
                out.append((int(s[4:]), row))
    return out


def budget_section():
    """The m = 3000 DP-SGD baselines at Table 3's s until the budget is spent, beside the same
    cells at the reduced 1e4 noisy steps; a cell stopped before its end shows how far it got (''
    before any has run). No CPU column: a resumed run's timing.json covers its last part only."""
    budget, reduced = Data("m3000_budget"), Data("m3000")
    rows, stopped = [], []
    for sweep in budget_sweeps():
        name = os.path.basename(sweep)[:-5]
        env = next(e for e in M3000_ENVS if name.startswith(e + "_"))
        algo = "cql" if "_cql_" in name else "bcq"
        eps = name.split("_eps")[1].split("_dpsgd")[0].replace("_", ".")
        runs = budget.sweep(env, name).get("base", [])
        red_runs = reduced.sweep(env, name).get("base", [])
        red = reduced.scores(env, algo, red_runs)
        if runs:
            noisy = [extra(r, "noisy_steps") for r in runs]
            rows.append(f"| {ENV_NAME[env]} | {algo.upper()} | {eps} | "
                        f"{fmt_ci(*ci(noisy), digits=0)} | "
                        f"{fmt_ci(*ci(reduced.scores(env, algo, runs)))} | {fmt_ci(*ci(red))} |")
        part = unfinished(budget, env, name)
        if part:
            # the last evaluation's score against the random return of the same seed's
            # evaluation envs (the mean over the cell's other runs where that seed has none)
            rnds = {r["seed"]: extra(r, "random_return") for r in red_runs + runs}
            known = [v for v in rnds.values() if v is not None]
            mean_rnd = sum(known) / len(known) if known else None
            sc = reduced.score_all(env, algo, [
                (row["return_mean"], rnds[seed] if rnds.get(seed) is not None else mean_rnd)
                for seed, row in part])
            rows_part = [row for _, row in part]
            stopped.append(
                f"| {ENV_NAME[env]} | {algo.upper()} | {eps} | "
                f"{fmt_ci(*ci([r['noisy_steps'] for r in rows_part]), digits=0)} | "
                f"{fmt_ci(*ci([r['epsilon'] for r in rows_part]))} | {fmt_ci(*ci(sc))} | "
                f"{fmt_ci(*ci(red))} |")
    if not rows and not stopped:
        return ""
    status = run_status(budget, budget_sweeps())
    md = [
        "### DP-SGD at Table 3's noise multiplier, until the budget is spent (m = 3000)\n",
        f"Status: {status}. Expert-level DP-SGD cells at Table 3's s, trained until the budget is "
        "spent (`configs/paper000/sweeps/m3000_budget/`, seeded noise, 3 seeds), beside the same "
        "cells with s calibrated to 1e4 noisy steps; scores against the m = 3000 non-private "
        "baselines. These four cells were chosen as the ones whose budget lasts the fewest steps "
        "(9.6e5 to 2.4e6); the others need 3.8e6 to 1.5e7 steps (LunarLander CQL eps = 10: 1.5e7 "
        "at s = 40) and are not run.\n"]
    if rows:
        md += ["| env | learner | eps | noisy steps | score, Table 3's s | "
               "score, 1e4 noisy steps |", "|---|---|---|---|---|---|"] + rows
    if stopped:
        md += ["\nCells stopped before the budget was spent: how far their runs got (the last "
               "evaluation, every 1e4 steps, of each started run).\n",
               "| env | learner | eps | noisy steps reached | eps spent | score at the last "
               "evaluation | score, 1e4 noisy steps |", "|---|---|---|---|---|---|---|"] + stopped
    return "\n".join(md) + "\n"


def population_of(env):
    """(population YAML, its directory under runs/paper000) of env's 3000 experts."""
    if env in M3000_ENVS:
        return f"{env}_population_m3000.yaml", f"{env}_m3000/population"
    return f"{env}_population.yaml", f"{env}/population"


def population_built(env):
    """Whether env's population of 3000 experts is on disk and finished (its manifest is written
    last)."""
    return os.path.exists(os.path.join(ARCHIVE.root, population_of(env)[1], "manifest.json"))


def population_wall(env):
    """The m = 3000 population's PPO runs and the sum of their wall times (each run's
    timing.json), or None before the population is on disk."""
    if not population_built(env):
        return None
    train = os.path.join(ARCHIVE.root, population_of(env)[1], "train")
    runs, wall = 0, 0.0
    for setting in sorted(os.listdir(train)):
        if not os.path.isdir(os.path.join(train, setting)):
            continue
        for r in sorted(os.listdir(os.path.join(train, setting))):
            f = os.path.join(train, setting, r, "timing.json")
            if os.path.exists(f):
                with open(f) as fh:
                    wall += json.load(fh).get("wall_time_s", 0.0)
                runs += 1
    return {"runs": runs, "wall_s": wall}


# `dprl agreement` on the populations of 3000 experts on disk: the exact prefix counts of the
# demonstrations (non-private) against the eps = 10 CQL cell's expected release threshold, at the
# configured delta (1/(10 m)) and at the paper's (1/m). LunarLander and HIV: the m = 3000
# populations above; Acrobot and CartPole: their reduced populations (3000 experts already).
AGREEMENT_LENGTHS = "1,2,5,10,20,50"
NUM_ACTIONS = {"cartpole": 2, "acrobot": 3, "lunar_lander": 4, "hiv": 4}


def agreement(dprl, env, paper_delta=False):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if not population_built(env):
        return None
    pop = population_of(env)[0]
    cmd = [dprl, "agreement", os.path.join("configs", "paper000", f"{env}_cql_eps10.yaml"),
           "--set", f"population={pop}", "--json", "--jobs", "2"]
    cmd += (["--set", f"privacy.delta={1 / 3000!r}", "--episodes", "1", "--lengths", "1"]
            if paper_delta else ["--episodes", "100", "--lengths", AGREEMENT_LENGTHS])
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    if r.returncode != 0:
        log(f"dprl agreement ({env}) failed: {r.stderr.strip()[:200]}")
        return None
    return json.loads(r.stdout)


def agreement_section(dprl):
    md = []
    for env in ("lunar_lander", "hiv", "acrobot", "cartpole"):
        where = population_of(env)[1]
        a = ARCHIVE.computed(f"{where}#agreement", lambda: agreement(dprl, env))
        ap = ARCHIVE.computed(f"{where}#agreement_paper_delta",
                              lambda: agreement(dprl, env, paper_delta=True))
        if not a or not ap:
            continue
        m, p_min = a["experts"], a["p_min"]
        hi = 1 - (NUM_ACTIONS[env] - 1) * p_min
        e_ours, e_paper = a["expected_threshold"], ap["expected_threshold"]
        out_of_reach = e_ours > m * hi
        md += [f"**{ENV_NAME[env]}, m = {m}: "
               + ("why D_stable stays empty.** " if out_of_reach else
                  "which prefixes reach the threshold.** ")
               + "`dprl agreement` (a non-private diagnostic: exact counts, never released) on "
               f"{a['episodes']} evenly spaced demonstrations of the population, with the eps = 10 "
               f"CQL cell's release (T = {a['trajectories']}, eps1 = {a['release_epsilon1']:g}, "
               f"p_min = {p_min:g}):\n",
               "| prefix length | prefixes | largest count | 90th percentile | median | "
               "largest possible, m (1 - (A - 1) p_min)^k for A actions | reaching E[theta_hat] |",
               "|---|---|---|---|---|---|---|"]
        full = []
        for r in a["lengths"]:
            if not r["prefixes"]:
                continue
            k = r["length"]
            cap = m * hi ** k
            if r["max"] >= cap * (1 - 1e-9):
                full.append(k)
            md.append(f"| {k} | {r['prefixes']} | {r['max']:.1f} | {r['p90']:.1f} | "
                      f"{r['median']:.1f} | {cap:.1f} | {r['at_threshold']} |")
        # at one step a prefix's count is n hi + (m - n) p_min for the n experts whose greedy
        # action it is
        first = next((r["max"] for r in a["lengths"] if r["length"] == 1 and r["prefixes"]), 0.0)
        n_first = max(0.0, (first - m * p_min) / (hi - p_min))
        agree = (f"all {m} experts agree with the first {max(full)} actions of at least one of "
                 "these demonstrations (its count is the largest possible)" if full
                 else f"at most {n_first:.0f} of the {m} experts share the first action of any "
                 "of these demonstrations")
        head = (f"E[theta_hat] is {e_ours:.1f} at this page's delta = 1/(10 m) and "
                f"{e_paper:.1f} at the paper's delta = 1/m; the largest count any prefix can have "
                f"is m (1 - (A - 1) p_min) = {m * hi:.1f}, at one step. ")
        if out_of_reach:
            md += ["", head + f"So {agree}, yet no prefix can reach the expected threshold"
                   + (" (nor the paper's)" if e_paper > m * hi else
                      " (the paper's delta would bring it within reach)")
                   + ". The release's constants, not the experts or m, keep D_stable empty: "
                   f"they are the paper's for this env, whose T = {a['trajectories']} examined "
                   f"trajectories leave each pass eps' = {a['epsilon_prime']:.3f}, and the "
                   "threshold and its noise shift grow as 1/eps'"
                   + (" (the paper's Table 2 also reports D_stable empty, \"inf\", at p = 0 "
                      "here)" if env == "lunar_lander" else "")
                   + ". Every cell is then DP-SGD on the smaller eps2.", ""]
        else:
            reached = [r for r in a["lengths"] if r["prefixes"] and r["at_threshold"]]
            longer = [r["length"] for r in a["lengths"]
                      if r["prefixes"] and reached and r["length"] > reached[-1]["length"]]
            parts = ", ".join(f"{r['at_threshold']} of the {r['prefixes']} prefixes of "
                              f"{r['length']} step{'s' if r['length'] > 1 else ''}"
                              for r in reached)
            where_reach = (f"The threshold is within reach of short prefixes only: {parts} reach "
                           "E[theta_hat]" + (f", none of {longer[0]} steps or more"
                                             if longer else "")
                           if reached else "The threshold is below the largest possible count, "
                           "but no prefix of these demonstrations reaches it")
            md += ["", head + f"So {agree}. {where_reach} (T = {a['trajectories']} passes at "
                   f"eps' = {a['epsilon_prime']:.3f}).", ""]
    if not md:
        return ""
    return "\n".join(["### The experts' agreement against the release threshold "
                      "(`dprl agreement`)\n"] + md) + "\n"


def table2(data):
    md = ["### Table 2: the p ablation at eps = 10 and the eps allocation at low eps\n",
          "p ablation: the eps = 10 cell with p varied and the 3/4, 1/4 split kept (spec item 12). "
          "\"empty\" means D_stable was empty in every seed (the paper's \"inf\").\n",
          "| env | learner | p | paper | ours | stable transitions |", "|---|---|---|---|---|---|"]
    for env in ("cartpole", "lunar_lander"):
        for algo in ("cql", "bcq"):
            runs = data.sweep(env, f"table2_{algo}_p")
            paper = PAPER_T2_P[(env, algo)]
            for p in sorted(paper, key=float):
                label = f"p={p}" if f"p={p}" in runs else f"p={float(p):.1f}"
                rs = runs.get(label, [])
                stab = [extra(s, "stable_transitions") or 0 for s in rs]
                empty = rs and all(x == 0 for x in stab) and float(p) == 0
                sc = "empty" if empty else with_empty(
                    fmt_ci(*ci(data.scores(env, algo, rs))),
                    data.empty(env, f"table2_{algo}_p").get(label, 0))
                md.append(f"| {ENV_NAME[env]} | {algo.upper()} | {p} | {paper[p]} | {sc} | "
                          f"{fmt_ci(*ci(stab), digits=0) if rs else '-'} |")
    md += ["\nEps allocation (BCQ, p = 0.5): eps1 = 3 eps / 4 against eps1 = 0 (no release: "
           "expert-level DP-SGD with the whole budget).\n",
           "| env | eps | paper eps1 = 3eps/4 | ours | paper eps1 = 0 | ours |",
           "|---|---|---|---|---|---|"]
    for (env, eps), (p34, p0) in PAPER_T2_ALLOC.items():
        runs = data.sweep(env, "table2_bcq_allocation")
        cells = []
        for frac in ("0.75", "0"):
            rs = []
            for label, v in runs.items():
                parts = dict(x.split("=") for x in label.split(","))
                if (float(parts.get("epsilon", -1)) == float(eps)
                        and float(parts.get("epsilon1_fraction", -1)) == float(frac)):
                    rs = v
            cells.append(fmt_ci(*ci(data.scores(env, "bcq", rs))))
        md.append(f"| {ENV_NAME[env]} | {eps} | {p34} | {cells[0]} | {p0} | {cells[1]} |")
    return "\n".join(md) + "\n"


def figure3(data, dprl, figs):
    """score vs eps, ours against DP-SGD, one SVG per env and learner (drawn by dprl plot)."""
    md = ["### Figure 3: score against eps, ours and expert-level DP-SGD\n",
          "Each panel: the normalised score of every seed at eps = 5, 7.5, 10, the mean and its "
          "95% band per method (`dprl plot`). At eps = 5 the paper's method is expert-level "
          "DP-SGD (p = 1, eps1 = 0) except on Acrobot, so the two curves share that point.\n"]
    for env in ENVS:
        for algo in ("cql", "bcq"):
            series = {}
            for method, dp in (("ours", False), ("dp_sgd", True)):
                for eps in EPS:
                    for k, sc in enumerate(data.scores(env, algo, data.cell(env, algo, eps, dp))):
                        series.setdefault((method, k + 1), []).append((eps, sc))
            if series:
                md.append(plot_series(series, "epsilon", os.path.join(figs, f"fig3_{env}_{algo}.svg"),
                                      dprl, figs, f"{ENV_NAME[env]}, {algo.upper()}: normalised "
                                      "score vs eps (mean, 95% band)"))
    return "\n".join(md) + "\n"


def figure4_rows(runs, norm, dprl, figs, svg, title):
    """The table rows and figure of a Figure 4 sweep pair under Data `runs`, scored against the
    non-private baseline of Data `norm`."""
    ours, dp = runs.sweep("acrobot", "fig4_m"), runs.sweep("acrobot", "fig4_m_dpsgd")
    empty = runs.empty("acrobot", "fig4_m")
    md = ["| m | stable transitions | ours | DP-SGD | DP-SGD noisy steps |",
          "|---|---|---|---|---|"]
    labels = sorted(set(ours) | set(dp) | set(empty), key=lambda x: float(x.split("=")[-1]))
    series = {}
    for label in labels:
        m = float(label.split("=")[-1])
        rs, ds = ours.get(label, []), dp.get(label, [])
        stab = [extra(s, "stable_transitions") or 0 for s in rs]
        so, sd = norm.scores("acrobot", "cql", rs), norm.scores("acrobot", "cql", ds)
        noisy = [extra(s, "noisy_steps") for s in ds]
        md.append(f"| {m:.0f} | {fmt_ci(*ci(stab), digits=0) if rs else '-'} | "
                  f"{with_empty(fmt_ci(*ci(so)), empty.get(label, 0))} | {fmt_ci(*ci(sd))} | "
                  f"{fmt_ci(*ci(noisy), digits=0) if ds else '-'} |")
        for method, sc in (("ours", so), ("dp_sgd", sd)):
            for k, v in enumerate(sc):
                series.setdefault((method, k + 1), []).append((m, v))
    md.append(plot_series(series, "m", os.path.join(figs, svg), dprl, figs, title))
    return md


def figure4(data, dprl, figs):
    md = ["### Figure 4: stable-set size and score against m (Acrobot, eps = 10, CQL)\n",
          "Uniformly random subsets of m of the 3000 experts (with all their trajectories; "
          "delta = 1/m, T = 25). Ours is the paper's Acrobot cell (p = 0: eps1 = eps, training on "
          "D_stable only); DP-SGD is expert-level DP-SGD on all the data of the m experts.\n"]
    if not data.sweep("acrobot", "fig4_m") and not data.sweep("acrobot", "fig4_m_dpsgd"):
        return "\n".join(md) + "\n_not run (see \"What was not run\")._\n"
    md += figure4_rows(data, data, dprl, figs, "fig4_acrobot_cql.svg",
                       "Acrobot, CQL, eps = 10: normalised score vs m (mean, 95% band)")
    return "\n".join(md) + "\n"


def figure4_budget(data, dprl, figs):
    """Figure 4 with DP-SGD at Table 3's s until the budget is spent and the paper's method at the
    cell's 1e5 steps, 5 seeds (configs/paper000/sweeps/fig4_budget/; '' before any has run)."""
    runs = Data("fig4_budget")
    if not runs.sweep("acrobot", "fig4_m") and not runs.sweep("acrobot", "fig4_m_dpsgd"):
        return ""
    status = run_status(runs, FIG4_BUDGET_SWEEPS)
    md = ["### Figure 4 at Table 3's noise multiplier, DP-SGD until the budget is spent\n",
          f"Status: {status}. "
          "The same subsets of the same 3000 reduced experts (delta = 1/(10 m), T = 25), 5 seeds "
          "(`configs/paper000/sweeps/fig4_budget/`): ours trains on D_stable for the cell's 1e5 "
          "steps; DP-SGD runs at Table 3's s = 20 until eps = 10 is spent (seeded noise). Scores "
          "against the reduced non-private baseline above.\n"]
    md += figure4_rows(runs, data, dprl, figs, "fig4_acrobot_cql_budget.svg",
                       "Acrobot, CQL, eps = 10, DP-SGD until the budget: normalised score vs m "
                       "(mean, 95% band)")
    return "\n".join(md) + "\n"


def nonprivate(data):
    md = ["### Non-private baselines and random returns (the normalisers)\n",
          "| env | learner | R_nonprivate | R_random |", "|---|---|---|---|"]
    for env in ENVS:
        for algo in ("cql", "bcq"):
            rs = data.sweep(env, f"{env}_{algo}_nonprivate").get("base", [])
            if not rs:
                continue
            md.append(f"| {ENV_NAME[env]} | {algo.upper()} | {fmt_ci(*ci([ret(s) for s in rs]))} "
                      f"| {fmt_ci(*ci([extra(s, 'random_return') for s in rs]))} |")
    return "\n".join(md) + "\n"


def figure2(dprl):
    """The demonstrations' returns on the default env (the paper's Figure 2, as a table): the
    floored experts' 20 episodes each, from `dprl dataset info --json`."""
    md = ["### Figure 2: returns of the demonstrations on the default env\n",
          "Every selected expert, floored (argmax 1 - (|A|-1) 0.02), 20 episodes on the default "
          "env with the data cap; the histogram has 10 equal bins from the minimum to the "
          "maximum.\n",
          "| env | experts | episodes | transitions | return mean ± sd | min | max | histogram "
          "counts |", "|---|---|---|---|---|---|---|---|"]
    rows = 0
    for env in ENVS:
        rel = os.path.join(env, "population", "demos")
        j = ARCHIVE.computed(rel + "#info", lambda: dataset_info(dprl, os.path.join(ARCHIVE.root,
                                                                                    rel)))
        if j is None:
            continue
        h = j.get("return_histogram", {}).get("counts", [])
        md.append(f"| {ENV_NAME[env]} | {j['users']} | {j['episodes']} | {j['transitions']} | "
                  f"{j['return_mean']:.4g} ± {j['return_std']:.3g} | {j['return_min']:.4g} | "
                  f"{j['return_max']:.4g} | {' '.join(str(c) for c in h)} |")
        rows += 1
    return "\n".join(md) + "\n" if rows else ""


def accounting(data):
    md = ["### Accounting of Alg. 3: sound (default) against the paper's rule\n",
          "CartPole, eps = 10, the Table 1 cell run twice: `accounting: sound` (only the noisy "
          "steps, each at q = b/m) and `accounting: paper` (every iteration at q = p b/m, not "
          "formal). Both calibrate the noise multiplier to spend eps2 in 1e4 accounted steps, so "
          "the paper's rule trains with less noise per step for the same reported epsilon.\n",
          "| learner | accounting | noise multiplier | noisy steps | score |", "|---|---|---|---|---|"]
    for algo in ("cql", "bcq"):
        for mode, runs in (("sound", data.cell("cartpole", algo, 10)),
                           ("paper", data.sweep("cartpole", f"{algo}_eps10_paper_accounting")
                            .get("base", []))):
            if not runs:
                continue
            zs = [num(((r.get("privacy") or {}).get("details", {}).get("parts", {})
                       .get("dp_sgd") or {}).get("details", {}).get("noise_multiplier"))
                  for r in runs]
            z = ci(zs)[0]
            md.append(f"| {algo.upper()} | {mode} | {f'{z:.3g}' if z else '-'} | "
                      f"{fmt_ci(*ci([extra(r, 'noisy_steps') for r in runs]), digits=0)} | "
                      f"{fmt_ci(*ci(data.scores('cartpole', algo, runs)))} |")
    return "\n".join(md) + "\n"


def table3(data):
    md = ["### Table 3: hyper-parameters, the paper's and the ones the reduced runs used\n",
          "eta, b and p are the paper's Table 3 values in every cell. The paper's noise "
          "multiplier s is trained until the budget is spent (9.6e5 to 1.5e7 steps for the LunarLander DP-SGD cells at m = 3000); the reduced runs "
          f"calibrate s so that eps2 is spent in {REDUCED['calibrate_steps']} accounted noisy "
          "steps (`selective.calibrate_steps`), so their s is smaller. eps1 is the release's "
          "exact epsilon (advanced composition, below the eps1 it was given).\n",
          "| env | learner | eps | eta | b | p | paper s | our s | noisy steps | eps1 exact | eps2 "
          "spent |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for env in ENVS:
        for algo in ("cql", "bcq"):
            for eps in EPS:
                eta, b, p, s_paper = TABLE3[(env, algo)][eps]
                runs = data.cell(env, algo, eps)
                if not runs:
                    continue
                zs, e1s, e2s = [], [], []
                for r in runs:
                    parts = (r.get("privacy") or {}).get("details", {}).get("parts", {})
                    dp = parts.get("dp_sgd") or {}
                    if dp:
                        zs.append(num(dp.get("details", {}).get("noise_multiplier")))
                        e2s.append(num(dp.get("epsilon")))
                    rel = parts.get("release") or {}
                    if rel:
                        e1s.append(num(rel.get("epsilon")))
                z = ci(zs)[0]
                md.append(f"| {ENV_NAME[env]} | {algo.upper()} | {eps} | {eta} | {b} | {p} | "
                          f"{s_paper if s_paper else '-'} | {f'{z:.3g}' if z else '-'} | "
                          f"{fmt_ci(*ci([extra(r, 'noisy_steps') for r in runs]), digits=0)} | "
                          f"{fmt_ci(*ci(e1s)) if e1s else '-'} | "
                          f"{fmt_ci(*ci(e2s)) if e2s else '-'} |")
    return "\n".join(md) + "\n"


def costs(data):
    """The measured cost table: populations (dprl population timing.json), single experts
    (dprl bench population), DataRelease (dprl bench data-release) and the pipeline runs."""
    md = ["| what | measured | figures |", "|---|---|---|"]
    for env in ENVS:
        t = ARCHIVE.json(os.path.join(env, "population", "timing.json"))
        m = ARCHIVE.json(os.path.join(env, "population", "manifest.json"),
                         lambda j: {"experts": len(j.get("experts", []))})
        if t and t.get("runs_trained"):
            cpu = t.get("cpu_s_per_run")
            cfg = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs",
                               "paper000", f"{env}_population.yaml")
            hidden = re.search(r'hidden_sizes: "([^"]*)"', open(cfg).read()) if os.path.exists(
                cfg) else None
            nets = f"({hidden.group(1).replace(',', ', ')})" if hidden else "(?)"
            md.append(f"| {ENV_NAME[env]} population, {nets} | `dprl population "
                      f"configs/paper000/{env}_population.yaml --jobs 2`: {t['runs_trained']} "
                      f"runs trained in this invocation | {t['train_wall_s']:.0f} s wall "
                      f"({t['runs_per_hour']:.0f} runs/h wall, {t['env_steps_per_s']:.0f} env "
                      f"steps/s wall)" + (f"; {cpu:.2f} CPU s per run" if cpu else "") +
                      f"; demonstrations {t['demos_wall_s']:.0f} s wall"
                      + (f"; {m['experts']} experts" if m else "") + " |")
    for name in ARCHIVE.listdir("bench"):
        j = ARCHIVE.json(os.path.join("bench", name))
        if not j:
            continue
        if name.startswith("population_"):
            proj = j["projected_wall_hours_on_ranks"]
            md.append(f"| {j['population']} experts, ({j.get('hidden_sizes', '?')}), "
                      f"{j['env_steps_per_run']} env steps | `dprl bench population` over "
                      f"{j['runs_measured']} runs | {j['cpu_s_per_run']:.2f} CPU s per expert "
                      f"({j['runs_per_cpu_hour']:.0f} experts per CPU-hour, "
                      f"{j['env_steps_per_cpu_s']:.0f} env steps per CPU s; mean final return "
                      f"on its variant {j['mean_final_return']:.4g}); the {j['population_runs']} "
                      f"runs: {j['population_cpu_hours']:.3g} CPU-h, "
                      + ", ".join(f"{float(v):.3g} h on {k}" for k, v in proj.items())
                      + " ranks |")
        elif name.startswith("release_"):
            md.append(f"| DataRelease, m = {j['experts']}, {j['trajectories']} trajectories of "
                      f"{j['length']}, T = {j['examined']}, ({j['hidden']}) experts, "
                      f"{j['agreement']} | `dprl bench data-release` ({j['jobs']} threads) | "
                      f"{j['release_s']:.2f} s wall ({j['release_cpu_s']:.2f} CPU s), split "
                      f"{j['split_s']:.2f} s; {j['queries']} queries, "
                      f"{j['stable_transitions']} stable transitions |")
    for env in ENVS:
        walls, cpus = [], []
        for d in ARCHIVE.listdir(os.path.join(data.root, env)):
            for label in data.sweep(env, d):
                for seed in ARCHIVE.listdir(os.path.join(data.root, env, d, label)):
                    t = ARCHIVE.json(os.path.join(data.root, env, d, label, seed, "timing.json"),
                                     lambda j: {k: j.get(k) for k in ("train_cpu_s", "train_s")})
                    if t and t.get("train_cpu_s") is not None:
                        cpus.append(t["train_cpu_s"])
                        walls.append(t["train_s"])
        if cpus:
            md.append(f"| {ENV_NAME[env]} pipeline runs (reduced) | train stage of {len(cpus)} "
                      f"runs | {sum(cpus) / len(cpus):.0f} CPU s per run on average (max "
                      f"{max(cpus):.0f}), {sum(walls) / len(walls):.0f} s wall |")
    return "\n".join(md) + "\n"


SWEEPS = None  # the reduced sweep files, filled in main()


def provenance(data):
    """The commits the runs on this page were made with (summary git_commit), per env."""
    md = ["### Provenance\n", "| env | runs | commits (runs) |", "|---|---|---|"]
    for env in ENVS:
        commits = {}
        for d in ARCHIVE.listdir(os.path.join(data.root, env)):
            for runs in data.sweep(env, d).values():
                for s in runs:
                    c = s.get("git_commit", "?")
                    commits[c] = commits.get(c, 0) + 1
        if commits:
            md.append(f"| {ENV_NAME[env]} | {sum(commits.values())} | "
                      + ", ".join(f"`{c}` ({n})" for c, n in sorted(commits.items())) + " |")
    return "\n".join(md) + "\n" if len(md) > 3 else ""


def sweep_plan(path):
    """(env, name, runs planned) of a sweep file: its out: directory's last two parts, and its
    seeds times the sizes of its grid's lists."""
    with open(path) as fh:
        lines = fh.read().splitlines()
    out = next(line.split(":", 1)[1].strip() for line in lines if line.startswith("out:"))
    seeds = next(line for line in lines if line.startswith("seeds:"))
    want = len(seeds.split("[", 1)[1].rstrip("]").split(","))
    in_grid = False
    for line in lines:
        if not line.startswith(" "):
            in_grid = line.startswith("grid:")
        elif in_grid and line.strip().endswith("]") and "[" in line:
            want *= len(line.split("[", 1)[1].rstrip("]").split(","))
    env, name = out.split("/")[-2:]
    return env, name, want


def finished(data, env, name):
    """Finished runs of a sweep; a run stopped by an empty D_stable is a result (the paper's
    "inf"), not a missing run."""
    return (sum(len(v) for v in data.sweep(env, name).values())
            + sum(data.empty(env, name).values()))


def run_status(data, files):
    """'complete', or how many of the runs the sweep files plan have finished under Data data."""
    plans = [sweep_plan(f) for f in files]
    done, want = sum(finished(data, e, n) for e, n, _ in plans), sum(w for *_, w in plans)
    return "complete" if done >= want else f"**partial: {done} of {want} runs finished**"


def not_run(data):
    """The reduced sweeps whose run directories hold fewer finished seeds than planned."""
    md = []
    for f in SWEEPS:
        env, name, want = sweep_plan(f)
        n = finished(data, env, name)
        if n < want:
            md.append(f"- `{os.path.relpath(f)}`: {n} of {want} runs")
    return "\n".join(md) + "\n" if md else "Every reduced sweep ran.\n"


def commit(args, what):
    """git-commits the page, its figures and the archive."""
    files = [args.doc, args.figs] + ([args.archive] if args.archive else [])
    if commit_files(files, f"paper 000: archive {what}"):
        log(f"committed: paper 000: archive {what}")


def run_m3000(args):
    """The m = 3000 populations of LunarLander and HIV, then their Table 1 sweeps, each step
    resumable (finished population runs and sweep runs are reused); the page and archive are
    rewritten (and committed with --commit) after every finished step."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    for env in M3000_ENVS:
        pop = os.path.join(root, "configs", "paper000", f"{env}_population_m3000.yaml")
        log(f"{env}: population m = 3000 ({pop})")
        r = subprocess.run([args.dprl, "population", pop, "--jobs", str(args.jobs)])
        if r.returncode != 0:
            log(f"{env}: dprl population failed (exit {r.returncode}); stopping")
            return
        write_page(args)
        if args.commit:
            commit(args, f"{env} m = 3000 population")
        for sweep in m3000_sweeps(env):
            run_sweep(args, sweep, "m = 3000")
    # then the DP-SGD baselines at Table 3's s until the budget is spent (after every env's
    # Table 1 cells: they add nothing to the comparison if those have not run)
    for sweep in budget_sweeps():
        run_sweep(args, sweep, "m = 3000 until the budget")
    log("m = 3000: every step ran")


FIG4_BUDGET_SWEEPS = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs",
                                   "paper000", "sweeps", "fig4_budget", f"acrobot_{n}.yaml")
                      for n in ("fig4_m", "fig4_m_dpsgd")]


def run_fig4(args):
    """Figure 4 at Table 3's noise multiplier: the Acrobot population of reduced experts, then the
    two sweeps of configs/paper000/sweeps/fig4_budget/, each step resumable."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "paper000")
    pop = os.path.join(root, "acrobot_population.yaml")
    log(f"acrobot: population ({pop})")
    r = subprocess.run([args.dprl, "population", pop, "--jobs", str(args.jobs)])
    if r.returncode != 0:
        log(f"acrobot: dprl population failed (exit {r.returncode}); stopping")
        return
    for sweep in FIG4_BUDGET_SWEEPS:
        run_sweep(args, sweep, "Figure 4 until the budget")
    log("Figure 4 until the budget: every step ran")


def run_sweep(args, sweep, what):
    """dprl sweep on one file (finished runs reused), then the page and archive rewritten (and
    committed with --commit)."""
    name = os.path.basename(sweep)[:-5]
    log(f"{what}: sweep {name}")
    r = subprocess.run([args.dprl, "sweep", sweep, "--jobs", str(args.jobs)])
    if r.returncode != 0:
        log(f"{what}: sweep {name} ended with exit {r.returncode} (see its failures.csv)")
    write_page(args)
    if args.commit:
        commit(args, f"{what} {name}")


def write_page(args):
    data = Data(os.path.basename(args.runs.rstrip("/")))
    results = "\n".join(part for part in [
        figure2(args.dprl), nonprivate(data), table1(data), m3000_section(Data("m3000")),
        agreement_section(args.dprl), budget_section(),
        table2(data), table3(data), accounting(data), figure3(data, args.dprl, args.figs),
        figure4(data, args.dprl, args.figs), figure4_budget(data, args.dprl, args.figs),
        provenance(data)] if part)
    with open(args.template) as fh:
        doc = (fh.read().replace("@RESULTS@", results)
               .replace("@COSTTABLE@", costs(data))
               .replace("@NOTRUN@", not_run(data)))
    with open(args.doc + ".tmp", "w") as fh:
        fh.write(doc)
    os.replace(args.doc + ".tmp", args.doc)
    ARCHIVE.save()
    print(f"wrote {args.doc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="runs/paper000/reduced")
    ap.add_argument("--archive", default="docs/paper000/data/results.json",
                    help="results kept from earlier runs ('' for runs on disk only)")
    ap.add_argument("--dprl", default="build/dprl")
    ap.add_argument("--doc", default="docs/paper000.md")
    ap.add_argument("--figs", default="docs/paper000")
    ap.add_argument("--template", default=os.path.join(os.path.dirname(__file__),
                                                       "report_paper000_template.md"))
    ap.add_argument("--run-m3000", action="store_true",
                    help="run the m = 3000 LunarLander and HIV populations and their Table 1 "
                         "sweeps (resumable), rewriting the page after each step")
    ap.add_argument("--run-fig4", action="store_true",
                    help="run Figure 4 with DP-SGD until the budget (the Acrobot population and "
                         "configs/paper000/sweeps/fig4_budget/, resumable)")
    ap.add_argument("--jobs", type=int, default=1, help="with --run-*: runs at a time")
    ap.add_argument("--commit", action="store_true",
                    help="with --run-*: git-commit the page and archive after each step")
    args = ap.parse_args()
    os.makedirs(args.figs, exist_ok=True)
    global ARCHIVE, SWEEPS
    ARCHIVE = Archive(os.path.dirname(args.runs.rstrip("/")), args.archive)
    sweeps = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs",
                          "paper000", "sweeps", "reduced")
    SWEEPS = sorted(os.path.join(sweeps, f) for f in os.listdir(sweeps) if f.endswith(".yaml"))
    if args.run_m3000 or args.run_fig4:
        if args.run_m3000:
            run_m3000(args)
        if args.run_fig4:
            run_fig4(args)
        return
    write_page(args)


if __name__ == "__main__":
    main()
