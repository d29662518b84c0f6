#!/usr/bin/env python3
"""Paper 002 report: turns the regret sweeps of configs/paper002/ into tables (markdown) and
regret curves (SVG, drawn by `dprl plot` on log-log axes).

Usage (after the sweeps in configs/paper002/ have run from the repository root):
    python3 tools/report_paper002.py [--runs runs/paper002] [--dprl build/dprl] [--out docs/paper002]
        [--archive docs/paper002/results.json] [--doc docs/paper002.md]

Every finished run under --runs is first recorded in the archive (--archive: its summary and the
episode, regret and updates columns of metrics.csv), and the report is then computed from the
archive alone, so it regenerates byte for byte where the run directories are gone. The markdown
replaces the part of --doc between the BEGIN/END GENERATED markers.

Two instances, each with up to four sweeps (a missing sweep is skipped with a note):
    qiao_wang_{nonprivate,plus,private,private_plus}   (configs/paper002/qiao_wang*.yaml)
    tabular_{nonprivate,plus,private,private_plus}     (configs/paper002/tabular*.yaml)
A sweep directory holds <label>/seed<N>/ runs, each with metrics.csv (episode, regret = cumulative
regret R(k) after episode k, regret_k, updates = policy updates so far; rows on a log-spaced episode
grid up to K) and summary.json ("extra": regret, updates, planned_updates, v_star, v_final_policy,
...; "privacy": the accounted epsilon and delta, or null).

Written to --doc, per instance and sweep:
  - a table: configuration, seeds, R(K) mean ± sd across seeds, R(K)/K, policy updates (planned),
    the final policy gap v* - v(pi_K), the accounted epsilon, and the log-log slope of R(k): the
    least-squares slope of log R on log k over k in [K/10, K] (the tail) and over [100, K], mean ±
    sd across seeds (seeds with R <= 0 somewhere in the range are left out of that mean);
  - one line per configuration comparing the tail slope with the exponent theory predicts:
    non-private sqrt(K) (0.5); private static batching K^(3/5) (Luyo et al. 2021, 0.6); private
    adaptive batching K^(1/2) (Ngo et al. 2022, 0.5); the talk's private LSVI-UCB+ K^(3/4) (0.75);
    a slope above 0.9 is reported as linear regret.
SVGs go to --out, drawn from one seed (seed1) per configuration so the curves stay readable, and are
linked from the markdown as <basename of --out>/<file>.svg (the markdown is meant to sit beside the
--out directory). Only the standard library is used.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_common import RunArchive, mean_sd, num, replace_block, trim_summary  # noqa: E402
from report_common import read_runs as read_runs_in  # noqa: E402

INSTANCES = (("qiao_wang", "Qiao-Wang linear MDP"), ("tabular", "tabular MDP"))
SWEEPS = (("nonprivate", "non-private LSVI-UCB"), ("plus", "non-private LSVI-UCB+"),
          ("private", "joint-DP LSVI-UCB"), ("private_plus", "joint-DP LSVI-UCB+ (the talk)"))
BATCHING_ORDER = {"none": 0, "static": 1, "adaptive": 2}
LINEAR_SLOPE = 0.9  # tail slopes above this are called linear regret
CLOSE = 0.1  # |slope - theory| within this is called consistent


def read_runs(sweep_dir):
    """{label: [(summary, rows, run_dir)]} in label order (batching none, static, adaptive)."""
    return read_runs_in(sweep_dir, label_key)


def parse_label(label):
    """"batching=adaptive,beta=3" -> {"batching": "adaptive", "beta": "3"}."""
    out = {}
    for part in label.split(","):
        key, _, value = part.partition("=")
        out[key.strip()] = value.strip()
    return out


def label_key(label):
    """Sort key: batching none, static, adaptive; then numbers numerically."""
    key = []
    for name, value in parse_label(label).items():
        if name == "batching":
            key.append((name, BATCHING_ORDER.get(value, 9), 0.0, value))
        else:
            v = num(value)
            key.append((name, 0, v if v is not None else math.inf, value))
    return key


def short(x):
    """3 significant digits, but whole numbers from 100 up ("1040", not "1.04e+03")."""
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def fmt(m, sd=None, spec=None):
    if m is None:
        return "-"
    f = short if spec is None else (lambda x: f"{x:{spec}}")
    return f(m) if sd is None else f"{f(m)} ± {f(sd)}"


def curve(rows):
    """[(k, R(k))] with finite values, in episode order."""
    pts = [(num(r.get("episode")), num(r.get("regret"))) for r in rows]
    return sorted((k, R) for k, R in pts if k is not None and R is not None)


def loglog_slope(pts, lo, hi):
    """Least-squares slope of log R on log k over lo <= k <= hi; None when some R <= 0 there or
    fewer than two distinct k remain."""
    sel = [(k, R) for k, R in pts if lo <= k <= hi]
    if any(R <= 0 or k <= 0 for k, R in sel):
        return None
    xs = [math.log(k) for k, _ in sel]
    ys = [math.log(R) for _, R in sel]
    if len(set(xs)) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def theory(kind, label):
    """(exponent, description) of the regret bound for a configuration of a sweep kind."""
    batching = parse_label(label).get("batching")
    if kind in ("nonprivate", "plus"):
        return 0.5, "non-private sqrt(K)"
    if kind == "private_plus":
        return 0.75, "the talk's private LSVI-UCB+ K^(3/4)"
    if batching == "static":
        return 0.6, "Luyo et al. 2021, static batching, K^(3/5)"
    if batching == "adaptive":
        return 0.5, "Ngo et al. 2022, adaptive batching, K^(1/2)"
    return 0.6, "Luyo et al. 2021, K^(3/5)"


def verdict(slope, exponent):
    if slope > LINEAR_SLOPE:
        return "linear regret"
    if abs(slope - exponent) <= CLOSE:
        return "consistent with theory"
    if slope > exponent:
        return "steeper than theory"
    if slope < 0.2:
        return "flatter than theory: regret has almost stopped growing"
    return "flatter than theory"


def config_stats(items):
    """Per-configuration figures across seeds (see the module docstring)."""
    st = {"seeds": len(items), "R": [], "RK": [], "updates": [], "planned": [], "gap": [],
          "eps": [], "accountant": set(), "tail": [], "from100": [], "K": [], "pd_repairs": 0}
    for summary, rows, _ in items:
        extra = summary.get("extra") or {}
        pts = curve(rows)
        K = pts[-1][0] if pts else num(summary.get("episodes"))
        R = num(extra.get("regret"))
        if R is None and pts:
            R = pts[-1][1]
        st["K"].append(K)
        st["R"].append(R)
        st["RK"].append(R / K if R is not None and K else None)
        st["updates"].append(num(extra.get("updates")))
        st["planned"].append(num(extra.get("planned_updates")))
        v_star, v_pi = num(extra.get("v_star")), num(extra.get("v_final_policy"))
        st["gap"].append(v_star - v_pi if v_star is not None and v_pi is not None else None)
        privacy = summary.get("privacy")
        if isinstance(privacy, dict):
            st["eps"].append(num(privacy.get("epsilon")))
            if privacy.get("accountant"):
                st["accountant"].add(str(privacy["accountant"]))
        st["pd_repairs"] += int(num(extra.get("pd_repairs")) or 0)
        if K:
            st["tail"].append(loglog_slope(pts, K / 10, K))
            st["from100"].append(loglog_slope(pts, 100, K))
    return st


def slope_cell(slopes):
    m, sd = mean_sd(slopes)
    used = sum(1 for s in slopes if s is not None)
    cell = fmt(m, sd, ".3f")
    return cell if used == len(slopes) or m is None else f"{cell} ({used} seeds)"


def sweep_section(kind, title, runs):
    lines = [f"#### {title}", "",
             "| configuration | seeds | R(K) | R(K)/K | policy updates (planned) | "
             "v* - v(pi_K) | epsilon (accountant) | slope [K/10, K] | slope [100, K] |",
             "|---|---|---|---|---|---|---|---|---|"]
    stats = {}
    for label, items in runs.items():
        st = config_stats(items)
        stats[label] = st
        updates = fmt(mean_sd(st["updates"])[0])
        planned = mean_sd(st["planned"])[0]
        if planned is not None:
            updates += f" ({planned:.0f})"
        eps_m, eps_sd = mean_sd(st["eps"])
        # the accountant's epsilon is the same for every seed; an sd shows only if it is not
        eps = "-" if eps_m is None else fmt(
            eps_m, eps_sd if eps_sd is not None and eps_sd > 1e-6 * eps_m else None, ".4g")
        if st["accountant"]:
            eps += f" ({', '.join(sorted(st['accountant']))})"
        r_over_k = fmt(mean_sd(st["RK"])[0], spec=".3g")  # small: keep 3 significant digits
        lines.append(f"| {label} | {st['seeds']} | {fmt(*mean_sd(st['R']))} | {r_over_k} | "
                     f"{updates} | {fmt(mean_sd(st['gap'])[0])} | {eps} | "
                     f"{slope_cell(st['tail'])} | {slope_cell(st['from100'])} |")
    lines.append("")
    all_K = sorted({k for st in stats.values() for k in st["K"] if k is not None})
    if all_K:
        lines.append(f"K = {', '.join(f'{k:g}' for k in all_K)} episodes; mean ± sd across seeds.")
    repairs = sum(st["pd_repairs"] for st in stats.values())
    if repairs:
        lines.append(f"Positive-definiteness repairs of the noisy Gram matrix: {repairs} in total.")
    lines.append("")
    lines.append("Tail slope of log R(k) on log k against theory:")
    lines.append("")
    for label, st in stats.items():
        exponent, source = theory(kind, label)
        m, sd = mean_sd(st["tail"])
        if m is None:
            lines.append(f"- {label}: no slope (R(k) is zero on the tail): theory {exponent:g} "
                         f"({source})")
            continue
        lines.append(f"- {label}: slope {fmt(m, sd, '.3f')} on [K/10, K] "
                     f"(from k = 100: {fmt(mean_sd(st['from100'])[0], spec='.3f')}); "
                     f"theory {exponent:g} ({source}): {verdict(m, exponent)}")
    return "\n".join(lines) + "\n", stats


def has_log_axes(dprl):
    try:
        r = subprocess.run([dprl, "plot", "--help"], capture_output=True, text=True)
    except OSError:
        return None
    return "--log-x" in r.stdout


def first_seed_dirs(runs, labels):
    """One run directory per configuration: seed1, else the lowest seed present."""
    dirs = []
    for label in labels:
        items = runs.get(label) or []
        pick = [d for _, _, d in items if os.path.basename(d) == "seed1"] or \
            [d for _, _, d in items][:1]
        dirs += pick
    return dirs


def plot(ctx, dirs, name, title, note="", y="regret", y_label="cumulative regret R(k)"):
    """Draws one line per run directory; returns markdown for the figure (its caption is the
    title, the note and the seed and axes used), or a note that it was not drawn."""
    if not dirs:
        return ""
    out_svg = os.path.join(ctx["out"], name)
    cmd = [ctx["dprl"], "plot", *dirs, "--x", "episode", "--y", y, "-o", out_svg, "--title",
           title, "--x-label", "episode k", "--y-label", y_label]
    if ctx["log"]:
        cmd += ["--log-x", "--log-y"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return f"_Figure {name} not drawn: {r.stderr.strip()}_\n"
    link = os.path.join(os.path.basename(os.path.normpath(ctx["out"])), name)
    axes = "log-log axes" if ctx["log"] else "linear axes (this dprl plot has no --log-x)"
    return (f"![{title}]({link})\n\n"
            f"_{title}{note}: one seed (seed1) per configuration, {axes}._\n")


def best_beta(stats, batching):
    """The beta whose batching=<batching> configuration has the lowest mean R(K)."""
    best = None
    for label, st in stats.items():
        p = parse_label(label)
        m = mean_sd(st["R"])[0]
        if p.get("batching") == batching and "beta" in p and m is not None:
            if best is None or m < best[1]:
                best = (p["beta"], m)
    return best[0] if best else None


def figures(ctx, instance, name, sweeps):
    md = []
    nonpriv = sweeps.get("nonprivate")
    if nonpriv:
        runs, stats = nonpriv
        beta = best_beta(stats, "adaptive")
        labels = [l for l in runs if parse_label(l).get("batching") == "adaptive" or
                  (beta is not None and parse_label(l).get("beta") == beta)]
        dirs = first_seed_dirs(runs, labels or list(runs))
        note = f" (adaptive at every beta; the other schedules at beta={beta})" if beta else ""
        md.append(plot(ctx, dirs, f"{instance}_nonprivate_regret.svg",
                       f"{name}: non-private LSVI-UCB regret", note))
        md.append(plot(ctx, dirs, f"{instance}_nonprivate_updates.svg",
                       f"{name}: policy updates, non-private", note, y="updates",
                       y_label="policy updates"))
    priv = sweeps.get("private")
    if priv:
        runs, _ = priv
        for batching, who in (("static", "Luyo et al."), ("adaptive", "Ngo et al.")):
            labels = [l for l in runs if parse_label(l).get("batching") == batching]
            md.append(plot(ctx, first_seed_dirs(runs, labels),
                           f"{instance}_private_{batching}_regret.svg",
                           f"{name}: joint-DP, {batching} batching",
                           f" ({who}), one line per epsilon"))
    plus_dirs = []
    for kind in ("plus", "private_plus"):
        if sweeps.get(kind):
            runs, _ = sweeps[kind]
            plus_dirs += first_seed_dirs(runs, list(runs))
    md.append(plot(ctx, plus_dirs, f"{instance}_plus_regret.svg",
                   f"{name}: LSVI-UCB+", ", non-private (beta, batching) and joint-DP (epsilon)"))
    return [m for m in md if m]


def sweep_dir(root, instance, kind):
    """runs/paper002/<instance>_<kind>; for the tabular instance also tabular_qiao_wang_<kind>."""
    candidates = [f"{instance}_{kind}"]
    if instance == "tabular":
        candidates.append(f"tabular_qiao_wang_{kind}")
    for c in candidates:
        if os.path.isdir(os.path.join(root, c)):
            return os.path.join(root, c)
    return os.path.join(root, candidates[0])


def trim(summary, rows):
    out = trim_summary(summary)
    out.pop("git_commit", None)
    if isinstance(summary.get("privacy"), dict):
        out["privacy"] = {k: summary["privacy"].get(k) for k in ("epsilon", "delta", "accountant")
                          if k in summary["privacy"]}
    return out


def columns_for(sweep):
    return ["episode", "regret", "updates"] if sweep.startswith(("qiao_wang", "tabular")) else None


def report(root, ctx, log):
    md = []
    if log is None:
        md.append(f"_{ctx['dprl']} not found: no figures drawn._\n")
    for instance, name in INSTANCES:
        md.append(f"#### {name} (`{instance}`)\n")
        sweeps = {}
        for kind, title in SWEEPS:
            d = sweep_dir(root, instance, kind)
            runs = read_runs(d)
            if not runs:
                md.append(f"_{os.path.basename(d)}: no finished runs, skipped._\n")
                continue
            text, stats = sweep_section(kind, f"{name}, {title} (`{os.path.basename(d)}`)", runs)
            md.append(text)
            sweeps[kind] = (runs, stats)
        if sweeps and log is not None:
            md += figures(ctx, instance, name, sweeps)
    return "\n".join(md)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="runs/paper002")
    ap.add_argument("--dprl", default="build/dprl")
    ap.add_argument("--out", default="docs/paper002")
    ap.add_argument("--archive", default="docs/paper002/results.json")
    ap.add_argument("--doc", default="docs/paper002.md")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    log = has_log_axes(args.dprl)
    ctx = {"dprl": args.dprl, "out": args.out, "log": bool(log)}
    archive = RunArchive(args.archive)
    archive.sync(args.runs, columns_for, trim)
    archive.save()
    with tempfile.TemporaryDirectory() as tmp:
        archive.materialise(tmp)
        body = report(tmp, ctx, log)
    replace_block(args.doc, body)


if __name__ == "__main__":
    main()
