"""Helpers shared by the paper report scripts (tools/report_paper*.py): reading sweep
directories and summarising numbers. Standard library only."""
import csv
import json
import math
import os


def read_runs(sweep_dir, label_key=None):
    """{label: [(summary, rows, run_dir)]} for every <label>/seed*/ under sweep_dir, in label
    order; a run without summary.json (still running) is left out."""
    out = {}
    if not os.path.isdir(sweep_dir):
        return out
    for label in sorted(os.listdir(sweep_dir), key=label_key):
        ldir = os.path.join(sweep_dir, label)
        if not os.path.isdir(ldir):
            continue
        seeds = [s for s in os.listdir(ldir) if s.startswith("seed")]
        for seed in sorted(seeds, key=lambda s: (len(s), s)):
            rdir = os.path.join(ldir, seed)
            try:
                with open(os.path.join(rdir, "summary.json")) as f:
                    summary = json.load(f)
                with open(os.path.join(rdir, "metrics.csv")) as f:
                    rows = list(csv.DictReader(f))
            except (OSError, ValueError):
                continue
            out.setdefault(label, []).append((summary, rows, rdir))
    return out


def num(x):
    try:
        v = float(x)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


def mean_sd(xs, single_sd=None):
    """Mean and sample sd (divisor n - 1) of the values that are not None; sd is single_sd for one."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else single_sd
    return m, sd
