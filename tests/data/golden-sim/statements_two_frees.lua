return {
  scenario = "statements_two_frees",
  summary = "b3 (40 MiB) covers b1's and b2's freed ranges, b4 lies inside b2's; their frees leave pending within reserved",
  gpu = "poolsh sim (built-in profile)",
  driver = "sim",
  backend = "sim",
  date = "2026-11-28",
  poolsh = "poolsh 0.1.0",
  profile = "built-in",
  steps = {
    { step = "s1 = stream()" },
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
      step = "b2 = p1:alloc(40 MiB, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 16777216, state = "live" },
          { offset = 16777216, owner = "b2", size = 41943040, state = "live" },
        },
      },
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 58720256, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 58720256, used_high = 58720256 },
      },
    },
    {
      step = "s1:spin(100 ms)",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 16777216, state = "live" },
          { offset = 16777216, owner = "b2", size = 41943040, state = "live" },
        },
      },
      pools = {
        p1 = { live = 58720256, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 58720256, used_high = 58720256 },
      },
    },
    {
      step = "b1:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 16777216, state = "pending" },
          { offset = 16777216, owner = "b2", size = 41943040, state = "live" },
        },
      },
      pools = {
        p1 = { live = 41943040, pending = 16777216, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 58720256 },
      },
    },
    {
      step = "b2:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 16777216, state = "pending" },
          { offset = 16777216, owner = "b2", size = 41943040, state = "pending" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 58720256, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 58720256 },
      },
    },
    {
      step = "b3 = p1:alloc(40 MiB, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 41943040, state = "live" },
          { offset = 41943040, owner = "b2", size = 16777216, state = "pending" },
        },
      },
      offset = 0,
      pools = {
        p1 = { live = 41943040, pending = 16777216, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 58720256 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 16777216, rule = "stream order", stream = "s1" },
        { buffer = "b2", bytes = 25165824, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b4 = p1:alloc(8 MiB, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 41943040, state = "live" },
          { offset = 41943040, owner = "b4", size = 8388608, state = "live" },
          { offset = 50331648, owner = "b2", size = 8388608, state = "pending" },
        },
      },
      offset = 41943040,
      pools = {
        p1 = { live = 50331648, pending = 8388608, reserved = 67108864, reserved_high = 67108864, used = 50331648, used_high = 58720256 },
      },
      reused = "b2",
      sources = {
        { buffer = "b2", bytes = 8388608, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "s1:spin(100 ms)",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 41943040, state = "live" },
          { offset = 41943040, owner = "b4", size = 8388608, state = "live" },
          { offset = 50331648, owner = "b2", size = 8388608, state = "pending" },
        },
      },
      pools = {
        p1 = { live = 50331648, pending = 8388608, reserved = 67108864, reserved_high = 67108864, used = 50331648, used_high = 58720256 },
      },
    },
    {
      step = "b3:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 41943040, state = "pending" },
          { offset = 41943040, owner = "b4", size = 8388608, state = "live" },
          { offset = 50331648, owner = "b2", size = 8388608, state = "pending" },
        },
      },
      pools = {
        p1 = { live = 8388608, pending = 50331648, reserved = 67108864, reserved_high = 67108864, used = 8388608, used_high = 58720256 },
      },
    },
    {
      step = "b4:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 41943040, state = "pending" },
          { offset = 41943040, owner = "b4", size = 8388608, state = "pending" },
          { offset = 50331648, owner = "b2", size = 8388608, state = "pending" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 58720256, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 58720256 },
      },
    },
    {
      step = "b5 = p1:alloc(56 MiB, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b5", size = 58720256, state = "live" },
        },
      },
      offset = 0,
      pools = {
        p1 = { live = 58720256, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 58720256, used_high = 58720256 },
      },
      reused = "b3",
      sources = {
        { buffer = "b3", bytes = 41943040, rule = "stream order", stream = "s1" },
        { buffer = "b4", bytes = 8388608, rule = "stream order", stream = "s1" },
        { buffer = "b2", bytes = 8388608, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "s1:sync()",
      extents = {
        p1 = {
          { offset = 0, owner = "b5", size = 58720256, state = "live" },
        },
      },
      pools = {
        p1 = { live = 58720256, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 58720256, used_high = 58720256 },
      },
    },
    {
      step = "b5:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b5", size = 58720256, state = "pending" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 58720256, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 58720256 },
      },
    },
    {
      step = "sync()",
      extents = {
        p1 = {
          { offset = 0, owner = "b5", size = 58720256, state = "free" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 58720256 },
      },
    },
  },
}
