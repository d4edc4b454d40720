return {
  scenario = "high_water_reset",
  summary = "high-water marks, and their reset while memory is in use",
  gpu = "NVIDIA H200",
  driver = "580.159.04",
  driver_api = 13000,
  runtime = 13000,
  backend = "cuda",
  date = "2026-11-28",
  poolsh = "poolsh 0.1.0",
  steps = {
    {
      step = "p1 = pool{release_threshold = max}",
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
      step = "b1 = p1:alloc(64 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "b2 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 67108864,
      pools = {
        p1 = { live = 67109888, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 67109888, used_high = 67109888 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 1024, pending = 67108864, reserved = 100663296, reserved_high = 100663296, used = 1024, used_high = 67109888 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 1024, used_high = 67109888 },
      },
    },
    {
      step = "p1:reset_high()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "p1.release_threshold = 0 B",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "p1:reset_high()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "b3 = p1:alloc(40 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 41944064, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 41944064, used_high = 41944064 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 33554432, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 1024, pending = 41943040, reserved = 100663296, reserved_high = 100663296, used = 1024, used_high = 41944064 },
      },
    },
    {
      step = "p1:reset_high()",
      pools = {
        p1 = { live = 1024, pending = 41943040, reserved = 100663296, reserved_high = 100663296, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "p1:reset_high()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 1024, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 1024 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 1024 },
      },
    },
    {
      step = "p1:reset_high()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
  },
}
