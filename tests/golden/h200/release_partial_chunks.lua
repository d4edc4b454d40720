return {
  scenario = "release_partial_chunks",
  summary = "a live 1 KiB block keeps its chunk at a release; then it goes too",
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
      step = "b1 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "b2 = p1:alloc(1 MiB, s1)",
      fresh = true,
      offset = 1024,
      pools = {
        p1 = { live = 1049600, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1049600, used_high = 1049600 },
      },
    },
    {
      step = "b3 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 1049600,
      pools = {
        p1 = { live = 17826816, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 17826816, used_high = 17826816 },
      },
    },
    {
      step = "b4 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 17826816,
      pools = {
        p1 = { live = 34604032, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 34604032, used_high = 34604032 },
      },
    },
    {
      step = "b5 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 34604032,
      pools = {
        p1 = { live = 51381248, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 51381248, used_high = 51381248 },
      },
    },
    {
      step = "b6 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 51381248,
      pools = {
        p1 = { live = 68158464, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 68158464, used_high = 68158464 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 67109888, pending = 1048576, reserved = 100663296, reserved_high = 100663296, used = 67109888, used_high = 68158464 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 50332672, pending = 17825792, reserved = 100663296, reserved_high = 100663296, used = 50332672, used_high = 68158464 },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 33555456, pending = 34603008, reserved = 100663296, reserved_high = 100663296, used = 33555456, used_high = 68158464 },
      },
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 16778240, pending = 51380224, reserved = 100663296, reserved_high = 100663296, used = 16778240, used_high = 68158464 },
      },
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 1024, pending = 68157440, reserved = 100663296, reserved_high = 100663296, used = 1024, used_high = 68158464 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 1024, used_high = 68158464 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 1024, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 68158464 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 100663296, used = 0, used_high = 68158464 },
      },
    },
    {
      step = "b7 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 33554432, used_high = 68158464 },
      },
      reused = "b1",
    },
    {
      step = "b7:free()",
      pools = {
        p1 = { live = 0, pending = 33554432, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 68158464 },
      },
    },
    {
      step = "b8 = p1:alloc(1 KiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 1024, pending = 33553408, reserved = 33554432, reserved_high = 100663296, used = 1024, used_high = 68158464 },
      },
      reused = "b7",
      sources = {
        { buffer = "b7", bytes = 1024, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 1024, used_high = 68158464 },
      },
    },
    {
      step = "b8:free()",
      pools = {
        p1 = { live = 0, pending = 1024, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 68158464 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 100663296, used = 0, used_high = 68158464 },
      },
    },
  },
}
