#!/usr/bin/env python3
"""Paper 003 report: Figure 2 (a)-(d) of "Privacy-Preserving Kickstarting Deep Reinforcement
Learning with Privacy-Aware Learners" (Gohari, Chen, Wu, Hale, Topcu) on native environments.

Usage, from the repository root with dprl built in build/:
    python3 tools/report_paper003.py --env cartpole --run [--jobs 1]   # sweeps, teacher, report
    python3 tools/report_paper003.py --env cartpole                    # report from the archive
    python3 tools/report_paper003.py --env lunar_lander_2m --run --jobs 1 [--commit]
    options: --dprl build/dprl --runs runs/paper003 --doc docs/paper003.md --svg docs/paper003
             --archive docs/paper003/results
             --start teacher|fig2b|fig2c|fig2d (with --run: resume from that stage)

Archive: every finished run's summary figures and its per-epoch curve (step, training return,
episodes) are kept in docs/paper003/results/<env>/<sweep>/<label>.json, one file per curve, merged
with the runs under --runs (a run on disk replaces its archived copy). The report reads only the
archive, so it regenerates byte for byte where the run directories are gone.

lunar_lander_2m (2M steps, 30 seeds per curve) runs in blocks of seeds (1-5, 6-10, 11-20, 21-30)
across all four panels, so that an interrupted run leaves every curve with the same seeds; after the
first two blocks it runs the supplementary lambda and c sweeps (500k steps, 10 seeds). After every
sweep the curves it finished are written to the archive (and committed with --commit). `dprl sweep`
skips finished runs, so the same command resumes.

--run executes, in order: configs/paper003/<env>_fig2a.yaml (PPO (64, 64) and (32, 32)); the
teacher choice (the (64, 64) run with the best final greedy evaluation, ties broken by the mean
training return of its last 10 epochs, then the lowest seed; or, when
configs/paper003/<env>_teacher.yaml exists, that run's final policy), copied to
runs/paper003/<env>/teacher.bin with teacher.json saying which; then <env>_fig2b/c/d.yaml.

The report draws the four panels with `dprl plot --stat median` (the median over seeds of the
per-epoch training-episode return, Spinning Up's EpRet, with a 15th-85th percentile band) into
--svg, and replaces the block between "<!-- paper003:<env>:begin -->" and
"<!-- paper003:<env>:end -->" in --doc (appended when absent) with:
  - a sample-efficiency table per curve: seeds; env steps and episodes until the training return
    first reaches the threshold (median [15th, 85th percentile] over seeds; a seed that never
    reaches it counts as infinite); the area under the curve (mean training return over all epochs);
    the mean training return of the last 10 epochs; the final greedy evaluation; the band width
    (85th - 15th percentile across seeds, averaged over the epochs of the second half);
  - the privacy figures per private curve, honest (the run's certified L, eta, tau, b) and
    paper-matched (tau and b chosen so that k0 = 5 gives (4.46, 0.05)): per query at k0, the number
    of private answers, the basic-composition totals and whether they are vacuous (medians over
    seeds);
  - the paper's qualitative claims with the numbers that decide them: two-sided Mann-Whitney U
    tests across seeds (normal approximation with tie correction) at level 0.05.
Only the standard library is used.
"""
import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import commit_files, num, run_sweep_seeds  # noqa: E402

ENVS = {
    "cartpole": {"title": "CartPole-v1", "threshold": 475.0},
    "lunar_lander": {"title": "LunarLander-v3", "threshold": 0.0},  # 200 is out of reach at 500k
    # the same panels at 2M steps and 30 seeds, with lunar_lander's teacher; threshold 0 as at 500k
    # so that the two scales compare
    "lunar_lander_2m": {"title": "LunarLander-v3, 2M steps", "threshold": 0.0,
                        "teacher_env": "lunar_lander", "config": "lunar_lander_2m",
                        "blocks": [(1, 5), (6, 10), (11, 20), (21, 30)],
                        "supp_after_block": 2, "after_panels": ["lambda1"]},
}
# the supplementary sweeps (configs/paper003/lunar_lander_supp_<name>.yaml), reported with
# lunar_lander_2m: (sweep, grid key, legend)
SUPP = {"lambda": ("algo.params.lambda", "privacy-aware, c = 0.3, lambda = {}"),
        "c": ("algo.params.decay", "privacy-aware, lambda = 0.5, c = {}")}
