return {
  scenario = "default_pool",
  summary = "the default pool: granularity, release at a sync, on the legacy and a created stream",
  gpu = "NVIDIA H200",
  driver = "580.159.04",
  driver_api = 13000,
  runtime = 13000,
  backend = "cuda",
  date = "2026-11-28",
  poolsh = "poolsh 0.1.0",
  steps = {
    {
      step = "pd = default_pool()",
      pools = {
        pd = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "s1 = stream()",
      pools = {
        pd = { live = 0, pending = 0, reserved = 0, reserved_high = 0, used = 0, used_high = 0 },
      },
    },
    {
      step = "b1 = pd:alloc(1 KiB, s1)",
      fresh = true,
      offset = 0,
      pools = {
        pd = { live = 1024, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1024, used_high = 1024 },
      },
    },
    {
      step = "b1:free()",
      pools = {
        pd = { live = 0, pending = 1024, reserved = 33554432, reserved_high = 33554432, used = 0, used_high = 1024 },
      },
    },
    {
      step = "s1:sync()",
      pools = {
        pd = { live = 0, pending = 0, reserved = 0, reserved_high = 33554432, used = 0, used_high = 1024 },
      },
    },
    {
      step = "b2 = pd:alloc(1 MiB, default)",
      fresh = true,
      offset = 0,
      pools = {
        pd = { live = 1048576, pending = 0, reserved = 33554432, reserved_high = 33554432, used = 1048576, used_high = 1048576 },
      },
      reused = "b1",
    },
    {
      step = "b3 = pd:alloc(40 MiB, default)",
      fresh = true,
      offset = 1048576,
      pools = {
        pd = { live = 42991616, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 42991616, used_high = 42991616 },
      },
    },
    {
      step = "b2:free()",
      pools = {
        pd = { live = 41943040, pending = 1048576, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 42991616 },
      },
    },
    {
      step = "default:sync()",
      pools = {
        pd = { live = 41943040, pending = 0, reserved = 67108864, reserved_high = 67108864, used = 41943040, used_high = 42991616 },
      },
    },
    {
      step = "b3:free()",
      pools = {
        pd = { live = 0, pending = 41943040, reserved = 67108864, reserved_high = 67108864, used = 0, used_high = 42991616 },
      },
    },
    {
      step = "default:sync()",
      pools = {
        pd = { live = 0, pending = 0, reserved = 0, reserved_high = 67108864, used = 0, used_high = 42991616 },
      },
    },
  },
}
