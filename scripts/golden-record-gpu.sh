#!/usr/bin/env bash
# Records every fidelity scenario (lua/poolsh/fidelity/init.lua, old and
# new) on the cuda backend into OUTDIR, one golden file per scenario with
# poolsh's statements (sources, fresh, extents), then replays them on the
# sim and holds their statements to their addresses and counters
# (poolsh golden check, docs/fidelity.md). Logs: OUTDIR/record.log and
# OUTDIR/check.log. Exit status 1 if a scenario failed to record or a file
# does not check; the recordings are kept either way.
# Usage (GPU machine, poolsh built with CUDA in BUILD, default build):
#   scripts/golden-record-gpu.sh OUTDIR [BUILD]
# Then, on an H200: cp OUTDIR/*.lua tests/golden/h200/
set -u
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/golden-record-gpu.sh OUTDIR [BUILD]}
build=${2:-build}
poolsh="$build/poolsh"
[ -x "$poolsh" ] || { echo "golden-record-gpu.sh: no $poolsh (build poolsh first)" >&2; exit 2; }
mkdir -p -- "$out" || exit 2
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null | tee "$out/gpu.txt"

status=0
"$poolsh" --backend=cuda golden record --out "$out" > "$out/record.log" 2>&1 || status=1
tail -1 "$out/record.log"
grep 'FAILED' "$out/record.log"
"$poolsh" --backend=sim golden check "$out" > "$out/check.log" 2>&1 || status=1
tail -1 "$out/check.log"
grep -E 'steps agree,|first difference|statement fails' "$out/check.log" | head -40
exit $status
