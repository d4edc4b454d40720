-- Lesson 6: a PyTorch-style caching allocator keeps freed segments;
-- empty_cache() gives back those without a live block.
local poolsh = require "poolsh"

local MiB = 1024 * 1024

return {
  name = "caching_allocator",
  title = "A caching allocator",
  summary = "PyTorch-style caching: reserved stays after frees; empty_cache() gives back idle segments",
  intro = "You have cache, a caching allocator with PyTorch's rules on cudaMalloc\n"
    .. "(poolsh.allocators.caching: cache:alloc(size, s), cache:free(block), cache:stats(),\n"
    .. "cache:empty_cache()), and a stream s.",
  setup = function(env)
    env.G.cache = require("poolsh.allocators.caching").new { name = "cache" }
    env.G.s = poolsh.stream()
    env.G.s.name = "s"
  end,
  steps = {
    {
      say = "Allocate eight 4 MiB blocks from cache on s into a table blocks:\n"
        .. "  blocks = {}; for i = 1, 8 do blocks[i] = cache:alloc(\"4 MiB\", s) end\n"
        .. "Watch cache's line (reserved +40.00 MiB, used +32.00 MiB) and each\n"
        .. "block's: \"fresh segment (cudaMalloc 20.00 MiB)\" or split off one.",
      hint = "blocks must be a global table of 8 blocks from cache:alloc",
      solution = 'blocks = {}; for i = 1, 8 do blocks[i] = cache:alloc("4 MiB", s) end',
      check = function(env, expect)
        local blocks = env.get("blocks", "table")
        env.need(#blocks >= 8, "eight blocks in blocks")
        expect.equal(#blocks, 8, "#blocks")
        for i = 1, 8 do
          local b, what = blocks[i], ("blocks[%d]"):format(i)
          expect.truthy(type(b) == "table" and rawget(b, "owner") == env.G.cache,
            what .. " a block from cache:alloc")
          expect.truthy(b.allocated and not b.freed, what .. " not freed")
          expect.equal(b.requested, 4 * MiB, what .. "'s size")
        end
        expect.equal(env.G.cache:stats().allocated, 32 * MiB, "cache's allocated")
      end,
      done = "4 MiB blocks are split from 20 MiB segments: reserved is more than allocated",
    },
    {
      say = "Free every block (cache:free(blocks[i])). Watch cache's line: used -32.00 MiB,\n"
        .. "reserved does not move (no cudaFree), and nothing says released.",
      hint = "for i = 1, 8 do cache:free(blocks[i]) end",
      solution = "for i = 1, 8 do cache:free(blocks[i]) end",
      check = function(env, expect)
        local st = env.G.cache:stats()
        env.need(st.allocated == 0, "every block freed")
        expect.at_least(st.reserved, 32 * MiB, "cache's reserved")
      end,
      done = "allocated 0, reserved unchanged: no cudaFree, the segments stay cached",
    },
    {
      say = "Allocate 4 MiB again as again. Did it call cudaMalloc?\n"
        .. "Watch its line: a cached block's memory, or a fresh segment?\n"
        .. "(cache:stats().num_device_alloc counts the cudaMalloc calls)",
      hint = "again = cache:alloc(\"4 MiB\", s)",
      solution = 'again = cache:alloc("4 MiB", s)',
      start = function(env) env.mark.mallocs = env.G.cache:stats().num_device_alloc end,
      check = function(env, expect)
        local again = env.get("again", "table")
        expect.equal(again.size, 4 * MiB, "again's size")
        expect.equal(env.G.cache:stats().num_device_alloc, env.mark.mallocs, "cudaMalloc calls in this step")
      end,
      done = "a cache hit: no CUDA call at all",
    },
    {
      say = "With again still live, call cache:empty_cache(). What goes back, and what stays?\n"
        .. "Watch \"cache released ... (empty_cache)\" and the reserved left on cache's line.",
      hint = "cache:empty_cache()",
      solution = "cache:empty_cache()",
      start = function(env)
        env.mark.frees = env.G.cache:stats().num_device_free
        env.mark.reserved = env.G.cache:stats().reserved
      end,
      check = function(env, expect)
        local st = env.G.cache:stats()
        env.need(st.num_device_free > env.mark.frees, "cache:empty_cache()")
        expect.at_most(st.reserved, env.mark.reserved - 1, "cache's reserved")
        expect.at_least(st.reserved, 4 * MiB, "cache's reserved (the segment under again)")
      end,
      done = "idle segments went back with cudaFree; the one under again stays",
    },
    {
      say = "Free again and empty the cache once more: reserved must reach 0.\n"
        .. "Watch cache's line: reserved 0 B, and the last segment released (empty_cache).",
      hint = "cache:free(again); cache:empty_cache()",
      solution = "cache:free(again); cache:empty_cache()",
      check = function(env, expect)
        local st = env.G.cache:stats()
        env.need(st.allocated == 0, "cache:free(again)")
        expect.equal(st.reserved, 0, "cache's reserved")
      end,
      done = "reserved 0; the next allocation pays for cudaMalloc again",
    },
  },
}
