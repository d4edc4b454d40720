#!/usr/bin/env python3
"""Records real PyTorch workloads in each of PyTorch's allocator modes, for
poolsh's replays (issue 21): every workload runs three times, each in a
fresh process, with PYTORCH_CUDA_ALLOC_CONF set to

  native      (unset)                    -> NAME.pickle.gz, NAME.stats.json
  async       backend:cudaMallocAsync    -> NAME.cudaMallocAsync.stats.json
  expandable  expandable_segments:True   -> NAME.expandable.pickle.gz,
                                            NAME.expandable.stats.json

Each process warms the workload up (one step), synchronises, empties the
cache and resets the peaks, then records it. A .pickle.gz is
torch.cuda.memory._snapshot() after _record_memory_history (frame file names
cut to base names); a .stats.json is torch.cuda.memory_stats() at the end,
plus the PyTorch version, the mode and, with cudaMallocAsync (whose
snapshots PyTorch does not support), the default pool's ReservedMemHigh and
UsedMemHigh read through cuda-python.

Usage: python3 scripts/record_torch_modes.py [--modes native,async,...]
           [--repeat N] [--conf LABEL=TEXT ...] OUTDIR [WORKLOAD ...]

--repeat N runs each (workload, mode) N times, the files of run K named
NAME<suffix>.runK; --conf LABEL=TEXT adds a mode of that setting (files
NAME.LABEL.*; a snapshot unless the backend is cudaMallocAsync).
"""
import argparse
import gzip
import json
import os
import pickle
import subprocess
import sys

MODES = {
    "native": "",
    "async": "backend:cudaMallocAsync",
    "expandable": "expandable_segments:True",
}
SUFFIX = {"native": "", "async": ".cudaMallocAsync", "expandable": ".expandable"}


def strip_frames(obj):
    """Cuts every frame's filename to its base name, in place."""
    if isinstance(obj, dict):
        if isinstance(obj.get("filename"), str):
            obj["filename"] = os.path.basename(obj["filename"])
        for v in obj.values():
            strip_frames(v)
    elif isinstance(obj, list):
        for v in obj:
            strip_frames(v)


# --- the workloads: each a function(torch, steps) run once to warm up
# (steps=1) and once recorded.

def small_convnet(torch, nn):
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
        nn.AdaptiveAvgPool2d(8), nn.Flatten(), nn.Linear(128 * 8 * 8, 256), nn.ReLU(),
        nn.Linear(256, 10)).cuda()


def resnet18(torch, steps, amp=False):
    """ResNet-18 (torchvision, random weights) training steps, batch 32 of
    3x160x160, SGD; with amp, autocast to float16 and a GradScaler."""
    import torchvision
    nn = torch.nn
    m = torchvision.models.resnet18(num_classes=100).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda") if amp else None
    for _ in range(steps):
        x = torch.randn(32, 3, 160, 160, device="cuda")
        y = torch.randint(0, 100, (32,), device="cuda")
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            loss = nn.functional.cross_entropy(m(x), y)
        opt.zero_grad()
        if scaler:
            scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
        else:
            loss.backward(); opt.step()


def transformer(torch, steps, side_stream=False):
    """A 4-layer encoder (d 256, Adam), batch 16, sequence lengths varying
    64..512; with side_stream, the input copies on a second stream and
    record_stream on the compute stream."""
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
    m = nn.TransformerEncoder(layer, num_layers=4).cuda()
    opt = torch.optim.Adam(m.parameters(), lr=1e-4)
    copy = torch.cuda.Stream() if side_stream else None
    for seq in [64, 256, 128, 512, 96, 384, 200, 448][:steps]:
        host = torch.randn(16, seq, 256).pin_memory()
        if copy is not None:
            with torch.cuda.stream(copy):
                x = host.to("cuda", non_blocking=True)
            torch.cuda.current_stream().wait_stream(copy)
            x.record_stream(torch.cuda.current_stream())
        else:
            x = host.to("cuda")
        loss = m(x).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()


def conv_shapes(torch, steps):
    """The small conv net trained on batches whose size and resolution
    change every step (Adam)."""
    nn = torch.nn
    m = small_convnet(torch, nn)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    shapes = [(64, 64), (16, 160), (48, 96), (8, 224), (32, 128), (24, 112)]
    for batch, side in shapes[:steps]:
        x = torch.randn(batch, 3, side, side, device="cuda")
        y = torch.randint(0, 10, (batch,), device="cuda")
        loss = nn.functional.cross_entropy(m(x), y)
        opt.zero_grad(); loss.backward(); opt.step()


def kv_cache(torch, steps):
    """Greedy decoding of a GPT-2-shaped model (transformers, random
    weights: 6 layers, d 512) with its key/value cache growing by a token a
    step: batch 8, a 64-token prompt, 24 new tokens per step of `steps`."""
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=6, n_embd=512, n_head=8, vocab_size=8192, n_positions=1024)
    m = GPT2LMHeadModel(cfg).cuda().eval()
    with torch.no_grad():
        for _ in range(steps):
            ids = torch.randint(0, cfg.vocab_size, (8, 64), device="cuda")
            out = m(input_ids=ids, use_cache=True)
            past = out.past_key_values
            for _ in range(24):
                nxt = out.logits[:, -1:].argmax(-1)
                out = m(input_ids=nxt, past_key_values=past, use_cache=True)
                past = out.past_key_values
            del out, past


