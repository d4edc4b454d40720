#!/bin/sh
# poolsh's Lua and C pairs (scripts/bench_alloc.lua) and cuda-python's pair
# (scripts/bench_cuda_python.py) on the GPU, the two processes alternated
# three times in one run so that the host's drift reaches both alike.
# Usage: scripts/bench_bindings.sh [poolsh binary]   (default build/poolsh)
set -e
poolsh=${1:-build/poolsh}
here=$(dirname "$0")
for round in 1 2 3; do
  echo "== round $round: poolsh"
  "$poolsh" --backend=cuda "$here/bench_alloc.lua"
  echo "== round $round: cuda-python"
  python3 "$here/bench_cuda_python.py"
done
