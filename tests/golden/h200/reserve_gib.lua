return {
  scenario = "reserve_gib",
  summary = "single allocations of several GiB, then two 8 GiB blocks at once",
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
      step = "b1 = p1:alloc(1 GiB + 512 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 1610612736, pending = 0, reserved = 1610612736, reserved_high = 1610612736, used = 1610612736, used_high = 1610612736 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 1610612736, reserved = 1610612736, reserved_high = 1610612736, used = 0, used_high = 1610612736 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 1610612736, used = 0, used_high = 1610612736 },
      },
    },
    {
      step = "b2 = p1:alloc(4 GiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 4294967296, pending = 0, reserved = 4294967296, reserved_high = 4294967296, used = 4294967296, used_high = 4294967296 },
      },
      reused = "b1",
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 4294967296, reserved = 4294967296, reserved_high = 4294967296, used = 0, used_high = 4294967296 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 4294967296, used = 0, used_high = 4294967296 },
      },
    },
    {
      step = "b3 = p1:alloc(16 GiB + 1 B, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 17179869185, pending = 0, reserved = 17213423616, reserved_high = 17213423616, used = 17179869185, used_high = 17179869185 },
      },
      reused = "b2",
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 0, pending = 17179869185, reserved = 17213423616, reserved_high = 17213423616, used = 0, used_high = 17179869185 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 17213423616, used = 0, used_high = 17179869185 },
      },
    },
    {
      step = "b4 = p1:alloc(8 GiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 8589934592, pending = 0, reserved = 8589934592, reserved_high = 17213423616, used = 8589934592, used_high = 17179869185 },
      },
      reused = "b3",
    },
    {
      step = "b5 = p1:alloc(8 GiB, s1)",
      fresh = true,
      offset = 8589934592,
      pools = {
        p1 = { live = 17179869184, pending = 0, reserved = 17179869184, reserved_high = 17213423616, used = 17179869184, used_high = 17179869185 },
      },
      reused = "b3",
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 8589934592, pending = 8589934592, reserved = 17179869184, reserved_high = 17213423616, used = 8589934592, used_high = 17179869185 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 8589934592, pending = 0, reserved = 8589934592, reserved_high = 17213423616, used = 8589934592, used_high = 17179869185 },
      },
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 0, pending = 8589934592, reserved = 8589934592, reserved_high = 17213423616, used = 0, used_high = 17179869185 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 17213423616, used = 0, used_high = 17179869185 },
      },
    },
  },
}
