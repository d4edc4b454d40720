-- The observation side at scale: 100,000 live blocks and as many holes.
-- The ledger, p:stats(), the live lines and show() cost O(log n) or O(1)
-- per changed block, and their output stays bounded (docs/live.md). One
-- time is asserted, as a generous ratio within one run: an alloc+free pair
-- among N young holes against the same among 1,000 (the best of several
-- timings each); scripts/bench_scale.lua is the benchmark.
-- POOLSH_SCALE_BLOCKS runs it at another size.
local poolsh = require "poolsh"
local H = require "helpers"

local N = math.tointeger(tonumber(os.getenv("POOLSH_SCALE_BLOCKS") or "")) or 100000
local SIZE = 4096

-- 2N blocks of 1-7 KiB on s, every other one freed (bench_scale's fill):
-- the list, false where a hole is.
local function fill_with_holes(p, s)
  local blocks, seed = {}, 12345
  for i = 1, 2 * N do
    seed = (seed * 1103515245 + 12345) % 2147483648
    blocks[i] = p:alloc(1024 + seed % (6 * 1024 + 1), s)
  end
  for i = 1, 2 * N, 2 do blocks[i]:free(); blocks[i] = false end
  return blocks
end

describe("at scale (" .. N .. " blocks)", function()
  it("counts, estimates and shows many live blocks and holes", function()
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    local bufs = {}
    for i = 1, N do bufs[i] = p:alloc(SIZE, s) end
    local st = p:stats()
    assert.equal(N * SIZE, st.live)
    assert.equal(N * SIZE, st.used)
    for i = 1, N, 2 do bufs[i]:free() end
    local half = (N + 1) // 2
    st = p:stats()
    assert.equal((N - half) * SIZE, st.live)
    assert.equal(half * SIZE, st.pending)
    assert.equal(half, st.pending_count)
    assert.equal(st.live, st.used)

    s:sync()
    st = p:stats()
    assert.equal(0, st.pending)
    assert.equal(0, st.pending_count)
    -- the estimate, from the addresses themselves
    local lo, spans = math.huge, {}
    for i = 1, N do
      lo = math.min(lo, bufs[i].addr)
      if i % 2 == 0 then spans[#spans + 1] = bufs[i].addr end
    end
    table.sort(spans)
    local at, top, free, largest = lo, lo + st.reserved, 0, 0
    for i = 1, #spans + 1 do
      local next = math.min(spans[i] or top, top)
      if next > at then free, largest = free + next - at, math.max(largest, next - at) end
      if spans[i] then at = math.max(at, spans[i] + SIZE) end
    end
    assert.equal(free, st.free)
    assert.equal(largest, st.largest_free)

    -- bounded output: the live lines, show() and the leak report
    poolsh.watch(true)
    local more = {}
    for i = 1, 100 do more[i] = p:alloc(SIZE, s) end
    local lines = poolsh.live.lines()
    poolsh.watch(false)
    assert.is_true(#lines <= 10)
    assert.matches("100 allocations", table.concat(lines, "\n"), 1, true)   -- summarised
    local shown = poolsh.live.show_lines()
    assert.is_true(#shown < 2 * poolsh.live.show_max + 20)
    assert.matches(("... and %d more buffers"):format(N - half + 100 - poolsh.live.show_max),
                   table.concat(shown, "\n"), 1, true)
    local leaks = poolsh.live.leak_lines()
    assert.is_true(#leaks <= poolsh.live.show_max + 3)
    assert.matches(("^poolsh: %d buffers still live"):format(N - half + 100), leaks[1])

    for i = 2, N, 2 do bufs[i]:free() end
    for i = 1, 100 do more[i]:free() end
    s:sync()
    st = p:stats()
    assert.equal(0, st.live)
    assert.equal(0, st.pending)
    assert.equal(st.reserved, st.free)
    assert.equal(0, #poolsh.leaks())
    p:destroy()
  end)

  it("completes frees across many pools and short-lived streams, and names reuses", function()
    -- Each stream frees one block and is destroyed before the sync that
    -- completes it; half the pools are destroyed with done blocks left.
    -- On a GPU each pool maps at least 32 MiB: fewer pools there.
    local NP = math.max(N // (H.is_sim() and 50 or 1000), 10)
    local pools, freed = {}, {}
    for i = 1, NP do pools[i] = poolsh.pool { release_threshold = "max" } end
    for i = 1, NP do
      local s = poolsh.stream()
      local b = pools[i]:alloc(SIZE, s)
      freed[i] = { id = b.id, addr = b.addr }
      b:free()
      s:destroy()
    end
    for i = 1, NP do assert.equal(1, pools[i]:stats().pending_count) end
    poolsh.sync()
    for i = 1, NP do assert.equal(0, pools[i]:stats().pending_count) end
    for i = 1, NP, 2 do pools[i]:destroy() end
    poolsh.sync()
    local s = poolsh.stream()
    for i = 2, NP, 2 do
      local b = pools[i]:alloc(SIZE, s)
      if b.addr == freed[i].addr then
        assert.equal(freed[i].id, b.reused_from)
        assert.equal("host synchronisation", b.reuse_rule)
      else
        assert.is_nil(b.reused_from)
      end
      if H.is_sim() then assert.equal(freed[i].addr, b.addr) end
      b:free()
    end
    s:sync()
    for i = 2, NP, 2 do
      assert.equal(0, pools[i]:stats().live)
      pools[i]:destroy()
    end
  end)

  it("runs alloc+free pairs among 100k young holes, each pair taking a hole", function()
    -- N live blocks of 1-7 KiB and N holes freed on s with no search
    -- since (young, as in a running workload), then 2,000 pairs in C and
    -- 2,000 from Lua. What a pair costs is counted, not timed, by
    -- tests/c/test_sim_scale.c (the young search's visits); the figures
    -- are scripts/bench_scale.lua's (docs/performance.md).
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    local blocks = fill_with_holes(p, s)
    local reserved, live = p:stats().reserved, p:stats().live
    poolsh.bench_c(p, s, SIZE, 2000)
    for _ = 1, 2000 do p:alloc(SIZE, s):free() end
    assert.equal(reserved, p:stats().reserved)   -- the pairs took holes
    assert.equal(live, p:stats().live)
    for i = 2, 2 * N, 2 do blocks[i]:free() end
    s:sync()
    p:destroy()
    s:destroy()
  end)

  it("allocates on one stream among 100k live blocks while another holds pending frees", function()
    -- N live blocks and N holes retired by a sync, then N/2 of the blocks
    -- freed on stream a behind a long spin (pending: b and c may not use
    -- them), then 2,000 allocations on b freed on c and 1,000 from C: each
    -- is a search of the pool's space, counted (not timed) by
    -- tests/c/test_sim_scale.c (it walked every record before issue 20).
    -- The sim's search only: on a GPU the hour-long spin would run.
    if not H.is_sim() then pending("the sim's search; its spin would run for an hour on a GPU") return end
    local s, a, b, c = poolsh.stream(), poolsh.stream(), poolsh.stream(), poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    local blocks = fill_with_holes(p, s)
    s:sync()
    poolsh.spin(a, "3600 s")
    for i = 2, 2 * N, 4 do blocks[i]:free(a); blocks[i] = false end
    local reserved = p:stats().reserved
    for _ = 1, 2000 do p:alloc(SIZE, b):free(c) end
    poolsh.bench_fill(p, b, 500)()
    assert.equal(reserved, p:stats().reserved)   -- retired holes, never a's pending frees
    assert.is_true(p:stats().pending > 0)        -- a's frees still pending
    for i = 4, 2 * N, 4 do blocks[i]:free() end
    a:sync()
    p:destroy()
    for _, x in ipairs { s, a, b, c } do x:destroy() end
  end)

  it("exits cleanly with every block still live", function()
    local script = os.tmpname()
    local f = assert(io.open(script, "w"))
    f:write(([[
      local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
      keep = {}
      for i = 1, %d do keep[i] = p:alloc(%d, s) end
      for i = 1, %d, 2 do keep[i]:free(); keep[i] = nil end
    ]]):format(N, SIZE, N))
    f:close()
    local out, err, code = H.poolsh_cmd("--backend=" .. H.backend() .. " " .. H.quote(script))
    os.remove(script)
    assert.equal(0, code)
    assert.equal("", out)
    assert.matches(("^poolsh: %d buffers still live at exit"):format(N // 2), err)
    local _, nlines = err:gsub("\n", "")
    assert.is_true(nlines <= poolsh.live.show_max + 3)
  end)
end)
