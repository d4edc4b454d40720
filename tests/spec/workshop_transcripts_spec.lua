-- The workshop pages' lesson transcripts (docs/workshop/0*.md) are what
-- poolsh prints: each block of `learn N/M> ...` lines is replayed through
-- learn's Session API from step N of the lesson the page names (`poolsh
-- learn NAME`), the steps before it answered with their solutions; each
-- line the page shows under a typed line must be printed by that statement,
-- in the page's order. A line `...` marks lines left out.
local poolsh = require "poolsh"
local learn = require "poolsh.learn"
local naming = require "poolsh.naming"
local H = require "helpers"

local free_all = H.free_lesson

-- The transcripts of one page: {lesson, {step, code, shown = {lines}}...}.
local function transcripts(path)
  local f = assert(io.open(path, "rb"))
  local page = f:read("a")
  f:close()
  local list, lesson, pos = {}, nil, 1
  while true do
    local a, b, body = page:find("\n```[%w]*\n(.-)\n```", pos)
    if not a then break end
    for name in page:sub(pos, a):gmatch("poolsh learn ([%w_]+)") do lesson = name end
    if body:find("^learn %d+/%d+> ") then
      local t = { lesson = lesson, typed = {} }
      for l in (body .. "\n"):gmatch("(.-)\n") do
        local step, code = l:match("^learn (%d+)/%d+> (.*)$")
        if step then t.typed[#t.typed + 1] = { step = tonumber(step), code = code, shown = {} }
        elseif not l:match("^%s*%.%.%.%s*$") then
          local cur = t.typed[#t.typed]
          cur.shown[#cur.shown + 1] = l
        end
      end
      list[#list + 1] = t
    end
    pos = b
  end
  return list
end

local pages = {}
local p = io.popen("ls docs/workshop/0*.md")
for l in p:lines() do pages[#pages + 1] = l end
p:close()

describe("the workshop pages' lesson transcripts", function()
  after_each(function() poolsh.watch(false); poolsh.live.width = nil end)

  it("are found", function()
    local n = 0
    for _, path in ipairs(pages) do n = n + #transcripts(path) end
    assert.is_true(n >= 3, "fewer transcripts than the pages hold")
  end)

  for _, path in ipairs(pages) do
    for k, t in ipairs(transcripts(path)) do
      it(("%s, transcript %d (lesson %s) is what poolsh prints"):format(path, k, tostring(t.lesson)), function()
        assert.truthy(t.lesson, "no `poolsh learn NAME` before the transcript")
        -- the pages show the sim's run: on a GPU, which cached block a hit
        -- takes follows cudaMalloc's addresses
        if not H.is_sim() then pending("the pages show what the sim prints") return end
        local G = setmetatable({ poolsh = poolsh }, { __index = _G })
        local out = {}
        local s = learn.new(learn.load(t.lesson), {
          G = G, out = function(x) out[#out + 1] = x end,
          progress = { lessons = {} }, save = function() end,
        })
        s:start()
        local function type_in(code)
          assert(load(code, "=stdin", "t", G))()
          naming.adopt(G)                              -- as the REPL's after()
          local lines = poolsh.live.lines()
          s:after()
          return lines
        end
        for n = 1, t.typed[1].step - 1 do type_in(s.lesson.steps[n].solution) end
        poolsh.live.width, poolsh.live.color = 80, false
        poolsh.watch(true)
        out = {}
        local problems = {}
        for _, ty in ipairs(t.typed) do
          if s.step ~= ty.step and not problems[1] then
            problems[#problems + 1] = ("at `%s`: the lesson is at step %s, the page says %d")
              :format(ty.code, tostring(s.step), ty.step)
          end
          local printed = type_in(ty.code)
          for _, x in ipairs(out) do
            for l in (x .. "\n"):gmatch("(.-)\n") do printed[#printed + 1] = l end
          end
          out = {}
          local i = 1
          for _, want in ipairs(ty.shown) do
            while i <= #printed and printed[i] ~= want do i = i + 1 end
            if i > #printed then
              problems[#problems + 1] = ("after `%s`: the page shows\n  %s\nbut poolsh printed\n  %s")
                :format(ty.code, want, table.concat(printed, "\n  "))
              break
            end
            i = i + 1
          end
        end
        free_all(G)
        assert.equal("", table.concat(problems, "\n"))
      end)
    end
  end
end)
