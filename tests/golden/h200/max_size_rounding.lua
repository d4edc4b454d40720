return {
  scenario = "max_size_rounding",
  summary = "max_size is rounded up to the chunk; exceeding it fails, not sticky",
  gpu = "NVIDIA H200",
  driver = "580.159.04",
  driver_api = 13000,
  runtime = 13000,
  backend = "cuda",
  date = "2026-11-28",
  poolsh = "poolsh 0.1.0",
  steps = {
    { step = "s1 = stream()" },
    {
      step = "p1 = pool{max_size = 1 MiB}",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b1 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b2 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "b3 = p1:alloc(1 B, s1)",
      error = "cudaErrorMemoryAllocation",
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 33554432 },
      },
    },
    {
      step = "b4 = p1:alloc(16 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 16777216, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b5 = p1:alloc(64 MiB, s1)",
      error = "cudaErrorMemoryAllocation",
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "p2 = pool{max_size = 33 MiB}",
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b6 = p2:alloc(64 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
        p2 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "b7 = p2:alloc(1 B, s1)",
      error = "cudaErrorMemoryAllocation",
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
        p2 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "p3 = pool{max_size = 64 MiB + 1 B}",
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
        p2 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
        p3 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b8 = p3:alloc(66 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
        p2 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
        p3 = { live = 69206016, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 69206016, used_high = 69206016 },
      },
    },
    {
      step = "b9 = p3:alloc(30 MiB, s1)",
      fresh = true,
      offset = 69206016,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
        p2 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
        p3 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 100663296, used_high = 100663296 },
      },
    },
    {
      step = "b10 = p3:alloc(1 MiB, s1)",
      error = "cudaErrorMemoryAllocation",
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
        p2 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
        p3 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 100663296, used_high = 100663296 },
      },
    },
  },
}
