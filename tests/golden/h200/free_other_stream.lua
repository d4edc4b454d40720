return {
  scenario = "free_other_stream",
  summary = "a block freed on a stream other than the allocating one",
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
      step = "s2 = stream()",
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
      step = "s2:spin(100 ms)",
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b1:free(s2)",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b2 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      why_fresh = "b1's free is pending on s2, and s1 has no event dependency on it",
    },
    {
      step = "b3 = p1:alloc(16 MiB, s2)",
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 16777216, rule = "stream order", stream = "s2" },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "s2:query()",
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
      query = "busy",
    },
    {
      step = "s2:sync()",
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 33554432 },
      },
    },
    {
      step = "b3:free(s1)",
      pools = {
        p1 = { live = 0, pending = 33554432, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
    {
      step = "s2:sync()",
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
  },
}
