return {
  scenario = "reserve_granularity",
  summary = "reservation for one allocation of sizes around the 32 MiB granularity",
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
      step = "b1 = p1:alloc(1 B, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 1, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1, used_high = 1 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 1, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 1 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 1 },
      },
    },
    {
      step = "b2 = p1:alloc(512 B, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 512, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 512, used_high = 512 },
      },
      reused = "b1",
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 512, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 512 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 512 },
      },
    },
    {
      step = "b3 = p1:alloc(1000 B, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 1000, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1000, used_high = 1000 },
      },
      reused = "b2",
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 0, pending = 1000, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 1000 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 1000 },
      },
    },
    {
      step = "b4 = p1:alloc(4 KiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 4096, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4096, used_high = 4096 },
      },
      reused = "b3",
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 0, pending = 4096, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4096 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 4096 },
      },
    },
    {
      step = "b5 = p1:alloc(2 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 2097152, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 2097152, used_high = 2097152 },
      },
      reused = "b4",
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 0, pending = 2097152, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 2097152 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 2097152 },
      },
    },
    {
      step = "b6 = p1:alloc(2 MiB + 1 B, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 2097153, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 2097153, used_high = 2097153 },
      },
      reused = "b5",
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 0, pending = 2097153, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 2097153 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 2097153 },
      },
    },
    {
      step = "b7 = p1:alloc(31 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 32505856, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 32505856, used_high = 32505856 },
      },
      reused = "b6",
    },
    {
      step = "b7:free()",
      pools = {
        p1 = { live = 0, pending = 32505856, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 32505856 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 32505856 },
      },
    },
    {
      step = "b8 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
      reused = "b7",
    },
    {
      step = "b8:free()",
      pools = {
        p1 = { live = 0, pending = 33554432, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
    {
      step = "b9 = p1:alloc(32 MiB + 1 B, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 33554433, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 33554433, used_high = 33554433 },
      },
      reused = "b8",
    },
    {
      step = "b9:free()",
      pools = {
        p1 = { live = 0, pending = 33554433, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 33554433 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 33554433 },
      },
    },
    {
      step = "b10 = p1:alloc(33 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 34603008, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 34603008, used_high = 34603008 },
      },
      reused = "b9",
    },
    {
      step = "b10:free()",
      pools = {
        p1 = { live = 0, pending = 34603008, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 34603008 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 34603008 },
      },
    },
    {
      step = "b11 = p1:alloc(64 MiB + 1 B, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 67108865, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 67108865, used_high = 67108865 },
      },
      reused = "b10",
    },
    {
      step = "b11:free()",
      pools = {
        p1 = { live = 0, pending = 67108865, reserved = 100663296, reserved_high = 100663296, used = 0, used_high = 67108865 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 100663296, used = 0, used_high = 67108865 },
      },
    },
  },
}
