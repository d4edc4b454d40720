return {
  scenario = "same_stream_grow",
  summary = "a request larger than a freed block at the top grows the pool over it, without a sync",
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
      step = "b1 = p1:alloc(20 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 20971520, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 20971520, used_high = 20971520 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 20971520, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 20971520 },
      },
    },
    {
      step = "b2 = p1:alloc(40 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 41943040, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 41943040 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 20971520, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "s1:spin(50 ms)",
      pools = {
        p1 = { live = 41943040, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 41943040 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 41943040, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 41943040 },
      },
    },
    {
      step = "b3 = p1:alloc(70 MiB, s1)",
      fresh = true,
      offset = 41943040,
      pools = {
        p1 = { live = 73400320, pending = 41943040, reserved = 134217728, reserved_high = 134217728, used = 73400320, used_high = 73400320 },
      },
    },
    {
      step = "s1:query()",
      pools = {
        p1 = { live = 73400320, pending = 41943040, reserved = 134217728, reserved_high = 134217728, used = 73400320, used_high = 73400320 },
      },
      query = "busy",
    },
    {
      step = "p2 = pool{}",
      pools = {
        p1 = { live = 73400320, pending = 41943040, reserved = 134217728, reserved_high = 134217728, used = 73400320, used_high = 73400320 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b4 = p2:alloc(1 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 73400320, pending = 41943040, reserved = 134217728, reserved_high = 134217728, used = 73400320, used_high = 73400320 },
        p2 = { live = 1048576, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1048576, used_high = 1048576 },
      },
    },
    {
      step = "b5 = p2:alloc(20 MiB, s1)",
      fresh = true,
      offset = 1048576,
      pools = {
        p1 = { live = 73400320, pending = 41943040, reserved = 134217728, reserved_high = 134217728, used = 73400320, used_high = 73400320 },
        p2 = { live = 22020096, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 22020096, used_high = 22020096 },
      },
    },
    {
      step = "b6 = p2:alloc(1 KiB, s1)",
      fresh = true,
      offset = 22020096,
      pools = {
        p1 = { live = 73400320, pending = 41943040, reserved = 134217728, reserved_high = 134217728, used = 73400320, used_high = 73400320 },
        p2 = { live = 22021120, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 22021120, used_high = 22021120 },
      },
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 73400320, pending = 41943040, reserved = 134217728, reserved_high = 134217728, used = 73400320, used_high = 73400320 },
        p2 = { live = 1049600, pending = 20971520, reserved = 33554432, reserved_high = 33554432, used = 1049600, used_high = 22021120 },
      },
    },
    {
      step = "b7 = p2:alloc(24 MiB, s1)",
      fresh = true,
      offset = 22021120,
      pools = {
        p1 = { live = 73400320, pending = 41943040, reserved = 134217728, reserved_high = 134217728, used = 73400320, used_high = 73400320 },
        p2 = { live = 26215424, pending = 20971520, reserved = 67108864, reserved_high = 67108864, used = 26215424, used_high = 26215424 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 73400320, pending = 0, reserved = 100663296, reserved_high = 134217728, used = 73400320, used_high = 73400320 },
        p2 = { live = 26215424, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 26215424, used_high = 26215424 },
      },
    },
  },
}
