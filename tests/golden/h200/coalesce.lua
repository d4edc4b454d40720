return {
  scenario = "coalesce",
  summary = "adjacent freed blocks merge; three neighbours freed in any order",
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
      step = "b1:free()",
      pools = {
        p1 = { live = 1049600, pending = 1048576, reserved = 33554432, reserved_high = 33554432, used = 1049600, used_high = 2098176 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 1024, pending = 2097152, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 2098176 },
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
      step = "b5 = p1:alloc(1 MiB, s1)",
      fresh = true,
      offset = 2098176,
      pools = {
        p1 = { live = 3146752, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 3146752, used_high = 3146752 },
      },
    },
    {
      step = "b6 = p1:alloc(1 MiB, s1)",
      fresh = true,
      offset = 3146752,
      pools = {
        p1 = { live = 4195328, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4195328, used_high = 4195328 },
      },
    },
    {
      step = "b7 = p1:alloc(1 MiB, s1)",
      fresh = true,
      offset = 4195328,
      pools = {
        p1 = { live = 5243904, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5243904, used_high = 5243904 },
      },
    },
    {
      step = "b8 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 5243904,
      pools = {
        p1 = { live = 5244928, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5244928, used_high = 5244928 },
      },
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 4196352, pending = 1048576, reserved = 33554432, reserved_high = 33554432, used = 4196352, used_high = 5244928 },
      },
    },
    {
      step = "b7:free()",
      pools = {
        p1 = { live = 3147776, pending = 2097152, reserved = 33554432, reserved_high = 33554432, used = 3147776, used_high = 5244928 },
      },
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 2099200, pending = 3145728, reserved = 33554432, reserved_high = 33554432, used = 2099200, used_high = 5244928 },
      },
    },
    {
      step = "b9 = p1:alloc(3 MiB, s1)",
      offset = 2098176,
      pools = {
        p1 = { live = 5244928, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 5244928, used_high = 5244928 },
      },
      reused = "b5",
      sources = {
        { buffer = "b5", bytes = 1048576, rule = "stream order", stream = "s1" },
        { buffer = "b6", bytes = 1048576, rule = "stream order", stream = "s1" },
        { buffer = "b7", bytes = 1048576, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 3147776, pending = 2097152, reserved = 33554432, reserved_high = 33554432, used = 3147776, used_high = 5244928 },
      },
    },
    {
      step = "b9:free()",
      pools = {
        p1 = { live = 2048, pending = 5242880, reserved = 33554432, reserved_high = 33554432, used = 2048, used_high = 5244928 },
      },
    },
    {
      step = "b10 = p1:alloc(5 MiB, s1)",
      fresh = true,
      offset = 5244928,
      pools = {
        p1 = { live = 5244928, pending = 5242880, reserved = 33554432, reserved_high = 33554432, used = 5244928, used_high = 5244928 },
      },
      why_fresh = "no freed block is large enough: the largest is 3.00 MiB",
    },
  },
}
