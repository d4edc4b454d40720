#!/usr/bin/env python3
"""Records PyTorch memory snapshots of a few real training steps for poolsh's
replay tests (issue 11): a small convolutional network, a transformer with
varying sequence lengths, and the transformer again with its data copies on
a second stream. Writes NAME.pickle.gz (frame file names cut to base names)
and NAME.stats.json (torch.cuda.memory_stats() at the end) into OUTDIR.
Usage: python3 scripts/record_torch.py OUTDIR"""
import gzip, json, os, pickle, sys
import torch
import torch.nn as nn

def strip_frames(obj):
    """Cuts every frame's filename to its base name, in place."""
    if isinstance(obj, dict):
        if "filename" in obj and isinstance(obj["filename"], str):
            obj["filename"] = os.path.basename(obj["filename"])
        for v in obj.values():
            strip_frames(v)
    elif isinstance(obj, list):
        for v in obj:
            strip_frames(v)

def convnet():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(128 * 16 * 16, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()

def train_conv(steps=6):
    m = convnet(); opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    for i in range(steps):
        x = torch.randn(64, 3, 64, 64, device="cuda"); y = torch.randint(0, 10, (64,), device="cuda")
        loss = nn.functional.cross_entropy(m(x), y)
        opt.zero_grad(); loss.backward(); opt.step()

def transformer():
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=4).cuda()

def train_transformer(steps=8, side_stream=False):
    m = transformer(); opt = torch.optim.Adam(m.parameters(), lr=1e-4)
    copy = torch.cuda.Stream() if side_stream else None
    for i, seq in enumerate([64, 256, 128, 512, 96, 384, 200, 448][:steps]):
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

def record(name, fn, outdir):
    torch.cuda.empty_cache(); torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=200000, stacks="python")
    fn()
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    strip_frames(snap)
    with gzip.open(os.path.join(outdir, name + ".pickle.gz"), "wb") as f:
        pickle.dump(snap, f)
    stats = {k: v for k, v in torch.cuda.memory_stats().items()}
    stats["torch_version"] = torch.__version__
    with open(os.path.join(outdir, name + ".stats.json"), "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True)
    n = sum(len(t) for t in snap["device_traces"])
    print(name, "events", n, "segments", len(snap["segments"]),
          "peak_reserved", stats["reserved_bytes.all.peak"], "num_alloc", stats["allocation.all.allocated"])

if __name__ == "__main__":
    out = sys.argv[1]; os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    # warm the CUDA context and kernels outside the recordings
    train_conv(1); train_transformer(1); torch.cuda.synchronize(); torch.cuda.empty_cache()
    record("convnet", train_conv, out)
    record("transformer", lambda: train_transformer(8), out)
    record("transformer_2streams", lambda: train_transformer(8, side_stream=True), out)
