return {
  scenario = "placement_top_last",
  summary = "holes below are filled by best fit before the free range at the top, however small that is",
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
      step = "b1 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b2 = p1:alloc(12 MiB, s1)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 29360128, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 29360128, used_high = 29360128 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 12582912, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 12582912, used_high = 29360128 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 12582912, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 12582912, used_high = 29360128 },
      },
    },
    {
      step = "b3 = p1:alloc(1 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 1048576, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "p2 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b4 = p2:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b5 = p2:alloc(1 MiB, s1)",
      fresh = true,
      offset = 4194304,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 5242880, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5242880, used_high = 5242880 },
      },
    },
    {
      step = "b6 = p2:alloc(8 MiB, s1)",
      fresh = true,
      offset = 5242880,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 13631488 },
      },
    },
    {
      step = "b7 = p2:alloc(1 MiB, s1)",
      fresh = true,
      offset = 13631488,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 14680064, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 14680064, used_high = 14680064 },
      },
    },
    {
      step = "b8 = p2:alloc(16 MiB, s1)",
      fresh = true,
      offset = 14680064,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 27262976, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 27262976, used_high = 31457280 },
      },
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 18874368, pending = 12582912, reserved = 33554432, reserved_high = 33554432, used = 18874368, used_high = 31457280 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 18874368, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 18874368, used_high = 31457280 },
      },
    },
    {
      step = "b9 = p2:alloc(1 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 19922944, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 19922944, used_high = 31457280 },
      },
      reused = "b4",
      sources = {
        { buffer = "b4", bytes = 1048576, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b10 = p2:alloc(3 MiB, s1)",
      offset = 1048576,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 23068672, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 23068672, used_high = 31457280 },
      },
      reused = "b4",
      sources = {
        { buffer = "b4", bytes = 3145728, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b11 = p2:alloc(6 MiB, s1)",
      offset = 5242880,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 29360128, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 29360128, used_high = 31457280 },
      },
      reused = "b6",
      sources = {
        { buffer = "b6", bytes = 6291456, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b12 = p2:alloc(2 MiB, s1)",
      offset = 11534336,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
      },
      reused = "b6",
      sources = {
        { buffer = "b6", bytes = 2097152, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "p3 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
        p3 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b13 = p3:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
        p3 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b14 = p3:alloc(12 MiB, s1)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
        p3 = { live = 29360128, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 29360128, used_high = 29360128 },
      },
    },
    {
      step = "b14:free()",
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
        p3 = { live = 16777216, pending = 12582912, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 29360128 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
        p3 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 29360128 },
      },
    },
    {
      step = "b15 = p3:alloc(1 MiB, s1)",
      offset = 16777216,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
        p3 = { live = 17825792, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 17825792, used_high = 29360128 },
      },
      reused = "b14",
      sources = {
        { buffer = "b14", bytes = 1048576, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b16 = p3:alloc(14 MiB, s1)",
      offset = 17825792,
      pools = {
        p1 = { live = 13631488, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 13631488, used_high = 29360128 },
        p2 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
        p3 = { live = 32505856, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 32505856, used_high = 32505856 },
      },
      reused = "b14",
      sources = {
        { buffer = "b14", bytes = 11534336, rule = "stream order", stream = "s1" },
      },
    },
  },
}
