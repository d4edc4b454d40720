--- Names given to objects (docs/api.md, "Names").
local H = require "helpers"
local poolsh = H.poolsh
local naming = require "poolsh.naming"

describe("object names", function()
  it("are given at creation or by assignment, and shown by tostring", function()
    local s = poolsh.stream{name = "copies"}
    local p = poolsh.pool{name = "weights", release_threshold = 0}
    local e = poolsh.event{name = "done"}
    local b <close> = p:alloc(64, s)
    assert.equal("copies", s.name)
    assert.equal("weights", p.name)
    assert.equal("done", e.name)
    assert.equal(("b%d"):format(b.id), b.name)
    b.name = "activations"
    assert.equal("activations", b.name)
    p.name = "w2"
    assert.equal("w2", p.name)
    assert.equal(0, p.release_threshold)          -- settings still settable beside it
    assert.equal(("poolsh.Stream copies (s%d)"):format(s.id), tostring(s))
    assert.equal(("poolsh.Event done (e%d)"):format(e.id), tostring(e))
    assert.equal(("poolsh.Pool w2 (p%d) (device 0)"):format(p.id), tostring(p))
    assert.equal(("poolsh.Buffer activations (b%d) (64 B pool)"):format(b.id), tostring(b))
    local plain = poolsh.stream()
    assert.equal(("s%d"):format(plain.id), plain.name)
    assert.equal(("poolsh.Stream s%d"):format(plain.id), tostring(plain))
    assert.equal("default", poolsh.default_stream().name)
    plain:destroy(); e:destroy(); s:destroy()
  end)

  it("outlive their objects, for traces and exports", function()
    local s = poolsh.stream{name = "gone"}
    local id = s.id
    s:destroy()
    assert.equal("gone", s.name)
    assert.equal("gone", naming.of("stream", id))
    assert.equal("gone", naming.all().stream[id])
    assert.equal("p99999", naming.of("pool", 99999))
    assert.equal("default", naming.of("stream", 0))
    assert.is_nil(naming.all().buffer[99999])
  end)

  it("refuse what cannot name, before the object is made", function()
    local before = #select(2, poolsh.core.objects())
    assert.equal("poolsh: a name must be a string, got number", H.err(poolsh.stream, {name = 5}))
    assert.equal("poolsh: a name must have 1 to 64 bytes, got 0 ('')", H.err(poolsh.pool, {name = ""}))
    assert.equal("poolsh: a name must not hold control characters ('a\nb')",
                 H.err(poolsh.event, {name = "a\nb"}))
    assert.equal(before, #select(2, poolsh.core.objects()))
    local s = poolsh.stream()
    local long = ("n"):rep(65)
    assert.matches("a name must have 1 to 64 bytes, got 65", H.err(function() s.name = long end))
    assert.equal(("s%d"):format(s.id), s.name)     -- unchanged
    assert.equal("poolsh.Stream has no settable field 'priority'", H.err(function() s.priority = 1 end):gsub("^[^:]+:%d+: ", ""))
    assert.matches("bad argument #1 to 'object_name' (invalid option 'queue')",
                   H.err(function() local _ = poolsh.core.object_name("queue", 1) end), 1, true)
    s:destroy()
  end)
end)

-- naming.adopt: the REPL's and lessons' variables name their objects.
describe("objects named after their variables", function()
  local live = poolsh.live
  local function joined(lines) return table.concat(lines, "\n") end
  before_each(function() live.width, live.color = 80, false end)
  after_each(function() poolsh.watch(false); live.width = nil end)

  it("take the variable's name before the live lines of the statement that made them", function()
    local env = {}
    env.nv_s = poolsh.stream()
    env.nv_p = poolsh.pool { release_threshold = "max" }
    naming.adopt(env)
    poolsh.watch(true)
    env.nv_b7 = env.nv_p:alloc("4 MiB", env.nv_s)   -- b7 = p:alloc(...) printed b<id>
    assert.equal(1, naming.adopt(env))
    local text = joined(live.lines())
    assert.matches("  nv_b7 4.00 MiB from nv_p on nv_s: fresh memory", text, 1, true)
    assert.equal("nv_b7", env.nv_b7.name)
    assert.equal("nv_p", env.nv_p.name)
    assert.equal("nv_s", env.nv_s.name)
    env.nv_b7:free()
    env.nv_x = env.nv_p:alloc("4 MiB", env.nv_s)
    naming.adopt(env)
    assert.matches("nv_x 4.00 MiB from nv_p on nv_s: reused nv_b7's memory", joined(live.lines()), 1, true)
    env.nv_x:free(); env.nv_s:sync()
    env.nv_p:trim(0)
    assert.matches("nv_p:trim() released 32.00 MiB", joined(live.lines()), 1, true)
    env.nv_p:destroy(); env.nv_s:destroy()
  end)

  it("name a Lua allocator's blocks too, in its live lines and its reuse notes", function()
    local env = { nv_s = poolsh.stream() }
    env.nv_torch = require("poolsh.allocators.pytorch").new { name = "nv_torch" }
    naming.adopt(env)
    poolsh.watch(true)
    env.nv_t = env.nv_torch:alloc("4 MiB", env.nv_s)
    naming.adopt(env)
    assert.matches("  nv_t 4.00 MiB from nv_torch: fresh segment", joined(live.lines()), 1, true)
    env.nv_torch:free(env.nv_t)
    env.nv_u = env.nv_torch:alloc("4 MiB", env.nv_s)
    env.nv_t = env.nv_torch:alloc("1 MiB", env.nv_s)
    naming.adopt(env)
    local text = joined(live.lines())
    assert.matches("  nv_u 4.00 MiB from nv_torch: reused nv_t's memory (cached block)", text, 1, true)
    assert.matches("  nv_t 1.00 MiB from nv_torch:", text, 1, true)   -- the old nv_t was freed
    env.nv_torch:free(env.nv_u); env.nv_torch:free(env.nv_t)
    env.nv_torch:empty_cache()
    env.nv_s:destroy()
  end)

  it("keep their first name; a second object of a kind under a taken name is name#2", function()
    local p <close> = poolsh.pool { release_threshold = "max" }
    local env = {}
    env.nd_b = p:alloc(64)
    naming.adopt(env)
    local first = env.nd_b
    env.nd_c = first                     -- moved: keeps nd_b
    env.nd_b = p:alloc(64)               -- another buffer under nd_b
    naming.adopt(env)
    assert.equal("nd_b", first.name)
    assert.equal("nd_b#2", env.nd_b.name)
    first:free()
    local second = env.nd_b
    env.nd_b = p:alloc(64)               -- the first nd_b was freed: its name is free
    naming.adopt(env)
    assert.equal("nd_b", env.nd_b.name)
    env.nd_v = p:alloc(64)
    naming.adopt(env)
    local third = env.nd_b
    env.nd_b = env.nd_v                  -- a live object keeps its name: nd_v stays nd_v
    naming.adopt(env)
    assert.equal("nd_v", env.nd_b.name)
    env.nd_b = third
    env.nd_s = poolsh.stream()           -- another kind: its own names
    env.nd_named = poolsh.stream { name = "copies_nd" }   -- a given name stays
    env.nd_t = poolsh.stream { name = "nd_u" }
    env.nd_u = poolsh.stream()           -- a name another object was given is taken
    local long = ("v"):rep(57)
    env[long] = p:alloc(64)              -- too long to take as is: left alone
    env.nd_tab = { p:alloc(64) }         -- tables in env are not looked into
    naming.adopt(env)
    assert.equal("nd_s", env.nd_s.name)
    assert.equal("copies_nd", env.nd_named.name)
    assert.equal("nd_u", env.nd_t.name)
    assert.equal("nd_u#2", env.nd_u.name)
    assert.equal(("b%d"):format(env[long].id), env[long].name)
    assert.equal(("b%d"):format(env.nd_tab[1].id), env.nd_tab[1].name)
    for _, b in ipairs { env.nd_c, second, env.nd_b, env.nd_v, env[long], env.nd_tab[1] } do if b.live then b:free() end end
    for _, k in ipairs { "nd_s", "nd_named", "nd_t", "nd_u" } do env[k]:destroy() end
  end)

  it("free a name adopt gave once its object is freed or destroyed; names given by hand stay taken", function()
    local env = {}
    env.nf_s = poolsh.stream()
    env.nf_p = poolsh.pool { release_threshold = "max" }
    naming.adopt(env)
    poolsh.watch(true)
    env.nf_b = env.nf_p:alloc("4 MiB", env.nf_s)
    naming.adopt(env)
    live.lines()
    env.nf_b:free()
    env.nf_b = env.nf_p:alloc("4 MiB", env.nf_s)     -- the lessons' pattern: b again
    naming.adopt(env)
    assert.equal("nf_b", env.nf_b.name)
    assert.matches("  nf_b 4.00 MiB from nf_p on nf_s: reused nf_b's memory (stream order)",
                   joined(live.lines()), 1, true)
    env.nf_c = env.nf_b                               -- still live: a new nf_b is nf_b#2
    env.nf_b = env.nf_p:alloc("4 MiB", env.nf_s)
    naming.adopt(env)
    assert.equal("nf_b#2", env.nf_b.name)
    env.nf_b:free(); env.nf_c:free(); env.nf_s:sync()
    env.nf_s:destroy()                                -- a destroyed stream frees its name
    env.nf_s = poolsh.stream()
    naming.adopt(env)
    assert.equal("nf_s", env.nf_s.name)
    local hand = poolsh.stream { name = "nf_h" }      -- given by hand: taken while it lives and after
    hand:destroy()
    env.nf_h = poolsh.stream()
    naming.adopt(env)
    assert.equal("nf_h#2", env.nf_h.name)
    env.nf_h.name = "nf_k"                            -- renamed by hand: nf_k is taken
    env.nf_k = poolsh.stream()
    naming.adopt(env)
    assert.equal("nf_k#2", env.nf_k.name)
    env.nf_k:destroy()
    env.nf_p:destroy(); env.nf_s:destroy(); env.nf_h:destroy()
  end)

  it("in a scope (a scenario's run), free a name the same way; outside it, a scope's names stay taken", function()
    local scope = {}
    local one = { ns_q = poolsh.stream() }
    naming.adopt(one, scope)
    local two = { ns_q = poolsh.stream() }
    naming.adopt(two, scope)
    assert.equal("ns_q", one.ns_q.name)
    assert.equal("ns_q#2", two.ns_q.name)           -- the first still lives
    one.ns_q:destroy()
    local three = { ns_q = poolsh.stream() }
    naming.adopt(three, scope)
    assert.equal("ns_q", three.ns_q.name)           -- the first was destroyed
    local outside = { ns_q = poolsh.stream() }
    naming.adopt(outside)
    assert.equal("ns_q#3", outside.ns_q.name)       -- ns_q and ns_q#2 were given
    two.ns_q:destroy(); three.ns_q:destroy(); outside.ns_q:destroy()
  end)

  it("leave user tables alone: only a registered allocator's block is a block", function()
    local env = {}
    env.nu_t = { live_name = "x.3" }                  -- looks like a label, is no block
    env.nu_o = { live_name = "y.4", owner = {} }      -- its owner is no registered allocator
    naming.adopt(env)
    assert.equal("x.3", env.nu_t.live_name)
    assert.equal("y.4", env.nu_o.live_name)
  end)

  it("are named in errors, sync's release notes and a trace's JSON export", function()
    local env = {}
    env.ne_s = poolsh.stream()
    env.ne_p = poolsh.pool { release_threshold = 0, max_size = "64 MiB" }
    naming.adopt(env)
    local msg = H.err(function() return env.ne_p:alloc("1 GiB", env.ne_s) end)
    assert.matches("allocating 1.00 GiB from pool ne_p on stream ne_s", msg, 1, true)
    env.ne_gone = env.ne_p:alloc(64, env.ne_s)
    naming.adopt(env)
    env.ne_gone:free()
    assert.matches("attempt to use a freed poolsh.Buffer (ne_gone)", H.err(function() env.ne_gone:free() end), 1, true)
    poolsh.watch(true)
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -m 0700 " .. H.quote(dir)))
    poolsh.trace.start()
    env.ne_buf = env.ne_p:alloc("4 MiB", env.ne_s)
    naming.adopt(env)
    env.ne_buf:free(); env.ne_s:sync()
    assert.matches("ne_s:sync() released", joined(live.lines()), 1, true)
    poolsh.trace.stop()
    poolsh.trace.save(dir .. "/t.json")
    local json = H.slurp(dir .. "/t.json")
    os.execute("rm -rf " .. H.quote(dir))
    poolsh.trace.clear()
    assert.matches('"alloc ne_buf"', json, 1, true)
    assert.matches('ne_p', json, 1, true)
    env.ne_p:destroy(); env.ne_s:destroy()
  end)

  it("cost little: only the env's own keys are looked at, each object once", function()
    local p <close> = poolsh.pool { release_threshold = "max" }
    local env = { many = {} }
    for i = 1, 100000 do env.many[i] = p end         -- 100k objects in a table: not scanned
    for i = 1, 2000 do env["nc_g" .. i] = i end      -- many plain globals
    env.nc_one = p:alloc(64)
    naming.adopt(env)
    local t0 = os.clock()
    for _ = 1, 100 do naming.adopt(env) end
    local per = (os.clock() - t0) / 100
    assert.is_true(per < 0.005, ("adopt took %.2f ms a statement"):format(per * 1000))
    assert.equal("nc_one", env.nc_one.name)
    env.nc_one:free()
  end)
end)
