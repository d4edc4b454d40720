-- Lesson 3: the release threshold decides what a pool keeps at a sync.
local poolsh = require "poolsh"

local MiB64 = 64 * 1024 * 1024

-- Whether an allocation of at least `size` bytes from pool p was made
-- since the allocation counted `since` (poolsh.core.recent).
local function allocated(p, size, since)
  local list = poolsh.core.recent(since)
  for _, a in ipairs(list) do
    if a.pool == p.id and a.size >= size then return true end
  end
  return false
end

-- The allocations counted so far.
local function allocs_so_far() return select(2, poolsh.core.recent(math.maxinteger)) end

return {
  name = "release_threshold",
  title = "The release threshold",
  summary = "at a sync a pool gives back what it holds above its release threshold",
  intro = "You have a pool p with release threshold 0 (the CUDA default) and a stream s.",
  setup = function(env)
    env.G.p = poolsh.pool { release_threshold = 0 }
    env.G.s = poolsh.stream()
    env.G.p.name, env.G.s.name = "p", "s"
  end,
  steps = {
    {
      say = "Allocate 64 MiB on s, free it, and synchronise s:\n"
        .. "  b = p:alloc(\"64 MiB\", s); b:free(); s:sync()\n"
        .. "Watch p's line: reserved ends at 0 B, and \"(peak 64.00 MiB)\" beside it\n"
        .. "shows what the statement mapped; the next line says\n"
        .. "s:sync() released down to threshold 0 B.",
      hint = "the sync is what lets the pool release: s:sync() after the free",
      solution = 'b = p:alloc("64 MiB", s); b:free(); s:sync()',
      start = function(env)
        env.mark.since = allocs_so_far()
        env.mark.syncs = env.counts(env.G.p).releases.stream_sync or 0
      end,
      check = function(env, expect)
        local st = env.stats(env.G.p)
        env.need(allocated(env.G.p, MiB64, env.mark.since), "an allocation of 64 MiB from p")
        env.need(st.used == 0 and st.pending == 0, "the free, then s:sync()")
        expect.stats(env.G.p, { reserved = 0 })
        expect.at_least(env.counts(env.G.p).releases.stream_sync or 0, env.mark.syncs + 1,
          "p's releases at s:sync()")
      end,
      done = "threshold 0: the sync gave all 64 MiB back; the next allocation must map them again",
    },
    {
      say = "Raise the threshold so the pool keeps its memory (p.release_threshold = \"max\"),\n"
        .. "then do the same: allocate 64 MiB on s, free, synchronise.\n"
        .. "Watch p's line: reserved stays at 64.00 MiB, and no line says released.",
      hint = "p.release_threshold = \"max\"; b = p:alloc(\"64 MiB\", s); b:free(); s:sync()",
      solution = 'p.release_threshold = "max"; b = p:alloc("64 MiB", s); b:free(); s:sync()',
      start = function(env) env.mark.since = allocs_so_far() end,
      check = function(env, expect)
        local st = env.stats(env.G.p)
        env.need(allocated(env.G.p, MiB64, env.mark.since), "an allocation of 64 MiB from p")
        env.need(st.used == 0 and st.pending == 0, "the free, then s:sync()")
        expect.at_least(st.reserved, MiB64, "p's reserved after the sync")
      end,
      done = "the pool kept its 64 MiB through the sync",
    },
    {
      say = "Allocate 64 MiB on s again, as c. The pool should not grow: watch c's line say\n"
        .. "\"reused b's memory\", and reserved on p's line not move.",
      hint = "c = p:alloc(\"64 MiB\", s)",
      solution = 'c = p:alloc("64 MiB", s)',
      start = function(env) env.mark.reserved = env.stats(env.G.p).reserved end,
      check = function(env, expect)
        local c = env.get("c", "poolsh.Buffer")
        expect.equal(c.size, MiB64, "c's size")
        expect.reused(c)
        expect.stats(env.G.p, { reserved = env.mark.reserved })
      end,
      done = "reused, nothing mapped: this is the loop that runs 25x faster on an H100",
    },
    {
      say = "Give the memory back without touching the threshold: free c, synchronise s, then p:trim(0).\n"
        .. "Watch p's line: reserved -64.00 MiB, and \"p:trim() released 64.00 MiB\".",
      hint = "trim cannot give back a block whose free is pending: c:free(); s:sync(); p:trim(0)",
      solution = 'c:free(); s:sync(); p:trim(0)',
      start = function(env) env.mark.trims = env.counts(env.G.p).releases.trim or 0 end,
      check = function(env, expect)
        env.freed("c")
        env.need(env.stats(env.G.p).pending == 0, "s:sync()")
        env.need((env.counts(env.G.p).releases.trim or 0) > env.mark.trims, "p:trim(0)")
        expect.equal(env.G.p.release_threshold, math.huge, "p's release threshold (untouched: max)")
        expect.stats(env.G.p, { reserved = 0 })
      end,
      done = "trim gives back what the threshold keeps, when you choose (CuPy's free_all_blocks, PyTorch's empty_cache)",
    },
  },
}
