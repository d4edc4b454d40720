return {
  scenario = "release_straddling_block",
  summary = "a freed block spanning several chunks above a live block, released at a sync",
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
      step = "b1 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "b2 = p1:alloc(100 MiB, s1)",
      fresh = true,
      offset = 1024,
      pools = {
        p1 = { live = 104858624, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 104858624, used_high = 104858624 },
      },
    },
    {
      step = "b2:free()",
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
      step = "b3 = p1:alloc(40 MiB, s1)",
      offset = 1024,
      pools = {
        p1 = { live = 41944064, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 41944064, used_high = 104858624 },
      },
      reused = "b2",
      sources = {
        { buffer = "b2", bytes = 33553408, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b4 = p1:alloc(40 MiB, s1)",
      fresh = true,
      offset = 41944064,
      pools = {
        p1 = { live = 83887104, pending = 0, reserved = 100663296, reserved_high = 134217728, used = 83887104, used_high = 104858624 },
      },
      reused = "b2",
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 41944064, pending = 41943040, reserved = 100663296, reserved_high = 134217728, used = 41944064, used_high = 104858624 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 41944064, pending = 0, reserved = 100663296, reserved_high = 134217728, used = 41944064, used_high = 104858624 },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 1024, pending = 41943040, reserved = 100663296, reserved_high = 134217728, used = 1024, used_high = 104858624 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 1024, used_high = 104858624 },
      },
    },
    {
      step = "b1:free()",
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
