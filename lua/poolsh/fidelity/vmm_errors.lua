-- Fidelity scenario: every misuse of the VMM calls that the H200 probe
-- tried (tests/data/vmm/h200-probe.json), with the GPU's answer; a view
-- of mapped bytes works until they are unmapped, then is refused.

local MiB = 1024 * 1024

return {
  name = "vmm_errors",
  summary = "each VMM misuse the H200 probe tried gets the GPU's error; views are refused once unmapped",
  run = function(g)
    g.vmm_granularity()
    g.vmm_granularity { recommended = true }
    g.vmm_granularity { location = "host" }
    g.vmm_reserve(2 * MiB + 4096)               -- size not a multiple of the granularity
    g.vmm_create(2 * MiB + 4096)
    g.vmm_create(0)
    local r = g.vmm_reserve(128 * MiB)
    local h1, h2 = g.vmm_create(4 * MiB), g.vmm_create(4 * MiB)
    r:map(4096, h1)                              -- unaligned address
    r:map(0, h1, 4096, 2 * MiB)                  -- unaligned memory offset
    r:map(0, h1, 0, 8 * MiB)                     -- past the handle
    r:map(0, h1)
    r:map(0, h2)                                 -- over that mapping
    r:map(2 * MiB, h2)                           -- over its second half
    r:map(16 * MiB, h1)                          -- the same handle twice
    r:set_access(0, 4 * MiB)
    r:set_access(40 * MiB, 4 * MiB)              -- nothing mapped there
    r:set_access(0, 2 * MiB)                     -- part of a mapping
    local v = r:buffer(0, 4 * MiB)
    v:fill(7)
    v:verify(7)
    r:buffer(16 * MiB, 4 * MiB)                  -- mapped, not accessible
    r:unmap(0, 2 * MiB)                          -- half a mapping
    r:unmap(60 * MiB, 4 * MiB)                   -- never mapped
    r:map(4 * MiB, h2)
    r:unmap(0, 8 * MiB)                          -- two mappings at once
    v:verify(7)                                  -- its bytes are gone
    r:map(80 * MiB, h1)
    h1:release()                                 -- while mapped
    r:unmap(80 * MiB, 4 * MiB)
    h1:release()                                 -- twice
    r:map(100 * MiB, h2)
    r:free()                                     -- a mapping left
    r:unmap(16 * MiB, 4 * MiB)
    r:unmap(100 * MiB, 4 * MiB)
    h2:release()
    r:free()
  end,
}
