-- Lesson 2: a block freed on s1 serves s2 only once s2 is ordered after
-- the free: an event recorded after it, or a host synchronisation.
local poolsh = require "poolsh"

local SIZE = "16 MiB"

-- The operations queued on stream s so far (kernels, frees, records).
local function ops(s) return (poolsh.core.stream_state(s)) end

local function on(env, expect, name, stream)
  local b = env.get(name, "poolsh.Buffer")
  expect.equal(b.stream, env.G[stream], name .. "'s stream")
  expect.equal(b.size, poolsh.size(SIZE), name .. "'s size")
  return b
end

return {
  name = "cross_stream",
  title = "Cross-stream reuse",
  summary = "a block freed on s1 is reused by s2 only after an event or a host sync",
  intro = "You have a pool p, streams s1 and s2, and a = 16 MiB allocated on s1.\n"
    .. "p's opportunistic reuse is off, so only the order you create counts\n"
    .. "(with it on, the GPU may reuse a block whose free happens to have finished).",
  setup = function(env)
    local G = env.G
    G.p = poolsh.pool { release_threshold = "max" }
    G.p.opportunistic = false
    G.s1, G.s2 = poolsh.stream(), poolsh.stream()
    G.p.name, G.s1.name, G.s2.name = "p", "s1", "s2"
    G.a = G.p:alloc(SIZE, G.s1)
  end,
  steps = {
    {
      say = "Queue work on s1 (poolsh.spin(s1, \"100 ms\")), free a, then allocate 16 MiB on s2 as b.\n"
        .. "Watch b's line: \"fresh memory\", and why not a's (its free is pending on s1).",
      hint = "poolsh.spin(s1, \"100 ms\"); a:free(); b = p:alloc(\"16 MiB\", s2)",
      solution = 'poolsh.spin(s1, "100 ms"); a:free(); b = p:alloc("16 MiB", s2)',
      start = function(env) env.mark.ops = ops(env.G.s1) end,
      check = function(env, expect)
        env.freed("a")
        -- the work and the free: two operations queued on s1 this step
        env.need(ops(env.G.s1) - env.mark.ops >= 2, "work queued on s1 (poolsh.spin(s1, \"100 ms\"))")
        expect.fresh(on(env, expect, "b", "s2"))
      end,
      done = "fresh: s2 has no order with s1's free, so the pool could not give it a's block",
    },
    {
      say = "Now order s2 after a's free: record an event on s1 (e = s1:record()), make s2 wait\n"
        .. "for it (s2:wait(e)), then allocate 16 MiB on s2 as c. It must reuse a's memory:\n"
        .. "watch c's line say \"reused a's memory (event dependency)\".",
      hint = "e = s1:record(); s2:wait(e); c = p:alloc(\"16 MiB\", s2)   -- the event after the free",
      solution = 'e = s1:record(); s2:wait(e); c = p:alloc("16 MiB", s2)',
      check = function(env, expect)
        local c = on(env, expect, "c", "s2")
        expect.reused(c, "event dependency")
        expect.equal(c.reused_from, env.G.a and env.G.a.id, "c reused the memory of buffer")
      end,
      done = "reused by event dependency: s2's work now runs after the free",
    },
    {
      say = "Free c on s2 behind work (poolsh.spin(s2, \"50 ms\"); c:free()), synchronise s2 on the host\n"
        .. "(s2:sync()), then allocate 16 MiB on s1 as d.\n"
        .. "Watch p's line (pending back to 0 B at the sync) and d's:\n"
        .. "\"reused c's memory (host synchronisation)\".",
      hint = "the host sync must come before the allocation: s2:sync(); d = p:alloc(\"16 MiB\", s1)",
      solution = 'poolsh.spin(s2, "50 ms"); c:free(); s2:sync(); d = p:alloc("16 MiB", s1)',
      start = function(env) env.mark.ops = ops(env.G.s2) end,
      check = function(env, expect)
        env.freed("c")
        env.need(ops(env.G.s2) - env.mark.ops >= 2, "work queued on s2 (poolsh.spin(s2, \"50 ms\"))")
        local d = on(env, expect, "d", "s1")
        expect.reused(d, "host synchronisation")
        expect.reused_from(d, env.G.c)
      end,
      done = "reused by host synchronisation: the host saw the free complete",
    },
    {
      say = "The trap: allocate x (16 MiB) on s1, record e2 = s1:record() BEFORE freeing x, then free x\n"
        .. "behind work (poolsh.spin(s1, \"100 ms\"); x:free()), s2:wait(e2), and allocate 16 MiB on s2 as y.\n"
        .. "Will y reuse x's memory? Watch y's line: what does it say about the event?",
      hint = "the event must be recorded before x:free(); then y = p:alloc(\"16 MiB\", s2)",
      solution = 'x = p:alloc("16 MiB", s1); e2 = s1:record(); poolsh.spin(s1, "100 ms"); x:free(); '
        .. 's2:wait(e2); y = p:alloc("16 MiB", s2)',
      check = function(env, expect)
        local x = env.G.x
        env.need(x and x.live == false, "x allocated and freed")
        env.get("e2", "poolsh.Event")
        local y = on(env, expect, "y", "s2")
        expect.fresh(y)
        -- fresh because s2 waited on e2, recorded before x's free (not for want of any wait)
        local why = ("waited on an event recorded on s1 before %s's free"):format(x.name)
        expect.equal((y.why_fresh or ""):find(why, 1, true) ~= nil, true,
          "y fresh because s2:wait(e2) came before x's free (y.why_fresh: " .. tostring(y.why_fresh) .. ")")
      end,
      done = "fresh: an event recorded before the free does not cover it (the record_stream bug class)",
    },
  },
}
