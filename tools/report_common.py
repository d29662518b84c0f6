"""Helpers shared by the paper report scripts (tools/report_paper*.py): reading sweep
directories and summarising numbers. Standard library only."""
import csv
import json
import math
import os
import subprocess
import tempfile
import time


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


def dataset_info(dprl, d):
    """`dprl dataset info --json` of dataset directory d, None when it is absent."""
    if not os.path.isdir(d):
        return None
    r = subprocess.run([dprl, "dataset", "info", d, "--json"], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


class Archive:
    """The results a report reads, kept in one committed JSON file so that the report can be
    regenerated where the run directories are gone (runs/ is not in the repository).

    Paths are relative to `root` (e.g. runs/paper000). A file found under root is read, reduced
    by `trim` and recorded; a file missing under root is answered from the archive. `listdir`
    merges the directory with the archived paths beneath it, so runs made on different machines
    add up. Delete the archive file to report only what is on disk."""

    def __init__(self, root, path):
        self.root, self.path = root, path
        self.data = {}
        if path and os.path.exists(path):
            with open(path) as fh:
                self.data = json.load(fh)

    def json(self, rel, trim=None):
        try:
            with open(os.path.join(self.root, rel)) as fh:
                obj = json.load(fh)
        except (OSError, ValueError):
            return self.data.get(rel)
        self.data[rel] = trim(obj) if trim else obj
        return self.data[rel]

    def text(self, rel, parse):
        """parse(text) of a text file (a CSV, a log), recorded like json()."""
        try:
            with open(os.path.join(self.root, rel)) as fh:
                obj = parse(fh.read())
        except (OSError, ValueError):
            return self.data.get(rel)
        self.data[rel] = obj
        return obj

    def computed(self, key, compute):
        """compute() (None when its inputs are absent), else the archived value of key."""
        obj = compute()
        if obj is None:
            return self.data.get(key)
        self.data[key] = obj
        return obj

    def listdir(self, rel):
        full = os.path.join(self.root, rel)
        names = set(os.listdir(full)) if os.path.isdir(full) else set()
        prefix = rel.rstrip("/") + "/"
        names.update(k[len(prefix):].split("/")[0] for k in self.data if k.startswith(prefix))
        return sorted(names)

    def save(self):
        if not self.path:
            return
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump(self.data, fh, indent=0, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, self.path)


def trim_summary(s):
    """The parts of a run's summary.json the reports read."""
    return {k: s[k] for k in ("name", "seed", "final_eval", "extra", "privacy", "git_commit") if k in s}


def plot_series(series, x, svg, dprl, figs, title, y="score"):
    """One CSV per (method, seed) of (x, y) points under figs/data/, drawn with dprl plot (mean
    and 95% band across seeds per method); returns the markdown image line (a path relative to
    the page beside the figs folder)."""
    csv_dir = os.path.join(figs, "data")
    os.makedirs(csv_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(svg))[0]
    files = []
    for (method, seed), pts in sorted(series.items()):
        f = os.path.join(csv_dir, f"{stem}_{method}_seed{seed}.csv")
        with open(f, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow([x, y])
            w.writerows(sorted(pts))
        files.append(f)
    if not files:
        return ""
    # dprl plot groups the files by name without the seed, in the order of their first file:
    # the sorted method names
    labels = [a for m in sorted({m for m, _ in series}) for a in ("--label", m)]
    r = subprocess.run([dprl, "plot", *files, "--x", x, "--y", y, "-o", svg, "--title", title,
                        *labels], capture_output=True, text=True)
    if r.returncode == 0:
        return f"![{stem}]({os.path.basename(figs)}/{os.path.basename(svg)})\n"
    return f"_figure {svg} not drawn: {r.stderr.strip()}_\n"


def compact(v, digits):
    """v rounded to `digits` decimals, as an int when it is integral (smaller archives)."""
    if not isinstance(v, float) or not math.isfinite(v):
        return v
    r = round(v, digits)
    return int(r) if r == int(r) and abs(r) < 2 ** 53 else r


class RunArchive:
    """Per-run results of a paper's sweeps, kept in one committed JSON file so that the report is
    computed from the archive alone and regenerates byte for byte where runs/ is gone.

    A run is <sweep>/<label>/seed<K>/ under the runs root (the layout of `dprl sweep`); its entry
    holds a trimmed summary.json and the metrics.csv columns the report reads (rounded to
    `digits` decimals). Runs found on disk replace their archived copies; archived runs missing on
    disk are kept, so runs made on different machines add up. `materialise` writes the archive
    back out as run directories (summary.json and metrics.csv only) for the report to read."""

    def __init__(self, path):
        self.path = path
        self.data = {}
        if path and os.path.exists(path):
            with open(path) as fh:
                self.data = json.load(fh)

    def sync(self, root, columns_for, trim=None, digits=5):
        """Records every finished run under root. columns_for(sweep) is the list of metrics.csv
        columns to keep for that sweep ([]: none; None: skip the sweep); trim(summary, rows) is
        what is kept of summary.json (default: trim_summary). Returns the keys recorded."""
        trim = trim or (lambda s, rows: trim_summary(s))
        recorded = []
        for sweep in (sorted(os.listdir(root)) if os.path.isdir(root) else []):
            cols = columns_for(sweep)
            if cols is None or not os.path.isdir(os.path.join(root, sweep)):
                continue
            for label, items in read_runs(os.path.join(root, sweep)).items():
                for summary, rows, rdir in items:
                    key = f"{sweep}/{label}/{os.path.basename(rdir)}"
                    # no columns: no rows either (not one empty list per episode)
                    self.data[key] = {
                        "summary": trim(summary, rows), "columns": cols,
                        "rows": [[compact(num(r.get(c)), digits) for c in cols] for r in rows]
                        if cols else []}
                    recorded.append(key)
        return recorded

    def sweeps(self):
        return sorted({k.split("/")[0] for k in self.data})

    def materialise(self, dest):
        for key, run in self.data.items():
            d = os.path.join(dest, *key.split("/"))
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "summary.json"), "w") as fh:
                json.dump(run["summary"], fh)
            with open(os.path.join(d, "metrics.csv"), "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(run["columns"])
                w.writerows(["" if v is None else v for v in row] for row in run["rows"])

    def save(self):
        if not self.path:
            return
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as fh:  # one run per line: small diffs when runs are added
            line = lambda k: json.dumps(self.data[k], sort_keys=True, separators=(",", ":"))  # noqa
            fh.write("{\n" + ",\n".join(f"{json.dumps(k)}: {line(k)}" for k in sorted(self.data))
                     + "\n}\n")
        os.replace(tmp, self.path)


def seed_subset(path, seeds):
    """The text of sweep file `path` with its seeds list replaced by `seeds` and its base path made
    absolute (so a copy written elsewhere runs the same runs in the same directories)."""
    with open(path) as f:
        lines = f.read().splitlines()
    out = []
    for line in lines:
        if line.startswith("seeds:"):
            line = f"seeds: [{', '.join(str(x) for x in seeds)}]"
        elif line.startswith("base:"):
            base = line.split(":", 1)[1].strip()
            line = f"base: {os.path.abspath(os.path.join(os.path.dirname(path), base))}"
        out.append(line)
    return "\n".join(out) + "\n"


def run_sweep_seeds(dprl, path, seeds=None, jobs=1, check=True):
    """dprl sweep of path; with seeds, of a temporary copy that runs only those seeds (the same
    runs in the same directories, so the full sweep later finds them finished). Returns the
    CompletedProcess (raises on failure when check)."""
    if seeds is None:
        return subprocess.run([dprl, "sweep", path, "--jobs", str(jobs)], check=check)
    with tempfile.TemporaryDirectory() as tmp:
        block = os.path.join(tmp, os.path.basename(path))
        with open(block, "w") as f:
            f.write(seed_subset(path, seeds))
        return subprocess.run([dprl, "sweep", block, "--jobs", str(jobs)], check=check)


def replace_block(doc, body, begin="<!-- BEGIN GENERATED -->", end="<!-- END GENERATED -->"):
    """Rewrites the part of doc between the begin and end markers with body (atomically)."""
    with open(doc) as fh:
        text = fh.read()
    if begin not in text or end not in text:
        raise SystemExit(f"{doc}: no '{begin}' ... '{end}' markers for the generated part")
    i, j = text.index(begin) + len(begin), text.index(end)
    with open(doc + ".tmp", "w") as fh:
        fh.write(text[:i] + "\n" + body.rstrip("\n") + "\n" + text[j:])
    os.replace(doc + ".tmp", doc)


def log(msg):
    """A timestamped line on stdout (the paper drivers' logs)."""
    print(f"[{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC] {msg}", flush=True)


def commit_files(files, message):
    """git-commits files with message when any of them changed; returns whether it committed."""
    subprocess.run(["git", "add", "--", *files], check=False)
    if subprocess.run(["git", "diff", "--cached", "--quiet", "--", *files]).returncode == 0:
        return False
    subprocess.run(["git", "commit", "-q", "-m", message, "--", *files], check=False)
    return True
