#!/usr/bin/env bash
# Runs every test: the C tests of the sim, the busted specs, the CLI and
# REPL tests, through ctest. Builds first if needed. Then fuzzes the sim
# under ASan + UBSan for a bounded time with fixed seeds (scripts/fuzz.sh,
# docs/fuzzing.md): POOLSH_FUZZ_SECONDS, default 75, 0 skips it.
# With POOLSH_WEB=1 it builds the playground first (docs/web.md), whose
# browser tests then must run.
# Usage: scripts/test.sh [build-dir]   (POOLSH_BACKEND=sim|cuda picks the backend)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
if [ "${POOLSH_WEB:-0}" = 1 ]; then
  scripts/web/fetch-sources.sh "$build/web-src" >/dev/null
  cmake --build "$build" --target web >/dev/null
fi
# ctest shows a passing test's output only with -V: the skipped specs are
# listed from the file busted writes (tests/spec/leakcheck.lua).
rm -f "$build/busted-skipped.txt"
rc=0
(cd "$build" && ctest --output-on-failure) || rc=$?
cat "$build/busted-skipped.txt" 2>/dev/null || echo "test.sh: busted wrote no list of skipped specs"
[ "$rc" = 0 ] || exit "$rc"
fuzz_seconds=${POOLSH_FUZZ_SECONDS:-75}
if [ "$fuzz_seconds" != 0 ]; then
  echo "test.sh: fuzzing for ${fuzz_seconds}s, seeds 1 2 3 (scripts/fuzz.sh)"
  POOLSH_FUZZ_SEEDS="1 2 3" bash scripts/fuzz.sh "$fuzz_seconds"
fi
