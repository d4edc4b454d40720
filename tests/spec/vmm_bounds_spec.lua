-- A range's map, unmap and set_access stay inside it: the backend takes
-- any reservation's bytes, so without poolsh's check r1 could unmap r2's
-- mapping behind r2's back, and a view of r2 would then reach unmapped
-- bytes (on a GPU, an illegal address that ends the context).
local H = require "helpers"
local poolsh = H.poolsh

describe("poolsh.vmm ranges", function()
  it("refuse map, unmap and set_access past their end, naming the bytes", function()
    local g = poolsh.vmm.granularity()
    local r1 <close> = poolsh.vmm.reserve(2 * g)
    local r2 <close> = poolsh.vmm.reserve(2 * g)
    local m <close> = poolsh.vmm.create(2 * g)
    r2:map(0, m)
    r2:set_access(0, 2 * g)
    local d = r2.addr - r1.addr   -- where r2's bytes are, seen from r1
    local err = H.err(r1.unmap, r1, d, 2 * g)
    assert.matches("^cudaErrorInvalidValue: .*%(r%d+:unmap: bytes %[%d+, %d+%) out of bounds of r%d+, " .. 2 * g .. " bytes%)", err)
    err = H.err(r1.set_access, r1, d, 2 * g, { access = "none" })
    assert.matches("^cudaErrorInvalidValue: .*r%d+:set_access: bytes .* out of bounds", err)
    err = H.err(r1.map, r1, d, m)
    assert.matches("^cudaErrorInvalidValue: .*r%d+:map: bytes .* out of bounds", err)
    err = H.err(r1.map, r1, g, m)   -- starts inside, ends past
    assert.matches("r%d+:map: bytes %[" .. g .. ", " .. 3 * g .. "%) out of bounds", err)
    assert.equals(0, #r1:mappings())
    -- r2's mapping is whole and usable
    assert.equals(1, #r2:mappings())
    local v = r2:buffer(0, 2 * g)
    poolsh.fill(v, 9)
    assert.is_true(poolsh.verify(v, 9))
    r2:unmap(0, 2 * g)
  end)
end)
