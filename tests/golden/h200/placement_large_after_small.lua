return {
  scenario = "placement_large_after_small",
  summary = "small and large blocks share one arena (1 KiB, 32 MiB, 1 KiB, 64 MiB, ...)",
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
      step = "b2 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 1024,
      pools = {
        p1 = { live = 33555456, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 33555456, used_high = 33555456 },
      },
    },
    {
      step = "b3 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 33555456,
      pools = {
        p1 = { live = 33556480, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 33556480, used_high = 33556480 },
      },
    },
    {
      step = "b4 = p1:alloc(64 MiB, s1)",
      fresh = true,
      offset = 33556480,
      pools = {
        p1 = { live = 100665344, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 100665344, used_high = 100665344 },
      },
    },
    {
      step = "b5 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 100665344,
      pools = {
        p1 = { live = 100666368, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 100666368, used_high = 100666368 },
      },
    },
    {
      step = "b6 = p1:alloc(40 MiB, s1)",
      fresh = true,
      offset = 100666368,
      pools = {
        p1 = { live = 142609408, pending = 0, reserved = 167772160, reserved_high = 167772160, used = 142609408, used_high = 142609408 },
      },
    },
    {
      step = "b7 = p1:alloc(100 MiB, s1)",
      fresh = true,
      offset = 142609408,
      pools = {
        p1 = { live = 247467008, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 247467008, used_high = 247467008 },
      },
    },
  },
}
