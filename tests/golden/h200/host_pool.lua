return {
  scenario = "host_pool",
  summary = "a pinned host pool: the same granularity, packing and release",
  gpu = "NVIDIA H200",
  driver = "580.159.04",
  driver_api = 13000,
  runtime = 13000,
  backend = "cuda",
  date = "2026-11-28",
  poolsh = "poolsh 0.1.0",
  steps = {
    {
      step = "p1 = pool{location = host}",
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
      step = "b3 = p1:alloc(3 MiB, s1)",
      fresh = true,
      offset = 1049600,
      pools = {
        p1 = { live = 4195328, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4195328, used_high = 4195328 },
      },
    },
    {
      step = "b4 = p1:alloc(32 MiB + 1 B, s1)",
      fresh = true,
      offset = 4195328,
      pools = {
        p1 = { live = 37749761, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 37749761, used_high = 37749761 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 36701185, pending = 1048576, reserved = 67108864, reserved_high = 67108864, used = 36701185, used_high = 37749761 },
      },
    },
    {
      step = "b5 = p1:alloc(512 KiB, s1)",
      offset = 1024,
      pools = {
        p1 = { live = 37225473, pending = 524288, reserved = 67108864, reserved_high = 67108864, used = 37225473, used_high = 37749761 },
      },
      reused = "b2",
      sources = {
        { buffer = "b2", bytes = 524288, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 37224449, pending = 525312, reserved = 67108864, reserved_high = 67108864, used = 37224449, used_high = 37749761 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 34078721, pending = 3671040, reserved = 67108864, reserved_high = 67108864, used = 34078721, used_high = 37749761 },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 524288, pending = 37225473, reserved = 67108864, reserved_high = 67108864, used = 524288, used_high = 37749761 },
      },
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 0, pending = 37749761, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 37749761 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 37749761 },
      },
    },
  },
}
