return {
  scenario = "reserve_large",
  summary = "single allocations from 64 MiB to 1 GiB + 1 B, each freed and released",
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
      step = "b1 = p1:alloc(64 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 67108864, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
    },
    {
      step = "b2 = p1:alloc(100 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 104857600, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 104857600, used_high = 104857600 },
      },
      reused = "b1",
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 104857600, reserved = 134217728, reserved_high = 134217728, used = 0, used_high = 104857600 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 104857600 },
      },
    },
    {
      step = "b3 = p1:alloc(256 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 268435456, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 268435456, used_high = 268435456 },
      },
      reused = "b2",
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 0, pending = 268435456, reserved = 268435456, reserved_high = 268435456, used = 0, used_high = 268435456 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 268435456, used = 0, used_high = 268435456 },
      },
    },
    {
      step = "b4 = p1:alloc(512 MiB + 1 B, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 536870913, pending = 0, reserved = 570425344, reserved_high = 570425344, used = 536870913, used_high = 536870913 },
      },
      reused = "b3",
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 0, pending = 536870913, reserved = 570425344, reserved_high = 570425344, used = 0, used_high = 536870913 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 570425344, used = 0, used_high = 536870913 },
      },
    },
    {
      step = "b5 = p1:alloc(1 GiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 1073741824, pending = 0, reserved = 1073741824, reserved_high = 1073741824, used = 1073741824, used_high = 1073741824 },
      },
      reused = "b4",
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 0, pending = 1073741824, reserved = 1073741824, reserved_high = 1073741824, used = 0, used_high = 1073741824 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 1073741824, used = 0, used_high = 1073741824 },
      },
    },
    {
      step = "b6 = p1:alloc(1 GiB + 1 B, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 1073741825, pending = 0, reserved = 1107296256, reserved_high = 1107296256, used = 1073741825, used_high = 1073741825 },
      },
      reused = "b5",
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 0, pending = 1073741825, reserved = 1107296256, reserved_high = 1107296256, used = 0, used_high = 1073741825 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 1107296256, used = 0, used_high = 1073741825 },
      },
    },
  },
}
