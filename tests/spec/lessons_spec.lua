-- Each lesson step passes only when what its text asks was done: for
-- every step whose check once accepted less, a partial (or wrong) answer
-- leaves the step where it is, and the rest of the answer then passes it.
local poolsh = require "poolsh"
local learn = require "poolsh.learn"
local H = require "helpers"

local free_all = H.free_lesson

-- A session of lesson `name` at step `step`, the earlier steps answered
-- with their solutions; its output collected, progress in memory.
local function at_step(name, step)
  local G = setmetatable({ poolsh = poolsh }, { __index = _G })
  local out = {}
  local s = learn.new(learn.load(name), {
    G = G, out = function(t) out[#out + 1] = t end,
    progress = { lessons = {} }, save = function() end,
  })
  s:start()
  local function type_in(code)
    assert(load(code, "=stdin", "t", G))()
    s:after()
  end
  for n = 1, step - 1 do type_in(s.lesson.steps[n].solution) end
  assert.equal(step, s.step)
  out = {}
  return s, G, type_in, function() local t = table.concat(out); out = {}; return t end
end

-- Whether session s is past step `step`.
local function passed(s, step) return s.step > step or s.finished == true end

-- lesson, step, a partial or wrong answer, what completes it (nil: the
-- partial answer spoils the step: the solution is tried in a fresh session)
local cases = {
  { "same_stream", 1, 'a = poolsh.malloc("4 MiB")', nil },
  { "same_stream", 2, "a:free()", nil },
  { "same_stream", 3, 'b = p:alloc("1 MiB", s)', nil },
  { "cross_stream", 1, 'a:free(); b = p:alloc("16 MiB", s2)', nil },
  { "cross_stream", 3, 'c:free(); s2:sync(); d = p:alloc("16 MiB", s1)', nil },
  { "cross_stream", 4,
    'x = p:alloc("16 MiB", s1); poolsh.spin(s1, "100 ms"); x:free(); y = p:alloc("16 MiB", s2)', nil },
  { "release_threshold", 1, 'b = p:alloc("1 MiB", s); b:free(); s:sync()', nil },
  { "release_threshold", 1, 'b = p:alloc("64 MiB", s); b:free()', "s:sync()" },
  { "release_threshold", 2, 'p.release_threshold = "max"; b = p:alloc("1 MiB", s); b:free(); s:sync()',
    'b = p:alloc("64 MiB", s); b:free(); s:sync()' },
  { "release_threshold", 3, 'c = p:alloc("1 MiB", s)', nil },
  { "release_threshold", 4, "c:free(); p.release_threshold = 0; s:sync()", nil },
  { "trim", 5, "bufs[1]:free(); p.release_threshold = 0; s:sync()", nil },
  { "host_memory", 1, "poolsh.register(pag)", "poolsh.fill(pag, 1, s)" },
  { "host_memory", 1, "pcall(poolsh.fill, pag, 1, s); poolsh.register(pag)", "poolsh.fill(pag, 1, s)" },
  { "host_memory", 1, "poolsh.register(pag); s:record()", "poolsh.fill(pag, 1, s)" },
  { "host_memory", 1, 'poolsh.register(pag); pin = poolsh.pinned("1 MiB"); poolsh.fill(pin, 1, s)', "poolsh.fill(pag, 7, s)" },
  { "host_memory", 3, "hp.release_threshold = 0; s:sync()", nil },
  { "trim", 1, 'bufs = {p:alloc("128 MiB", s), 1, 2, 3, 4, 5, 6, 7}', nil },
  { "caching_allocator", 1, 'blocks = {cache:alloc("32 MiB", s), 1, 2, 3, 4, 5, 6, 7}', nil },
  { "caching_allocator", 3, 'again = cache:alloc("1 MiB", s)', nil },
}

describe("a lesson step", function()
  for _, c in ipairs(cases) do
    local name, step, partial, rest = c[1], c[2], c[3], c[4]
    it(("%s step %d does not pass on `%s`"):format(name, step, partial), function()
      local s, G, type_in = at_step(name, step)
      type_in(partial)
      assert.is_false(passed(s, step), "the partial answer passed the step")
      if rest then
        type_in(rest)
        assert.is_true(passed(s, step), "the completed answer did not pass the step")
      end
      free_all(G)
      if not rest then                 -- the right answer, from the same start
        local s2, G2, type_in2, output2 = at_step(name, step)
        type_in2(s2.lesson.steps[step].solution)
        assert.is_true(passed(s2, step), output2())
        free_all(G2)
      end
    end)
  end
end)

describe("a lesson's names", function()
  it("release_threshold step 3: the b its text says 'reused b's memory' of is b, not b#2", function()
    local s, G = at_step("release_threshold", 3)
    local name = G.b.name
    free_all(G)
    assert.matches("reused b's memory", s.lesson.steps[3].say, 1, true)
    assert.equal("b", name)
  end)

  it("same_stream: the loop's last b is b", function()
    local s, G, type_in = at_step("same_stream", 4)
    type_in(s.lesson.steps[4].solution)
    local name = G.b.name
    free_all(G)
    assert.equal("b", name)
  end)
end)

describe("a step that asks to watch a pool's line", function()
  before_each(function() poolsh.live.width, poolsh.live.color = 80, false end)
  after_each(function() poolsh.watch(false); poolsh.live.width = nil end)
  for _, c in ipairs {
    { "cross_stream", 3, "Watch p's line", "p  reserved 32.00 MiB  used 32.00 MiB  pending 0 B" },
    { "same_stream", 4, "p's line", "p  reserved 32.00 MiB  used 4.00 MiB  pending 0 B" },
  } do
    local name, step, asks, want = c[1], c[2], c[3], c[4]
    it(("%s step %d gets it, though its frees leave pending where it was"):format(name, step), function()
      local s, G, type_in = at_step(name, step)
      poolsh.watch(true)
      type_in(s.lesson.steps[step].solution)
      local text = table.concat(poolsh.live.lines(), "\n")
      local ok = passed(s, step)
      free_all(G)
      assert.matches(asks, s.lesson.steps[step].say, 1, true)
      assert.is_true(ok)
      assert.matches("\n" .. want, "\n" .. text, 1, true)
    end)
  end
end)

describe("each lesson step's text", function()
  for _, name in ipairs(learn.names()) do
    it(name .. ": every step names what to watch in the live lines", function()
      for n, st in ipairs(learn.load(name).steps) do
        assert.matches("[Ww]atch", st.say, 1, false, ("step %d"):format(n))
      end
    end)
  end
end)

-- ---- through a pseudo-terminal, 80 columns -------------------------------------

local SOCK = ("poolsh-lessons-%d-%d"):format(os.time(), math.random(1e6))
local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
local function screen() return (tmux("capture-pane -p -S -200 -t learn")) end
local function wait_for(pat) return H.poll(function() return screen():find(pat, 1, true) end, 8) end
local function line(text, expect_text)
  tmux("send-keys -t learn -l " .. H.quote(text))
  tmux("send-keys -t learn Enter")
  assert.truthy(wait_for(expect_text), "no '" .. expect_text .. "':\n" .. screen())
end

describe("a lesson in an 80-column terminal", function()
  local dir
  before_each(function()
    dir = H.sh("mktemp -d"):gsub("%s+$", "")
  end)
  after_each(function()
    tmux("kill-server")
    os.execute("rm -rf " .. H.quote(dir))
  end)
  local function start(lesson)
    local cmd = ("env POOLSH_LEARN_STATE=%s POOLSH_HISTORY=%s %s --backend=sim learn %s")
      :format(H.quote(dir .. "/learn.json"), H.quote(dir .. "/hist"), H.exe, lesson)
    tmux("new-session -d -s learn -x 80 -y 50 " .. H.quote(cmd))
    assert.truthy(wait_for("learn 1/"), "no prompt:\n" .. screen())
  end

  it("release_threshold: the one-liner's line shows the peak it went through", function()
    start("release_threshold")
    line('b = p:alloc("64 MiB", s); b:free(); s:sync()', "\u{2713} step 1 done")
    assert.truthy(wait_for("p  reserved 0 B (peak 64.00 MiB)  used 0 B (peak 64.00 MiB)"), screen())
  end)

  it("host_memory: registering alone does not pass step 1; the fill does", function()
    start("host_memory")
    line("poolsh.register(pag)", "learn 1/3> ")
    H.rsleep(0.3)
    assert.is_nil(screen():find("step 1 done", 1, true))
    line("poolsh.fill(pag, 1, s)", "\u{2713} step 1 done")
  end)

  it("caching_allocator: the cache's own lines, and what empty_cache gave back", function()
    start("caching_allocator")
    line('blocks = {}; for i = 1, 8 do blocks[i] = cache:alloc("4 MiB", s) end', "\u{2713} step 1 done")
    assert.truthy(wait_for("cache.1 4.00 MiB from cache: fresh segment (cudaMalloc 20.00 MiB)"), screen())
    assert.is_nil(screen():find("not pool memory", 1, true))
    line("for i = 1, 8 do cache:free(blocks[i]) end", "\u{2713} step 2 done")
    line('again = cache:alloc("4 MiB", s)', "reused cache.5's memory (cached block)")
    line("cache:empty_cache()", "cache released 20.00 MiB (empty_cache)")
    for l in screen():gmatch("[^\n]+") do assert.is_true(utf8.len(l) <= 80, l) end
  end)
end)
