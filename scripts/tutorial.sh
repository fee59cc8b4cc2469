#!/usr/bin/env bash
# Builds and runs tutorial 01 (vector add): on a HIP GPU when one is usable,
# else on the emulator. Usage: scripts/tutorial.sh [tutorial-name]
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:-01-vector-add}"
./scripts/build.sh "tutorial-$name"
exec "build/tutorials/tutorial-$name"
