return {
  scenario = "release_threshold_rounding",
  summary = "release at a stream sync keeps floor(threshold / 32 MiB) chunks (40, 33, 32, 17 MiB, 1 B)",
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
      step = "p1.release_threshold = 40 MiB",
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
      step = "b4 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 100663296,
      pools = {
        p1 = { live = 134217728, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 134217728, used_high = 134217728 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 100663296, pending = 33554432, reserved = 134217728, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 67108864, pending = 67108864, reserved = 134217728, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 33554432, pending = 100663296, reserved = 134217728, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 0, pending = 134217728, reserved = 134217728, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "p1.release_threshold = 33 MiB",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "b5 = p1:alloc(32 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 33554432, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b6 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 33554432,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
      reused = "b2",
    },
    {
      step = "b7 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 67108864,
      pools = {
        p1 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
      reused = "b3",
    },
    {
      step = "b8 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 100663296,
      pools = {
        p1 = { live = 134217728, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 134217728, used_high = 134217728 },
      },
      reused = "b4",
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 100663296, pending = 33554432, reserved = 134217728, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 67108864, pending = 67108864, reserved = 134217728, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
    },
    {
      step = "b7:free()",
      pools = {
        p1 = { live = 33554432, pending = 100663296, reserved = 134217728, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
    },
    {
      step = "b8:free()",
      pools = {
        p1 = { live = 0, pending = 134217728, reserved = 134217728, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "p1.release_threshold = 32 MiB",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "b9 = p1:alloc(32 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
      reused = "b5",
      sources = {
        { buffer = "b5", bytes = 33554432, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b10 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 33554432,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
      reused = "b6",
    },
    {
      step = "b11 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 67108864,
      pools = {
        p1 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
      reused = "b7",
    },
    {
      step = "b12 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 100663296,
      pools = {
        p1 = { live = 134217728, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 134217728, used_high = 134217728 },
      },
      reused = "b8",
    },
    {
      step = "b9:free()",
      pools = {
        p1 = { live = 100663296, pending = 33554432, reserved = 134217728, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
    },
    {
      step = "b10:free()",
      pools = {
        p1 = { live = 67108864, pending = 67108864, reserved = 134217728, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
    },
    {
      step = "b11:free()",
      pools = {
        p1 = { live = 33554432, pending = 100663296, reserved = 134217728, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
    },
    {
      step = "b12:free()",
      pools = {
        p1 = { live = 0, pending = 134217728, reserved = 134217728, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "p1.release_threshold = 17 MiB",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "b13 = p1:alloc(32 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
      reused = "b9",
      sources = {
        { buffer = "b9", bytes = 33554432, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b14 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 33554432,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
      reused = "b10",
    },
    {
      step = "b15 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 67108864,
      pools = {
        p1 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
      reused = "b11",
    },
    {
      step = "b16 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 100663296,
      pools = {
        p1 = { live = 134217728, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 134217728, used_high = 134217728 },
      },
      reused = "b12",
    },
    {
      step = "b13:free()",
      pools = {
        p1 = { live = 100663296, pending = 33554432, reserved = 134217728, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
    },
    {
      step = "b14:free()",
      pools = {
        p1 = { live = 67108864, pending = 67108864, reserved = 134217728, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
    },
    {
      step = "b15:free()",
      pools = {
        p1 = { live = 33554432, pending = 100663296, reserved = 134217728, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
    },
    {
      step = "b16:free()",
      pools = {
        p1 = { live = 0, pending = 134217728, reserved = 134217728, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "p1.release_threshold = 1 B",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "b17 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
      reused = "b13",
    },
    {
      step = "b18 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 33554432,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
      reused = "b14",
    },
    {
      step = "b19 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 67108864,
      pools = {
        p1 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
      reused = "b15",
    },
    {
      step = "b20 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 100663296,
      pools = {
        p1 = { live = 134217728, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 134217728, used_high = 134217728 },
      },
      reused = "b16",
    },
    {
      step = "b17:free()",
      pools = {
        p1 = { live = 100663296, pending = 33554432, reserved = 134217728, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
    },
    {
      step = "b18:free()",
      pools = {
        p1 = { live = 67108864, pending = 67108864, reserved = 134217728, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
    },
    {
      step = "b19:free()",
      pools = {
        p1 = { live = 33554432, pending = 100663296, reserved = 134217728, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
    },
    {
      step = "b20:free()",
      pools = {
        p1 = { live = 0, pending = 134217728, reserved = 134217728, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "p1.release_threshold = 0 B",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "b21 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
      reused = "b17",
    },
    {
      step = "b22 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 33554432,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
      reused = "b18",
    },
    {
      step = "b23 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 67108864,
      pools = {
        p1 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
      reused = "b19",
    },
    {
      step = "b24 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 100663296,
      pools = {
        p1 = { live = 134217728, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 134217728, used_high = 134217728 },
      },
      reused = "b20",
    },
    {
      step = "b21:free()",
      pools = {
        p1 = { live = 100663296, pending = 33554432, reserved = 134217728, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
    },
    {
      step = "b22:free()",
      pools = {
        p1 = { live = 67108864, pending = 67108864, reserved = 134217728, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
    },
    {
      step = "b23:free()",
      pools = {
        p1 = { live = 33554432, pending = 100663296, reserved = 134217728, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
    },
    {
      step = "b24:free()",
      pools = {
        p1 = { live = 0, pending = 134217728, reserved = 134217728, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "p1.release_threshold = 50 MiB",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "b25 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 16777216, used_high = 134217728 },
      },
      reused = "b21",
    },
    {
      step = "b26 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 50331648, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 50331648, used_high = 134217728 },
      },
      reused = "b21",
    },
    {
      step = "b27 = p1:alloc(48 MiB, s1)",
      fresh = true,
      offset = 50331648,
      pools = {
        p1 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
      reused = "b22",
    },
    {
      step = "b25:free()",
      pools = {
        p1 = { live = 83886080, pending = 16777216, reserved = 100663296, reserved_high = 134217728, used = 83886080, used_high = 134217728 },
      },
    },
    {
      step = "b26:free()",
      pools = {
        p1 = { live = 50331648, pending = 50331648, reserved = 100663296, reserved_high = 134217728, used = 50331648, used_high = 134217728 },
      },
    },
    {
      step = "b27:free()",
      pools = {
        p1 = { live = 0, pending = 100663296, reserved = 100663296, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "b28 = p1:alloc(16 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 16777216, used_high = 134217728 },
      },
      reused = "b25",
      sources = {
        { buffer = "b25", bytes = 16777216, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b29 = p1:alloc(16 MiB, s1)",
      offset = 16777216,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
      reused = "b26",
      sources = {
        { buffer = "b26", bytes = 16777216, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b30 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 33554432,
      pools = {
        p1 = { live = 50331648, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 50331648, used_high = 134217728 },
      },
      reused = "b26",
    },
  },
}
