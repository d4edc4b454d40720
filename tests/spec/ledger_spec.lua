-- The ledger as an interval map (issue 18): an allocation takes exactly
-- the bytes it covers from every freed extent it touches, names each
-- buffer whose memory it reused, and the counters, the map and the live
-- lines all read that one picture: used + pending never exceed reserved,
-- extents never overlap.
local poolsh = require "poolsh"
local H = require "helpers"
local live = poolsh.live
local MiB = 1024 * 1024

local function joined(lines) return table.concat(lines, "\n") end

-- Every invariant of the picture for pool p: extents in address order
-- never overlap; live bytes are the live buffers' bytes and used (the
-- pool's own count); pending bytes are the pending extents' bytes, and
-- used + pending <= reserved. Returns the extents (done ones too).
local function check(p, label)
  local st = p:stats()
  local blocks = poolsh.core.blocks(p, true)
  local live_b, pending_b, last_end = 0, 0, nil
  for i, b in ipairs(blocks) do
    assert(b.size >= 0, label .. ": a negative extent")
    if last_end then
      assert(b.addr >= last_end, ("%s: extent %d (b%d at %#x) overlaps the one before it (ending at %#x)")
        :format(label, i, b.buffer, b.addr, last_end))
    end
    last_end = b.addr + b.size
    if b.pending then pending_b = pending_b + b.size
    elseif not b.done then live_b = live_b + b.size end
  end
  assert.equal(st.used, live_b, label .. ": used is the live extents' bytes")
  assert.equal(st.live, live_b, label .. ": live is the live extents' bytes")
  assert.equal(st.pending, pending_b, label .. ": pending is the pending extents' bytes")
  assert(st.used + st.pending <= st.reserved,
         ("%s: used %d + pending %d > reserved %d"):format(label, st.used, st.pending, st.reserved))
  return blocks
end

