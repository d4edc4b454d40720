-- Lesson 5: pageable memory needs registering before kernels reach it;
-- a pinned host pool keeps its memory until trimmed.
local poolsh = require "poolsh"

local MiB64 = 64 * 1024 * 1024
local UNFILLED = "\xA5\x5A"   -- pag's first bytes before step 1's fill

-- The operations queued on the streams a fill of pag may use: s and the
-- legacy default stream (poolsh.fill's default for host memory).
local function ops(env)
  return poolsh.core.stream_state(env.G.s) + poolsh.core.stream_state(poolsh.default_stream())
end

return {
  name = "host_memory",
  title = "Host memory",
  summary = "registering pageable memory; a pinned host pool keeps its memory until trimmed",
  intro = "You have a stream s, a 16 MiB pageable host buffer pag, and a host pool hp\n"
    .. "(pinned host memory, release threshold max, as CuPy's pinned memory pool keeps it).",
  setup = function(env)
    local G = env.G
    G.s = poolsh.stream()
    G.pag = poolsh.pageable("16 MiB")
    G.hp = poolsh.pool { location = "host", release_threshold = "max" }
    G.s.name, G.pag.name, G.hp.name = "s", "pag", "hp"
  end,
  steps = {
    {
      say = "Kernels cannot reach pageable memory: try poolsh.fill(pag, 1, s) and read the error.\n"
        .. "Then register pag (poolsh.register(pag)) and fill it.\n"
        .. "No pool line moves (pageable memory is no pool's): watch the error\n"
        .. "name what was wrong, then the fill pass.",
      hint = "poolsh.register(pag); poolsh.fill(pag, 1, s)",
      solution = "poolsh.register(pag); poolsh.fill(pag, 1, s)",
      start = function(env)
        env.mark.ops = ops(env)
        -- two unequal bytes a fill of pag (any value, all its bytes) makes equal
        env.G.pag:write(0, UNFILLED)
      end,
      check = function(env, expect)
        local pag = env.get("pag", "poolsh.Buffer")
        env.need(pag.registered, "poolsh.register(pag)")
        -- a fill of unregistered memory raises before it queues anything
        env.need(ops(env) > env.mark.ops, "poolsh.fill(pag, 1, s) after registering")
        if pag:read(0, 2) == UNFILLED then
          -- the work queued may be a fill of pag not yet run: wait for it
          env.G.s:sync(); poolsh.default_stream():sync()
        end
        env.need(pag:read(0, 2) ~= UNFILLED, "a fill of pag itself: poolsh.fill(pag, 1, s)")
      end,
      done = "registered (cudaHostRegister): page-locked, so kernels and fast copies reach it",
    },
    {
      say = "Allocate 64 MiB from the host pool hp on s as h, free it, and synchronise s.\n"
        .. "Watch hp's line: reserved stays at 64.00 MiB, used 0 B (peak 64.00 MiB),\n"
        .. "and no line says released.",
      hint = "h = hp:alloc(\"64 MiB\", s); h:free(); s:sync()",
      solution = 'h = hp:alloc("64 MiB", s); h:free(); s:sync()',
      check = function(env, expect)
        local st = env.stats(env.G.hp)
        env.need(env.counts(env.G.hp).allocs >= 1, "an allocation from hp")
        env.need(st.used == 0 and st.pending == 0, "the free, then s:sync()")
        expect.at_least(st.reserved, MiB64, "hp's reserved after the sync")
      end,
      done = "nothing is allocated, yet 64 MiB of pinned host memory stay reserved",
    },
    {
      say = "Give that memory back to the host: hp:trim(0) (CuPy: free_all_blocks()).\n"
        .. "Watch hp's line: reserved 0 B, and \"hp:trim() released 64.00 MiB\".",
      hint = "hp:trim(0)",
      solution = "hp:trim(0)",
      start = function(env) env.mark.trims = env.counts(env.G.hp).releases.trim or 0 end,
      check = function(env, expect)
        env.need((env.counts(env.G.hp).releases.trim or 0) > env.mark.trims, "hp:trim(0)")
        expect.stats(env.G.hp, { reserved = 0 })
      end,
      done = "reserved 0: the pinned pages are the host's again",
    },
  },
}
