return {
  scenario = "release_small_in_last_chunk",
  summary = "a small live block in the last chunk of a freed large block's reservation",
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
      step = "b1 = p1:alloc(100 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 104857600, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 104857600, used_high = 104857600 },
      },
    },
    {
      step = "b2 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 104857600,
      pools = {
        p1 = { live = 104858624, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 104858624, used_high = 104858624 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 1024, pending = 104857600, reserved = 134217728, reserved_high = 134217728, used = 1024, used_high = 104858624 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 1024, used_high = 104858624 },
      },
    },
    {
      step = "b3 = p1:alloc(64 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 67109888, pending = 0, reserved = 100663296, reserved_high = 134217728, used = 67109888, used_high = 104858624 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 33554432, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 1024, pending = 67108864, reserved = 100663296, reserved_high = 134217728, used = 1024, used_high = 104858624 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 1024, used_high = 104858624 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 1024, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 104858624 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 104858624 },
      },
    },
  },
}
