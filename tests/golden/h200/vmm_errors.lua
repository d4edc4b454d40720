return {
  scenario = "vmm_errors",
  summary = "each VMM misuse the H200 probe tried gets the GPU's error; views are refused once unmapped",
  gpu = "NVIDIA H200",
  driver = "580.159.04",
  driver_api = 13000,
  runtime = 13000,
  backend = "cuda",
  date = "2026-11-29",
  poolsh = "poolsh 0.1.0",
  steps = {
    { step = "vmm.granularity()", granularity = 2097152 },
    { step = "vmm.granularity({recommended = true})", granularity = 2097152 },
    { step = "vmm.granularity({location = host})", granularity = 2097152 },
    { step = "r1 = vmm.reserve(2101248 B)", error = "cudaErrorInvalidValue" },
    { step = "h1 = vmm.create(2101248 B)", error = "cudaErrorInvalidValue" },
    { step = "h2 = vmm.create(0 B)", error = "cudaErrorInvalidValue" },
    {
      step = "r2 = vmm.reserve(128 MiB)",
      vmm = {
        r2 = {},
      },
    },
    {
      step = "h3 = vmm.create(4 MiB)",
      vmm = {
        h3 = "live",
        r2 = {},
      },
    },
    {
      step = "h4 = vmm.create(4 MiB)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = {},
      },
    },
    {
      step = "r2:map(+4 KiB, h3)",
      error = "cudaErrorInvalidValue",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = {},
      },
    },
    {
      step = "r2:map(+0 B, h3, 4 KiB, 2 MiB)",
      error = "cudaErrorNotSupported",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = {},
      },
    },
    {
      step = "r2:map(+0 B, h3, 0 B, 8 MiB)",
      error = "cudaErrorNotSupported",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = {},
      },
    },
    {
      step = "r2:map(+0 B, h3)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:map(+0 B, h4)",
      error = "cudaErrorInvalidValue",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:map(+2 MiB, h4)",
      error = "cudaErrorInvalidValue",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:map(+16 MiB, h3)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B none", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:set_access(+0 B, 4 MiB)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B rw", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:set_access(+40 MiB, 4 MiB)",
      error = "cudaErrorInvalidValue",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B rw", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:set_access(+0 B, 2 MiB)",
      error = "cudaErrorInvalidValue",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B rw", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "v1 = r2:buffer(+0 B, 4 MiB)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B rw", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "v1:fill(7)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B rw", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "v1:verify(7)",
      verify = "ok",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B rw", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "v2 = r2:buffer(+16 MiB, 4 MiB)",
      error = "r2:buffer: the mapping at offset 16777216 has access \"none\" for device 0: r:set_access(16777216, 4194304) grants \"rw\"",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B rw", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:unmap(+0 B, 2 MiB)",
      error = "cudaErrorInvalidValue",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B rw", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:unmap(+60 MiB, 4 MiB)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B rw", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:map(+4 MiB, h4)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+0 B 4 MiB h3+0 B rw", "+4 MiB 4 MiB h4+0 B none", "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:unmap(+0 B, 8 MiB)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "v1:verify(7)",
      error = "attempt to use a freed poolsh.Buffer (b1)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:map(+80 MiB, h3)",
      vmm = {
        h3 = "live",
        h4 = "live",
        r2 = { "+16 MiB 4 MiB h3+0 B none", "+80 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "h3:release()",
      vmm = {
        h3 = "released",
        h4 = "live",
        r2 = { "+16 MiB 4 MiB h3+0 B none", "+80 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:unmap(+80 MiB, 4 MiB)",
      vmm = {
        h3 = "released",
        h4 = "live",
        r2 = { "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "h3:release()",
      error = "attempt to use a released poolsh.Memory (m3)",
      vmm = {
        h3 = "released",
        h4 = "live",
        r2 = { "+16 MiB 4 MiB h3+0 B none" },
      },
    },
    {
      step = "r2:map(+100 MiB, h4)",
      vmm = {
        h3 = "released",
        h4 = "live",
        r2 = { "+16 MiB 4 MiB h3+0 B none", "+100 MiB 4 MiB h4+0 B none" },
      },
    },
    {
      step = "r2:free()",
      error = "cudaErrorInvalidValue",
      vmm = {
        h3 = "released",
        h4 = "live",
        r2 = { "+16 MiB 4 MiB h3+0 B none", "+100 MiB 4 MiB h4+0 B none" },
      },
    },
    {
      step = "r2:unmap(+16 MiB, 4 MiB)",
      vmm = {
        h3 = "released",
        h4 = "live",
        r2 = { "+100 MiB 4 MiB h4+0 B none" },
      },
    },
    {
      step = "r2:unmap(+100 MiB, 4 MiB)",
      vmm = {
        h3 = "released",
        h4 = "live",
        r2 = {},
      },
    },
    {
      step = "h4:release()",
      vmm = {
        h3 = "released",
        h4 = "released",
        r2 = {},
      },
    },
    {
      step = "r2:free()",
      vmm = { h3 = "released", h4 = "released", r2 = "freed" },
    },
  },
}
