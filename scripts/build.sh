#!/usr/bin/env bash
# Installs what tessel needs (Debian packages), configures and builds.
# Usage: scripts/build.sh [ninja targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
if [ ! -f build/build.ninja ]; then
  cmake --preset default
fi
ninja -C build "$@"
