return {
  scenario = "malloc_alongside",
  summary = "cudaMalloc buffers beside a pool change none of its counters or placement",
  gpu = "NVIDIA H200",
  driver = "580.159.04",
  driver_api = 13000,
  runtime = 13000,
  backend = "cuda",
  date = "2026-11-28",
  poolsh = "poolsh 0.1.0",
  steps = {
    {
      step = "p1 = pool{}",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "s1 = stream()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "m1 = malloc(64 MiB)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b1 = p1:alloc(64 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "m2 = malloc(1 MiB)",
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "b2 = p1:alloc(1 MiB, s1)",
      fresh = true,
      offset = 67108864,
      pools = {
        p1 = { live = 68157440, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 68157440, used_high = 68157440 },
      },
    },
    {
      step = "m1:free()",
      pools = {
        p1 = { live = 68157440, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 68157440, used_high = 68157440 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 1048576, pending = 67108864, reserved = 100663296, reserved_high = 100663296, used = 1048576, used_high = 68157440 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1048576, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 1048576, used_high = 68157440 },
      },
    },
    {
      step = "m2:free()",
      pools = {
        p1 = { live = 1048576, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 1048576, used_high = 68157440 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 1048576, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 68157440 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 100663296, used = 0, used_high = 68157440 },
      },
    },
  },
}
