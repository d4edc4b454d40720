return {
  scenario = "statements_partial",
  summary = "an 8 MiB allocation takes part of a pending 32 MiB free; the remainder stays pending, then is reused",
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
      step = "b1 = p1:alloc(32 MiB, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 33554432, state = "live" },
        },
      },
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "b2 = p1:alloc(1 KiB, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 33554432, state = "live" },
          { offset = 33554432, owner = "b2", size = 1024, state = "live" },
        },
      },
      fresh = true,
      offset = 33554432,
      pools = {
        p1 = { live = 33555456, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 33555456, used_high = 33555456 },
      },
    },
    {
      step = "s1:spin(100 ms)",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 33554432, state = "live" },
          { offset = 33554432, owner = "b2", size = 1024, state = "live" },
        },
      },
      pools = {
        p1 = { live = 33555456, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 33555456, used_high = 33555456 },
      },
    },
    {
      step = "b1:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b1", size = 33554432, state = "pending" },
          { offset = 33554432, owner = "b2", size = 1024, state = "live" },
        },
      },
      pools = {
        p1 = { live = 1024, pending = 33554432, reserved = 67108864, reserved_high = 67108864, used = 1024, used_high = 33555456 },
      },
    },
    {
      step = "b3 = p1:alloc(8 MiB, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 8388608, state = "live" },
          { offset = 8388608, owner = "b1", size = 25165824, state = "pending" },
          { offset = 33554432, owner = "b2", size = 1024, state = "live" },
        },
      },
      offset = 0,
      pools = {
        p1 = { live = 8389632, pending = 25165824, reserved = 67108864, reserved_high = 67108864, used = 8389632, used_high = 33555456 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 8388608, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b4 = p1:alloc(3000 B, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 8388608, state = "live" },
          { offset = 8388608, owner = "b4", size = 3000, state = "live" },
          { offset = 8391680, owner = "b1", size = 25162752, state = "pending" },
          { offset = 33554432, owner = "b2", size = 1024, state = "live" },
        },
      },
      offset = 8388608,
      pools = {
        p1 = { live = 8392632, pending = 25162752, reserved = 67108864, reserved_high = 67108864, used = 8392632, used_high = 33555456 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 3072, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "s1:sync()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 8388608, state = "live" },
          { offset = 8388608, owner = "b4", size = 3000, state = "live" },
          { offset = 8391680, owner = "b1", size = 25162752, state = "free" },
          { offset = 33554432, owner = "b2", size = 1024, state = "live" },
        },
      },
      pools = {
        p1 = { live = 8392632, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 8392632, used_high = 33555456 },
      },
    },
    {
      step = "b5 = p1:alloc(16 MiB, s1)",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 8388608, state = "live" },
          { offset = 8388608, owner = "b4", size = 3000, state = "live" },
          { offset = 8391680, owner = "b5", size = 16777216, state = "live" },
          { offset = 25168896, owner = "b1", size = 8385536, state = "free" },
          { offset = 33554432, owner = "b2", size = 1024, state = "live" },
        },
      },
      offset = 8391680,
      pools = {
        p1 = { live = 25169848, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 25169848, used_high = 33555456 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 16777216, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b3:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 8388608, state = "pending" },
          { offset = 8388608, owner = "b4", size = 3000, state = "live" },
          { offset = 8391680, owner = "b5", size = 16777216, state = "live" },
          { offset = 25168896, owner = "b1", size = 8385536, state = "free" },
          { offset = 33554432, owner = "b2", size = 1024, state = "live" },
        },
      },
      pools = {
        p1 = { live = 16781240, pending = 8388608, reserved = 67108864, reserved_high = 67108864, used = 16781240, used_high = 33555456 },
      },
    },
    {
      step = "b4:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 8388608, state = "pending" },
          { offset = 8388608, owner = "b4", size = 3000, state = "pending" },
          { offset = 8391680, owner = "b5", size = 16777216, state = "live" },
          { offset = 25168896, owner = "b1", size = 8385536, state = "free" },
          { offset = 33554432, owner = "b2", size = 1024, state = "live" },
        },
      },
      pools = {
        p1 = { live = 16778240, pending = 8391608, reserved = 67108864, reserved_high = 67108864, used = 16778240, used_high = 33555456 },
      },
    },
    {
      step = "b5:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 8388608, state = "pending" },
          { offset = 8388608, owner = "b4", size = 3000, state = "pending" },
          { offset = 8391680, owner = "b5", size = 16777216, state = "pending" },
          { offset = 25168896, owner = "b1", size = 8385536, state = "free" },
          { offset = 33554432, owner = "b2", size = 1024, state = "live" },
        },
      },
      pools = {
        p1 = { live = 1024, pending = 25168824, reserved = 67108864, reserved_high = 67108864, used = 1024, used_high = 33555456 },
      },
    },
    {
      step = "b2:free()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 8388608, state = "pending" },
          { offset = 8388608, owner = "b4", size = 3000, state = "pending" },
          { offset = 8391680, owner = "b5", size = 16777216, state = "pending" },
          { offset = 25168896, owner = "b1", size = 8385536, state = "free" },
          { offset = 33554432, owner = "b2", size = 1024, state = "pending" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 25169848, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 33555456 },
      },
    },
    {
      step = "sync()",
      extents = {
        p1 = {
          { offset = 0, owner = "b3", size = 8388608, state = "free" },
          { offset = 8388608, owner = "b4", size = 3000, state = "free" },
          { offset = 8391680, owner = "b5", size = 16777216, state = "free" },
          { offset = 25168896, owner = "b1", size = 8385536, state = "free" },
          { offset = 33554432, owner = "b2", size = 1024, state = "free" },
        },
      },
      pools = {
        p1 = { live = 0, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 33555456 },
      },
    },
  },
}
