-- Fidelity scenario: memory from vmm.create counts against the device
-- from the create until the later of its release and its last unmap;
-- reservations take none; a create beyond the device fails; a mapping
-- of part of a handle is refused (the H200 maps whole handles only).

local MiB = 1024 * 1024

return {
  name = "vmm_accounting",
  summary = "created memory counts against the device until released and unmapped; reservations count nothing",
  device_memory = true,
  run = function(g)
    local h1 = g.vmm_create(64 * MiB)
    local r = g.vmm_reserve(1024 * MiB)
    r:map(0, h1)
    r:set_access(0, 64 * MiB)
    local h2 = g.vmm_create(32 * MiB)
    r:map(64 * MiB, h2)
    r:map(128 * MiB, h2, 16 * MiB, 16 * MiB)    -- the second half alone: refused (NotSupported)
    h1:release()                                 -- mapped: stays
    h2:release()
    r:unmap(0, 64 * MiB)                         -- h1's last mapping: gone
    r:unmap(64 * MiB, 32 * MiB)                  -- h2's only mapping: gone
    r:unmap(128 * MiB, 16 * MiB)                 -- never mapped: a success
    r:free()
    g.vmm_create(200 * 1024 * MiB)               -- 200 GiB: more than the device
    local h3 = g.vmm_create(2 * MiB, { location = "host" })   -- host memory: not the device's
    h3:release()
  end,
}
