return {
  scenario = "trim_live",
  summary = "trim never gives back a chunk holding a live block",
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
      step = "b2 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 50331648, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 50331648, used_high = 50331648 },
      },
    },
    {
      step = "b3 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 50331648,
      pools = {
        p1 = { live = 83886080, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 83886080, used_high = 83886080 },
      },
    },
    {
      step = "b4 = p1:alloc(32 MiB, s1)",
      fresh = true,
      offset = 83886080,
      pools = {
        p1 = { live = 117440512, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 117440512, used_high = 117440512 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 83886080, pending = 33554432, reserved = 134217728, reserved_high = 134217728, used = 83886080, used_high = 117440512 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 50331648, pending = 67108864, reserved = 134217728, reserved_high = 134217728, used = 50331648, used_high = 117440512 },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 16777216, pending = 100663296, reserved = 134217728, reserved_high = 134217728, used = 16777216, used_high = 117440512 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 16777216, used_high = 117440512 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 16777216, used_high = 117440512 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 0, pending = 16777216, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 117440512 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 0, used_high = 117440512 },
      },
    },
    {
      step = "p1:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 117440512 },
      },
    },
  },
}
