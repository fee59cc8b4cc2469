#!/usr/bin/env bash
# Installs the Debian packages tessel needs to build and test. Idempotent: a
# machine that already has them installs nothing.
set -euo pipefail

PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools lld-22 liblld-22-dev llvm-22-tools clang-22
  g++-12  # the public headers and generated launchers are also built with g++
  libamdhip64-dev rocm-device-libs
  doctest-dev librange-v3-dev
  cmake ninja-build ccache python3 zlib1g-dev libzstd-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
