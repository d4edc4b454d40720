-- Live blocks pin pages inside an expandable range: emptying it unmaps
-- only pages that lie wholly in free space, so a live block keeps every
-- page it touches mapped, with the free bytes beside it; one small live
-- block keeps a whole page.
local poolsh = require "poolsh"
local expandable = require "poolsh.scenarios.lib.expandable"

return {
  name = "vmm_live_pins",
  summary = "in an expandable range, empty() unmaps only wholly free pages: live blocks pin the pages they touch, free bytes and all",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local fmt = poolsh.fmt
    local g = poolsh.vmm.granularity()
    local piece = g + g // 2
    local r <close> = expandable.range { capacity = 32 * g }

    step(("allocate 8 blocks of %s (1.5 pages each) back to back"):format(fmt(piece)),
      "12 pages mapped; every other page boundary falls inside a block")
    local blocks = {}
    for i = 1, 8 do blocks[i] = r:alloc(piece) end
    expect.equal(r.mapped, 12 * g, "mapped bytes")
    expect.equal(r.used, 8 * piece, "used bytes")

    step("free blocks 1, 3, 5 and 7", "half the bytes are free, but each freed block shares a page with a live one")
    for i = 1, 8, 2 do r:free(blocks[i]) end
    expect.equal(r.used, 4 * piece, "used bytes")

    step("empty the range (PyTorch's empty_cache)", "only the 4 pages wholly inside freed blocks are unmapped")
    local gone = r:empty()
    ctx.say(("unmapped %s of %s free; %s mapped for %s used"):format(
      fmt(gone), fmt(4 * piece), fmt(r.mapped), fmt(r.used)))
    expect.equal(gone, 4 * g, "bytes unmapped")
    expect.equal(r.mapped, 8 * g, "mapped bytes")
    expect.equal(r.mapped - r.used, 2 * g, "free bytes pinned by live neighbours")
    expect.equal(#r.r:mappings(), 8, "mappings left")

    step("a mapping goes whole or not at all: unmap half a page", "cudaErrorInvalidValue, as the GPU answers; nothing changes")
    local ok, err = pcall(r.r.unmap, r.r, g, g // 2)
    expect.truthy(not ok and tostring(err):find("cudaErrorInvalidValue", 1, true),
      "unmapping half a mapping fails with cudaErrorInvalidValue (got " .. tostring(err) .. ")")
    expect.equal(#r.r:mappings(), 8, "mappings left")

    step("free the rest, keep one 512-byte block at offset 0, empty again",
      "the tiny live block pins its whole page: one page mapped for 512 bytes")
    for i = 2, 8, 2 do r:free(blocks[i]) end
    r:empty()
    local tiny = r:alloc(512)
    expect.equal(tiny.off, 0, "the tiny block's offset")
    local big = r:alloc(4 * g)
    r:free(big)
    gone = r:empty()
    ctx.say(("%s mapped for %s used"):format(fmt(r.mapped), fmt(r.used)))
    expect.equal(gone, 4 * g, "bytes unmapped around the tiny block")
    expect.equal(r.mapped, g, "mapped bytes")
    expect.equal(r.used, 512, "used bytes")
    r:free(tiny)
  end,
}
