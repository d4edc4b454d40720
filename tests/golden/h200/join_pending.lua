return {
  scenario = "join_pending",
  summary = "a free pending on the device joins frees of its stream, not fresh or retired space; a completed one joins all",
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
      step = "b1 = p1:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "s1:spin(200 ms)",
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
      step = "b2 = p1:alloc(6 MiB, s1)",
      fresh = true,
      offset = 4194304,
      pools = {
        p1 = { live = 6291456, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
      },
    },
    {
      step = "p2 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b3 = p2:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "sleep(20 ms)",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "b4 = p2:alloc(6 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
      },
      reused = "b3",
      sources = {
        { buffer = "b3", bytes = 4194304, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "p3 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b5 = p3:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b6 = p3:alloc(4 MiB, s1)",
      fresh = true,
      offset = 4194304,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
      },
    },
    {
      step = "b7 = p3:alloc(1 KiB, s1)",
      fresh = true,
      offset = 8388608,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 8389632, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8389632, used_high = 8389632 },
      },
    },
    {
      step = "s1:spin(200 ms)",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 8389632, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8389632, used_high = 8389632 },
      },
    },
    {
      step = "b5:free()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 4195328, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 4195328, used_high = 8389632 },
      },
    },
    {
      step = "b6:free()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 1024, pending = 8388608, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 8389632 },
      },
    },
    {
      step = "b8 = p3:alloc(6 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 2097152, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
      },
      reused = "b5",
      sources = {
        { buffer = "b5", bytes = 4194304, rule = "stream order", stream = "s1" },
        { buffer = "b6", bytes = 2097152, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
      },
    },
    {
      step = "p4 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b9 = p4:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b10 = p4:alloc(4 MiB, s1)",
      fresh = true,
      offset = 4194304,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
      },
    },
    {
      step = "b11 = p4:alloc(1 KiB, s1)",
      fresh = true,
      offset = 8388608,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 8389632, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8389632, used_high = 8389632 },
      },
    },
    {
      step = "b9:free()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 4195328, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 4195328, used_high = 8389632 },
      },
    },
    {
      step = "s1:spin(200 ms)",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 4195328, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 4195328, used_high = 8389632 },
      },
    },
    {
      step = "b10:free()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 1024, pending = 8388608, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 8389632 },
      },
    },
    {
      step = "b12 = p4:alloc(6 MiB, s1)",
      offset = 0,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 2097152, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
      },
      reused = "b9",
      sources = {
        { buffer = "b9", bytes = 4194304, rule = "stream order", stream = "s1" },
        { buffer = "b10", bytes = 2097152, rule = "stream order", stream = "s1" },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
      },
    },
    {
      step = "p5 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b13 = p5:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b14 = p5:alloc(4 MiB, s1)",
      fresh = true,
      offset = 4194304,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
      },
    },
    {
      step = "b15 = p5:alloc(1 KiB, s1)",
      fresh = true,
      offset = 8388608,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 8389632, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8389632, used_high = 8389632 },
      },
    },
    {
      step = "b13:free()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 4195328, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 4195328, used_high = 8389632 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 4195328, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4195328, used_high = 8389632 },
      },
    },
    {
      step = "s1:spin(200 ms)",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 4195328, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4195328, used_high = 8389632 },
      },
    },
    {
      step = "b14:free()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 1024, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 8389632 },
      },
    },
    {
      step = "b16 = p5:alloc(6 MiB, s1)",
      fresh = true,
      offset = 8389632,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
      },
      why_fresh = "no freed block is large enough: the largest is 4.00 MiB",
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
      },
    },
    {
      step = "p6 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b17 = p6:alloc(4 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "s1:spin(200 ms)",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 4194304, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 4194304, used_high = 4194304 },
      },
    },
    {
      step = "b17:free()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "e1 = event()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "s1:record(e1)",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "s2:wait(e1)",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 0, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 4194304 },
      },
    },
    {
      step = "b18 = p6:alloc(6 MiB, s2)",
      fresh = true,
      offset = 4194304,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 6291456, pending = 4194304, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
      },
    },
    {
      step = "b19 = p6:alloc(2 MiB, s2)",
      offset = 0,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 8388608, pending = 2097152, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
      },
      reused = "b17",
      sources = {
        { buffer = "b17", bytes = 2097152, rule = "event dependency", stream = "s1" },
      },
    },
    {
      step = "s2:sync()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
      },
    },
    {
      step = "p7 = pool{release_threshold = max}",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
        p7 = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b20 = p7:alloc(30 MiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
        p7 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
      },
    },
    {
      step = "s1:spin(200 ms)",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
        p7 = { live = 31457280, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 31457280, used_high = 31457280 },
      },
    },
    {
      step = "b20:free()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
        p7 = { live = 0, pending = 31457280, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 31457280 },
      },
    },
    {
      step = "b21 = p7:alloc(31 MiB, s1)",
      fresh = true,
      offset = 31457280,
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
        p7 = { live = 32505856, pending = 31457280, reserved = 67108864, reserved_high = 67108864, used = 32505856, used_high = 32505856 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        p1 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p2 = { live = 6291456, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6291456, used_high = 6291456 },
        p3 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p4 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p5 = { live = 6292480, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 6292480, used_high = 8389632 },
        p6 = { live = 8388608, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 8388608, used_high = 8388608 },
        p7 = { live = 32505856, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 32505856, used_high = 32505856 },
      },
    },
  },
}
