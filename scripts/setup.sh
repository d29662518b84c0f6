#!/usr/bin/env bash
# Installs the Debian packages dprl needs when any is missing (a no-op when all are there), then
# configures build/ with Ninja and builds what was asked for.
#   scripts/setup.sh            install + build the dprl CLI and its libraries only (the quickstart)
#   scripts/setup.sh --tests    install + build everything: the CLI, every test suite and benchmark,
#                               and the sanitizer subset into build-asan/ (what ctest runs); also
#                               installs chromium (the browser test) and cairo and giflib
#                               (dprl render's PNG and GIF output)
#   scripts/setup.sh --no-build install only
#   scripts/setup.sh --fuzz     also install clang and libFuzzer and build the fuzz targets into
#                               build-fuzz/ (tools/fuzz.sh TARGET SECONDS runs one)
# Flags combine (--tests --fuzz). DPRL_SANITIZE=0 skips the sanitizer build (then ctest has no
# sanitize/ test).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build git pkg-config ccache
          libeigen3-dev libbox2d-dev libmujoco-dev libyaml-cpp-dev doctest-dev libcli11-dev
          libfmt-dev nlohmann-json3-dev libbenchmark-dev libqhull-dev libhdf5-dev
          libopenmpi-dev openmpi-bin pybind11-dev python3-dev python3-numpy)
fuzz=0 tests=0 build=1
for arg in "$@"; do
  case "$arg" in
    --fuzz) fuzz=1 ;;
    --tests) tests=1 ;;
    --no-build) build=0 ;;
    *) echo "setup.sh: unknown flag '$arg' (known: --tests, --fuzz, --no-build)" >&2; exit 2 ;;
  esac
done
# headless Chromium for the browser test of dprl report's page (ctest label browser; skipped
# without it), and cairo and giflib for dprl render's PNG and GIF output (optional: the
# quickstart builds without them, and render then writes SVG only)
((tests)) && packages+=(chromium libcairo2-dev libgif-dev)
# clang 14 and its runtime (libFuzzer, ASan, UBSan): only for the fuzz build
((fuzz)) && packages+=(clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

((build)) || exit 0
jobs=${DPRL_JOBS:-2}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# AddressSanitizer + UndefinedBehaviorSanitizer build of the engine and privacy suites and the fuzz
# corpus replays (the subset that fits CI's time: docs/robustness.md); ctest runs it as
# sanitize/asan_ubsan with every report fatal.
asan=()
if ((tests)) && [ "${DPRL_SANITIZE:-1}" != 0 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DDPRL_SANITIZE=address,undefined -DDPRL_TEST_DIRS="engine;privacy" -DDPRL_MPI=OFF \
    -DDPRL_BUILD_BENCHMARKS=OFF -DDPRL_FUZZ_ONLY="ledger;dataset" >/dev/null
  cmake --build build-asan -j"$jobs" --target dprl_engine_tests dprl_privacy_tests \
    dprl_fuzz_ledger dprl_fuzz_dataset
  asan=(-DDPRL_SANITIZER_BUILD="$PWD/build-asan")
fi

# the Python module (docs/python.md) is built for Debian's interpreter, which has python3-numpy,
# rather than for a pyenv or virtualenv python3 that may come first on PATH
python=()
[ -x /usr/bin/python3 ] && python=(-DPython3_EXECUTABLE=/usr/bin/python3)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "${asan[@]}" "${python[@]}" \
  >/dev/null
if ((tests)); then
  cmake --build build -j"$jobs"
else
  # the quickstart needs only the CLI (and the libraries it links)
  cmake --build build -j"$jobs" --target dprl
fi

if ((fuzz)); then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "${launcher[@]}" -DDPRL_FUZZ=ON -DDPRL_SANITIZE=address,undefined -DDPRL_MPI=OFF \
    -DDPRL_BUILD_BENCHMARKS=OFF -DDPRL_TEST_DIRS="" >/dev/null
  cmake --build build-fuzz -j"$jobs" --target dprl_fuzz_config dprl_fuzz_replay \
    dprl_fuzz_policy dprl_fuzz_ledger dprl_fuzz_dataset dprl_fuzz_checkpoint dprl_fuzz_nn
fi