TEACHER = ("fig2a", "hidden_size=64", "PPO (64, 64) [teacher size]")
BASELINE = ("fig2a", "hidden_size=32", "PPO (32, 32) [student baseline]")
PANELS = {
    "fig2a": [TEACHER, BASELINE],
    "fig2b": [TEACHER, BASELINE, ("fig2b", "base", "kickstarted (32, 32), exact teacher")],
    "fig2c": [TEACHER, BASELINE, ("fig2c", "decay=0.1", "privacy-aware, c = 0.1"),
              ("fig2c", "decay=0.3", "privacy-aware, c = 0.3")],
    "fig2d": [BASELINE, ("fig2d", "decay=0.3", "privacy-unaware, c = 0.3"),
              ("fig2d", "decay=0.9", "privacy-unaware, c = 0.9")],
    # not in the paper (configs/paper003/<env>_ext.yaml, run when present)
    "ext": [BASELINE, ("fig2c", "decay=0.3", "privacy-aware, c = 0.3"),
            ("ext", "after_floor=uniform", "aware, c = 0.3, uniform answer after the floor"),
            ("ext", "after_floor=none", "aware, c = 0.3, no answer after the floor")],
    "ext_epoch": [BASELINE, ("fig2b", "base", "kickstarted (32, 32), exact teacher"),
                  ("ext_epoch", "lambda=0", "unaware, c = 0.9 per epoch, none after the floor"),
                  ("ext_epoch", "lambda=0.5", "aware, c = 0.9 per epoch, none after the floor")],
}
PANEL_TITLES = {"fig2a": "(a) PPO (64, 64) vs (32, 32)", "fig2b": "(b) non-private kickstarting",
                "fig2c": "(c) privacy-aware students, lambda = 0.5",
                "fig2d": "(d) privacy-unaware students, lambda = 0",
                "ext": "extension: the answer after k_floor",
                "ext_epoch": "extension: k decays per epoch"}
ALPHA = 0.05  # test level
KEYS = {"auc": "AUC", "last10": "last-10-epoch return"}


# ----- statistics -----
def percentile(xs, pct):
    """numpy.percentile's linear method; xs may hold math.inf."""
    s = sorted(xs)
    if not s:
        return None
    h = (len(s) - 1) * pct / 100.0
    lo = int(math.floor(h))
    hi = min(lo + 1, len(s) - 1)
    if s[lo] == math.inf or s[hi] == math.inf:
        return math.inf if h > lo or s[lo] == math.inf else s[lo]
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def med_band(xs, spec="{:.0f}"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    f = lambda v: "never" if v == math.inf else spec.format(v)  # noqa: E731
    lo, mid, hi = (f(percentile(xs, q)) for q in (15, 50, 85))
    return mid if lo == mid == hi else f"{mid} [{lo}, {hi}]"


def mann_whitney(a, b):
    """Two-sided Mann-Whitney U p-value (normal approximation, tie-corrected) and the
    probability that a value of a exceeds one of b (ties count half)."""
    a = [x for x in a if x is not None]
    b = [x for x in b if x is not None]
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return None, None
    allv = sorted((v, i) for i, v in enumerate(a + b))
    ranks = [0.0] * (n1 + n2)
    ties = 0.0
    i = 0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]:
            j += 1
        r = (i + j) / 2.0 + 1
        for k in range(i, j + 1):
            ranks[allv[k][1]] = r
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    p = 1.0 if var <= 0 else math.erfc(abs(u1 - n1 * n2 / 2.0) / math.sqrt(2 * var))
    return p, u1 / (n1 * n2)


# ----- the archive: one JSON file per curve -----
PRIVACY_KEYS = ("per_query", "paper_matched", "totals", "private_queries", "switched_at_query",
                "teacher")


def rounded(x, digits=2):
    v = num(x)
    return None if v is None else round(v, digits)


def trim_run(summary, rows):
    """What the report reads of one run: seed, final evaluation, last-10-epoch return, the
    privacy figures (the first per-query entry only) and the per-epoch curve (step, training
    return rounded to 0.01, episodes)."""
    priv = summary.get("privacy")
    if isinstance(priv, dict):
        det = {k: v for k, v in (priv.get("details") or {}).items() if k in PRIVACY_KEYS}
        if isinstance(det.get("per_query"), list):
            det["per_query"] = det["per_query"][:1]
        priv = {"details": det}
    else:
        priv = None
    return {"seed": summary.get("seed"),
            "final_eval": {"return_mean": rounded((summary.get("final_eval") or {})
                                                  .get("return_mean"))},
            "extra": {"train_return_last10": rounded((summary.get("extra") or {})
                                                     .get("train_return_last10"))},
            "privacy": priv,
            "curve": [[num(r.get("step")), rounded(r.get("train_return")), num(r.get("episodes"))]
                      for r in rows]}