describe("the ledger's interval map", function()
  before_each(function() live.width = 200; live.color = false end)
  after_each(function() poolsh.watch(false); live.width = nil end)

  it("keeps pending within reserved and names every buffer an allocation took memory from", function()
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    poolsh.watch(true)
    local a = p:alloc("16 MiB", s)
    local b = p:alloc("40 MiB", s)
    poolsh.spin(s, "1 ms"); a:free(); b:free()
    check(p, "after the frees")
    live.lines()
    local c = p:alloc("40 MiB", s)
    local d = p:alloc("8 MiB", s)
    local lines = joined(live.lines())
    local st = p:stats()
    assert.equal(64 * MiB, st.reserved)
    assert.equal(48 * MiB, st.used)
    assert.equal(8 * MiB, st.pending)                 -- 16 MiB of b2 left, then 8 of them
    assert.matches("pending 8.00 MiB", lines, 1, true)
    -- c covers all of a's block and the first 24 MiB of b's
    assert.equal(a.id, c.reused_from)
    assert.same({ a.id, b.id }, { c.sources[1].buffer, c.sources[2].buffer })
    assert.same({ 16 * MiB, 24 * MiB }, { c.sources[1].bytes, c.sources[2].bytes })
    assert.equal("stream order", c.sources[2].rule)
    assert.matches(("b%d 40.00 MiB from %s on %s: reused b%d's and b%d's memory (stream order)")
      :format(c.id, p.name, s.name, a.id, b.id), lines, 1, true)
    -- d lies inside b's freed range: a reuse of b's memory, never "placed elsewhere"
    assert.equal(b.id, d.reused_from)
    assert.is_nil(d.why_fresh)
    assert.equal(1, #d.sources)
    assert.matches(("b%d 8.00 MiB from %s on %s: reused b%d's memory (stream order)")
      :format(d.id, p.name, s.name, b.id), lines, 1, true)
    assert.not_matches("placed the allocation elsewhere", lines, 1, true)
    check(p, "after c and d")

    poolsh.spin(s, "1 ms"); c:free(); d:free()
    check(p, "after freeing c and d")
    st = p:stats()
    assert.equal(0, st.used)
    assert.equal(56 * MiB, st.pending)                -- b3 40 + b4 8 + what is left of b2, 8
    -- the map: no overlap, b2 only where nothing took its bytes
    local map = joined(live.map_lines(p))
    assert.matches("+48.00 MiB    8.00 MiB  pending b" .. b.id, map, 1, true)
    assert.not_matches("+16.00 MiB   40.00 MiB  pending b" .. b.id, map, 1, true)
    s:sync()
    check(p, "after the sync")
    assert.equal(0, p:stats().pending)                       -- after a sync nothing is pending
  end)

  it("takes bytes from the middle of a freed block, leaving both ends with their history", function()
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    local a = p:alloc("4 MiB", s)
    local big = p:alloc("24 MiB", s)
    local z = p:alloc("4 MiB", s)
    a:free()                                          -- a free run below big
    big:free()                                        -- joins a's run: 28 MiB from 0
    local c = p:alloc("6 MiB", s)                     -- carved at 0: a's 4 MiB and 2 MiB of big
    assert.same({ a.id, big.id }, { c.sources[1].buffer, c.sources[2].buffer })
    local blocks = check(p, "after c")
    local rest = 0
    for _, x in ipairs(blocks) do if x.buffer == big.id then rest = rest + x.size end end
    assert.equal(22 * MiB, rest)                      -- what c left of big stays pending, as big's
    z:free(); c:free(); s:sync()
    check(p, "after the sync")
  end)

  it("keeps the invariants through many allocations and frees on two streams", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    local held, n = {}, 0
    math.randomseed(18)
    for step = 1, 400 do
      local r = math.random()
      if r < 0.5 or #held == 0 then
        local s = math.random() < 0.5 and s1 or s2
        held[#held + 1] = p:alloc(math.random(1, 12) * 512 * 1024 + math.random(0, 1000), s)
      elseif r < 0.9 then
        table.remove(held, math.random(#held)):free(math.random() < 0.3 and s2 or nil)
      elseif r < 0.95 then
        s1:sync()
      else
        poolsh.spin(s2, "0.1 ms")
      end
      check(p, "step " .. step)
      n = n + 1
    end
    for _, b in ipairs(held) do b:free() end
    poolsh.sync()
    check(p, "after the device sync")
    assert.equal(0, p:stats().pending)
  end)
end)

describe("when frees complete", function()
  local p
  before_each(function() p = poolsh.pool { release_threshold = "max" } end)
  after_each(function() p:destroy() end)

  it("a sync of the legacy stream completes every blocking stream's frees", function()
    local s = poolsh.stream()                        -- blocking, as CUDA's default
    assert.is_true(s.blocking)
    p:alloc("4 MiB", s):free()
    poolsh.default_stream():sync()
    assert.equal(0, p:stats().pending)
  end)

  it("a sync of a stream that waited on an event completes the frees before it", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    p:alloc("4 MiB", s1):free()
    local e = poolsh.event()
    e:record(s1)
    s2:wait(e)
    s2:sync()
    assert.equal(0, p:stats().pending)
  end)

  it("a sync of a stream that took part of another stream's free completes the rest", function()
    local s1, s2 = poolsh.stream { blocking = false }, poolsh.stream { blocking = false }
    local full = poolsh.pool { release_threshold = "max", max_size = "32 MiB" }
    local a = full:alloc("32 MiB", s1)
    poolsh.spin(s1, "5 ms")
    a:free()
    local b = full:alloc("4 MiB", s2)                 -- the pool makes s2 wait for a's free
    assert.equal(a.id, b.reused_from)
    assert.equal("internal dependency", b.reuse_rule)
    assert.equal(28 * MiB, full:stats().pending)     -- the rest of a's block
    s2:sync()
    assert.equal(0, full:stats().pending)
    b:free(); s2:sync(); full:destroy()
  end)

  it("destroying an idle stream completes its frees at once, as its pool gives their memory back", function()
    local q = poolsh.pool { release_threshold = 0 }
    local s = poolsh.stream()
    q:alloc("4 MiB", s):free()
    poolsh.sleep(1)                                   -- idle, and poolsh does not know it
    s:destroy()
    local st = q:stats()
    assert.equal(0, st.reserved)
    assert.equal(0, st.pending)                       -- not 4 MiB pending in a pool of 0
    q:destroy()
  end)
end)

describe("a replay's counters", function()
  after_each(function() poolsh.trace.stop(); poolsh.trace.clear() end)

  it("never show used + pending above reserved (transformer_2streams)", function()
    local replay = require "poolsh.replay"
    local rec = replay.read.open("tests/data/torch/transformer_2streams.pickle.gz")
    poolsh.trace.start()
    replay.run(rec, { allocator = "pool" })
    poolsh.trace.stop()
    local seen, worst = 0, nil
    poolsh.trace.each(function(e, i)
      if e.reserved and e.used and e.pending then
        seen = seen + 1
        if e.used + e.pending > e.reserved and not worst then
          worst = ("event %d (%s): used %d + pending %d > reserved %d"):format(i, e.op, e.used, e.pending,
                                                                           e.reserved)
        end
      end
    end)
    assert.is_nil(worst)
    assert(seen > 5000, "the trace holds the pool's counters at every allocation and free: " .. seen)
  end)
end)

describe("the oracle", function()
  it("finds the ledger agreeing with the sim's truth after every step of the fuzzer", function()
    if not H.is_sim() then pending("the sim's truth only") return end
    local dir = H.sh("mktemp -d"):gsub("%s+$", "")
    for _, seed in ipairs { 11, 12 } do
      local out, err, code = H.poolsh_cmd(("--backend=sim scripts/fuzz.lua --seed %d --ops 1500 --tmpdir %s")
                                          :format(seed, H.quote(dir)))
      assert(code == 0, err)
      local looks, sources = out:match("the ledger agreed with the sim at (%d+) looks; (%d+) reuses")
      assert(looks and tonumber(looks) >= 1500, out .. err)
      assert(tonumber(sources) > 0, out)
    end
    os.execute("rm -rf " .. H.quote(dir))
  end)

  it("is the sim's alone, and refuses a destroyed pool", function()
    if not H.is_sim() then
      assert.has_error(function() poolsh.core._sim_truth(poolsh.pool {}) end,
                       "poolsh.core._sim_truth: the cuda backend cannot report its truth (sim only)")
      return
    end
    assert.is_nil(rawget(poolsh, "_sim_truth"))
    local p, s = poolsh.pool { release_threshold = "max" }, poolsh.stream()
    local b = p:alloc(1000, s)
    local t0 = poolsh.now()
    local t = poolsh.core._sim_truth(p)
    assert.equal(t0, poolsh.now())                     -- it moves no clock
    assert.same({ addr = b.addr, size = 1024, req = 1000, state = "live" }, t[1])
    assert.equal("fresh", t[2].state)
    b:free(s)
    t = poolsh.core._sim_truth(p)
    assert.equal("pending", t[1].state == "done" and "pending" or t[1].state)
    assert.equal("integer", math.type(t[1].stream))     -- the sim's own id of s
    s:sync()
    assert.equal("retired", poolsh.core._sim_truth(p)[1].state)
    p:destroy()
    assert.has_error(function() poolsh.core._sim_truth(p) end)
  end)
end)

-- why_fresh: the ledger reports a reason code and ids (src/ledger.c,
-- ps_push_why); lua/poolsh/render/why_fresh.lua says it, naming objects as
-- they are named when the field is read (docs/explain.md, "Why not reused").
describe("why_fresh", function()
  local function why(w) return require("poolsh.render.why_fresh")(w) end

  -- Two named streams and a named pool, opts its settings.
  local function setup(opts)
    opts.release_threshold, opts.name = "max", "main"
    return poolsh.stream { name = "copies" }, poolsh.stream { name = "compute" }, poolsh.pool(opts)
  end

  -- b's why_fresh, asserted the same in its poolsh.core.recent() entry.
  local function said(b)
    for _, r in ipairs(poolsh.core.recent(0)) do
      if r.buffer == b.id then assert.equal(b.why_fresh, r.why_fresh) end
    end
    return b.why_fresh
  end

  it("says every reason in words, objects by their names", function()
    local s1, s2, p = setup { opportunistic = false }
    local a = p:alloc("16 MiB", s1)
    a.name = "weights"
    local e = s1:record()                             -- before the free
    poolsh.spin(s1, "50 ms"); a:free()
    local b = p:alloc("16 MiB", s2)
    assert.equal("weights's free is pending on copies, and compute has no event dependency on it", said(b))
    s2:wait(e)
    local c = p:alloc("16 MiB", s2)
    assert.equal("compute waited on an event recorded on copies before weights's free", said(c))
    b:free(); c:free(); poolsh.sync(); p:destroy()

    s1, s2, p = setup { follow_event_dependencies = false, opportunistic = false }
    a = p:alloc("16 MiB", s1)
    poolsh.spin(s1, "50 ms"); a:free()
    s2:wait(s1:record())
    b = p:alloc("16 MiB", s2)
    assert.equal(("compute waited on an event recorded on copies after b%d's free, but main does not "
                  .. "follow event dependencies"):format(a.id), said(b))
    poolsh.sleep("100 ms")                            -- a's free completes; nothing synchronises
    c = p:alloc("16 MiB", poolsh.stream())
    assert.equal(("b%d's free on copies completed, but opportunistic reuse is off in main")
                 :format(a.id), said(c))
    b:free(); c:free(); poolsh.sync(); p:destroy()

    s1, s2, p = setup {}
    a = p:alloc("3 MiB", s1)
    local keep = p:alloc("1 MiB", s1)
    local a2, keep2 = p:alloc("2 MiB", s1), p:alloc("1 MiB", s1)
    a:free(); a2:free()                               -- a 3 MiB and a 2 MiB hole
    b = p:alloc("4 MiB", s1)
    assert.equal("no freed block is large enough: the largest is 3.00 MiB", said(b))
    b:free(); keep:free(); keep2:free(); s1:sync(); p:destroy()
  end)

  it("says when a rule allowed a block the pool did not take (the sim coalesces a later free into it)", function()
    if not H.is_sim() then pending("the sim's placement") return end
    local s1, s2, p = setup { opportunistic = false }
    local a = p:alloc("8 MiB", s1)
    a.name = "weights"
    a:free()
    s2:wait(s1:record())                              -- after a's free: an event dependency
    local c = p:alloc("1 MiB", s1)                    -- carved from a's block, freed after the event
    c:free()
    local b = p:alloc("4 MiB", s2)
    assert.is_false(b.reused)
    assert.equal("weights's block was reusable (event dependency), but the pool placed the allocation "
                 .. "elsewhere", said(b))
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("reads names when it is read, and the reason without names once the ring moved on", function()
    local s1, s2, p = setup {}
    local a = p:alloc(512, s1)
    poolsh.spin(s1, "50 ms"); a:free()
    local b = p:alloc(512, s2)
    assert.equal(("b%d's free is pending on copies, and compute has no event dependency on it"):format(a.id),
                 b.why_fresh)
    a.name, s2.name = "weights", "later"
    assert.equal("weights's free is pending on copies, and later has no event dependency on it", b.why_fresh)
    local more = {}
    for i = 1, 4096 do more[i] = p:alloc(512, s2) end  -- each takes a slot of the ring of whys
    assert.truthy(more[4096].why_fresh:find("weights's free", 1, true))
    assert.equal("a freed block large enough is pending on another stream, with no event dependency on it",
                 b.why_fresh)
    for _, m in ipairs(more) do m:free() end
    b:free(); poolsh.sync(); p:destroy()
  end)

  it("is rendered from codes: every reason, with and without details", function()
    local s, p = poolsh.stream { name = "copies" }, poolsh.pool { release_threshold = "max", name = "main" }
    local w = { pool = p.id, stream = s.id, freed = 7, freed_on = s.id }
    local function with(t) for k, v in pairs(w) do if t[k] == nil then t[k] = v end end return t end
    assert.is_nil(why(nil))
    assert.equal("b7's free is pending on copies, and copies has no event dependency on it",
                 why(with { reason = "other_stream" }))
    assert.equal("copies waited on an event recorded on copies before b7's free",
                 why(with { reason = "event_before" }))
    assert.equal("copies waited on an event recorded on copies after b7's free, but main does not follow "
                 .. "event dependencies", why(with { reason = "not_followed" }))
    assert.equal("b7's free on copies completed, but opportunistic reuse is off in main",
                 why(with { reason = "opportunistic_off" }))
    assert.equal("no freed block is large enough: the largest is 100 B",
                 why { reason = "fragmented", largest = 100, pool = p.id, stream = s.id })
    assert.equal("b7's block was reusable (host sync), but the pool placed the allocation elsewhere",
                 why(with { reason = "placed", rule = "host sync" }))
    local bare = {
      other_stream = "a freed block large enough is pending on another stream, with no event dependency on it",
      event_before = "the stream waited on an event recorded before the free of a block large enough",
      not_followed = "the stream waited on an event recorded after a free, but the pool does not follow "
        .. "event dependencies",
      opportunistic_off = "a free of a block large enough completed, but opportunistic reuse is off",
      fragmented = "no freed block is large enough",
      placed = "a freed block large enough was reusable, but the pool placed the allocation elsewhere",
    }
    for reason, words in pairs(bare) do
      assert.equal(words, why { reason = reason, pool = p.id, stream = s.id })
    end
    assert.has_error(function() why { reason = "bogus" } end,
                     "poolsh.render.why_fresh: unknown reason 'bogus'")
    assert.has_error(function() why(42) end, "poolsh.render.why_fresh: a table of codes expected, got number")
    s:destroy(); p:destroy()
  end)

  it("asks Lua for no words when there is no why (a reuse, or a pool with nothing freed)", function()
    local renderer = "poolsh.render.why_fresh"
    local loaded = package.loaded[renderer]
    package.loaded[renderer] = nil
    package.preload[renderer] = function() error("the renderer was asked for") end
    local ok, err = pcall(function()
      local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
      local a = p:alloc("1 MiB", s)                   -- nothing freed: no why
      a:free()
      local b = p:alloc("1 MiB", s)                   -- reuses a's memory: no why
      assert.is_nil(a.why_fresh)
      assert.is_nil(b.why_fresh)
      b:free(); s:sync(); p:destroy()
    end)
    package.preload[renderer], package.loaded[renderer] = nil, loaded
    assert(ok, err)
  end)

  it("comes from a ledger that reports codes and a views binding that never sees the layer's internals", function()
    -- the layering of docs/architecture.md: no naming or size words in ledger.c,
    -- inspect.c reads the observation layer through views.h only
    local function code_of(path)
      local text = H.slurp(path)
      return (text:gsub("/%*.-%*/", ""):gsub("//[^\n]*", ""))
    end
    for _, file in ipairs { "src/ledger.c", "src/observe.c" } do
      local code = code_of(file)
      for _, f in ipairs { "ps_pushname", "ps_pushlabel", "ps_pushsize", "ps_render",
                           "lua_pushfstring", "luaL_addstring" } do
        assert.is_nil(code:find(f .. "%s*%("), file .. " calls " .. f)
      end
    end
    local inspect = code_of("src/inspect.c")
    assert.is_nil(inspect:find('#include%s*"observer.h"'), "src/inspect.c includes observer.h")
    assert.truthy(inspect:find('#include%s*"views.h"'))
  end)
end)
