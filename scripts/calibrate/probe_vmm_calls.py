#!/usr/bin/env python3
"""Probes CUDA's virtual memory management API on the GPU, for poolsh's
model of it (issue 21): the allocation granularities, which misuses fail and
with which error, and what each call costs. Prints one JSON object.

Usage: python3 scripts/calibrate/probe_vmm_calls.py [device]
"""
import json
import statistics
import sys
import time

from cuda.bindings import driver as cu

MiB = 1 << 20


def name(err):
    return cu.cuGetErrorName(err)[1].decode() if err != cu.CUresult.CUDA_SUCCESS else "CUDA_SUCCESS"


def ok(result):
    if result[0] != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(name(result[0]))
    return result[1] if len(result) == 2 else result[1:]


def ptr(v):
    return cu.CUdeviceptr(int(v))


def main():
    device = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    ok(cu.cuInit(0))
    dev = ok(cu.cuDeviceGet(device))
    ctx = ok(cu.cuDevicePrimaryCtxRetain(dev))
    ok(cu.cuCtxSetCurrent(ctx))
    out = {"device": ok(cu.cuDeviceGetName(64, dev)).split(b"\0")[0].decode(),
           "driver": ok(cu.cuDriverGetVersion())}
    total = ok(cu.cuDeviceTotalMem(dev))
    out["total_memory"] = int(total)

    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = device
    flags = cu.CUmemAllocationGranularity_flags
    gran = {}
    for kind, f in (("minimum", flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                    ("recommended", flags.CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)):
        gran[kind] = int(ok(cu.cuMemGetAllocationGranularity(prop, f)))
    out["granularity_device"] = gran
    host = cu.CUmemAllocationProp()
    host.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    host.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_HOST
    host.location.id = 0
    r = cu.cuMemGetAllocationGranularity(host, flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM)
    out["granularity_host"] = int(r[1]) if r[0] == cu.CUresult.CUDA_SUCCESS else name(r[0])
    g = gran["minimum"]

    access = cu.CUmemAccessDesc()
    access.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    access.location.id = device
    access.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE

    probes = {}

    def probe(label, fn):
        try:
            probes[label] = fn()
        except Exception as e:  # a probe's own failure is a finding too
            probes[label] = "raised " + str(e)

    # Reservations.
    probe("reserve 1.125x device memory", lambda: name(cu.cuMemAddressReserve(total * 9 // 8 // g * g, 0, 0, 0)[0]))
    probe("reserve size not a multiple of granularity", lambda: name(cu.cuMemAddressReserve(g + 4096, 0, 0, 0)[0]))
    probe("reserve alignment 0 gives address aligned to", lambda: int(ok(cu.cuMemAddressReserve(4 * g, 0, 0, 0))) % (1 << 30))

    va = int(ok(cu.cuMemAddressReserve(64 * g, 0, 0, 0)))
    probe("create size not a multiple of granularity", lambda: name(cu.cuMemCreate(g + 4096, prop, 0)[0]))
    probe("create size 0", lambda: name(cu.cuMemCreate(0, prop, 0)[0]))
    h1 = ok(cu.cuMemCreate(2 * g, prop, 0))
    h2 = ok(cu.cuMemCreate(2 * g, prop, 0))
    probe("map at an unaligned address", lambda: name(cu.cuMemMap(ptr(va + 4096), 2 * g, 0, h1, 0)[0]))
    probe("map with an unaligned offset", lambda: name(cu.cuMemMap(ptr(va), g, 4096, h1, 0)[0]))
    probe("map past the handle's size", lambda: name(cu.cuMemMap(ptr(va), 4 * g, 0, h1, 0)[0]))
    probe("map outside any reservation", lambda: name(cu.cuMemMap(ptr(va + (1 << 44)), 2 * g, 0, h1, 0)[0]))
    probe("map", lambda: name(cu.cuMemMap(ptr(va), 2 * g, 0, h1, 0)[0]))
    probe("map over that mapping", lambda: name(cu.cuMemMap(ptr(va), 2 * g, 0, h2, 0)[0]))
    probe("map overlapping its second half", lambda: name(cu.cuMemMap(ptr(va + g), 2 * g, 0, h2, 0)[0]))
    probe("map the same handle twice (second place)", lambda: name(cu.cuMemMap(ptr(va + 8 * g), 2 * g, 0, h1, 0)[0]))
    probe("set access on the mapping", lambda: name(cu.cuMemSetAccess(ptr(va), 2 * g, [access], 1)[0]))
    probe("set access on an unmapped range", lambda: name(cu.cuMemSetAccess(ptr(va + 20 * g), 2 * g, [access], 1)[0]))
    probe("set access on part of a mapping", lambda: name(cu.cuMemSetAccess(ptr(va), g, [access], 1)[0]))
    probe("memset after set access", lambda: name(cu.cuMemsetD8(ptr(va), 1, 2 * g)[0]))
    probe("unmap half of a mapping", lambda: name(cu.cuMemUnmap(ptr(va), g)[0]))
    probe("unmap a range never mapped", lambda: name(cu.cuMemUnmap(ptr(va + 30 * g), 2 * g)[0]))
    probe("unmap two mappings at once", lambda: (
        name(cu.cuMemMap(ptr(va + 2 * g), 2 * g, 0, h2, 0)[0]),
        name(cu.cuMemUnmap(ptr(va), 4 * g)[0])))
    probe("release a handle while mapped, then unmap", lambda: (
        name(cu.cuMemMap(ptr(va + 40 * g), 2 * g, 0, h1, 0)[0]),
        name(cu.cuMemRelease(h1)[0]),
        name(cu.cuMemUnmap(ptr(va + 40 * g), 2 * g)[0])))
    probe("release the handle again", lambda: name(cu.cuMemRelease(h1)[0]))
    probe("free a reservation with a mapping left", lambda: (
        name(cu.cuMemMap(ptr(va + 50 * g), 2 * g, 0, h2, 0)[0]),
        name(cu.cuMemAddressFree(ptr(va), 64 * g)[0])))
    cu.cuMemUnmap(ptr(va + 50 * g), 2 * g)
    cu.cuMemRelease(h2)
    cu.cuMemAddressFree(ptr(va), 64 * g)
    out["probes"] = probes

    # What each call costs (median of 30, µs), for 2 MiB and 20 MiB pages.
    costs = {}
    for page in (2 * MiB, 20 * MiB):
        base = int(ok(cu.cuMemAddressReserve(32 * page, 0, 0, 0)))
        t = {"create": [], "map": [], "set_access": [], "unmap": [], "release": []}
        for i in range(30):
            a = ptr(base + (i % 32) * page)
            t0 = time.perf_counter(); h = ok(cu.cuMemCreate(page, prop, 0))
            t1 = time.perf_counter(); ok(cu.cuMemMap(a, page, 0, h, 0))
            t2 = time.perf_counter(); ok(cu.cuMemSetAccess(a, page, [access], 1))
            t3 = time.perf_counter(); ok(cu.cuMemUnmap(a, page))
            t4 = time.perf_counter(); ok(cu.cuMemRelease(h))
            t5 = time.perf_counter()
            for k, d in zip(t, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
                t[k].append(d * 1e6)
        costs[f"{page // MiB} MiB"] = {k: round(statistics.median(v), 2) for k, v in t.items()}
        cu.cuMemAddressFree(ptr(base), 32 * page)
    out["costs_us"] = costs
    ok(cu.cuCtxSynchronize())
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
