-- The views at any size and width: live lines that summarise many
-- allocations, tables and maps that fit the terminal, names, releases
-- with their cause, why memory was fresh, allocation sites, the leak
-- report grouped by site, poolsh.reset().
local poolsh = require "poolsh"
local core = require "poolsh.core"
local H = require "helpers"
local live = poolsh.live

local function joined(lines) return table.concat(lines, "\n") end

local function widest(lines)
  local w = 0
  for _, l in ipairs(lines) do w = math.max(w, utf8.len(l) or #l) end
  return w
end

before_each(function() live.color, live.width = false, 80 end)
after_each(function() live.width = nil; poolsh.watch(false) end)

describe("the views' width", function()
  it("is poolsh.live.width, else $COLUMNS, else 80, never below 40", function()
    live.width = 120
    assert.equal(120, live.columns())
    live.width = nil
    local cols = math.tointeger(tonumber(os.getenv("COLUMNS") or ""))
    assert.equal(cols and math.max(cols, 40) or 80, live.columns())
    live.width = 20
    local e = H.err(live.columns)
    assert.matches("poolsh.live.width must be nil or an integer >= 40, got 20", e, 1, true)
    live.width = 80
  end)

  it("reads $COLUMNS from the environment of a poolsh run", function()
    local out, err, code = H.poolsh_cmd("--backend=sim -e 'print(poolsh.live.columns())'",
                                        "COLUMNS=132")
    assert.equal(0, code, err)
    assert.equal("132", out:match("%d+"))
  end)

  it("fit folds parts that do not fit, and words of a part too long for any line", function()
    local out = live.fit({}, { "p1", ("x"):rep(30), ("y"):rep(30), ("z"):rep(30) }, 80)
    assert.same({ "p1  " .. ("x"):rep(30) .. "  " .. ("y"):rep(30), "    " .. ("z"):rep(30) }, out)
    local long = "  b1 4.00 MiB from p1 on s1: fresh memory \u{2014} " .. ("word "):rep(20)
    out = live.fit({}, { long }, 40)
    assert.is_true(#out > 2)
    assert.is_true(widest(out) <= 40)
    assert.matches("^  b1 4.00 MiB", out[1])
  end)

  it("rows prints columns that do not fit in blocks, each repeating the first column", function()
    local header = { "name", ("a"):rep(30), ("b"):rep(30), ("c"):rep(30) }
    local out = live.rows(header, { { "p1", "1", "2", "3" } }, 80)
    assert.equal(4, #out)
    assert.matches("^  name  a+  b+$", out[1])
    assert.matches("^  p1    1 +2$", out[2])
    assert.matches("^  name  c+$", out[3])
    assert.matches("^  p1    3$", out[4])
    out = live.rows(header, { { "p1", "1", "2", "3" } }, 120)
    assert.equal(2, #out)
    out = live.rows({ "b", "site" }, { { "b1", ("s"):rep(200) } }, 60)
    assert.equal(60, #out[2])
    assert.matches("^  b1  %.%.%.s+$", out[2])     -- a word too long keeps its end (a path: file and line)
  end)

  it("show, map and the live lines fit 80 columns, and use 160 when there are 160", function()
    local s = poolsh.stream { name = "copies" }
    local p = poolsh.pool { release_threshold = "max" }
    poolsh.watch(true)
    local a = p:alloc("40 MiB", s)
    local b = p:alloc("40 MiB", s)
    local c = p:alloc("4 MiB", s)
    poolsh.spin(s, "50 ms")
    b:free()
    local narrow = { live.lines(), live.show_lines(), live.map_lines(p), live.leak_lines(),
                     live.sites_lines(poolsh.sites()), live.summary_lines(poolsh.summary()) }
    for _, lines in ipairs(narrow) do assert.is_true(widest(lines) <= 80, joined(lines)) end
    live.width = 160
    local map = live.map_lines(p)
    assert.matches("^  %[[#=.|]+%]  # live  = pending", map[2])   -- the legend beside the bar
    local show = live.show_lines()
    assert.matches("pool%s+location%s+reserved%s+used%s+pending%s+free ~%s+threshold", joined(show))
    assert.is_true(widest(show) > 80)
    a:free(); c:free(); s:sync(); p:destroy()
  end)

  it("formats every size in the views as poolsh.fmt does", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local a = p:alloc(1000, s)
    local out = joined(live.show_lines()) .. joined(live.map_lines(p)) .. joined(live.leak_lines())
    assert.matches("1000 B", out, 1, true)
    local left = out:gsub("%d+%.?%d* [KMGTPE]?i?B", ""):gsub("0x%x+", ""):gsub("[%a_]%w*", "")
    assert.is_nil(left:match("%d%d%d%d+"), "a raw byte count in the views: " .. left)
    a:free(); s:sync(); p:destroy()
  end)
end)

describe("names in the views", function()
  it("show, map, the live lines and the leak report name objects by their names", function()
    local s = poolsh.stream { name = "copies" }
    local p = poolsh.pool { release_threshold = "max" }
    poolsh.watch(true)
    local a = p:alloc("4 MiB", s)
    local lines = joined(live.lines())
    assert.matches(("b%d 4.00 MiB from %s on copies: fresh memory"):format(a.id, p.name), lines, 1, true)
    assert.matches("%s+copies%s+idle", joined(live.show_lines()))
    assert.matches(p.name .. " on copies", joined(live.show_lines()), 1, true)
    assert.matches("live    b" .. a.id .. " on copies", joined(live.map_lines(p)), 1, true)
    assert.matches("from " .. p.name .. " on copies", joined(live.leak_lines()), 1, true)
    a:free(); s:sync(); p:destroy()
  end)
end)

describe("the live view after many allocations", function()
  it("summarises a statement that allocated many blocks in a few lines", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    poolsh.watch(true)
    local bufs = {}
    for i = 1, 20000 do
      bufs[i] = p:alloc(256, s)
      if i % 2 == 0 then bufs[i]:free(); bufs[i] = nil end   -- the next one reuses it
    end
    local h = poolsh.pinned(64)
    local lines = live.lines()
    for _, b in pairs(bufs) do b:free() end
    h:free(); s:sync(); p:destroy()
    assert.is_true(#lines <= 10, joined(lines))
    local out = joined(lines)
    assert.matches(h.id .. " 64 B from host/device: not pool memory", out, 1, true)
    assert.matches("20001 allocations:", out, 1, true)
    assert.matches(p.name .. ": 20000 %(", out)
    assert.matches("stream order 9999", out, 1, true)
    assert.matches("fresh memory 10001", out, 1, true)
    assert.matches("not in a live pool: 1", out, 1, true)
    assert.matches("the last 3:", out, 1, true)
  end)

  it("still lists a statement's allocations one a line up to alloc_lines", function()
    live.width = 160                                 -- no line folded
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    poolsh.watch(true)
    local bufs = {}
    for i = 1, live.alloc_lines do bufs[i] = p:alloc(256, s) end
    local lines = live.lines()
    assert.equal(1 + live.alloc_lines, #lines)
    assert.matches("^  b" .. bufs[1].id .. " 256 B", lines[2])
    for _, b in ipairs(bufs) do b:free() end
    s:sync(); p:destroy()
  end)

  it("show and the leak report stay short and fast with 100,000 live buffers", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local bufs = {}
    for i = 1, 100000 do bufs[i] = p:alloc(64, s) end
    local t0 = os.clock()
    local show, leaks = live.show_lines(), live.leak_lines()
    local took = os.clock() - t0
    assert.is_true(#show < 80, #show)
    assert.is_true(#leaks <= 3, joined(leaks))
    assert.matches("100000 buffers %(6.10 MiB%) allocated at%s+%S*views_spec.lua:%d+", joined(leaks))
    assert.is_true(took < 2, took)
    for _, b in ipairs(bufs) do b:free() end
    s:sync(); p:destroy()
  end)
end)

describe("the leak report", function()
  it("groups a site's buffers on one line, keeping lone buffers on lines of their own", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local many = {}
    local one = p:alloc(7, s)
    for i = 1, 1000 do many[i] = p:alloc(1024, s) end
    live.width = 160
    local lines = live.leak_lines()
    for _, b in ipairs(many) do b:free() end
    one:free(); s:sync(); p:destroy()
    assert.equal(3, #lines, joined(lines))
    assert.matches("^poolsh: 1001 buffers still live", lines[1])
    assert.matches("^  b" .. one.id .. " 7 B pool from .-views_spec.lua:%d+$", lines[2])
    assert.matches("^  1000 buffers %(1000.00 KiB%) allocated at %S*views_spec.lua:%d+, the oldest b"
                   .. many[1].id .. "$", lines[3])
  end)

  it("a script leaking 100,000 buffers from one line prints a few lines", function()
    local _, err, code = H.poolsh_cmd("--backend=sim -e 'local p = poolsh.pool{} " ..
      "keep = {} for i = 1, 100000 do keep[i] = p:alloc(16) end'")
    assert.equal(0, code, err)
    local n = select(2, err:gsub("\n", ""))
    assert.is_true(n <= 4, err)
    assert.matches("100000 buffers (1.53 MiB) allocated at (command line):1", err, 1, true)
  end)
end)

describe("releases on the live lines", function()
  it("name their cause and the threshold", function()
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = 0 }
    poolsh.watch(true)
    local a = p:alloc("40 MiB", s)
    local b = p:alloc("8 MiB", s)
    live.lines()
    a:free()
    s:sync()
    local lines = joined(live.lines())
    assert.matches(("reserved %%S+ MiB %%(%%-32.00 MiB%%).-%s:sync%%(%%) released down to threshold 0 B")
                   :format(s.name), lines)
    b:free(); s:sync(); p:destroy()
  end)
end)

describe("releases of several causes in one statement", function()
  it("give each cause its bytes, count repeats, and a trim no threshold", function()
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    poolsh.watch(true)
    for _ = 1, 2 do
      local a = p:alloc("40 MiB", s); a:free(); s:sync(); p:trim(0)
    end
    local lines = joined(live.lines())
    assert.matches("\n    " .. p.name .. ":trim() released 128.00 MiB (2 releases)\n", lines, 1, true)
    p.release_threshold = 0
    local a = p:alloc("40 MiB", s); a:free(); s:sync()
    p.release_threshold = "max"
    a = p:alloc("40 MiB", s); a:free(); s:sync(); p:trim(0)
    lines = joined(live.lines())
    assert.matches(("^%s  reserved 0 B %%(peak 64%%.00 MiB%%)  used 0 B %%(peak 40%%.00 MiB%%)  pending 0 B\n")
                   :format(p.name), lines)
    assert.matches(("\n    %s:sync() released 64.00 MiB down to threshold 0 B\n    %s:trim() released 64.00 MiB\n")
                   :format(s.name, p.name), lines, 1, true)
    p:destroy()
  end)
end)

describe("more releases in one statement than the core's ring holds", function()
  it("are counted on a line of their own", function()
    local s = poolsh.stream()
    local p = poolsh.pool { release_threshold = 0 }
    poolsh.watch(true)
    for _ = 1, 70 do
      local a = p:alloc("1 MiB", s); a:free(); s:sync()
    end
    local lines = joined(live.lines())
    p:destroy()
    assert.matches(s.name .. ":sync() released down to threshold 0 B (64 releases)", lines, 1, true)
    assert.matches("\n  (and 6 earlier releases, not listed: poolsh.summary() counts them)\n", lines, 1, true)
  end)
end)

describe("why memory was fresh", function()
  it("is said on the allocation's live line", function()
    local s1, s2 = poolsh.stream(), poolsh.stream()
    local p = poolsh.pool { release_threshold = "max" }
    poolsh.spin(s2, "50 ms")
    local a = p:alloc("4 MiB", s2)
    a:free()
    poolsh.watch(true)
    local b = p:alloc("4 MiB", s1)
    local allocs = core.recent(0)
    local lines = joined(live.lines())
    b:free(); s1:sync(); s2:sync(); p:destroy()
    assert.equal(allocs[#allocs].why_fresh, b.why_fresh)
    assert.matches(("b%d 4.00 MiB from %s on %s: fresh memory \u{2014} .*b%d"):format(
      b.id, p.name, s1.name, a.id), lines)
  end)
end)

describe("poolsh.sites", function()
  it("lists per site its calls and bytes, highest peak first, and prints as RMM's report", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local function small() return p:alloc(16, s) end
    local keep = {}
    for i = 1, 10 do keep[i] = small() end
    local big_line, big = debug.getinfo(1, "l").currentline, p:alloc("1 MiB", s)
    local list = poolsh.sites()
    for i = 2, #list do assert.is_true(list[i - 1].peak_bytes >= list[i].peak_bytes) end
    -- this test's two sites, among those of the specs run before
    local here, mine = debug.getinfo(1, "S").short_src, {}
    local ours = { [here .. ":" .. big_line] = true,
                   [here .. ":" .. debug.getinfo(small, "S").linedefined] = true }
    for _, site in ipairs(list) do
      if ours[site.site] then mine[#mine + 1] = site end
    end
    assert.equal(2, #mine)
    assert.same({ 1, 1048576, 1048576, 1048576 },
                { mine[1].count, mine[1].live_bytes, mine[1].peak_bytes, mine[1].total_bytes })
    assert.same({ 10, 160, 160, 160 },
                { mine[2].count, mine[2].live_bytes, mine[2].peak_bytes, mine[2].total_bytes })
    local report = tostring(setmetatable(mine, getmetatable(list)))
    assert.matches("^  ncalls%s+memory_peak%s+memory_total%s+live%s+site\n", report)
    assert.matches("\n  1%s+1.00 MiB%s+1.00 MiB%s+1.00 MiB%s+%S*views_spec.lua:%d+\n", report)
    assert.matches("\n  10%s+160 B%s+160 B%s+160 B%s+%S*views_spec.lua:%d+$", report)
    for _, b in ipairs(keep) do b:free() end
    big:free(); s:sync(); p:destroy()
  end)
end)

describe("poolsh.reset", function()
  it("frees and destroys everything and starts again, ids from 1", function()
    local s, p = poolsh.stream(), poolsh.pool { release_threshold = "max" }
    local b = p:alloc("4 MiB", s)
    poolsh.watch(true)
    poolsh.reset()
    assert.is_false(b.live)
    assert.is_false(p.live)
    assert.is_false(s.live)
    assert.same({}, live.lines())                     -- nothing to show of what is gone
    assert.equal(0, select(2, core.live()))
    local q = poolsh.pool {}
    assert.equal(1, q.id)
    local c = q:alloc(1)
    assert.equal(1, c.id)
    local lines = joined(live.lines())
    assert.matches("^p1  reserved", lines)
    assert.matches("b1 1 B from p1 on default: fresh memory", lines, 1, true)
    c:free(); poolsh.sync(); q:destroy()
  end)

  it("keeps recording when it was (a --trace run records what follows)", function()
    poolsh.trace.start()
    poolsh.reset()
    assert.is_true(poolsh.trace.recording())
    local p = poolsh.pool {}
    local b = p:alloc(64)
    b:free()
    local ops = {}
    for _, e in ipairs(poolsh.trace.events()) do ops[#ops + 1] = e.op end
    assert.same({ "pool_create", "alloc", "reserve", "free" }, ops)
    poolsh.trace.stop(); poolsh.trace.clear(); poolsh.sync(); p:destroy()
  end)
end)

describe("the REPL in a terminal", function()
  local SOCK = "poolsh-views-test"
  local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
  local function screen() return (tmux("capture-pane -p -t repl")) end
  local function wait_for(pat) return H.poll(function() return screen():match(pat) end, 5) end
  after_each(function() tmux("kill-server") end)

  it("fits the views to the terminal's width, read at each view", function()
    tmux("kill-server")
    local cmd = ("env -u COLUMNS POOLSH_HISTORY=/dev/null %s --backend=sim"):format(H.exe)
    tmux("new-session -d -s repl -x 132 -y 40 " .. H.quote(cmd))
    assert.truthy(wait_for("poolsh>"), screen())
    tmux("send-keys -t repl -l " .. H.quote("print('cols=' .. poolsh.live.columns())"))
    tmux("send-keys -t repl Enter")
    assert.truthy(wait_for("cols=132"), screen())
    tmux("resize-window -t repl -x 90 -y 40")
    tmux("send-keys -t repl -l " .. H.quote("print('now=' .. poolsh.live.columns())"))
    tmux("send-keys -t repl Enter")
    assert.truthy(wait_for("now=90"), screen())
  end)
end)
