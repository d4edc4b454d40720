return {
  scenario = "suballoc_alignment",
  summary = "sub-allocation in one chunk: 512 B rounding, exact used, a hole refilled",
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
      step = "b1 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "b2 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 1024,
      pools = {
        p1 = { live = 2048, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 2048, used_high = 2048 },
      },
    },
    {
      step = "b3 = p1:alloc(3000 B, s1)",
      fresh = true,
      offset = 2048,
      pools = {
        p1 = { live = 5048, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5048, used_high = 5048 },
      },
    },
    {
      step = "b4 = p1:alloc(1 MiB, s1)",
      fresh = true,
      offset = 5120,
      pools = {
        p1 = { live = 1053624, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1053624, used_high = 1053624 },
      },
    },
    {
      step = "b5 = p1:alloc(1 B, s1)",
      fresh = true,
      offset = 1053696,
      pools = {
        p1 = { live = 1053625, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1053625, used_high = 1053625 },
      },
    },
    {
      step = "b6 = p1:alloc(4 MiB, s1)",
      fresh = true,
      offset = 1054208,
      pools = {
        p1 = { live = 5247929, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5247929, used_high = 5247929 },
      },
    },
    {
      step = "b7 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 5248512,
      pools = {
        p1 = { live = 5248953, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5248953, used_high = 5248953 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 5247929, pending = 1024, reserved = 33554432, reserved_high = 33554432, used = 5247929, used_high = 5248953 },
      },
    },
    {
      step = "b8 = p1:alloc(512 B, s1)",
      offset = 1024,
      pools = {
        p1 = { live = 5248441, pending = 512, reserved = 33554432, reserved_high = 33554432, used = 5248441, used_high = 5248953 },
      },
      reused = "b2",
      sources = {
        { buffer = "b2", bytes = 512, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b9 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 5249536,
      pools = {
        p1 = { live = 5249465, pending = 512, reserved = 33554432, reserved_high = 33554432, used = 5249465, used_high = 5249465 },
      },
    },
    {
      step = "b10 = p1:alloc(511 B, s1)",
      offset = 1536,
      pools = {
        p1 = { live = 5249976, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5249976, used_high = 5249976 },
      },
      reused = "b2",
      sources = {
        { buffer = "b2", bytes = 512, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 5249976, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5249976, used_high = 5249976 },
      },
    },
  },
}
