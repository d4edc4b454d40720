#!/usr/bin/env bash
# Compile and run the memory-pool probe; tee the output to the given file.
# Usage: bash scripts/calibrate/run.sh probe.log
set -u
LOG=${1:-probe.log}
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${TMPDIR:-/tmp}/probe_pool.$$
mkdir -p "$(dirname "$LOG")"
{
  echo "# probe_pool run $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "# ---- nvidia-smi (first 15 lines)"
  nvidia-smi 2>&1 | head -15 | sed 's/^/# /'
  echo "# ---- nvcc"
  nvcc --version 2>&1 | tail -2 | sed 's/^/# /'
  ARCH=native
  if ! nvcc -O2 -arch=native -o "$BIN" "$HERE/probe_pool.cu" 2>&1; then
    echo "# -arch=native failed, retrying with sm_90"
    ARCH=sm_90
    nvcc -O2 -arch=sm_90 -o "$BIN" "$HERE/probe_pool.cu" 2>&1 || { echo "# COMPILE FAILED"; exit 1; }
  fi
  echo "# compiled with: nvcc -O2 -arch=$ARCH"
  "$BIN"
  echo "# probe exit status = $?"
} 2>&1 | tee "$LOG"
rm -f "$BIN"
