return {
  scenario = "statements_cross_stream",
  summary = "s2 takes fresh memory beside s1's pending free, then reuses it after waiting on an event recorded behind the free",
  gpu = "NVIDIA H200",
  driver = "580.159.04",
  driver_api = 13000,
  runtime = 13000,
  backend = "cuda",
  date = "2026-11-28",
  poolsh = "poolsh 0.1.0",
  steps = {
    { step = "s1 = stream()" },
    { step = "s2 = stream()" },
    {
      step = "p1 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b1 = p1:alloc(16 MiB, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 16777216, state = "live" },
        },
      },
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "s1:spin(100 ms)",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 16777216, state = "live" },
        },
      },
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b1:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 16777216, state = "pending" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b2 = p1:alloc(16 MiB, s2)",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 16777216, state = "pending" },
          { offset = 16777216, owner = "b2", size = 16777216, state = "live" },
        },
      },
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      why_fresh = "b1's free is pending on s1, and s2 has no event dependency on it",
    },
    {
      step = "e1 = s1:record()",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 16777216, state = "pending" },
          { offset = 16777216, owner = "b2", size = 16777216, state = "live" },
        },
      },
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "s2:wait(e1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 16777216, state = "pending" },
          { offset = 16777216, owner = "b2", size = 16777216, state = "live" },
        },
      },
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b3 = p1:alloc(16 MiB, s2)",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 16777216, state = "live" },
          { offset = 16777216, owner = "b2", size = 16777216, state = "live" },
        },
      },
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 16777216, rule = "event dependency", stream = "s1" },
      },
    },
    {
      step = "s2:spin(100 ms)",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 16777216, state = "live" },
          { offset = 16777216, owner = "b2", size = 16777216, state = "live" },
        },
      },
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "b2:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 16777216, state = "live" },
          { offset = 16777216, owner = "b2", size = 16777216, state = "pending" },
        },
      },
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 33554432 },
      },
    },
    {
      step = "b3:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 16777216, state = "pending" },
          { offset = 16777216, owner = "b2", size = 16777216, state = "pending" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 33554432, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
    {
      step = "sync()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 16777216, state = "free" },
          { offset = 16777216, owner = "b2", size = 16777216, state = "free" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
    {
      step = "b4 = p1:alloc(24 MiB, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b4", size = 25165824, state = "live" },
          { offset = 25165824, owner = "b2", size = 8388608, state = "free" },
        },
      },
      offset = 0,
      pools = {
        p1 = { live = 25165824, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 25165824, used_high = 33554432 },
      },
      reused = "b3",
      sources = {
        { buffer = "b3", bytes = 16777216, rule = "host synchronisation", stream = "s2" },
        { buffer = "b2", bytes = 8388608, rule = "host synchronisation", stream = "s2" },
      },
    },
    {
      step = "b4:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b4", size = 25165824, state = "pending" },
          { offset = 25165824, owner = "b2", size = 8388608, state = "free" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 25165824, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
    {
      step = "sync()",
      extents = {
        p1 = {
          { offset = 0, owner = "b4", size = 25165824, state = "free" },
          { offset = 25165824, owner = "b2", size = 8388608, state = "free" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
  },
}
