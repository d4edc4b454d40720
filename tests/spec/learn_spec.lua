-- poolsh learn: the lessons' steps against their answers, progress, the
-- command's errors, and a lesson driven through tmux in a pseudo-terminal.
local H = require "helpers"
local poolsh = H.poolsh
local learn = require "poolsh.learn"

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. H.quote(d)))
  return d
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local free_all = H.free_lesson

-- A session of lesson `name` in a sandbox: its output collected, progress
-- in memory.
local function session(name, progress)
  local G = setmetatable({ poolsh = poolsh }, { __index = _G })   -- the host makes poolsh global
  local out, saved = {}, {}
  local s = learn.new(learn.load(name), {
    G = G, out = function(t) out[#out + 1] = t end,
    progress = progress or { lessons = {} },
    save = function(prog) saved[#saved + 1] = prog.lessons[name] and prog.lessons[name].done end,
  })
  return s, G, function() local t = table.concat(out); out = {}; return t end, saved
end

-- Runs a statement as the REPL would: in G, then the after-hook.
local function type_in(s, G, code)
  assert(load(code, "=stdin", "t", G))()
  s:after()
end

describe("each lesson", function()
  for i, name in ipairs(learn.names()) do
    it(("%d. %s: every step fails before its answer and passes after it"):format(i, name), function()
      local s, G, output = session(name)
      s:start()
      assert.matches("step 1/" .. #s.lesson.steps, output(), 1, true)
      for n, st in ipairs(s.lesson.steps) do
        assert.equal(n, s.step)
        local ok = s:try(st.check)
        assert.is_false(ok, ("step %d holds before its answer"):format(n))
        type_in(s, G, st.solution)
        local text = output()
        assert.is_nil(text:find("\u{2717}"), text)          -- the answer is never nagged
        assert.matches("\u{2713} step " .. n .. " done", text, 1, true)
      end
      assert.is_true(s.finished)
      free_all(G)
    end)
  end
end)

describe("each lesson's text", function()
  local text = require "poolsh.live.text"
  after_each(function() poolsh.live.width = nil end)
  for _, width in ipairs { 80, 60 } do
    for _, name in ipairs(learn.names()) do
      it(("%s fits %d columns, its code never broken"):format(name, width), function()
        poolsh.live.width = width
        local s, G, output = session(name)
        local code = {}                  -- the lines a learner types, whole
        for _, st in ipairs(s.lesson.steps) do
          for _, src in ipairs { st.solution or "", st.hint or "" } do
            for l in src:gmatch("[^\n]+") do code[l] = true end
          end
        end
        s:start()
        local all = { output() }
        for _, st in ipairs(s.lesson.steps) do
          s:show(); s:hint()
          s:miss("a made-up failure whose text is long enough to need folding at the width "
            .. "of the terminal, so that it shows the folding")
          s:skip()
          s:after()
          all[#all + 1] = output()
        end
        assert.is_true(s.finished)
        s:show()
        all[#all + 1] = output()
        local seen_code = 0
        for l in table.concat(all):gmatch("[^\n]*") do
          local bare = l:match("^%s*(.-)$")
          if code[bare] then seen_code = seen_code + 1
          else assert.is_true(text.vlen(l) <= width, ("%d columns: %s"):format(text.vlen(l), l)) end
        end
        assert.is_true(seen_code >= #s.lesson.steps)     -- each answer shown, whole
        free_all(G)
      end)
    end
  end
end)

describe("a lesson session", function()
  it("is silent after a statement that changes nothing, hints after a wrong one", function()
    local s, G, output = session("same_stream")
    s:start()
    output()
    type_in(s, G, "x = 1 + 1")
    assert.equal("", output())
    type_in(s, G, 'a = p:alloc("1 MiB", s)')
    local text = output()
    assert.matches("\u{2717} a's size: expected 4194304 (4.00 MiB), observed 1048576 (1.00 MiB)", text, 1, true)
    assert.matches("hint: p:alloc(size, stream)", text, 1, true)
    G.a:free()
    type_in(s, G, 'a = p:alloc("4 MiB", s)')
    assert.matches("step 2/4", output(), 1, true)
    free_all(G)
  end)

  it("a reuse step checks whose memory was reused, not only that some was", function()
    local s, G, output = session("same_stream")
    s:start()
    type_in(s, G, 'a = p:alloc("4 MiB", s)')
    type_in(s, G, 'poolsh.spin(s, "100 ms"); a:free()')
    assert.matches("step 3/4", output(), 1, true)
    -- t takes a's memory; b then reuses t's, by stream order too
    type_in(s, G, 't = p:alloc("4 MiB", s); t:free(); b = p:alloc("4 MiB", s)')
    local text = output()
    -- named as the learner's variables (poolsh.naming.adopt)
    assert.matches(" reused the memory of: expected " .. G.a.name .. ", observed " .. G.t.name, text, 1, true)
    assert.matches("^a", G.a.name)
    assert.matches("^t", G.t.name)
    assert.is_nil(text:find("step 3 done", 1, true))
    free_all(G)
  end)

  it("a step whose buffer the learner dropped says it cannot pass, not that it waits", function()
    local s, G, output = session("cross_stream")
    s:start()
    output()
    H.drops_buffers("the learner drops the lesson's buffer a")
    type_in(s, G, "a = nil")
    assert.matches("\u{2717} this step cannot pass any more (a is no longer a buffer): type restart()",
      output(), 1, true)
    s:check()
    assert.matches("cannot pass any more", output(), 1, true)
    free_all(G)
  end)

  it("restart() frees the learner's buffers, forgets their globals and starts at step 1", function()
    local s, G, output = session("same_stream")
    s:start()
    type_in(s, G, 'a = p:alloc("4 MiB", s)')
    local a, p = G.a, G.p
    type_in(s, G, 'extra = p:alloc("1 MiB", s)')
    output()
    s:restart()
    assert.matches("restarting lesson same_stream from step 1.*step 1/4", output())
    assert.is_false(a.live)
    assert.is_nil(G.a)
    assert.is_nil(G.extra)
    assert.are_not.equal(p, G.p)                     -- the setup ran again
    assert.equal(1, s.step)
    type_in(s, G, 'a = p:alloc("4 MiB", s)')
    assert.matches("\u{2713} step 1 done", output(), 1, true)
    free_all(G)
  end)

  it("restart() destroys the setup's pool and stream: one p and one s after it", function()
    local s, G, output = session("same_stream")
    s:start()
    type_in(s, G, 'a = p:alloc("4 MiB", s)')
    local old_p, old_s = G.p, G.s
    poolsh.live.width, poolsh.live.color = 80, false
    poolsh.watch(true)
    s:restart()
    local lines = table.concat(poolsh.live.lines(), "\n")
    poolsh.watch(false); poolsh.live.width = nil
    output()
    local alive_p, alive_s = old_p.live, old_s.live
    local shown = table.concat(require("poolsh.live.show").show_lines(), "\n")
    type_in(s, G, 'a = p:alloc("4 MiB", s)')     -- the learner's a is a again, not a#2
    local name = G.a.name
    free_all(G)
    if old_p.live then old_p:destroy() end
    if old_s.live then old_s:destroy() end
    assert.is_false(alive_p, "the old p is still live after restart()")
    assert.is_false(alive_s, "the old s is still live after restart()")
    assert.equal("", lines)                         -- no line for the old p (nor "p  destroyed")
    local _, ps = ("\n" .. shown):gsub("\n%s*p%s", "")
    local _, ss = ("\n" .. shown):gsub("\n%s*s%s", "")
    assert.equal(1, ps, shown)
    assert.equal(1, ss, shown)
    assert.equal("a", name)
  end)

  it("waits without a hint while the step is half done", function()
    local s, G, output = session("release_threshold")
    s:start()
    output()
    type_in(s, G, 'b = p:alloc("64 MiB", s)')
    assert.equal("", output())                          -- not freed yet: no nag
    type_in(s, G, "b:free()")
    assert.equal("", output())
    type_in(s, G, "s:sync()")
    assert.matches("\u{2713} step 1 done", output(), 1, true)
    free_all(G)
  end)

  it("check() says what it waits for; hint(), lesson() and skip() help", function()
    local s, G, output = session("cross_stream", nil)
    s:start()
    output()
    s:check()
    s:after()
    local text = output()
    assert.matches("waiting for a:free()", text, 1, true)
    assert.equal(1, select(2, text:gsub("\u{2717}", "")))   -- said once, not again by after()
    s:hint()
    assert.matches("hint: poolsh.spin(s1", output(), 1, true)
    s:show()
    assert.matches("step 1/4", output(), 1, true)
    s:skip()
    assert.matches("the answer:\n  poolsh.spin(s1", output(), 1, true)
    s:after()
    assert.matches("\u{2713} step 1 done.-step 2/4", output())
    free_all(G)
  end)

  it("saves each step done, and resumes after them", function()
    local s, G, output, saved = session("same_stream")
    s:start()
    type_in(s, G, 'a = p:alloc("4 MiB", s)')
    type_in(s, G, 'poolsh.spin(s, "100 ms"); a:free()')
    assert.same({ 1, 2 }, saved)
    free_all(G)
    output()
    local s2, G2, output2 = session("same_stream", { lessons = { same_stream = { done = 2 } } })
    s2:start()
    local text = output2()
    assert.matches("resuming at step 3", text, 1, true)
    assert.equal(3, s2.step)
    type_in(s2, G2, 'b = p:alloc("4 MiB", s)')          -- a's free was replayed
    assert.matches("\u{2713} step 3 done", output2(), 1, true)
    free_all(G2)
  end)

  it("says a step cannot pass once the lesson's pool is destroyed, once, without a traceback", function()
    local s, G, output = session("same_stream")
    s:start()
    type_in(s, G, 'a = p:alloc("4 MiB", s)')
    output()
    type_in(s, G, "a:free(); p:destroy()")
    local text = output()
    assert.matches("\u{2717} this step cannot pass any more (p was destroyed): type restart()", text, 1, true)
    type_in(s, G, "x = poolsh.pool{}")
    assert.equal("", output())                           -- said once per step
    assert.is_nil(text:find("traceback", 1, true))
    assert.is_nil(text:find("learn.lua:", 1, true))
    G.s:sync()
  end)

  it("says a lesson whose setup raises failed, in one line", function()
    package.loaded["poolsh.lessons.broken_test"] = {
      setup = function() error("no device for this") end,
      steps = { { say = "x", check = function() end } },
    }
    local names = learn.names()
    names[#names + 1] = "broken_test"
    local ok, err = pcall(learn.start, "broken_test", { progress = { lessons = {} }, save = function() end })
    names[#names] = nil
    package.loaded["poolsh.lessons.broken_test"] = nil
    assert.is_false(ok)
    assert.matches("^lesson broken_test: setup failed: .*no device for this$", err)
    assert.is_nil(err:find("\n"))
  end)

  it("refuses an unknown lesson or number", function()
    assert.matches("unknown lesson 'nope' %(poolsh learn lists them%)", H.err(learn.load, "nope"))
    assert.matches("unknown lesson '99'", H.err(learn.load, "99"))
    assert.equal("cross_stream", learn.load("2").name)
  end)
end)

describe("progress", function()
  local dir
  before_each(function() dir = tmpdir(); learn.path = dir .. "/sub/learn.json" end)
  after_each(function() learn.path = nil; os.execute("rm -rf " .. H.quote(dir)) end)

  it("round-trips through the JSON file, making its directory", function()
    assert.same({ lessons = {} }, learn.load_progress())
    assert.is_true(learn.save_progress { lessons = { trim = { done = 3, finished = false } } })
    assert.same({ lessons = { trim = { done = 3, finished = false } } }, learn.load_progress())
    assert.matches('"done":3', read(learn.path))
  end)

  it("a corrupt file warns in one line and starts fresh", function()
    os.execute("mkdir -p " .. H.quote(dir .. "/sub"))
    for _, text in ipairs { "{not json", "[1, 2]", '{"lessons": {"trim": {"done": -1}}}', "" } do
      write(learn.path, text)
      local out, err, code = H.poolsh_cmd("--backend=sim learn", "POOLSH_LEARN_STATE=" .. H.quote(learn.path))
      assert.equal(0, code, err)
      assert.matches("^poolsh learn: ignoring the progress file .- %(.-%); starting fresh\n", err)
      assert.is_nil(err:find("traceback"))
      assert.matches("1  same_stream .- next", out)
    end
  end)
end)

describe("poolsh learn (the command)", function()
  local dir, env
  before_each(function()
    dir = tmpdir()
    env = "POOLSH_LEARN_STATE=" .. H.quote(dir .. "/learn.json")
  end)
  after_each(function() os.execute("rm -rf " .. H.quote(dir)) end)

  it("lists the lessons in order, the first next", function()
    local out, err, code = H.poolsh_cmd("--backend=sim learn", env)
    assert.equal(0, code, err)
    local names = learn.names()
    for i, name in ipairs(names) do assert.matches("  " .. i .. "  " .. name, out, 1, true) end
    assert.matches("1  same_stream%s+Same%-stream reuse%s+next\n", out)
    assert.matches("progress: " .. dir, out, 1, true)
  end)

  it("shows done lessons and where the next one is", function()
    write(dir .. "/learn.json", '{"lessons": {"same_stream": {"done": 4, "finished": true},'
      .. ' "cross_stream": {"done": 2}}}')
    local out = H.poolsh_cmd("--backend=sim learn", env)
    assert.matches("same_stream%s+Same%-stream reuse%s+done\n", out)
    assert.matches("cross_stream%s+Cross%-stream reuse%s+2/4 steps, next\n", out)
  end)

  it("keeps progress under $XDG_STATE_HOME, else ~/.local/state", function()
    local out = H.poolsh_cmd("--backend=sim learn",
      "env -u POOLSH_LEARN_STATE XDG_STATE_HOME=" .. H.quote(dir .. "/xdg"))
    assert.matches("progress: " .. dir .. "/xdg/poolsh/learn.json\n", out, 1, true)
    out = H.poolsh_cmd("--backend=sim learn",
      "env -u POOLSH_LEARN_STATE -u XDG_STATE_HOME HOME=" .. H.quote(dir))
    assert.matches("progress: " .. dir .. "/.local/state/poolsh/learn.json\n", out, 1, true)
  end)

  it("--reset forgets the progress", function()
    write(dir .. "/learn.json", '{"lessons": {"same_stream": {"done": 4, "finished": true}}}')
    local out, _, code = H.poolsh_cmd("--backend=sim learn --reset", env)
    assert.equal(0, code)
    assert.matches("progress cleared", out)
    assert.is_nil(read(dir .. "/learn.json"))
  end)

  it("starts a lesson by number and ends at the end of input (stdin not a terminal)", function()
    local out, err, code = H.poolsh_cmd("--backend=sim learn 2", env)
    assert.equal(0, code, err)
    assert.matches("Cross-stream reuse, step 1/4", out, 1, true)
    assert.matches("poolsh learn: stdin is not a terminal: it runs as a script, without the checks\n", err, 1, true)
    assert.is_nil(err:find("traceback"))
  end)

  for _, case in ipairs {
    { "learn nope", "poolsh learn: unknown lesson 'nope' %(poolsh learn lists them%)" },
    { "learn 0", "poolsh learn: unknown lesson '0'" },
    { "learn --frob", "poolsh learn: unknown option '%-%-frob'" },
    { "learn trim same_stream", "poolsh learn: one lesson at a time" },
    { "learn --reset trim", "poolsh learn: %-%-reset takes no lesson" },
  } do
    it("refuses `" .. case[1] .. "` in one line, exit 1", function()
      local out, err, code = H.poolsh_cmd("--backend=sim " .. case[1], env)
      assert.equal(1, code)
      assert.equal("", out)
      assert.matches(case[2], err)
      assert.equal(1, select(2, err:gsub("\n", "")), err)
    end)
  end
end)

-- ---- through a pseudo-terminal ---------------------------------------------------

local SOCK = ("poolsh-learn-%d-%d"):format(os.time(), math.random(1e6))
local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
local function screen() return (tmux("capture-pane -p -J -S -200 -t learn")) end
local KEYS = { Enter = true, ["C-c"] = true, ["C-d"] = true }
local function send(...)
  for i = 1, select("#", ...) do
    local k = select(i, ...)
    tmux("send-keys -t learn " .. (KEYS[k] and "" or "-l ") .. H.quote(k))
  end
end
local function wait_for(pat, plain)
  return H.poll(function() return screen():find(pat, 1, plain) end, 8)
end
-- Types a statement and waits for what it should print.
local function line(text, expect_text)
  send(text, "Enter")
  assert.truthy(wait_for(expect_text, true), "no '" .. expect_text .. "':\n" .. screen())
end

describe("poolsh learn in a terminal", function()
  local dir, run
  before_each(function()
    dir = tmpdir()
    run = { state = dir .. "/learn.json", err = dir .. "/err", rc = dir .. "/rc" }
  end)
  after_each(function()
    tmux("kill-server")
    os.execute("rm -rf " .. H.quote(dir))
  end)

  local function start(lesson, width)
    tmux("kill-server")
    local cmd = ("env POOLSH_LEARN_STATE=%s POOLSH_HISTORY=%s %s --backend=sim learn %s 2>%s; echo $? >%s")
      :format(H.quote(run.state), H.quote(dir .. "/hist"), H.exe, lesson, H.quote(run.err), H.quote(run.rc))
    tmux(("new-session -d -s learn -x %d -y 50 "):format(width or 200) .. H.quote(cmd))
    assert.truthy(wait_for("learn %d/%d> "), "no prompt:\n" .. screen())
  end
  local function ended()
    assert.truthy(H.poll(function() return read(run.rc) end, 8), "poolsh did not end:\n" .. screen())
    return read(run.rc), read(run.err) or ""
  end

  it("shows the step, hints after a wrong answer, advances on a right one", function()
    start("same_stream")
    assert.is_nil(screen():find("not a terminal", 1, true))
    assert.truthy(wait_for("Allocate 4 MiB from p on stream s and call it a", true), screen())
    line("print('look ' .. 6 * 7)", "look 42")
    assert.is_nil(screen():find("\u{2717}"))                 -- print() is not nagged
    line('a = p:alloc("1 MiB", s)', "hint: p:alloc(size, stream)")
    assert.truthy(wait_for("\u{2717} a's size: expected 4194304 (4.00 MiB), observed 1048576 (1.00 MiB)", true),
      screen())
    line('a = p:alloc("4 MiB", s)', "\u{2713} step 1 done")
    assert.truthy(wait_for("learn 2/4> ", true), screen())
    assert.truthy(wait_for("step 2/4 --\nQueue 100 ms of work on s", true), screen())
  end)

  it("Ctrl-C clears the line and the lesson goes on; Ctrl-D leaves and progress persists", function()
    start("same_stream")
    send('a = p:alloc("64 MiB", s)')                          -- half an answer, dropped
    send("C-c")
    assert.truthy(wait_for('a = p:alloc("64 MiB", s)^C\nlearn 1/4> ', true), screen())
    line('a = p:alloc("4 MiB", s)', "\u{2713} step 1 done")
    assert.is_nil(screen():find("64.00 MiB", 1, true))        -- the dropped line never ran
    send("C-d")
    local rc, err = ended()
    assert.equal("0\n", rc)
    assert.is_nil(err:find("traceback"), err)
    assert.matches("1 buffer still live at exit", err)
    assert.matches('"same_stream":{.-"done":1', read(run.state))

    start("same_stream")
    assert.truthy(wait_for("resuming at step 2", true), screen())
    assert.truthy(wait_for("learn 2/4> ", true), screen())
    line("skip()", "\u{2713} step 2 done")
    assert.truthy(wait_for("learn 3/4> ", true), screen())
    line('b = p:alloc("4 MiB", s)', "\u{2713} step 3 done")
    send("C-d")
    assert.equal("0\n", (ended()))
    assert.matches('"done":3', read(run.state))
  end)

  -- a's free done, then a collected buffer's free pending in a's range: p's
  -- pending total is 4 MiB, but a's own free is not pending any more
  local NOT_A = 'poolsh.spin(s, "100 ms"); a:free(); s:sync(); poolsh.spin(s, "100 ms"); '
    .. 't = p:alloc("4 MiB", s); t = nil; collectgarbage(); collectgarbage()'

  it("checks a's own free, not p's pending total; says the step cannot pass; restart() starts over", function()
    start("same_stream")
    line('a = p:alloc("4 MiB", s)', "\u{2713} step 1 done")
    line(NOT_A, "collected: b2 (4.00 MiB)")
    assert.truthy(wait_for("\u{2717} this step cannot pass any more (a's free is no longer pending: it completed"
      .. " or its memory was reused): type restart()", true), screen())
    assert.is_nil(screen():find("step 2 done", 1, true))
    assert.truthy(wait_for("learn 2/4> ", true), screen())
    line("restart()", "restarting lesson same_stream from step 1")
    assert.truthy(wait_for("restarting lesson same_stream from step 1.*learn 1/4> "), screen())
    line("print('a is ' .. tostring(a))", "a is nil")           -- the learner's objects are gone
    line('a = p:alloc("4 MiB", s)', "\u{2713} step 1 done")
    line('poolsh.spin(s, "100 ms"); a:free()', "\u{2713} step 2 done")
    send("C-d")
    assert.equal("0\n", (ended()))
    assert.matches('"done":2', read(run.state))
  end)

  it("skip() of a step that still does not hold says so, never done", function()
    start("same_stream")
    line('a = p:alloc("4 MiB", s)', "\u{2713} step 1 done")
    line("a:free(); s:sync()", "\u{2717}")                      -- a's free is done: step 2 cannot hold
    line("skip()", "step 2 skipped: it still does not hold")
    assert.truthy(wait_for("learn 3/4> ", true), screen())
    assert.is_nil(screen():find("step 2 done", 1, true))
    local text = screen()
    assert.is_nil(text:find("\u{2713}", text:find("learn 2/4> skip()", 1, true), true), text)
  end)

  it("fits 80 columns and names the learner's objects after their variables", function()
    start("cross_stream", 80)
    line('b = p:alloc("4 MiB", s1)', "\n  b 4.00 MiB from p on s1: fresh memory")
    line("skip()", "step 1 done")
    send("C-d")
    assert.equal("0\n", (ended()))
    -- the screen with the lines the terminal folded joined again (-J)
    local joined = screen()
    for l in joined:gmatch("[^\n]+") do assert.is_true(utf8.len(l) <= 80, l) end
    assert.is_nil(joined:find("p1", 1, true), joined)
    assert.is_nil(joined:find(" b%d"), joined)
  end)

  it("finishes a lesson, names the next, and gives the prompt back", function()
    write(run.state, '{"lessons": {"same_stream": {"done": 3}}}')
    start("same_stream")
    line('for i = 1, 10 do b:free(); b = p:alloc("4 MiB", s) end', "lesson same_stream done")
    assert.truthy(wait_for("Next: poolsh learn cross_stream", true), screen())
    assert.truthy(wait_for("\npoolsh> ", true), screen())
    send("C-d")
    assert.equal("0\n", (ended()))
    assert.matches('"finished":true', read(run.state))
  end)
end)
