-- Each lesson step passes only when what its text asks was done: for
-- every step whose check once accepted less, a partial (or wrong) answer
-- leaves the step where it is, and the rest of the answer then passes it.
local poolsh = require "poolsh"
local learn = require "poolsh.learn"

-- Frees the live buffers a lesson left in G (globals and tables of them),
-- and what the caching allocator's blocks and cache hold.
local function free_all(G)
  if G.cache then
    for _, b in ipairs(rawget(G, "blocks") or {}) do pcall(G.cache.free, G.cache, b) end
    if rawget(G, "again") then pcall(G.cache.free, G.cache, G.again) end
    G.cache:empty_cache()
  end
  local function free(v)
    local mt = type(v) == "userdata" and getmetatable(v)
    if mt and mt.__name == "poolsh.Buffer" and v.live then v:free() end
  end
  for _, v in pairs(G) do
    if type(v) == "table" and getmetatable(v) == nil then for _, x in pairs(v) do free(x) end
    else free(v) end
  end
  poolsh.sync()
end

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
  { "host_memory", 3, "hp.release_threshold = 0; s:sync()", nil },
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

describe("each lesson step's text", function()
  for _, name in ipairs(learn.names()) do
    it(name .. ": every step names what to watch in the live lines", function()
      for n, st in ipairs(learn.load(name).steps) do
        assert.matches("[Ww]atch", st.say, 1, false, ("step %d"):format(n))
      end
    end)
  end
end)
