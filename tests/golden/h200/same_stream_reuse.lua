return {
  scenario = "same_stream_reuse",
  summary = "the same stream reuses its frees at once, even pending ones",
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
      step = "b2 = p1:alloc(4 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 4194304, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "s1:spin(100 ms)",
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "b3 = p1:alloc(4 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
      reused = "b2",
      sources = {
        { buffer = "b2", bytes = 4194304, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "s1:query()",
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
      query = "busy",
    },
    {
      step = "b4 = p1:alloc(2 MiB, s1)",
      fresh = true,
      offset = 4194304,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 2097152, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 2097152, used_high = 6291456 },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 0, pending = 6291456, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 6291456 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 6291456 },
      },
    },
  },
}
