return {
  scenario = "placement_best_fit",
  summary = "best fit: the smallest hole that fits, not the lowest",
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
      step = "b3 = p1:alloc(4 MiB, s1)",
      fresh = true,
      offset = 2097152,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
      },
    },
    {
      step = "b4 = p1:alloc(1 MiB, s1)",
      fresh = true,
      offset = 6291456,
      pools = {
        p1 = { live = 7340032, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 7340032, used_high = 7340032 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 6291456, pending = 1048576, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 7340032 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 2097152, pending = 5242880, reserved = 33554432, reserved_high = 33554432, used = 2097152, used_high = 7340032 },
      },
    },
    {
      step = "b5 = p1:alloc(1 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 3145728, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 3145728, used_high = 7340032 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 1048576, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b6 = p1:alloc(1 MiB, s1)",
      offset = 2097152,
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
      },
      reused = "b3",
      sources = {
        { buffer = "b3", bytes = 1048576, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "p2 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b7 = p2:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
        p2 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b8 = p2:alloc(1 MiB, s1)",
      fresh = true,
      offset = 4194304,
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
        p2 = { live = 5242880, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5242880, used_high = 5242880 },
      },
    },
    {
      step = "b9 = p2:alloc(1 MiB, s1)",
      fresh = true,
      offset = 5242880,
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
      },
    },
    {
      step = "b10 = p2:alloc(1 MiB, s1)",
      fresh = true,
      offset = 6291456,
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
        p2 = { live = 7340032, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 7340032, used_high = 7340032 },
      },
    },
    {
      step = "b7:free()",
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
        p2 = { live = 3145728, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 3145728, used_high = 7340032 },
      },
    },
    {
      step = "b9:free()",
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
        p2 = { live = 2097152, pending = 5242880, reserved = 33554432, reserved_high = 33554432, used = 2097152, used_high = 7340032 },
      },
    },
    {
      step = "b11 = p2:alloc(1 MiB, s1)",
      offset = 5242880,
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
        p2 = { live = 3145728, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 3145728, used_high = 7340032 },
      },
      reused = "b9",
      sources = {
        { buffer = "b9", bytes = 1048576, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b12 = p2:alloc(2 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
        p2 = { live = 5242880, pending = 2097152, reserved = 33554432, reserved_high = 33554432, used = 5242880, used_high = 7340032 },
      },
      reused = "b7",
      sources = {
        { buffer = "b7", bytes = 2097152, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b13 = p2:alloc(2 MiB, s1)",
      offset = 2097152,
      pools = {
        p1 = { live = 4194304, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 7340032 },
        p2 = { live = 7340032, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 7340032, used_high = 7340032 },
      },
      reused = "b7",
      sources = {
        { buffer = "b7", bytes = 2097152, rule = "stream order", stream = "s1" },
      },
    },
  },
}
