return {
  scenario = "reuse_f0_o1_i1",
  summary = "cross-stream reuse with follow_event_dependencies=false, opportunistic=true, internal_dependencies=true",
  gpu = "NVIDIA H200",
  driver = "580.159.04",
  driver_api = 13000,
  runtime = 13000,
  backend = "cuda",
  date = "2026-11-28",
  poolsh = "poolsh 0.1.0",
  steps = {
    {
      step = "p1 = pool{follow_event_dependencies = false, internal_dependencies = true, opportunistic = true, release_threshold = max}",
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
      step = "s1:spin(100 ms)",
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b2 = p1:alloc(16 MiB, s2)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      why_fresh = "b1's free is pending on s1, and s2 has no event dependency on it",
    },
    {
      step = "s2:query()",
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      query = "idle",
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 0, pending = 33554432, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b3 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      reused = "b1",
    },
    {
      step = "e1 = s1:record()",
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "s1:spin(100 ms)",
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "s2:wait(e1)",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b4 = p1:alloc(16 MiB, s2)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      reused = "b2",
      why_fresh = "s2 waited on an event recorded on s1 before b3's free",
    },
    {
      step = "s2:query()",
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      query = "idle",
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 0, pending = 33554432, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b5 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      reused = "b3",
    },
    {
      step = "s1:spin(100 ms)",
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "e2 = s1:record()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "s2:wait(e2)",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b6 = p1:alloc(16 MiB, s2)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      reused = "b4",
      why_fresh = "s2 waited on an event recorded on s1 after b5's free, but p1 does not follow event dependencies",
    },
    {
      step = "s2:query()",
      pools = {
        p1 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      query = "busy",
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 0, pending = 33554432, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b7 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      reused = "b5",
    },
    {
      step = "b7:free()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "sleep(100 ms)",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b8 = p1:alloc(16 MiB, s2)",
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      reused = "b7",
      sources = {
        { buffer = "b7", bytes = 16777216, rule = "opportunistic", stream = "s1" },
      },
    },
    {
      step = "b8:free()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b9 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      reused = "b8",
    },
    {
      step = "b9:free()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "e3 = s1:record()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "sleep(100 ms)",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "s2:wait(e3)",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b10 = p1:alloc(16 MiB, s2)",
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      reused = "b9",
      sources = {
        { buffer = "b9", bytes = 16777216, rule = "opportunistic", stream = "s1" },
      },
    },
    {
      step = "b10:free()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b11 = p1:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      reused = "b10",
    },
    {
      step = "s1:spin(20 ms)",
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b11:free()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "b12 = p1:alloc(16 MiB, s2)",
      offset = 0,
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
      reused = "b11",
      sources = {
        { buffer = "b11", bytes = 16777216, rule = "host synchronisation", stream = "s1" },
      },
    },
    {
      step = "b12:free()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
      },
    },
    {
      step = "p2 = pool{follow_event_dependencies = false, internal_dependencies = true, max_size = 32 MiB, opportunistic = true, release_threshold = max}",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b13 = p2:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b14 = p2:alloc(16 MiB, s1)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "s1:spin(100 ms)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "b13:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 33554432 },
      },
    },
    {
      step = "b15 = p2:alloc(16 MiB, s2)",
      offset = 0,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
      reused = "b13",
      sources = {
        { buffer = "b13", bytes = 16777216, rule = "internal dependency", stream = "s1" },
      },
    },
    {
      step = "s2:query()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
      query = "busy",
    },
    {
      step = "s2:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "s2:query()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
      query = "idle",
    },
    {
      step = "b14:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 16777216, pending = 16777216, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 33554432 },
      },
    },
    {
      step = "b15:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 0, pending = 33554432, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
    {
      step = "sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
    {
      step = "p2:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 16777216 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 33554432 },
      },
    },
  },
}
