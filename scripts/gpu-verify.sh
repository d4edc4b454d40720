#!/usr/bin/env bash
# Runs the cuda side's checks on a GPU machine (docs/gpu-verification.md):
# busted: the busted suite on the cuda backend; backend: the backend's C
# test; scenarios: every scenario (poolsh run --all); golden: a fresh golden
# recording compared with tests/golden/h100; replays: each snapshot of
# tests/data/torch/modes replayed in PyTorch's three allocator modes beside
# the real run's peak. Each log goes to OUTDIR; the summary lines are
# printed.
# Usage (GPU machine, after `source .gpu/env.sh`):
#   scripts/gpu-verify.sh OUTDIR [busted] [backend] [scenarios] [golden] [replays]   (none named: all)
set -u
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu-verify.sh OUTDIR [busted] [backend] [scenarios] [golden] [replays]}
shift
steps=${*:-busted backend scenarios golden replays}
mkdir -p "$out"
export POOLSH_BACKEND=cuda
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$out/gpu.txt"

for step in $steps; do
  case $step in
    busted)
      busted --config-file=.busted -o TAP > "$out/busted.tap" 2>&1
      echo "busted: $(grep -c '^ok' "$out/busted.tap") ok, $(grep -c '^not ok' "$out/busted.tap") not ok" \
           "($(grep -m1 '^1\.\.' "$out/busted.tap"))"
      grep -A4 '^not ok' "$out/busted.tap" | head -80 ;;
    backend)
      ./build/test_backend > "$out/test_backend.log" 2>&1; tail -1 "$out/test_backend.log" ;;
    scenarios)
      ./build/poolsh --backend=cuda run --all > "$out/run-all.log" 2>&1; tail -4 "$out/run-all.log" ;;
    golden)
      golden=$(mktemp -d)
      ./build/poolsh --backend=cuda golden record --out "$golden" > "$out/golden-record.log" 2>&1
      if diff -r -I '^  date = ' -I '^  gpu = ' tests/golden/h100 "$golden" > "$out/golden.diff"; then
        echo "golden: the recording equals tests/golden/h100"
      else
        echo "golden: differs from tests/golden/h100 ($(wc -l < "$out/golden.diff") diff lines)"
      fi
      rm -rf "$golden" ;;
    replays)
      # Each native snapshot of tests/data/torch/modes through the pytorch
      # allocator in PyTorch's three modes, beside the real run's peak.
      for f in tests/data/torch/modes/*.stats.json; do
        case $f in *.cudaMallocAsync.*|*.expandable.*) continue ;; esac
        w=${f%.stats.json}
        for conf in backend:native expandable_segments:True backend:cudaMallocAsync; do
          case $conf in
            backend:native) ref=$f ;;
            expandable*) ref=$w.expandable.stats.json ;;
            *) ref=$w.cudaMallocAsync.stats.json ;;
          esac
          got=$(./build/poolsh --backend=cuda replay --allocator=pytorch --alloc-conf "$conf" --json "$w.pickle.gz" 2>>"$out/replays.err" \
                | lua5.4 -e 'local s = io.read("a"); print(s:match("\"peak_reserved\":(%d+)") or "error")')
          want=$(lua5.4 -e 'local s = io.read("a"); print(s:match("\"reserved_bytes.all.peak\": *(%d+)"))' < "$ref")
          echo "$(basename "$w") $conf real $want replay $got" | tee -a "$out/replays.log"
        done
      done ;;
    *) echo "gpu-verify.sh: unknown step '$step'" >&2; exit 2 ;;
  esac
done
