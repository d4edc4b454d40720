#!/usr/bin/env bash
# Builds poolsh with AddressSanitizer and UndefinedBehaviorSanitizer and runs
# the operation fuzzer (scripts/fuzz.lua) on the sim. Exits non-zero on a
# crash, a sanitizer report, a broken invariant, a Lua warning or a buffer
# left live at exit. docs/fuzzing.md says what it checks and how to replay.
# Then runs the input fuzzers (scripts/fuzz/*.lua) on every seed.
# Usage: scripts/fuzz.sh [seconds] [seed]
#   seconds  total time, shared by the seeds (default 60)
#   seed     one seed; without it POOLSH_FUZZ_SEEDS (default "1 2 3")
# Env: POOLSH_FUZZ_BUILD  build directory (default build-asan)
#      POOLSH_FUZZ_OPS    operations per seed instead of a time limit
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
seeds=${2:-${POOLSH_FUZZ_SEEDS:-1 2 3}}
build=${POOLSH_FUZZ_BUILD:-build-asan}
ops=${POOLSH_FUZZ_OPS:-}
case "$secs" in ''|*[!0-9]*) echo "fuzz.sh: seconds must be a whole number, got '$secs'" >&2; exit 2;; esac

echo "fuzz.sh: building $build (ASan + UBSan, sim only)"
cmake -S . -B "$build" -DPOOLSH_CUDA=OFF -DPOOLSH_SANITIZE=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target poolsh fuzzers >/dev/null

# Any report ends the process with a non-zero status.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:print_stacktrace=1:exitcode=23"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=24"
export LSAN_OPTIONS="exitcode=25"

n=$(wc -w <<<"$seeds")
per=$(( secs / n )); [ "$per" -ge 1 ] || per=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for seed in $seeds; do
  if [ -n "$ops" ]; then limit=(--ops "$ops"); else limit=(--seconds "$per"); fi
  cmd=("$build/poolsh" --backend=sim scripts/fuzz.lua --seed "$seed" "${limit[@]}" --tmpdir "$tmp")
  echo "fuzz.sh: ${cmd[*]}"
  rc=0
  "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" || rc=$?
  cat "$tmp/out"
  bad=$(grep -E -m1 'Sanitizer|runtime error:|Lua warning|still live at exit' "$tmp/err" || true)
  if [ "$rc" -ne 0 ] || [ -n "$bad" ]; then
    echo "fuzz.sh: seed $seed FAILED (exit status $rc)${bad:+: $bad}" >&2
    tail -n 80 "$tmp/err" >&2
    echo "fuzz.sh: replay with the command above and --ops <step> --log (docs/fuzzing.md)" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "fuzz.sh: all seeds passed"

# The input fuzzers (scripts/fuzz/*.lua, lib.lua's loop): each decoder and
# reader of untrusted bytes gets POOLSH_FUZZ_INPUT_SECONDS (default 5) per
# seed, each input bounded in time and memory.
input_secs=${POOLSH_FUZZ_INPUT_SECONDS:-5}
# Those written in C (tests/c/fuzz_*.c) take the same arguments.
for target in scripts/fuzz/*.lua "$build"/fuzz_*; do
  [ -e "$target" ] || continue
  [ "$(basename "$target")" = lib.lua ] && continue
  runner=("$build/poolsh" --backend=sim "$target"); [ -x "$target" ] && runner=("$target")
  for seed in $seeds; do
    # A hang inside one C call escapes lib.lua's hook: timeout ends it.
    cmd=(timeout "$(( input_secs * 3 + 30 ))" "${runner[@]}" --seed "$seed" --seconds "$input_secs" --tmpdir "$tmp")
    echo "fuzz.sh: ${cmd[*]}"
    rc=0
    "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" || rc=$?
    cat "$tmp/out"
    bad=$(grep -E -m1 'Sanitizer|runtime error:|Lua warning' "$tmp/err" || true)
    if [ "$rc" -ne 0 ] || [ -n "$bad" ]; then
      echo "fuzz.sh: $target seed $seed FAILED (exit status $rc)${bad:+: $bad}" >&2
      tail -n 40 "$tmp/err" >&2
      status=1
    fi
  done
done
[ "$status" -eq 0 ] && echo "fuzz.sh: all fuzzers passed"
exit "$status"
