return {
  scenario = "coalesce_reverse",
  summary = "frees in reverse order with a sync between them still merge",
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
      step = "b1 = p1:alloc(1 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 1048576, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1048576, used_high = 1048576 },
      },
    },
    {
      step = "b2 = p1:alloc(1 MiB, s1)",
      fresh = true,
      offset = 1048576,
      pools = {
        p1 = { live = 2097152, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 2097152, used_high = 2097152 },
      },
    },
    {
      step = "b3 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 2097152,
      pools = {
        p1 = { live = 2098176, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 2098176, used_high = 2098176 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 1049600, pending = 1048576, reserved = 33554432, reserved_high = 33554432, used = 1049600, used_high = 2098176 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1049600, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1049600, used_high = 2098176 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 1024, pending = 1048576, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 2098176 },
      },
    },
    {
      step = "b4 = p1:alloc(2 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 2098176, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 2098176, used_high = 2098176 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 1048576, rule = "stream order", stream = "s1" },
        { buffer = "b2", bytes = 1048576, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b5 = p1:alloc(512 KiB, s1)",
      fresh = true,
      offset = 2098176,
      pools = {
        p1 = { live = 2622464, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 2622464, used_high = 2622464 },
      },
    },
  },
}
