return {
  scenario = "vmm_accounting",
  summary = "created memory counts against the device until released and unmapped; reservations count nothing",
  gpu = "NVIDIA H200",
  driver = "580.159.04",
  driver_api = 13000,
  runtime = 13000,
  backend = "cuda",
  date = "2026-11-29",
  poolsh = "poolsh 0.1.0",
  steps = {
    {
      step = "h1 = vmm.create(64 MiB)",
      device_used = 67108864,
      vmm = { h1 = "live" },
    },
    {
      step = "r1 = vmm.reserve(1 GiB)",
      device_used = 67108864,
      vmm = {
        h1 = "live",
        r1 = {},
      },
    },
    {
      step = "r1:map(+0 B, h1)",
      device_used = 67108864,
      vmm = {
        h1 = "live",
        r1 = { "+0 B 64 MiB h1+0 B none" },
      },
    },
    {
      step = "r1:set_access(+0 B, 64 MiB)",
      device_used = 67108864,
      vmm = {
        h1 = "live",
        r1 = { "+0 B 64 MiB h1+0 B rw" },
      },
    },
    {
      step = "h2 = vmm.create(32 MiB)",
      device_used = 100663296,
      vmm = {
        h1 = "live",
        h2 = "live",
        r1 = { "+0 B 64 MiB h1+0 B rw" },
      },
    },
    {
      step = "r1:map(+64 MiB, h2)",
      device_used = 100663296,
      vmm = {
        h1 = "live",
        h2 = "live",
        r1 = { "+0 B 64 MiB h1+0 B rw", "+64 MiB 32 MiB h2+0 B none" },
      },
    },
    {
      step = "r1:map(+128 MiB, h2, 16 MiB, 16 MiB)",
      device_used = 100663296,
      error = "cudaErrorNotSupported",
      vmm = {
        h1 = "live",
        h2 = "live",
        r1 = { "+0 B 64 MiB h1+0 B rw", "+64 MiB 32 MiB h2+0 B none" },
      },
    },
    {
      step = "h1:release()",
      device_used = 100663296,
      vmm = {
        h1 = "released",
        h2 = "live",
        r1 = { "+0 B 64 MiB h1+0 B rw", "+64 MiB 32 MiB h2+0 B none" },
      },
    },
    {
      step = "h2:release()",
      device_used = 100663296,
      vmm = {
        h1 = "released",
        h2 = "released",
        r1 = { "+0 B 64 MiB h1+0 B rw", "+64 MiB 32 MiB h2+0 B none" },
      },
    },
    {
      step = "r1:unmap(+0 B, 64 MiB)",
      device_used = 33554432,
      vmm = {
        h1 = "released",
        h2 = "released",
        r1 = { "+64 MiB 32 MiB h2+0 B none" },
      },
    },
    {
      step = "r1:unmap(+64 MiB, 32 MiB)",
      device_used = 0,
      vmm = {
        h1 = "released",
        h2 = "released",
        r1 = {},
      },
    },
    {
      step = "r1:unmap(+128 MiB, 16 MiB)",
      device_used = 0,
      vmm = {
        h1 = "released",
        h2 = "released",
        r1 = {},
      },
    },
    {
      step = "r1:free()",
      device_used = 0,
      vmm = { h1 = "released", h2 = "released", r1 = "freed" },
    },
    {
      step = "h3 = vmm.create(200 GiB)",
      device_used = 0,
      error = "cudaErrorMemoryAllocation",
      vmm = { h1 = "released", h2 = "released", r1 = "freed" },
    },
    {
      step = "h4 = vmm.create(2 MiB, {location = host})",
      device_used = 0,
      vmm = { h1 = "released", h2 = "released", h4 = "live", r1 = "freed" },
    },
    {
      step = "h4:release()",
      device_used = 0,
      vmm = { h1 = "released", h2 = "released", h4 = "released", r1 = "freed" },
    },
  },
}
