return {
  scenario = "suballoc_straddle",
  summary = "blocks packed back to back across chunk boundaries (40 MiB and 3 MiB series)",
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
      step = "b1 = p1:alloc(40 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 41943040, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 41943040 },
      },
    },
    {
      step = "b2 = p1:alloc(40 MiB, s1)",
      fresh = true,
      offset = 41943040,
      pools = {
        p1 = { live = 83886080, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 83886080, used_high = 83886080 },
      },
    },
    {
      step = "b3 = p1:alloc(40 MiB, s1)",
      fresh = true,
      offset = 83886080,
      pools = {
        p1 = { live = 125829120, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 125829120, used_high = 125829120 },
      },
    },
    {
      step = "b4 = p1:alloc(40 MiB, s1)",
      fresh = true,
      offset = 125829120,
      pools = {
        p1 = { live = 167772160, pending = 0, reserved = 167772160, reserved_high = 167772160, used = 167772160, used_high = 167772160 },
      },
    },
    {
      step = "b5 = p1:alloc(40 MiB, s1)",
      fresh = true,
      offset = 167772160,
      pools = {
        p1 = { live = 209715200, pending = 0, reserved = 234881024, reserved_high = 234881024, used = 209715200, used_high = 209715200 },
      },
    },
    {
      step = "b6 = p1:alloc(40 MiB, s1)",
      fresh = true,
      offset = 209715200,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
      },
    },
    {
      step = "p2 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b7 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 3145728, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 3145728, used_high = 3145728 },
      },
    },
    {
      step = "b8 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 3145728,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
      },
    },
    {
      step = "b9 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 6291456,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 9437184, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 9437184, used_high = 9437184 },
      },
    },
    {
      step = "b10 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 9437184,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 12582912, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 12582912, used_high = 12582912 },
      },
    },
    {
      step = "b11 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 12582912,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 15728640, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 15728640, used_high = 15728640 },
      },
    },
    {
      step = "b12 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 15728640,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 18874368, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 18874368, used_high = 18874368 },
      },
    },
    {
      step = "b13 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 18874368,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 22020096, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 22020096, used_high = 22020096 },
      },
    },
    {
      step = "b14 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 22020096,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 25165824, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 25165824, used_high = 25165824 },
      },
    },
    {
      step = "b15 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 25165824,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 28311552, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 28311552, used_high = 28311552 },
      },
    },
    {
      step = "b16 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 28311552,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
      },
    },
    {
      step = "b17 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 31457280,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 34603008, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 34603008, used_high = 34603008 },
      },
    },
    {
      step = "b18 = p2:alloc(3 MiB, s1)",
      fresh = true,
      offset = 34603008,
      pools = {
        p1 = { live = 251658240, pending = 0, reserved = 268435456, reserved_high = 268435456, used = 251658240, used_high = 251658240 },
        p2 = { live = 37748736, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 37748736, used_high = 37748736 },
      },
    },
  },
}
