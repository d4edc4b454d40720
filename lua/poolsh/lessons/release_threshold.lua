-- Lesson 3: the release threshold decides what a pool keeps at a sync.
local poolsh = require "poolsh"

local MiB64 = 64 * 1024 * 1024

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
        .. "  b = p:alloc(\"64 MiB\", s); b:free(); s:sync()\nWatch reserved.",
      hint = "the sync is what lets the pool release: s:sync() after the free",
      solution = 'b = p:alloc("64 MiB", s); b:free(); s:sync()',
      check = function(env, expect)
        local st = env.stats(env.G.p)
        env.need(env.counts(env.G.p).allocs >= 1, "an allocation")
        env.need(st.used == 0 and st.pending == 0, "the free, then s:sync()")
        expect.stats(env.G.p, { reserved = 0 })
      end,
      done = "threshold 0: the sync gave all 64 MiB back; the next allocation must map them again",
    },
    {
      say = "Raise the threshold so the pool keeps its memory (p.release_threshold = \"max\"),\n"
        .. "then do the same: allocate 64 MiB on s, free, synchronise.",
      hint = "p.release_threshold = \"max\"; b = p:alloc(\"64 MiB\", s); b:free(); s:sync()",
      solution = 'p.release_threshold = "max"; b = p:alloc("64 MiB", s); b:free(); s:sync()',
      start = function(env) env.mark.allocs = env.counts(env.G.p).allocs end,
      check = function(env, expect)
        local st = env.stats(env.G.p)
        env.need(env.counts(env.G.p).allocs > env.mark.allocs, "an allocation")
        env.need(st.used == 0 and st.pending == 0, "the free, then s:sync()")
        expect.at_least(st.reserved, MiB64, "p's reserved after the sync")
      end,
      done = "the pool kept its 64 MiB through the sync",
    },
    {
      say = "Allocate 64 MiB on s again, as c. The pool should not grow: watch for the reuse.",
      hint = "c = p:alloc(\"64 MiB\", s)",
      solution = 'c = p:alloc("64 MiB", s)',
      start = function(env) env.mark.reserved = env.stats(env.G.p).reserved end,
      check = function(env, expect)
        expect.reused(env.get("c", "poolsh.Buffer"))
        expect.stats(env.G.p, { reserved = env.mark.reserved })
      end,
      done = "reused, nothing mapped: this is the loop that runs 25x faster on an H100",
    },
    {
      say = "Give the memory back without touching the threshold: free c, synchronise s, then p:trim(0).",
      hint = "trim cannot give back a block whose free is pending: c:free(); s:sync(); p:trim(0)",
      solution = 'c:free(); s:sync(); p:trim(0)',
      start = function(env) env.mark.trims = env.counts(env.G.p).releases.trim or 0 end,
      check = function(env, expect)
        env.freed("c")
        env.need(env.stats(env.G.p).pending == 0, "s:sync()")
        env.need((env.counts(env.G.p).releases.trim or 0) > env.mark.trims or env.stats(env.G.p).reserved == 0,
          "p:trim(0)")
        expect.stats(env.G.p, { reserved = 0 })
      end,
      done = "trim gives back what the threshold keeps, when you choose (CuPy's free_all_blocks, PyTorch's empty_cache)",
    },
  },
}
