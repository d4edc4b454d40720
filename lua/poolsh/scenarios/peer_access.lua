-- Peer access: a pool on device 0 used from a stream of device 1, without
-- and with access (docs/multi-gpu.md). Needs two devices: on the sim the
-- scenario asks for them (poolsh.scenario: devices).
local poolsh = require "poolsh"

-- Whether f() raised an error starting with the CUDA error `name`.
local function refused(name, f, ...)
  local ok, err = pcall(f, ...)
  return not ok and tostring(err):find("^" .. name .. ":") ~= nil, ok and "no error" or tostring(err)
end

return {
  name = "peer_access",
  summary = "a pool on device 0 used from device 1: kernels refused until p:set_access(1, \"rw\"), for old and new blocks; copies refused too",
  devices = 2,
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local p = poolsh.pool { device = 0 }
    local s1 = poolsh.stream { device = 1 }
    local host = poolsh.pinned("1 MiB")

    step("allocate 1 MiB from a pool on device 0; ask each device's access",
      "device 0 (the pool's own) has rw, device 1 has none: the default for every pool")
    local a = p:alloc("1 MiB")
    poolsh.fill(a, 7)
    expect.equal(p:access(0), "rw", "access of device 0")
    expect.equal(p:access(1), "none", "access of device 1")

    step("fill it from a stream of device 1",
      "refused: on the GPU the kernel would fault and lose the process's CUDA context, so poolsh does not launch it")
    local ok, err = refused("cudaErrorIllegalAddress", poolsh.fill, a, 1, s1)
    expect.truthy(ok, "fill from device 1 refused with cudaErrorIllegalAddress (got: " .. err .. ")")

    step("copy it to pinned memory on device 1's stream",
      "refused as well (cudaErrorInvalidValue), but not sticky: with device 1 current the driver will not copy p's memory")
    ok, err = refused("cudaErrorInvalidValue", poolsh.copy, host, a, { stream = s1 })
    expect.truthy(ok, "copy on device 1's stream refused with cudaErrorInvalidValue (got: " .. err .. ")")

    step("enable peer access from device 1 to device 0 (cudaDeviceEnablePeerAccess)",
      "pools are not affected: device 1 still has no access to p's memory")
    local on, why = pcall(poolsh.enable_peer_access, 0, 1)
    expect.truthy(on or tostring(why):find("AlreadyEnabled"), "peer access enabled: " .. tostring(why))
    expect.equal(p:access(1), "none", "access of device 1 after enable_peer_access")
    expect.truthy((refused("cudaErrorIllegalAddress", poolsh.touch, a, s1)), "touch from device 1 still refused")

    step("p:set_access(1, \"rw\"); fill the old block from device 1 and verify it",
      "works: access covers blocks allocated before the call")
    p:set_access(1, "rw")
    expect.equal(p:access(1), "rw", "access of device 1")
    poolsh.fill(a, 1, s1)
    expect.truthy(poolsh.verify(a, 1, s1), "the old block reads 1 from device 1")

    step("allocate a new block and use it from device 1", "works: and blocks allocated after it")
    local b = p:alloc("1 MiB")
    poolsh.fill(b, 2, s1)
    expect.truthy(poolsh.verify(b, 2, s1), "the new block reads 2 from device 1")

    step("revoke it: p:set_access(1, \"none\"); touch from device 1", "refused again, for every block")
    p:set_access(1, "none")
    expect.truthy((refused("cudaErrorIllegalAddress", poolsh.touch, b, s1)), "touch of the new block refused")
    expect.truthy((refused("cudaErrorIllegalAddress", poolsh.touch, a, s1)), "touch of the old block refused")

    step("try to revoke device 0's own access, and to grant read-only",
      "the GPU refuses both: cudaErrorInvalidDevice, cudaErrorNotSupported")
    expect.truthy((refused("cudaErrorInvalidDevice", p.set_access, p, 0, "none")), "own device none refused")
    expect.truthy((refused("cudaErrorNotSupported", p.set_access, p, 1, "read")), "read-only refused")
    a:free(); b:free(); host:free()
    poolsh.sync()
  end,
}