def seed_key(s):
    return int(s[4:]) if s[4:].isdigit() else 0


def archive_file(args, env, sweep, label):
    return os.path.join(args.archive, env, sweep, f"{label}.json")


def read_archive(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def write_archive(path, runs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = "{\n" + ",\n".join(
        f"{json.dumps(k)}: {json.dumps(runs[k], sort_keys=True, separators=(',', ':'))}"
        for k in sorted(runs, key=seed_key)) + "\n}\n"
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def sync_curve(args, env, sweep, label):
    """The archived runs of a curve merged with the finished runs on disk (which replace their
    archived copies); the archive file is rewritten when that changed it. Returns
    {seedK: trimmed run}."""
    path = archive_file(args, env, sweep, label)
    runs = read_archive(path)
    d = os.path.join(args.runs, env, sweep, label)
    changed = False
    for seed in (os.listdir(d) if os.path.isdir(d) else []):
        if not seed.startswith("seed"):
            continue
        try:
            with open(os.path.join(d, seed, "summary.json")) as f:
                summary = json.load(f)
            with open(os.path.join(d, seed, "metrics.csv")) as f:
                rows = list(csv.DictReader(f))
        except (OSError, ValueError):
            continue  # still running
        run = trim_run(summary, rows)
        if runs.get(seed) != run:
            runs[seed], changed = run, True
    if changed:
        write_archive(path, runs)
    return runs


def sync_env(args, env):
    """sync_curve over every curve of env on disk or archived; returns the archive files written
    or already there, for --commit."""
    files = []
    for root in (os.path.join(args.runs, env), os.path.join(args.archive, env)):
        for sweep in (sorted(os.listdir(root)) if os.path.isdir(root) else []):
            sdir = os.path.join(root, sweep)
            if not os.path.isdir(sdir):
                continue
            for label in sorted(os.listdir(sdir)):
                label = label[:-5] if label.endswith(".json") else label
                if root.startswith(args.archive) or os.path.isdir(os.path.join(sdir, label)):
                    if sync_curve(args, env, sweep, label):
                        files.append(archive_file(args, env, sweep, label))
    return sorted(set(files))


def curve_items(args, env, sweep, label):
    """[(summary, curve)] of a curve's archived runs in seed order."""
    runs = read_archive(archive_file(args, env, sweep, label))
    return [(runs[k], runs[k]["curve"]) for k in sorted(runs, key=seed_key)]


# ----- per-curve figures -----
def curve_stats(items, threshold):
    st = {"n": len(items), "steps": [], "episodes": [], "auc": [], "last10": [], "eval": [],
          "rows": [], "privacy": []}
    for summary, pts in items:
        hit = next(((s, e) for s, y, e in pts if y is not None and y >= threshold), None)
        st["steps"].append(hit[0] if hit else math.inf)
        st["episodes"].append(hit[1] if hit else math.inf)
        ys = [y for _, y, _ in pts if y is not None]
        st["auc"].append(sum(ys) / len(ys) if ys else None)
        st["last10"].append(num((summary.get("extra") or {}).get("train_return_last10")))
        st["eval"].append(num((summary.get("final_eval") or {}).get("return_mean")))
        st["rows"].append(pts)
        if isinstance(summary.get("privacy"), dict):
            st["privacy"].append(summary["privacy"])
    # band width: 85th - 15th percentile across seeds per epoch, averaged over all epochs
    by_step = {}
    for pts in st["rows"]:
        for s, y, _ in pts:
            if s is not None and y is not None:
                by_step.setdefault(s, []).append(y)
    widths = [percentile(v, 85) - percentile(v, 15) for v in by_step.values() if len(v) >= 2]
    st["width"] = sum(widths) / len(widths) if widths else None
    return st


def privacy_row(label, privs):
    """Median figures over seeds of the honest and paper-matched readings."""
    if not privs:
        return None
    det = [p.get("details") or {} for p in privs]
    if any("per_query" not in d for d in det):
        return f"| {label} | exact teacher: no mechanism, epsilon = inf | | | | | | |"
    k0 = [d["per_query"][0] if d["per_query"] else {} for d in det]
    pm = [d.get("paper_matched") or {} for d in det]
    g = lambda xs, spec="{:.3g}": med_band([num(x) for x in xs], spec)  # noqa: E731
    vac = sum(1 for d in det if d["totals"].get("vacuous"))
    pm_ok = [m for m in pm if m.get("attainable")]
    pm_txt = "unattainable" if not pm_ok else (
        f"tau {g([m['tau'] for m in pm_ok])}, b {g([m['adjacency'] for m in pm_ok])}: "
        f"total ({g([m['epsilon_total'] for m in pm_ok])}, "
        f"{g([m['delta_total'] for m in pm_ok])})")
    return (f"| {label} | ({g([q.get('epsilon') for q in k0])}, {g([q.get('delta') for q in k0])})"
            f" | {g([d['private_queries'] for d in det], '{:.0f}')}"
            f" | {g([d['switched_at_query'] for d in det], '{:.0f}')}"
            f" | {g([d['totals']['epsilon'] for d in det])}"
            f" | {g([d['totals']['delta_sum'] for d in det])}"
            f" | {vac}/{len(det)} | {pm_txt} |")


# ----- running the sweeps -----
def run_sweep_file(args, path, seeds=None):
    run_sweep_seeds(args.dprl, path, seeds, args.jobs)


def after_sweep(args, env, what, page_env=None):
    """Archive the curves of env; with --commit, rewrite page_env's block of the page from the
    archive (unless --archive-only) and commit the archive files, the page and its SVGs, so that
    the committed page always matches the committed archive."""
    files = sync_env(args, env)
    if not args.commit or not files:
        return
    if page_env and not args.archive_only:
        report(args, page_env)
        files += [args.doc] + sorted(os.path.join(args.svg, f) for f in os.listdir(args.svg)
                                     if f.startswith(f"{page_env}_") and f.endswith(".svg"))
    commit_files(files, f"paper 003: archive {env} after {what}")


def run_sweeps(args, env):
    cfg = os.path.join("configs", "paper003")
    spec = ENVS[env]
    if "blocks" in spec:  # every panel seed block by seed block, then the supplementary sweeps
        tenv = spec["teacher_env"]
        if not os.path.exists(os.path.join(args.runs, tenv, "teacher.bin")):
            choose_teacher(args, tenv)
        for i, (lo, hi) in enumerate(spec["blocks"]):
            for stage in ("fig2a", "fig2b", "fig2c", "fig2d"):
                seeds = list(range(lo, hi + 1))
                labels = [l for s, l, _ in PANELS[stage] if s == stage]
                if all(f"seed{k}" in read_archive(archive_file(args, env, stage, l))
                       for l in labels for k in seeds):
                    continue  # archived (e.g. run on another machine): nothing to redo
                run_sweep_file(args, os.path.join(cfg, f"{spec['config']}_{stage}.yaml"), seeds)
                after_sweep(args, env, f"{stage} seeds {lo}-{hi}", env)
            if i + 1 == spec["supp_after_block"]:
                for name in SUPP:
                    run_sweep_file(args, os.path.join(cfg, f"lunar_lander_supp_{name}.yaml"))
                    after_sweep(args, "lunar_lander_supp", f"the {name} sweep", env)
        for stage in spec.get("after_panels", []):  # follow-up runs, in the same seed blocks
            for lo, hi in spec["blocks"]:
                seeds = list(range(lo, hi + 1))
                run_sweep_file(args, os.path.join(cfg, f"{spec['config']}_{stage}.yaml"), seeds)
                after_sweep(args, env, f"{stage} seeds {lo}-{hi}", env)
        return
    sweep = lambda name: run_sweep_file(args, os.path.join(cfg, f"{env}_{name}.yaml"))  # noqa: E731
    stages = ["fig2a", "teacher", "fig2b", "fig2c", "fig2d", "ext", "ext_epoch"]
    for stage in stages[stages.index(args.start):]:
        if stage == "teacher":
            choose_teacher(args, env)
        elif stage.startswith("ext") and not os.path.exists(
                os.path.join(cfg, f"{env}_{stage}.yaml")):
            continue
        else:
            sweep(stage)
            after_sweep(args, env, stage, env)


def choose_teacher(args, env):
    root = os.path.join(args.runs, env)
    os.makedirs(root, exist_ok=True)
    tcfg = os.path.join("configs", "paper003", f"{env}_teacher.yaml")
    if os.path.exists(tcfg):
        out = os.path.join(root, "teacher_run")
        if not (os.path.exists(os.path.join(out, "summary.json"))
                and os.path.exists(os.path.join(out, "policy.bin"))):  # else: trained already
            subprocess.run([args.dprl, "run", tcfg, "--out", out, "--quiet"], check=True)
        best, why = out, f"the final policy of {tcfg}"
    else:
        d = os.path.join(root, "fig2a", "hidden_size=64")
        runs = []
        for seed in (os.listdir(d) if os.path.isdir(d) else []):
            try:
                with open(os.path.join(d, seed, "summary.json")) as f:
                    runs.append((json.load(f), os.path.join(d, seed)))
            except (OSError, ValueError):
                continue
        if not runs:
            sys.exit("no fig2a hidden_size=64 runs to choose a teacher from")
        key = lambda it: (-(num(it[0]["final_eval"]["return_mean"]) or -math.inf),  # noqa: E731
                          -(num(it[0]["extra"].get("train_return_last10")) or -math.inf),
                          it[0]["seed"])
        summary, best = sorted(runs, key=key)[0]
        why = (f"fig2a (64, 64) seed {summary['seed']}: best final greedy evaluation "
               f"{summary['final_eval']['return_mean']:.1f}, then best last-10-epoch training "
               f"return, then lowest seed")
    shutil.copyfile(os.path.join(best, "policy.bin"), os.path.join(root, "teacher.bin"))
    with open(os.path.join(root, "teacher.json"), "w") as f:
        json.dump({"source": best, "why": why}, f, indent=2)
    os.makedirs(os.path.join(args.archive, env), exist_ok=True)
    record = {"why": why}
    tsum = read_archive(os.path.join(best, "summary.json"))
    if tcfg and os.path.exists(tcfg) and tsum:  # a separate teacher: keep its own evaluation
        record["final_eval"] = rounded((tsum.get("final_eval") or {}).get("return_mean"))
    with open(os.path.join(args.archive, env, "teacher.json"), "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    print(f"teacher: {why}")


# ----- the report -----
def plot(args, env, panel, curves):
    """The panel's curves from the archive, drawn by dprl plot from per-seed CSV files."""
    with tempfile.TemporaryDirectory() as tmp:
        files, labels = [], []
        for i, (sweep, label, legend) in enumerate(curves):
            items = curve_items(args, env, sweep, label)
            for summary, pts in items:
                f = os.path.join(tmp, f"c{i}_seed{summary['seed']}.csv")
                with open(f, "w", newline="") as fh:
                    w = csv.writer(fh)
                    w.writerow(["step", "train_return"])
                    w.writerows([s, y] for s, y, _ in pts if s is not None and y is not None)
                files.append(f)
            if items:
                labels.append(legend)
        if not files:
            return None
        svg = os.path.join(args.svg, f"{env}_{panel}.svg")
        cmd = [args.dprl, "plot", *files, "--x", "step", "--y", "train_return", "--stat",
               "median", "-o", svg, "--title", f"{ENVS[env]['title']}: {PANEL_TITLES[panel]}",
               "--x-label", "environment steps", "--y-label",
               "training episode return (median, 15th-85th percentile)"]
        for lab in labels:
            cmd += ["--label", lab]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return svg


def claim(text, holds, evidence):
    verdict = holds if isinstance(holds, str) else {
        True: "holds", False: "does not hold", None: "not testable"}[holds]
    return f"| {text} | {verdict} | {evidence} |"


def direction(p, prob, want_greater):
    """holds / reversed / does not hold for a two-sided test of 'a > b' (or 'a < b')."""
    if p is None:
        return None
    if p >= ALPHA:
        return "does not hold (no significant difference)"
    return "holds" if (prob > 0.5) == want_greater else "reversed"


WIDER = 1.1  # a band counts as wider when its width exceeds the other's by this factor


def compare(a, b, key):
    p, prob = mann_whitney(a[key], b[key])
    return p, prob


def claims(stats, env, teacher_eval=None):
    T, B = stats.get(TEACHER[1]), stats.get(BASELINE[1])
    X = stats.get("exact")
    A1, A3 = stats.get("aware 0.1"), stats.get("aware 0.3")
    U3, U9 = stats.get("unaware 0.3"), stats.get("unaware 0.9")
    out = ["| claim (paper) | here | evidence (medians over seeds; Mann-Whitney p) |",
           "|---|---|---|"]

    def better(a, b, key, name_a, name_b):
        if not a or not b:
            return None, "missing runs"
        p, prob = compare(a, b, key)
        ma, mb = percentile([x for x in a[key] if x is not None], 50), percentile(
            [x for x in b[key] if x is not None], 50)
        return direction(p, prob, True), (
            f"{KEYS[key]}: {name_a} {ma:.1f} vs {name_b} {mb:.1f}, p = {p:.2g}")

    def faster(a, b, name_a, name_b):
        """a reaches the threshold in fewer steps than b."""
        if not a or not b:
            return None, "missing runs"
        p, prob = mann_whitney(a["steps"], b["steps"])
        ma, mb = percentile(a["steps"], 50), percentile(b["steps"], 50)
        ratio = mb / ma if ma not in (0, math.inf) and mb != math.inf else None
        rtxt = f", ratio {ratio:.2f}x" if ratio else ""
        f = lambda v: "never" if v == math.inf else f"{v:.0f}"  # noqa: E731
        return direction(p, prob, False), (
            f"steps to threshold: {name_a} {f(ma)} vs {name_b} {f(mb)}{rtxt}, p = {p:.2g}")

    h, e = better(T, B, "auc", "(64, 64)", "(32, 32)")
    out.append(claim("2(a): the (32, 32) agent performs worse than the (64, 64) agent", h, e))
    h, e = better(X, B, "auc", "kickstarted", "baseline")
    h2, e2 = faster(X, B, "kickstarted", "baseline")
    out.append(claim("2(b): kickstarting improves the student's sample efficiency",
                     "holds" if "holds" in (h, h2) else h, f"{e}; {e2}"))
    if X and teacher_eval is not None:  # a separately trained teacher: compare with it
        mx = percentile([x for x in X["eval"] if x is not None], 50)
        out.append(claim("2(b): model compression: the (32, 32) student reaches the teacher's level",
                         mx >= 0.95 * teacher_eval,
                         f"final greedy eval: student {mx:.1f} vs teacher {teacher_eval:.1f}"))
    elif X and T:
        mx, mt = percentile([x for x in X["last10"] if x is not None], 50), percentile(
            [x for x in T["last10"] if x is not None], 50)
        out.append(claim("2(b): model compression: the (32, 32) student reaches the teacher's level",
                         mx >= 0.95 * mt,
                         f"last-10-epoch return: student {mx:.1f} vs (64, 64) {mt:.1f}"))
    if X and T and B:
        out.append(claim("2(b): kickstarting has lower run-to-run variance than teacher and baseline",
                         X["width"] * WIDER < min(T["width"], B["width"]),
                         f"band width: kickstarted {X['width']:.1f}, (64, 64) "
                         f"{T['width']:.1f}, (32, 32) {B['width']:.1f}"))
    for A, c in ((A1, "0.1"), (A3, "0.3")):
        if A and T:
            mt, ma = percentile(T["steps"], 50), percentile(A["steps"], 50)
            ratio = mt / ma if ma not in (0, math.inf) and mt != math.inf else None
            verdict = (None if mt == math.inf else False if ma == math.inf
                       else ratio >= 3.0)
            f = lambda v: "never" if v == math.inf else f"{v:.0f}"  # noqa: E731
            out.append(claim(f"2(c): the aware student (c = {c}) converges about 4x faster than "
                             "the teacher", verdict,
                             f"steps to threshold: (64, 64) {f(mt)} vs aware {f(ma)}"
                             + (f", ratio {ratio:.2f}x" if ratio else "")))
    h, e = better(A3, A1, "auc", "c = 0.3", "c = 0.1")
    out.append(claim("2(c): a lower vanishing coefficient (less budget) gives lower performance",
                     h, e))
    if A1 and A3:
        out.append(claim("2(c): a lower budget is less robust (wider band)",
                         A1["width"] > WIDER * A3["width"],
                         f"band width: c = 0.1 {A1['width']:.1f}, c = 0.3 {A3['width']:.1f}"))
    h, e = better(A3, U3, "auc", "aware c = 0.3", "unaware c = 0.3")
    out.append(claim("2(d): privacy-unaware students perform significantly worse than aware ones",
                     h, e))
    for U, c in ((U3, "0.3"), (U9, "0.9")):
        h, e = better(B, U, "last10", "baseline", f"unaware c = {c}")
        out.append(claim(f"2(d): once the teacher answers at random, the unaware student (c = {c})"
                         " is worse than the baseline", h, e))
    L3 = stats.get("aware 0.3 lambda 1")  # the follow-up: panel (c)'s students at lambda = 1
    EU, EA = stats.get("epoch unaware"), stats.get("epoch aware")
    follow = "follow-up (lambda = 1, c = 0.3): the aware student"
    ext = "extension (k per epoch, c = 0.9): the aware student"
    if L3 and T:
        h, e = faster(L3, T, "aware lambda = 1", "(64, 64)")
        out.append(claim(f"{follow} reaches the threshold sooner than the teacher-sized PPO", h, e))
    for present, a, b, key, name_a, name_b, text in (
            (L3, L3, U3, "auc", "aware lambda = 1", "unaware", f"{follow} beats the unaware one"),
            (L3, L3, B, "last10", "aware lambda = 1", "baseline", f"{follow} ends above PPO alone"),
            (EU and EA, EA, EU, "auc", "aware", "unaware", f"{ext} beats the unaware one"),
            (EU and EA, EA, B, "auc", "aware", "baseline", f"{ext} beats the baseline")):
        if present:
            out.append(claim(text, *better(a, b, key, name_a, name_b)))
    for A, c in ((A1, "0.1"), (A3, "0.3")):
        h, e = better(A, B, "last10", f"aware c = {c}", "baseline")
        out.append(claim(f"(ii) the aware student (c = {c}) ends above what PPO alone reaches",
                         h, e))
        if A and B:
            p, prob = compare(A, B, "last10")
            out.append(claim(f"(iii) the aware student (c = {c}) keeps its level after the teacher "
                             "stops (not worse than the baseline)", not (p < ALPHA and prob < 0.5),
                             f"last-10-epoch return, P(aware > baseline) = {prob:.2f}, "
                             f"p = {p:.2g}"))
    return out


def stats_line(legend, st):
    return (f"| {legend} | {st['n']} | {med_band(st['steps'])} | "
            f"{med_band(st['episodes'])} | {med_band(st['auc'], '{:.1f}')} | "
            f"{med_band(st['last10'], '{:.1f}')} | {med_band(st['eval'], '{:.1f}')} | "
            f"{'-' if st['width'] is None else format(st['width'], '.1f')} |")


STATS_HEADER = ["| curve | seeds | steps to threshold | episodes to threshold | AUC (mean return) "
                "| last-10-epoch return | final greedy eval | band width |",
                "|---|---|---|---|---|---|---|---|"]


def supplementary(args, thr):
    """The supplementary lambda and c sweeps (archived under lunar_lander_supp)."""
    lines = []
    for name, (key, legend) in SUPP.items():
        root = os.path.join(args.archive, "lunar_lander_supp", name)
        labels = sorted((f[:-5] for f in (os.listdir(root) if os.path.isdir(root) else [])
                         if f.endswith(".json")), key=lambda l: float(l.split("=")[1]))
        rows = []
        for label in labels:
            items = curve_items(args, "lunar_lander_supp", name, label)
            if items:
                rows.append(stats_line(legend.format(label.split("=")[1]),
                                       curve_stats(items, thr)))
        if rows:
            lines += [f"Supplementary {name} sweep (configs/paper003/lunar_lander_supp_{name}.yaml,"
                      " 500k steps; threshold as above):", ""] + STATS_HEADER + rows + [""]
    return lines


def report(args, env):
    thr = ENVS[env]["threshold"]
    names = {TEACHER[1]: ("fig2a", TEACHER[1]), BASELINE[1]: ("fig2a", BASELINE[1]),
             "exact": ("fig2b", "base"), "aware 0.1": ("fig2c", "decay=0.1"),
             "aware 0.3": ("fig2c", "decay=0.3"), "unaware 0.3": ("fig2d", "decay=0.3"),
             "unaware 0.9": ("fig2d", "decay=0.9"), "ext uniform": ("ext", "after_floor=uniform"),
             "ext none": ("ext", "after_floor=none"),
             "epoch unaware": ("ext_epoch", "lambda=0"), "epoch aware": ("ext_epoch", "lambda=0.5"),
             "aware 0.3 lambda 1": ("lambda1", "decay=0.3"),
             "aware 0.1 lambda 1": ("lambda1", "decay=0.1")}
    legends = {k: lab for curves in PANELS.values() for (s, l, lab) in curves
               for k, v in names.items() if v == (s, l)}
    legends.update({"aware 0.3 lambda 1": "privacy-aware, c = 0.3, lambda = 1",
                    "aware 0.1 lambda 1": "privacy-aware, c = 0.1, lambda = 1"})
    sync_env(args, env)
    if "blocks" in ENVS[env]:
        sync_env(args, "lunar_lander_supp")
    items = {k: curve_items(args, env, s, l) for k, (s, l) in names.items()}
    stats = {k: curve_stats(v, thr) for k, v in items.items() if v}
    if not stats:  # keep the block that is there rather than replace it by an empty one
        sys.exit(f"no runs of {env} under {args.runs} or {args.archive}: run with --run first")
    os.makedirs(args.svg, exist_ok=True)
    lines = [f"### {ENVS[env]['title']}", ""]
    tenv = ENVS[env].get("teacher_env", env)
    tpath = os.path.join(args.archive, tenv, "teacher.json")
    teacher = read_archive(tpath)
    tsum = read_archive(os.path.join(args.runs, tenv, "teacher_run", "summary.json"))
    if teacher and tsum and "final_eval" not in teacher:  # archive the teacher's own evaluation
        teacher["final_eval"] = rounded((tsum.get("final_eval") or {}).get("return_mean"))
        with open(tpath, "w") as f:
            json.dump(teacher, f, indent=2)
            f.write("\n")
    teacher_eval = teacher.get("final_eval") if teacher else None
    if teacher:
        lines += [f"Teacher: {teacher['why']}"
                  + (f" (final greedy evaluation {teacher_eval:.1f})" if teacher_eval is not None
                     else "") + ".", ""]
    rel = os.path.relpath(args.svg, os.path.dirname(os.path.abspath(args.doc)))
    for panel, curves in PANELS.items():
        if not any(curve_items(args, env, s, l) for s, l, _ in curves if s == panel):
            continue  # a panel not run (yet) for this env: no panel of borrowed curves alone
        svg = plot(args, env, panel, curves)
        if svg:
            lines += [f"![{PANEL_TITLES[panel]}]({rel}/{os.path.basename(svg)})", ""]
    lines += [f"Sample efficiency (threshold: training return >= {thr:g}; medians over seeds "
              "with [15th, 85th] percentiles; band width: the 85th minus the 15th percentile "
              "across seeds, averaged over epochs):", ""] + STATS_HEADER
    for k, st in stats.items():
        lines.append(stats_line(legends.get(k, k), st))
    lines += ["", "Privacy per curve (medians [15th, 85th] over seeds). Honest: the run's certified "
              "L, eta, tau and b; paper-matched: tau and b re-chosen so that k0 = 5 gives "
              "(4.46, 0.05). Per query only; totals by basic composition; the relation is "
              "b-adjacent observations with the teacher network fixed, not the teacher's training "
              "data.", "",
              ]
    privacy_header = ["| curve | per query at k0 (eps, delta) | private answers | switched at query "
                      "| total eps | total delta (sum) | vacuous | paper-matched |",
                      "|---|---|---|---|---|---|---|---|"]
    lips = [(num(p["details"]["teacher"]["lipschitz_certified"]),
             num(p["details"]["teacher"]["lipschitz_power_iteration"]))
            for st in stats.values() for p in st["privacy"] if "teacher" in (p.get("details") or {})]
    if lips:
        lines += ["", f"Teacher Lipschitz bound (observation -> softmax policy): certified "
                  f"{lips[0][0]:.4g} (power-iteration estimate {lips[0][1]:.4g}); the floored map "
                  "has (1 - m eta) times that."]
    lines += [""] + privacy_header
    for k, st in stats.items():
        row = privacy_row(legends.get(k, k), st["privacy"])
        if row:
            lines.append(row)
    lines += ["", "Claims:", ""] + claims(stats, env, teacher_eval) + [""]
    if "blocks" in ENVS[env]:
        lines += supplementary(args, thr)
    write_block(args.doc, env, "\n".join(lines))


def write_block(doc, env, text):
    begin, end = f"<!-- paper003:{env}:begin -->", f"<!-- paper003:{env}:end -->"
    old = open(doc).read() if os.path.exists(doc) else ""
    block = f"{begin}\n{text}\n{end}"
    if begin in old and end in old:
        new = old[:old.index(begin)] + block + old[old.index(end) + len(end):]
    else:
        new = old + ("\n" if old and not old.endswith("\n") else "") + block + "\n"
    tmp = doc + ".tmp"
    with open(tmp, "w") as f:
        f.write(new)
    os.replace(tmp, doc)
    print(f"wrote the {env} block of {doc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--env", choices=sorted(ENVS), required=True)
    ap.add_argument("--run", action="store_true", help="run the sweeps first")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--start", default="fig2a", choices=["fig2a", "teacher", "fig2b", "fig2c", "fig2d", "ext", "ext_epoch"],
                    help="with --run: the first stage to run (earlier ones are kept)")
    ap.add_argument("--dprl", default="build/dprl")
    ap.add_argument("--runs", default="runs/paper003")
    ap.add_argument("--doc", default="docs/paper003.md")
    ap.add_argument("--svg", default="docs/paper003")
    ap.add_argument("--archive", default="docs/paper003/results",
                    help="the per-curve archive (read, and updated from the runs on disk)")
    ap.add_argument("--commit", action="store_true",
                    help="with --run: git-commit the archive files after every sweep")
    ap.add_argument("--archive-only", action="store_true",
                    help="with --run: stop after the sweeps and their archive (page untouched)")
    args = ap.parse_args()
    if args.run:
        run_sweeps(args, args.env)
        if args.archive_only:
            return
    report(args, args.env)


if __name__ == "__main__":
    main()