WORKLOADS = {
    "resnet18": lambda torch, n: resnet18(torch, n),
    "resnet18_amp": lambda torch, n: resnet18(torch, n, amp=True),
    "transformer": lambda torch, n: transformer(torch, n),
    "transformer_2streams": lambda torch, n: transformer(torch, n, side_stream=True),
    "conv_shapes": conv_shapes,
    "kv_cache": kv_cache,
}
STEPS = {"resnet18": 3, "resnet18_amp": 3, "transformer": 8, "transformer_2streams": 8,
         "conv_shapes": 6, "kv_cache": 3}


def pool_highs():
    """The device's default pool's ReservedMemHigh and UsedMemHigh."""
    try:
        from cuda.bindings import runtime as cudart
    except ImportError:
        from cuda import cudart
    err, pool = cudart.cudaDeviceGetDefaultMemPool(0)
    assert err == cudart.cudaError_t.cudaSuccess, err
    highs = {}
    for name, attr in (("pool_reserved_high", cudart.cudaMemPoolAttr.cudaMemPoolAttrReservedMemHigh),
                       ("pool_used_high", cudart.cudaMemPoolAttr.cudaMemPoolAttrUsedMemHigh)):
        err, value = cudart.cudaMemPoolGetAttribute(pool, attr)
        assert err == cudart.cudaError_t.cudaSuccess, err
        highs[name] = int(value)
    return highs


def reset_pool_highs():
    """Sets the default pool's high-water marks back to their current values."""
    try:
        from cuda.bindings import runtime as cudart, driver
    except ImportError:
        from cuda import cudart, cuda as driver
    _, pool = cudart.cudaDeviceGetDefaultMemPool(0)
    for attr in (cudart.cudaMemPoolAttr.cudaMemPoolAttrReservedMemHigh,
                 cudart.cudaMemPoolAttr.cudaMemPoolAttrUsedMemHigh):
        cudart.cudaMemPoolSetAttribute(pool, attr, driver.cuuint64_t(0))


def run_one(name, mode, outdir, suffix):
    """One workload in one mode, in this process (PYTORCH_CUDA_ALLOC_CONF
    already set by the parent); its files are NAME + suffix."""
    import torch
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    work, steps = WORKLOADS[name], STEPS[name]
    work(torch, 1)                      # warm up: kernels, cuBLAS, cuDNN
    torch.cuda.synchronize(); torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    is_async = "cudaMallocAsync" in conf
    if is_async:
        reset_pool_highs()
    history = not is_async
    if history:
        torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")
    work(torch, steps)
    torch.cuda.synchronize()
    base = os.path.join(outdir, name + suffix)
    summary = {"workload": name, "mode": mode}
    if history:
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        strip_frames(snap)
        with gzip.open(base + ".pickle.gz", "wb") as f:
            pickle.dump(snap, f)
        summary["events"] = sum(len(t) for t in snap["device_traces"])
        summary["segments"] = len(snap["segments"])
    stats = dict(torch.cuda.memory_stats())
    stats["torch_version"] = torch.__version__
    stats["alloc_conf"] = conf
    if is_async:
        stats.update(pool_highs())
    with open(base + ".stats.json", "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True)
    summary["peak_reserved"] = stats.get("reserved_bytes.all.peak")
    summary.update({k: stats[k] for k in ("pool_reserved_high", "pool_used_high") if k in stats})
    print(json.dumps(summary), flush=True)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--one":
        run_one(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
        return
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--conf", action="append", default=[])
    ap.add_argument("outdir")
    ap.add_argument("workloads", nargs="*")
    args = ap.parse_args()
    modes, suffixes = {}, {}
    for m in args.modes.split(","):
        if m not in MODES:
            sys.exit(f"unknown mode {m!r} (known: {', '.join(MODES)})")
        modes[m], suffixes[m] = MODES[m], SUFFIX[m]
    for c in args.conf:
        label, _, text = c.partition("=")
        if not label or not text:
            sys.exit(f"--conf wants LABEL=TEXT, got {c!r}")
        modes[label], suffixes[label] = text, "." + label
    os.makedirs(args.outdir, exist_ok=True)
    names = args.workloads or list(WORKLOADS)
    failed = 0
    for name in names:
        if name not in WORKLOADS:
            sys.exit(f"unknown workload {name!r} (known: {', '.join(WORKLOADS)})")
        for mode, conf in modes.items():
            for k in range(1, args.repeat + 1):
                env = dict(os.environ)
                env.pop("PYTORCH_ALLOC_CONF", None)
                if conf:
                    env["PYTORCH_CUDA_ALLOC_CONF"] = conf
                else:
                    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
                suffix = suffixes[mode] + (f".run{k}" if args.repeat > 1 else "")
                r = subprocess.run([sys.executable, __file__, "--one", name, mode, args.outdir, suffix],
                                   env=env)
                if r.returncode != 0:
                    print(f"{name} {mode}: failed ({r.returncode})", flush=True)
                    failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
