#!/bin/bash
# Checkpoint cost: a run with checkpoints every EVERY steps against the same run with none
# (train.checkpoint_every=0), alternating, REPS runs each; prints the wall times (timing.json) and
# CPU times (user + sys) of each, their medians and the ratios.
#   scripts/bench_checkpoint.sh CONFIG EVERY [REPS] [extra dprl run args...]
set -euo pipefail
config=$1
every=$2
reps=${3:-3}
shift $(($# < 3 ? $# : 3))
dprl=${DPRL:-build/dprl}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
one() {  # one run: "wall cpu"
  /usr/bin/time -f "%U %S" -o "$work/time" "$dprl" run "$config" --quiet --out "$work/$1" \
    --set "train.checkpoint_every=$2" "${@:3}" >/dev/null
  python3 -c 'import json, sys; u, s = open(sys.argv[2]).read().split()[-2:]; print(json.load(open(sys.argv[1]))["wall_time_s"], float(u) + float(s))' \
    "$work/$1/timing.json" "$work/time"
}
: >"$work/with"
: >"$work/without"
for ((i = 0; i < reps; ++i)); do
  one w "$every" "$@" >>"$work/with"
  one n 0 "$@" >>"$work/without"
done
python3 - "$config" "$every" "$work/with" "$work/without" <<'PY'
import statistics, sys
config, every, fw, fn = sys.argv[1:]
w = [tuple(map(float, l.split())) for l in open(fw)]
n = [tuple(map(float, l.split())) for l in open(fn)]
med = lambda xs: statistics.median(xs)
print(f"{config}, checkpoint_every {every}")
for name, rows in (("with", w), ("without", n)):
    print(f"  {name:8} wall {', '.join(f'{r[0]:.2f}' for r in rows)} s; cpu {', '.join(f'{r[1]:.2f}' for r in rows)} s")
ww, wn = med([r[0] for r in w]), med([r[0] for r in n])
cw, cn = med([r[1] for r in w]), med([r[1] for r in n])
print(f"  median wall {ww:.3f} / {wn:.3f} s = {ww / wn:.4f}; median cpu {cw:.3f} / {cn:.3f} s = {cw / cn:.4f}")
PY
