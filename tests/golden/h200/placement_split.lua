return {
  scenario = "placement_split",
  summary = "a freed block is split from its start; a large request after a small one grows the pool",
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
      step = "b1 = p1:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "b2 = p1:alloc(1 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 1048576, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 1048576, used_high = 4194304 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 1048576, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b3 = p1:alloc(1 MiB, s1)",
      offset = 1048576,
      pools = {
        p1 = { live = 2097152, pending = 2097152, reserved = 33554432, reserved_high = 33554432, used = 2097152, used_high = 4194304 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 1048576, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b4 = p1:alloc(2 MiB, s1)",
      offset = 2097152,
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 2097152, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b5 = p1:alloc(1 MiB, s1)",
      fresh = true,
      offset = 4194304,
      pools = {
        p1 = { live = 5242880, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5242880, used_high = 5242880 },
      },
    },
    {
      step = "p2 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 5242880, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5242880, used_high = 5242880 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b6 = p2:alloc(32 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 5242880, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5242880, used_high = 5242880 },
        p2 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 5242880, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5242880, used_high = 5242880 },
        p2 = { live = 0, pending = 33554432, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
    {
      step = "b7 = p2:alloc(1 KiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 5242880, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5242880, used_high = 5242880 },
        p2 = { live = 1024, pending = 33553408, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 33554432 },
      },
      reused = "b6",
      sources = {
        { buffer = "b6", bytes = 1024, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b8 = p2:alloc(32 MiB, s1)",
      offset = 1024,
      pools = {
        p1 = { live = 5242880, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5242880, used_high = 5242880 },
        p2 = { live = 33555456, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 33555456, used_high = 33555456 },
      },
      reused = "b6",
      sources = {
        { buffer = "b6", bytes = 33553408, rule = "stream order", stream = "s1" },
      },
    },
  },
}
