#!/usr/bin/env bash
# Builds everything and runs every test (doctest suites and lit tests) with
# ctest; ctest's summary is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
cd build
exec ctest --output-on-failure -j2
