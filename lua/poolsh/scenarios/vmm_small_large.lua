-- The 1 MiB boundary of PyTorch's caching allocator, in expandable mode:
-- requests up to 1 MiB come from the small range, which grows 2 MiB pages;
-- anything larger from the large range, which grows 20 MiB pages. One
-- byte past 1 MiB maps ten times the memory.
local poolsh = require "poolsh"
local expandable = require "poolsh.scenarios.lib.expandable"

local MiB = 1024 * 1024
local SMALL = MiB   -- the largest small request (PyTorch's kSmallSize)

return {
  name = "vmm_small_large",
  summary = "the 1 MiB boundary: up to 1 MiB grows the small range by 2 MiB pages, one byte more the large range by a 20 MiB page",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local fmt, ms = poolsh.fmt, poolsh.fmt_duration
    local g = poolsh.vmm.granularity()
    local small_page = expandable.round_up(2 * MiB, g)
    local large_page = expandable.round_up(20 * MiB, g)
    local small <close> = expandable.range { capacity = 16 * small_page, page = small_page }
    local large <close> = expandable.range { capacity = 4 * large_page, page = large_page }
    -- PyTorch's choice of pool by the rounded request.
    local function alloc(n) return (n <= SMALL and small or large):alloc(n) end

    step("allocate 1 MiB", "a small request: the small range creates and maps one 2 MiB page")
    local t0 = poolsh.now()
    local a = alloc(SMALL)
    local t_small = poolsh.now() - t0
    expect.equal(small.mapped, small_page, "small range mapped")
    expect.equal(large.mapped, 0, "large range mapped")

    step("allocate 1 MiB again", "it fits the same page: nothing is mapped")
    local b = alloc(SMALL)
    expect.equal(b.off, SMALL, "second block's offset")
    expect.equal(small.creates, 1, "small pages created")

    step("allocate 1 MiB + 1 byte", "a large request: the large range creates and maps one 20 MiB page")
    t0 = poolsh.now()
    local c = alloc(SMALL + 1)
    local t_large = poolsh.now() - t0
    ctx.say(("a 2 MiB page took %s (create, map, set_access), a 20 MiB page %s"):format(ms(t_small), ms(t_large)))
    expect.equal(large.mapped, large_page, "large range mapped")
    expect.equal(c.size, SMALL + 512, "the large block's size (512-byte rounding)")

    step("allocate ten more of 1 MiB + 1 byte", "they share the 20 MiB page: nothing more is mapped")
    local more = {}
    for i = 1, 10 do more[i] = alloc(SMALL + 1) end
    expect.equal(large.creates, 1, "large pages created")
    local used = small.used + large.used
    local mapped = small.mapped + large.mapped
    ctx.say(("%s used, %s mapped (%s small, %s large)"):format(fmt(used), fmt(mapped),
      fmt(small.mapped), fmt(large.mapped)))
    expect.equal(mapped, small_page + large_page, "bytes mapped")

    step("free everything and empty both ranges", "every page is unmapped")
    for _, x in ipairs(more) do large:free(x) end
    large:free(c); small:free(a); small:free(b)
    expect.equal(small:empty() + large:empty(), small_page + large_page, "bytes unmapped")
  end,
}
