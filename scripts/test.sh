#!/usr/bin/env bash
# Runs every test: the C tests of the sim, the busted specs, the CLI and
# REPL tests, through ctest. Builds first if needed.
# Usage: scripts/test.sh [build-dir]   (POOLSH_BACKEND=sim|cuda picks the backend)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
cd "$build" && ctest --output-on-failure
