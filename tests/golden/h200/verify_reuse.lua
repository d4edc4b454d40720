return {
  scenario = "verify_reuse",
  summary = "contents survive a reuse without release; a re-mapped chunk after a release",
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
      step = "b1 = p1:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b1:fill(7)",
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "b2 = p1:alloc(4 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 4194304, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b2:verify(7)",
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
      verify = "ok",
    },
    {
      step = "b2:fill(9)",
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "b3 = p1:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
      reused = "b2",
    },
    {
      step = "b3:verify(9)",
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
      verify = "bad at 0",
    },
    {
      step = "b3:verify(0)",
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
      verify = "ok",
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
  },
}
