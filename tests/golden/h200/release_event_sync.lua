return {
  scenario = "release_event_sync",
  summary = "an event sync releases when the event follows the free, not when it precedes it",
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
      step = "b1 = p1:alloc(64 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "e1 = s1:record()",
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 67108864, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
    },
    {
      step = "sleep(20 ms)",
      pools = {
        p1 = { live = 0, pending = 67108864, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
    },
    {
      step = "e1:sync()",
      pools = {
        p1 = { live = 0, pending = 67108864, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
    },
    {
      step = "e2 = s1:record()",
      pools = {
        p1 = { live = 0, pending = 67108864, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
    },
    {
      step = "e2:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
    },
    {
      step = "b2 = p1:alloc(64 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
      reused = "b1",
    },
    {
      step = "s1:spin(50 ms)",
      pools = {
        p1 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 67108864, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
    },
    {
      step = "e3 = s1:record()",
      pools = {
        p1 = { live = 0, pending = 67108864, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
    },
    {
      step = "e3:query()",
      pools = {
        p1 = { live = 0, pending = 67108864, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
      query = "busy",
    },
    {
      step = "e3:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
    },
    {
      step = "e3:query()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 67108864 },
      },
      query = "idle",
    },
  },
}
