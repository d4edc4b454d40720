return {
  scenario = "several_pools",
  summary = "several pools at once, each with its own threshold, released by one sync",
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
      step = "p1 = pool{}",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "p2 = pool{release_threshold = 64 MiB}",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "p3 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
        p3 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b1 = p1:alloc(48 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 50331648, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 50331648, used_high = 50331648 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
        p3 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b2 = p2:alloc(100 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 50331648, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 50331648, used_high = 50331648 },
        p2 = { live = 104857600, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 104857600, used_high = 104857600 },
        p3 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b3 = p3:alloc(40 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 50331648, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 50331648, used_high = 50331648 },
        p2 = { live = 104857600, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 104857600, used_high = 104857600 },
        p3 = { live = 41943040, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 41943040 },
      },
    },
    {
      step = "b4 = p2:alloc(1 KiB, s1)",
      fresh = true,
      offset = 104857600,
      pools = {
        p1 = { live = 50331648, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 50331648, used_high = 50331648 },
        p2 = { live = 104858624, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 104858624, used_high = 104858624 },
        p3 = { live = 41943040, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 41943040 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 50331648, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 50331648 },
        p2 = { live = 104858624, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 104858624, used_high = 104858624 },
        p3 = { live = 41943040, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 41943040 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 50331648, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 50331648 },
        p2 = { live = 1024, pending = 104857600, reserved = 134217728, reserved_high = 134217728, used = 1024, used_high = 104858624 },
        p3 = { live = 41943040, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 41943040 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 0, pending = 50331648, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 50331648 },
        p2 = { live = 1024, pending = 104857600, reserved = 134217728, reserved_high = 134217728, used = 1024, used_high = 104858624 },
        p3 = { live = 0, pending = 41943040, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 41943040 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 50331648 },
        p2 = { live = 1024, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 1024, used_high = 104858624 },
        p3 = { live = 0, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 41943040 },
      },
    },
    {
      step = "p3:trim(1 MiB)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 50331648 },
        p2 = { live = 1024, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 1024, used_high = 104858624 },
        p3 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 67108864, used = 0, used_high = 41943040 },
      },
    },
    {
      step = "p2:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 50331648 },
        p2 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 1024, used_high = 104858624 },
        p3 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 67108864, used = 0, used_high = 41943040 },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 50331648 },
        p2 = { live = 0, pending = 1024, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 104858624 },
        p3 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 67108864, used = 0, used_high = 41943040 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 50331648 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 104858624 },
        p3 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 67108864, used = 0, used_high = 41943040 },
      },
    },
    {
      step = "p3:destroy()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 50331648 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 104858624 },
        p3 = "destroyed",
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 50331648 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 104858624 },
        p3 = "destroyed",
      },
    },
  },
}
