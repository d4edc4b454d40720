return {
  scenario = "release_stream_destroy_busy",
  summary = "destroying a busy stream keeps its pending frees until a sync covers them",
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
      step = "b1 = p1:alloc(8 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
      },
    },
    {
      step = "s1:spin(100 ms)",
      pools = {
        p1 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 8388608, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 8388608 },
      },
    },
    {
      step = "e1 = s1:record()",
      pools = {
        p1 = { live = 0, pending = 8388608, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 8388608 },
      },
    },
    {
      step = "s1:destroy()",
      pools = {
        p1 = { live = 0, pending = 8388608, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 8388608 },
      },
    },
    {
      step = "e1:query()",
      pools = {
        p1 = { live = 0, pending = 8388608, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 8388608 },
      },
      query = "busy",
    },
    {
      step = "e1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 8388608 },
      },
    },
    {
      step = "e1:query()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 8388608 },
      },
      query = "idle",
    },
  },
}
