-- Lesson 1: a stream reuses its own frees at once, no synchronisation.
local poolsh = require "poolsh"

local MiB4 = 4 * 1024 * 1024

-- The operations queued on stream s so far (kernels, frees, records).
local function ops(s) return (poolsh.core.stream_state(s)) end

return {
  name = "same_stream",
  title = "Same-stream reuse",
  summary = "a block freed on a stream is reused by that stream at once",
  intro = "You have a pool p (release threshold max: it keeps its memory) and a stream s.",
  setup = function(env)
    env.G.p = poolsh.pool { release_threshold = "max" }
    env.G.s = poolsh.stream()
    env.G.p.name, env.G.s.name = "p", "s"   -- the live lines name them as the globals
  end,
  steps = {
    {
      say = "Allocate 4 MiB from p on stream s and call it a:  a = p:alloc(\"4 MiB\", s)\n"
        .. "Watch p's line: reserved grows by a whole chunk, used by 4 MiB;\n"
        .. "and a's line: \"fresh memory\".",
      hint = "p:alloc(size, stream) returns a Buffer; assign it to the global a",
      solution = 'a = p:alloc("4 MiB", s)',
      check = function(env, expect)
        local a = env.get("a", "poolsh.Buffer")
        expect.equal(a.pool, env.G.p, "a's pool")
        expect.equal(a.size, MiB4, "a's size")
        expect.equal(a.stream, env.G.s, "a's stream")
      end,
      done = "fresh memory: the pool mapped a chunk for it",
    },
    {
      say = "Queue 100 ms of work on s (poolsh.spin(s, \"100 ms\")), then free a. Do not synchronise:\n"
        .. "the free is queued behind the work, so the pool counts it as pending.\n"
        .. "Watch p's line: used -4.00 MiB, pending +4.00 MiB; reserved does not move.",
      hint = "poolsh.spin(s, \"100 ms\"); a:free()   -- no s:sync()",
      solution = 'poolsh.spin(s, "100 ms"); a:free()',
      start = function(env) env.mark.ops = ops(env.G.s) end,
      check = function(env, expect)
        local a = env.freed("a")
        -- a's own block, not p's totals (a collected buffer's free counts there too)
        local pending = env.pending_bytes(a)
        env.stuck(pending == 0, "a's free is no longer pending: it completed or its memory was reused")
        -- the work and the free: two operations queued on s this step
        env.need(ops(env.G.s) - env.mark.ops >= 2, "work queued on s (poolsh.spin(s, \"100 ms\"))")
        expect.equal(pending, a.size, "a's pending bytes")
      end,
      done = "used dropped at once; the 4 MiB are pending until the GPU runs the free",
    },
    {
      say = "Allocate 4 MiB on s again, as b, still without synchronising. Does it reuse a's memory?\n"
        .. "Watch b's line: \"reused a's memory (stream order)\", and pending back to 0 B.",
      hint = "b = p:alloc(\"4 MiB\", s) -- on the same stream s; a sync in between would hide the point",
      solution = 'b = p:alloc("4 MiB", s)',
      check = function(env, expect)
        local b = env.get("b", "poolsh.Buffer")
        expect.equal(b.size, MiB4, "b's size")
        expect.reused(b, "stream order")
        expect.reused_from(b, env.G.a)
      end,
      done = "reused by stream order: work on s runs after the free, so the block is safe for s",
    },
    {
      say = "Free b and allocate 4 MiB on s again, ten times in a loop (keep the last one in b).\n"
        .. "The pool must not grow. Watch the summary of the 10 allocations\n"
        .. "(stream order 10) and p's line, where reserved does not move.",
      hint = "for i = 1, 10 do b:free(); b = p:alloc(\"4 MiB\", s) end",
      solution = 'for i = 1, 10 do b:free(); b = p:alloc("4 MiB", s) end',
      start = function(env)
        env.mark.reserved = env.stats(env.G.p).reserved
        env.mark.reuses = env.counts(env.G.p).reuses["stream order"]
      end,
      check = function(env, expect)
        local p = env.G.p
        env.get("b", "poolsh.Buffer")
        env.need(env.counts(p).reuses["stream order"] - env.mark.reuses >= 10,
          "ten reuses by stream order")
        expect.stats(p, { reserved = env.mark.reserved })
      end,
      done = "ten reuses, no growth: this is why a training loop's allocations are cheap",
    },
  },
}
