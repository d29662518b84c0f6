#!/bin/sh
# The HalfCheetah medium-expert data set of paper 004's Table 11 at our scale: one seeded SAC run
# (configs/sac_half_cheetah.yaml) stopped at 50k steps ("medium") and at 100k steps ("expert");
# the two runs share their first 50k steps bit for bit, so the medium policy is the expert run's
# 50k-step state. 100 episodes of each policy with Gaussian action noise 0.1, merged with one user
# per episode. About 16 CPU minutes (312 + 641 CPU s for the two SAC runs, which run side by
# side; collecting and merging take seconds).
# Usage: scripts/paper004_half_cheetah_data.sh [DPRL] [OUT]
set -eu
DPRL=${1:-build/dprl}
OUT=${2:-runs/paper004/data}
SAC=runs/paper004/half_cheetah_sac
for steps in 50000 100000; do
  [ -f "$SAC/$steps/policy.bin" ] ||
    "$DPRL" run configs/sac_half_cheetah.yaml --seed 1 --quiet --set train.steps=$steps \
      --out "$SAC/$steps" &
done
wait
[ -f "$SAC/50000/policy.bin" ] && [ -f "$SAC/100000/policy.bin" ]
"$DPRL" collect --env half_cheetah --policy "$SAC/50000/policy.bin" --episodes 100 --seed 11 \
  --action-noise 0.1 --overwrite --dataset-id dprl/half_cheetah/sac-medium-v0 \
  --out "$OUT/half_cheetah-medium"
"$DPRL" collect --env half_cheetah --policy "$SAC/100000/policy.bin" --episodes 100 --seed 12 \
  --action-noise 0.1 --overwrite --dataset-id dprl/half_cheetah/sac-expert-v0 \
  --out "$OUT/half_cheetah-expert"
"$DPRL" dataset merge "$OUT/half_cheetah-medium" "$OUT/half_cheetah-expert" --users episode \
  --dataset-id dprl/half_cheetah/sac-medium-expert-v0 --overwrite \
  --out "$OUT/half_cheetah-medium-expert"
"$DPRL" dataset info "$OUT/half_cheetah-medium-expert"
