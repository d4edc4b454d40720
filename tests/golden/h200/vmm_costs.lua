return {
  scenario = "vmm_costs",
  summary = "map < create < unmap < set_access, and release < unmap, per 2 MiB page",
  gpu = "NVIDIA H200",
  driver = "580.159.04",
  driver_api = 13000,
  runtime = 13000,
  backend = "cuda",
  date = "2026-11-29",
  poolsh = "poolsh 0.1.0",
  steps = {
    { step = "vmm cost order (7 page cycles)", cost_order = "map < create < unmap < set_access", release = "release < unmap" },
  },
}
