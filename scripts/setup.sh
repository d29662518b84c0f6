#!/usr/bin/env bash
# Installs the Debian packages dprl needs when any is missing (a no-op when all are there), then
# configures and builds into build/ with Ninja.
#   scripts/setup.sh            install + build
#   scripts/setup.sh --no-build install only
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build git pkg-config
          libeigen3-dev libbox2d-dev libmujoco-dev libyaml-cpp-dev doctest-dev libcli11-dev
          libfmt-dev nlohmann-json3-dev libbenchmark-dev libqhull-dev libhdf5-dev
          libopenmpi-dev openmpi-bin)
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

[ "${1:-}" = "--no-build" ] && exit 0
jobs=${DPRL_JOBS:-2}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs"
