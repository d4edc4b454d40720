return {
  scenario = "release_below_live",
  summary = "a big block freed under a small live one: its chunks go back highest first, past the live chunk",
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
      step = "b1 = p1:alloc(40 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 41943040, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 41943040 },
      },
    },
    {
      step = "b2 = p1:alloc(1 KiB, s1)",
      fresh = true,
      offset = 41943040,
      pools = {
        p1 = { live = 41944064, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 41944064, used_high = 41944064 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        p1 = { live = 1024, pending = 41943040, reserved = 67108864, reserved_high = 67108864, used = 1024, used_high = 41944064 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 67108864, used = 1024, used_high = 41944064 },
      },
    },
    {
      step = "b3 = p1:alloc(1 KiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 2048, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 2048, used_high = 41944064 },
      },
      reused = "b1",
      sources = {
        { buffer = "b1", bytes = 1024, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b2:free()",
      pools = {
        p1 = { live = 1024, pending = 1024, reserved = 67108864, reserved_high = 67108864, used = 1024, used_high = 41944064 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 0, pending = 2048, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 41944064 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
      },
    },
    {
      step = "p2 = pool{release_threshold = 50 MiB}",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b4 = p2:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b5 = p2:alloc(32 MiB, s1)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 50331648, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 50331648, used_high = 50331648 },
      },
    },
    {
      step = "b6 = p2:alloc(48 MiB, s1)",
      fresh = true,
      offset = 50331648,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 100663296, used_high = 100663296 },
      },
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 67108864, pending = 33554432, reserved = 100663296, reserved_high = 100663296, used = 67108864, used_high = 100663296 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 67108864, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 67108864, used_high = 100663296 },
      },
    },
    {
      step = "b4:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 50331648, pending = 16777216, reserved = 100663296, reserved_high = 100663296, used = 50331648, used_high = 100663296 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 50331648, pending = 0, reserved = 67108864, reserved_high = 100663296, used = 50331648, used_high = 100663296 },
      },
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 50331648, reserved = 67108864, reserved_high = 100663296, used = 0, used_high = 100663296 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
      },
    },
    {
      step = "p3 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b7 = p3:alloc(16 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 16777216, used_high = 16777216 },
      },
    },
    {
      step = "b8 = p3:alloc(16 MiB, s1)",
      fresh = true,
      offset = 16777216,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 33554432, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 33554432, used_high = 33554432 },
      },
    },
    {
      step = "b9 = p3:alloc(16 MiB, s1)",
      fresh = true,
      offset = 33554432,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 50331648, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 50331648, used_high = 50331648 },
      },
    },
    {
      step = "b10 = p3:alloc(16 MiB, s1)",
      fresh = true,
      offset = 50331648,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 67108864, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 67108864, used_high = 67108864 },
      },
    },
    {
      step = "b11 = p3:alloc(16 MiB, s1)",
      fresh = true,
      offset = 67108864,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 83886080, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 83886080, used_high = 83886080 },
      },
    },
    {
      step = "b12 = p3:alloc(16 MiB, s1)",
      fresh = true,
      offset = 83886080,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 100663296, pending = 0, reserved = 100663296, reserved_high = 100663296, used = 100663296, used_high = 100663296 },
      },
    },
    {
      step = "b13 = p3:alloc(16 MiB, s1)",
      fresh = true,
      offset = 100663296,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 117440512, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 117440512, used_high = 117440512 },
      },
    },
    {
      step = "b14 = p3:alloc(16 MiB, s1)",
      fresh = true,
      offset = 117440512,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 134217728, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 134217728, used_high = 134217728 },
      },
    },
    {
      step = "b7:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 117440512, pending = 16777216, reserved = 134217728, reserved_high = 134217728, used = 117440512, used_high = 134217728 },
      },
    },
    {
      step = "b8:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 100663296, pending = 33554432, reserved = 134217728, reserved_high = 134217728, used = 100663296, used_high = 134217728 },
      },
    },
    {
      step = "b9:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 83886080, pending = 50331648, reserved = 134217728, reserved_high = 134217728, used = 83886080, used_high = 134217728 },
      },
    },
    {
      step = "b10:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 67108864, pending = 67108864, reserved = 134217728, reserved_high = 134217728, used = 67108864, used_high = 134217728 },
      },
    },
    {
      step = "b11:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 50331648, pending = 83886080, reserved = 134217728, reserved_high = 134217728, used = 50331648, used_high = 134217728 },
      },
    },
    {
      step = "b12:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 33554432, pending = 100663296, reserved = 134217728, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
    },
    {
      step = "b13:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 16777216, pending = 117440512, reserved = 134217728, reserved_high = 134217728, used = 16777216, used_high = 134217728 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 16777216, pending = 0, reserved = 134217728, reserved_high = 134217728, used = 16777216, used_high = 134217728 },
      },
    },
    {
      step = "p3:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 16777216, pending = 0, reserved = 33554432, reserved_high = 134217728, used = 16777216, used_high = 134217728 },
      },
    },
    {
      step = "b15 = p3:alloc(16 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 33554432, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 33554432, used_high = 134217728 },
      },
      reused = "b7",
      sources = {
        { buffer = "b7", bytes = 16777216, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "b15:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 16777216, pending = 16777216, reserved = 67108864, reserved_high = 134217728, used = 16777216, used_high = 134217728 },
      },
    },
    {
      step = "b14:free()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 0, pending = 33554432, reserved = 67108864, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 0, pending = 0, reserved = 67108864, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
    {
      step = "p3:trim(0 B)",
      pools = {
        p1 = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 41944064 },
        p2 = { live = 0, pending = 0, reserved = 33554432, reserved_high = 100663296, used = 0, used_high = 100663296 },
        p3 = { live = 0, pending = 0, reserved = 0, reserved_high = 134217728, used = 0, used_high = 134217728 },
      },
    },
  },
}
