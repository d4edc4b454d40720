#!/usr/bin/env python3
"""Records a workload that uses a private pool (torch.cuda.MemPool and
use_mem_pool) with the native allocator, so that poolsh can see what a
snapshot says of private pools: each segment's segment_pool_id and the
keys of its trace entries. Writes OUTDIR/mempool.pickle.gz (frame file
names cut to base names) and prints a summary line.

Usage: python3 scripts/record_torch_mempool.py OUTDIR
"""
import gzip
import json
import os
import pickle
import sys

import torch

from record_torch_modes import strip_frames


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    torch.cuda.memory._record_memory_history(max_entries=100000, stacks="python")
    a = [torch.empty(3 << 20, dtype=torch.uint8, device="cuda") for _ in range(4)]
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        b = [torch.empty(5 << 20, dtype=torch.uint8, device="cuda") for _ in range(3)]
        c = torch.empty(4096, device="cuda")
    del b[1]
    d = torch.empty(5 << 20, dtype=torch.uint8, device="cuda")   # default pool again
    del a, b, c, d
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    strip_frames(snap)
    with gzip.open(os.path.join(outdir, "mempool.pickle.gz"), "wb") as f:
        pickle.dump(snap, f)
    pools = sorted({tuple(s.get("segment_pool_id", ())) for s in snap["segments"]})
    keys = sorted({k for t in snap["device_traces"] for e in t for k in e})
    print(json.dumps({"torch_version": torch.__version__, "segment_pool_ids": pools,
                      "trace_keys": keys, "segments": len(snap["segments"]),
                      "events": sum(len(t) for t in snap["device_traces"])}))


if __name__ == "__main__":
    main()
