#!/usr/bin/env bash
# Runs one libFuzzer target for a while on one core:
#   tools/fuzz.sh TARGET SECONDS [LIBFUZZER_FLAGS...]
#   TARGET: config | replay | policy | ledger | dataset | checkpoint | nn
# Needs the fuzz build (scripts/setup.sh --fuzz). The seed corpus tests/fuzz/corpus/TARGET is
# copied to build-fuzz/corpus/TARGET, which grows there; crashes land in build-fuzz/crashes/TARGET.
# tests/fuzz/TARGET.dict, when present, is the target's dictionary. The scratch files a target
# writes its input to go to a fresh folder on tmpfs (/dev/shm) when there is one, so that the
# fsync of every atomic write does not bound the executions per second.
# A crash becomes a regression test by committing its input to tests/fuzz/corpus/TARGET once
# fixed: the ctest label `fuzz` replays that corpus in every build.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: tools/fuzz.sh TARGET SECONDS [LIBFUZZER_FLAGS...]}
seconds=${2:?usage: tools/fuzz.sh TARGET SECONDS [LIBFUZZER_FLAGS...]}
shift 2
exe=build-fuzz/tests/fuzz/dprl_fuzz_$target
[ -x "$exe" ] || { echo "fuzz: $exe missing; run scripts/setup.sh --fuzz" >&2; exit 2; }
corpus=build-fuzz/corpus/$target
crashes=build-fuzz/crashes/$target
mkdir -p "$corpus" "$crashes"
cp -n tests/fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
dict=()
[ -f tests/fuzz/"$target".dict ] && dict=(-dict=tests/fuzz/"$target".dict)
tmp_root=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp_root=/dev/shm
scratch=$(mktemp -d "$tmp_root/dprl_fuzz_$target.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch
# allocator_may_return_null: a malloc too large for ASan's allocator returns NULL, as glibc's does
# (HDF5 asks for 1.6e18 bytes on a corrupt header and handles the NULL)
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# in-process (no -jobs, which would fork a child logging to ./fuzz-0.log)
"$exe" "$corpus" -max_total_time="$seconds" -max_len=65536 \
  -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 -artifact_prefix="$crashes/" \
  "${dict[@]}" "$@"
