return {
  scenario = "trim_straddling",
  summary = "trim with a block spanning chunks above a live block, and partial targets",
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
      step = "b2 = p1:alloc(100 MiB, s1)",
      fresh = true,
      offset = 1024,
      pools = {
        p1 = { live = 104858624, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 104858624, used_high = 104858624 },
      },
    },
    {
      step = "b3 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 104858624,
      pools = {
        p1 = { live = 104859648, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 104859648, used_high = 104859648 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 2048, pending = 104857600, reserved = 134217728, reserved_high = 134217728, used = 2048, used_high = 104859648 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 2048, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 2048, used_high = 104859648 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 2048, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 2048, used_high = 104859648 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 1024, pending = 1024, reserved = 67108864, reserved_high = 134217728, used = 1024, used_high = 104859648 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 1024, used_high = 104859648 },
      },
    },
    {
      step = "p1:trim(40 MiB)",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 1024, used_high = 104859648 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 1024, used_high = 104859648 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 1024, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 104859648 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 104859648 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 104859648 },
      },
    },
  },
}
