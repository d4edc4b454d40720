#!/usr/bin/env python3
"""The thinnest Python binding's pool alloc+free pair, timed as
scripts/bench_alloc.lua times poolsh's: cuda-python's
cudaMallocFromPoolAsync + cudaFreeAsync (raw integers for the addresses, no
objects made per pair) on a pool whose release threshold is at its maximum,
on one stream, in rounds of batches; prints the median ns per pair.

Usage: python3 scripts/bench_cuda_python.py [pairs per batch] [bytes] [rounds]
scripts/bench_bindings.sh runs it alternately with bench_alloc.lua.
"""
import sys
import time

try:
    from cuda.bindings import runtime as cudart
except ImportError:  # cuda-python before 12.6
    from cuda import cudart


def checked(result):
    """cuda-python returns (error, values...): raise on an error."""
    err = result[0]
    if err != cudart.cudaError_t.cudaSuccess:
        raise RuntimeError(f"CUDA error {err}")
    return result[1] if len(result) == 2 else result[1:]


def make_pool(device):
    props = cudart.cudaMemPoolProps()
    props.allocType = cudart.cudaMemAllocationType.cudaMemAllocationTypePinned
    props.location.type = cudart.cudaMemLocationType.cudaMemLocationTypeDevice
    props.location.id = device
    pool = checked(cudart.cudaMemPoolCreate(props))
    try:
        from cuda.bindings import driver
        most = driver.cuuint64_t(2**64 - 1)
    except ImportError:
        from cuda import cuda as driver
        most = driver.cuuint64_t(2**64 - 1)
    checked(cudart.cudaMemPoolSetAttribute(
        pool, cudart.cudaMemPoolAttr.cudaMemPoolAttrReleaseThreshold, most))
    return pool


def main():
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 20
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 201
    checked(cudart.cudaSetDevice(0))
    pool = make_pool(0)
    stream = checked(cudart.cudaStreamCreate())
    alloc, free = cudart.cudaMallocFromPoolAsync, cudart.cudaFreeAsync

    def loop(n):
        t0 = time.perf_counter()
        for _ in range(n):
            _, ptr = alloc(size, pool, stream)
            free(ptr, stream)
        return time.perf_counter() - t0

    # Once outside the timing, with the errors checked: the loop does not.
    ptr = checked(alloc(size, pool, stream))
    checked(free(ptr, stream))
    loop(batch)
    times = sorted(loop(batch) / batch * 1e9 for _ in range(rounds))
    checked(cudart.cudaStreamSynchronize(stream))
    median = times[(len(times) - 1) // 2]
    lo, hi = times[len(times) // 4], times[len(times) - 1 - len(times) // 4]
    print(f"cuda-python pair {median:8.1f} ns (median of {rounds} rounds of "
          f"{batch}; quartiles {lo:.1f}..{hi:.1f})")


if __name__ == "__main__":
    main()
