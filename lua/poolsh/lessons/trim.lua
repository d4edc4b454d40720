-- Lesson 4: what trim gives back (whole idle chunks only), and the peaks.
local poolsh = require "poolsh"

local MiB16 = 16 * 1024 * 1024

return {
  name = "trim",
  title = "Trim and high-water marks",
  summary = "trim frees whole idle chunks only; the peaks survive it until reset",
  intro = "You have a pool p (threshold max) and a stream s.",
  setup = function(env)
    env.G.p = poolsh.pool { release_threshold = "max" }
    env.G.s = poolsh.stream()
    env.G.p.name, env.G.s.name = "p", "s"
  end,
  steps = {
    {
      say = "Allocate eight 16 MiB blocks on s into a table bufs:\n"
        .. "  bufs = {}; for i = 1, 8 do bufs[i] = p:alloc(\"16 MiB\", s) end\n"
        .. "Watch p's line: used +128.00 MiB, reserved in whole chunks;\n"
        .. "then the 8 allocations.",
      hint = "bufs must be a global table holding 8 live buffers of 16 MiB",
      solution = 'bufs = {}; for i = 1, 8 do bufs[i] = p:alloc("16 MiB", s) end',
      check = function(env, expect)
        local bufs = env.get("bufs", "table")
        env.need(#bufs >= 8, "eight buffers in bufs")
        expect.equal(#bufs, 8, "#bufs")
        for i = 1, 8 do
          local b, what = bufs[i], ("bufs[%d]"):format(i)
          local mt = type(b) == "userdata" and getmetatable(b)
          expect.equal(mt and mt.__name or type(b), "poolsh.Buffer", what)
          expect.truthy(b.live, what .. " live")
          expect.equal(b.pool, env.G.p, what .. "'s pool")
          expect.equal(b.size, MiB16, what .. "'s size")
        end
        expect.stats(env.G.p, { used = 8 * MiB16 })
      end,
      done = "128 MiB used; reserved is whole chunks around them",
    },
    {
      say = "Free every block but bufs[1], and synchronise s. Reserved stays (threshold max):\n"
        .. "watch p's line, where used drops to 16.00 MiB and reserved does not move.",
      hint = "for i = 2, 8 do bufs[i]:free() end; s:sync()",
      solution = 'for i = 2, 8 do bufs[i]:free() end; s:sync()',
      check = function(env, expect)
        local st = env.stats(env.G.p)
        env.need(st.used <= MiB16, "bufs[2] to bufs[8] freed")
        env.need(st.pending == 0, "s:sync()")
        expect.equal(env.G.bufs[1] and env.G.bufs[1].live, true, "bufs[1] live")
        expect.stats(env.G.p, { used = MiB16 })
      end,
      done = "used is 16 MiB, reserved did not move",
    },
    {
      say = "Give back what you can: p:trim(0). How much stays reserved, and why?\n"
        .. "Watch p's line: the reserved delta and \"p:trim() released ...\".",
      hint = "p:trim(0)",
      solution = 'p:trim(0)',
      start = function(env)
        env.mark.reserved = env.stats(env.G.p).reserved
        env.mark.trims = env.counts(env.G.p).releases.trim or 0
      end,
      check = function(env, expect)
        env.need((env.counts(env.G.p).releases.trim or 0) > env.mark.trims, "p:trim(0)")
        local r = env.stats(env.G.p).reserved
        expect.at_most(r, env.mark.reserved // 2, "p's reserved after trim")
        expect.at_least(r, MiB16, "p's reserved after trim")
      end,
      done = "the chunk under bufs[1] stays: trim gives back whole idle chunks only",
    },
    {
      say = "p:stats().used_high still says 128 MiB. Reset the peaks while bufs[1] is live: p:reset_high().\n"
        .. "No live line moves (the marks are no counter):\n"
        .. "watch used_high in print(p:stats()).\n"
        .. "What do they restart from?",
      hint = "p:reset_high(), then look at p:stats().used_high",
      solution = 'p:reset_high()',
      check = function(env, expect)
        expect.stats(env.G.p, { used_high = MiB16 })
      end,
      done = "the peaks restart from the current values, not from 0",
    },
    {
      say = "Free bufs[1], synchronise, and trim(0) again: everything goes back.\n"
        .. "Watch p's line: reserved 0 B, and \"p:trim() released\" the last chunk.",
      hint = "bufs[1]:free(); s:sync(); p:trim(0)",
      solution = 'bufs[1]:free(); s:sync(); p:trim(0)',
      start = function(env) env.mark.trims = env.counts(env.G.p).releases.trim or 0 end,
      check = function(env, expect)
        local st = env.stats(env.G.p)
        env.need(st.used == 0 and st.pending == 0, "bufs[1]:free(), then s:sync()")
        env.need((env.counts(env.G.p).releases.trim or 0) > env.mark.trims, "p:trim(0)")
        expect.equal(env.G.p.release_threshold, math.huge, "p's release threshold (untouched: max)")
        expect.stats(env.G.p, { reserved = 0, used = 0 })
      end,
      done = "reserved 0: nothing live, nothing pending, nothing kept",
    },
  },
}
