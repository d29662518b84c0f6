#!/bin/bash
# Checkpoint cost: a run's wall time (timing.json) with checkpoints at the given interval and with
# none (train.checkpoint_every=0), median of REPS runs each, alternating, and the ratio.
#   scripts/bench_checkpoint.sh CONFIG EVERY [REPS] [extra dprl run args...]
set -euo pipefail
config=$1
every=$2
reps=${3:-3}
shift $(($# < 3 ? $# : 3))
dprl=${DPRL:-build/dprl}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
wall() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["wall_time_s"])' "$1"; }
: >"$work/with"
: >"$work/without"
for ((i = 0; i < reps; ++i)); do
  "$dprl" run "$config" --quiet --out "$work/w" --set "train.checkpoint_every=$every" "$@" >/dev/null
  wall "$work/w/timing.json" >>"$work/with"
  "$dprl" run "$config" --quiet --out "$work/n" --set train.checkpoint_every=0 "$@" >/dev/null
  wall "$work/n/timing.json" >>"$work/without"
done
with=$(median <"$work/with")
without=$(median <"$work/without")
echo "$config every $every: with $(paste -sd' ' "$work/with") s, without $(paste -sd' ' "$work/without") s"
python3 -c "import sys; w, n = map(float, sys.argv[1:]); print(f'median with {w:.3f} s, without {n:.3f} s, ratio {w / n:.4f}')" "$with" "$without"
