return {
  scenario = "release_holes",
  summary = "free chunks below and between live ones are released; a block over a hole maps it again",
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
      step = "b1 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "b2 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 33554432,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "b3 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 67108864,
      pools = {
        p1 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 100663296, used_high = 100663296 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 67108864, pending = 33554432, reserved = 100663296, reserved_high = 100663296, used = 67108864, used_high = 100663296 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 100663296, used = 67108864, used_high = 100663296 },
      },
    },
    {
      step = "b4 = p1:alloc(1 KiB, s1)",
      offset = 33554432,
      pools = {
        p1 = { live = 67109888, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 67109888, used_high = 100663296 },
      },
      reused = "b2",
      sources = {
        { buffer = "b2", bytes = 1024, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b5 = p1:alloc(40 MiB, s1)",
      fresh = true,
      offset = 100663296,
      pools = {
        p1 = { live = 109052928, pending = 0, reserved = 167772160, reserved_high = 167772160, used = 109052928, used_high = 109052928 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 75498496, pending = 33554432, reserved = 167772160, reserved_high = 167772160, used = 75498496, used_high = 109052928 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 75498496, pending = 0, reserved = 134217728, reserved_high = 167772160, used = 75498496, used_high = 109052928 },
      },
    },
    {
      step = "b6 = p1:alloc(16 MiB, s1)",
      offset = 33555456,
      pools = {
        p1 = { live = 92275712, pending = 0, reserved = 134217728, reserved_high = 167772160, used = 92275712, used_high = 109052928 },
      },
      reused = "b2",
      sources = {
        { buffer = "b2", bytes = 16777216, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 58721280, pending = 33554432, reserved = 134217728, reserved_high = 167772160, used = 58721280, used_high = 109052928 },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 58720256, pending = 33555456, reserved = 134217728, reserved_high = 167772160, used = 58720256, used_high = 109052928 },
      },
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 16777216, pending = 75498496, reserved = 134217728, reserved_high = 167772160, used = 16777216, used_high = 109052928 },
      },
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 0, pending = 92275712, reserved = 134217728, reserved_high = 167772160, used = 0, used_high = 109052928 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 167772160, used = 0, used_high = 109052928 },
      },
    },
  },
}
