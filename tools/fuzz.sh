#!/usr/bin/env bash
# Runs one libFuzzer target for a while on one core:
#   tools/fuzz.sh TARGET SECONDS     TARGET: config | replay | policy | ledger | dataset
# Needs the fuzz build (scripts/setup.sh --fuzz). The seed corpus tests/fuzz/corpus/TARGET is
# copied to build-fuzz/corpus/TARGET, which grows there; crashes land in build-fuzz/crashes/TARGET.
# A crash becomes a regression test by committing its input to tests/fuzz/corpus/TARGET once
# fixed: the ctest label `fuzz` replays that corpus in every build.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: tools/fuzz.sh TARGET SECONDS}
seconds=${2:?usage: tools/fuzz.sh TARGET SECONDS}
exe=build-fuzz/tests/fuzz/dprl_fuzz_$target
[ -x "$exe" ] || { echo "fuzz: $exe missing; run scripts/setup.sh --fuzz" >&2; exit 2; }
corpus=build-fuzz/corpus/$target
crashes=build-fuzz/crashes/$target
mkdir -p "$corpus" "$crashes"
cp -n tests/fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
exec "$exe" "$corpus" -max_total_time="$seconds" -jobs=1 -workers=1 -max_len=65536 \
  -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 -artifact_prefix="$crashes/"
