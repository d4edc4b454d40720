#!/usr/bin/env python3
"""Compares where two replays of one recording placed each block.

Usage: scripts/compare_placement.py GPU.csv SIM.csv
Both files are poolsh --trace CSVs of `poolsh replay FILE` (one pool): the
GPU's from --backend=cuda, the sim's from --backend=sim. Offsets are taken
from each file's first allocation. Prints how many rows agree, the first
row that differs, the free records before it (from the GPU's file, with the
row that freed each) and the rows around it.
"""
import csv
import sys

MIB = 1 << 20


def load(path):
    rows, base = [], None
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            a = int(r["Pointer"], 16)
            base = a if base is None else base
            rows.append((r["Action"], a - base, int(r["Size"]), r["Stream"]))
    return rows


def free_records(rows):
    """The GPU's free records after `rows`: (offset, size, row freed)."""
    live, recs = {}, []
    for i, (act, off, size, _) in enumerate(rows):
        if act == "allocate":
            live[off] = size
            kept = []
            for fo, fs, fr in recs:
                if fo < off + size and off < fo + fs:
                    if fo < off:
                        kept.append((fo, off - fo, fr))
                    if off + size < fo + fs:
                        kept.append((off + size, fo + fs - off - size, fr))
                else:
                    kept.append((fo, fs, fr))
            recs = kept
        else:
            recs.append((off, live.pop(off), i))
    return sorted(recs)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    gpu, sim = load(sys.argv[1]), load(sys.argv[2])
    same = sum(1 for g, s in zip(gpu, sim) if g == s)
    first = next((i for i, (g, s) in enumerate(zip(gpu, sim)) if g != s), None)
    print(f"rows {len(gpu)} and {len(sim)}, {same} alike, first difference: {first}")
    if first is None:
        return
    act, off, size, _ = gpu[first]
    print(f"row {first}: {act} {size / MIB:.3f} MiB: GPU at {off / MIB:.3f}, sim at {sim[first][1] / MIB:.3f} MiB")
    for fo, fs, fr in free_records(gpu[:first]):
        if fs * 2 >= min(size, MIB):
            print(f"  free before it: {fo / MIB:10.3f} MiB, {fs / MIB:8.3f} MiB, freed at row {fr}")
    for i in range(max(0, first - 8), min(len(gpu), first + 3)):
        g, s = gpu[i], sim[i]
        print(f"  {i:5d} {g[0]:8s} {g[2] / MIB:9.3f} MiB  GPU {g[1] / MIB:9.3f}  sim {s[1] / MIB:9.3f}")


if __name__ == "__main__":
    main()
