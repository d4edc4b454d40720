-- The facilitator's guide (docs/workshop/README.md) walked end to end on
-- the sim, as a facilitator preparing the day would: every `poolsh ...`
-- command it names in its prose and tables runs; every function it tells
-- people to type at the prompt runs at a lesson's prompt in a terminal;
-- and on every workshop page, a ```text block right after a ```sh block
-- is what that block's last command prints (its lines, in order, each
-- found in a line of the output: the figures the pages quote stay true).
-- workshop_spec.lua runs the pages' sh and lua blocks themselves.
local H = require "helpers"

local DIR = "docs/workshop"
local GUIDE = DIR .. "/README.md"

local function absolute(path)
  if path:sub(1, 1) == "/" then return path end
  return assert(os.getenv("PWD")) .. "/" .. path
end
local EXE = absolute(H.exe)

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. H.quote(d)))
  return d
end

-- Runs a command as the guide shows it, in dir, on the sim, at 80 columns,
-- with learn's progress and history kept in dir.
local function run(cmdline, dir)
  local env = ("POOLSH_BACKEND=sim COLUMNS=80 POOLSH_LEARN_STATE=%s POOLSH_HISTORY=%s")
    :format(H.quote(dir .. "/learn.json"), H.quote(dir .. "/history"))
  local cmd = cmdline:gsub("^poolsh", function() return H.quote(EXE) end)
  return H.sh(("cd %s && env %s timeout 120 %s"):format(H.quote(dir), env, cmd))
end

-- The text of a page outside its fenced blocks, and its fenced blocks
-- {lang, lines, n} in order; a fence may be indented (in a list item),
-- and its lines lose that indentation.
local function split(text)
  local prose, blocks, cur, n = {}, {}, nil, 0
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local indent, lang = line:match("^(%s*)```(%w*)%s*$")
    if cur == nil and lang then cur = { lang = lang, lines = {}, n = n, indent = #indent }
    elseif cur and line:match("^%s*```%s*$") then blocks[#blocks + 1], cur = cur, nil
    elseif cur then cur.lines[#cur.lines + 1] = line:sub(#line:match("^%s*") >= cur.indent and cur.indent + 1 or 1)
    else prose[#prose + 1] = line end
  end
  assert(cur == nil, "a fence is not closed")
  return table.concat(prose, "\n"), blocks
end

--- The output checks of a page: {command, expected = {lines}, n} for each
-- text block that follows a sh block.
local function output_checks(text)
  local _, blocks = split(text)
  local checks = {}
  for i = 2, #blocks do
    local sh, out = blocks[i - 1], blocks[i]
    if out.lang == "text" and sh.lang == "sh" then
      local last
      for _, l in ipairs(sh.lines) do
        local cmd = l:gsub("^%$ ", ""):gsub("%s+#.*$", "")
        if cmd:match("^poolsh%f[%s]") then last = cmd end
      end
      assert(last, "the text block at line " .. out.n .. " follows a sh block with no poolsh command")
      local expected = {}
      for _, l in ipairs(out.lines) do
        l = l:gsub("%s+$", "")
        if l ~= "" and l ~= "..." then expected[#expected + 1] = l end
      end
      checks[#checks + 1] = { command = last, expected = expected, n = out.n }
    end
  end
  return checks
end

-- The placeholders a guide's command may carry, and what the walk types.
local PLACEHOLDERS = { NAME = "same_stream" }

--- The `poolsh ...` commands the guide's prose and tables name, with
-- their placeholders filled; raises for a placeholder the walk cannot fill.
-- A message quoted from poolsh (`poolsh learn: ...`, `poolsh was built
-- without CUDA: ...`: a colon and a space, or elided with "...") is not
-- a command.
local function prose_commands(text)
  local prose = split(text)
  local list, seen = {}, {}
  for span in prose:gmatch("`(poolsh%s[^`]+)`") do
    span = span:gsub("%s+", " ")
    if span:find("...", 1, true) or span:find(": ", 1, true) then goto message end
    local cmd = span:gsub("%u[%u_]+", function(word)
      return assert(PLACEHOLDERS[word], "no value for the placeholder " .. word .. " in `" .. span .. "`")
    end)
    if not seen[cmd] then seen[cmd] = true; list[#list + 1] = cmd end
    ::message::
  end
  return list
end

--- The calls the guide tells people to type at the prompt: `hint()`,
-- `poolsh.watch(false)`, `p:trim(0)`, ...
local function prompt_calls(text)
  local prose = split(text)
  local list, seen = {}, {}
  for span in prose:gmatch("`([%a_][%w_.:]*%b())`") do
    if not seen[span] then seen[span] = true; list[#list + 1] = span end
  end
  return list
end

describe("the guide's walk", function()
  it("finds commands, placeholders, calls and output blocks", function()
    local page = table.concat({
      "Run `poolsh run NAME --report\nNAME.html` then `poolsh learn: bad ...; x` or `poolsh scenarios`; type `hint()` or",
      "`poolsh.watch(false)`, not `poolsh.device().name`.", "```sh", "poolsh run x  # note", "```", "",
      "```text", "== x", "...", "PASS x  ", "```", "```lua", "`poolsh no` -- not prose", "```",
      "- item", "  ```sh", "  poolsh run y", "  ```", "  ```text", "      ratio 2x", "  ```" }, "\n")
    assert.same({ "poolsh run same_stream --report same_stream.html", "poolsh scenarios" },
      prose_commands(page))
    assert.same({ "hint()", "poolsh.watch(false)" }, prompt_calls(page))
    assert.same({ { command = "poolsh run x", expected = { "== x", "PASS x" }, n = 8 },
                  { command = "poolsh run y", expected = { "    ratio 2x" }, n = 20 } }, output_checks(page))
    assert.has_error(function() prose_commands("`poolsh run FILE`") end)
  end)
end)

describe("the facilitator's guide, walked on the sim", function()
  local guide = H.slurp(GUIDE)
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf " .. H.quote(dir)) end)

  for _, cmd in ipairs(prose_commands(guide)) do
    it("runs `" .. cmd .. "`", function()
      local out, err, code = run(cmd, dir)
      assert.equal(0, code, out .. err)
      assert.is_nil(err:find("stack traceback", 1, true), err)
      local report = cmd:match("%-%-report%s+(%S+)")
      if report then assert.truthy(H.slurp(dir .. "/" .. report):find("<html", 1, true)) end
    end)
  end

  it("names commands to run", function()
    assert.is_true(#prose_commands(guide) >= 4, "the guide names almost no commands")
  end)
end)

describe("the workshop pages' outputs", function()
  local f = assert(io.popen("ls " .. DIR .. "/*.md"))
  local pages = {}
  for path in f:lines() do pages[#pages + 1] = path end
  f:close()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf " .. H.quote(dir)) end)
  for _, path in ipairs(pages) do
    for _, c in ipairs(output_checks(H.slurp(path))) do
      it(("%s:%d: `%s` prints what the page shows"):format(path, c.n, c.command), function()
        local out, err = run(c.command, dir)
        local lines = {}
        for l in (out .. err):gmatch("[^\n]+") do lines[#lines + 1] = l end
        local at = 1
        for _, want in ipairs(c.expected) do
          local found
          for i = at, #lines do
            if lines[i]:find(want, 1, true) then found = i; break end
          end
          assert.truthy(found, ("'%s' not printed (after line %d):\n%s"):format(want, at - 1, out .. err))
          at = found + 1
        end
      end)
    end
  end
end)

-- ---- the prompt's functions, in a lesson in a terminal --------------------------

local SOCK = ("poolsh-guide-%d-%d"):format(os.time(), math.random(1e6))
local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
local function screen() return (tmux("capture-pane -p -J -S -300 -t guide")) end
local function send(text)
  tmux("send-keys -t guide -l " .. H.quote(text))
  tmux("send-keys -t guide Enter")
end
local function prompts()
  local _, n = screen():gsub("learn %d+/%d+> ", "")
  local _, m = screen():gsub("poolsh> ", "")
  return n + m
end

describe("what the guide tells people to type at the prompt", function()
  local guide = H.slurp(GUIDE)
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function()
    tmux("kill-server")
    os.execute("rm -rf " .. H.quote(dir))
  end)

  it("names the lesson helpers", function()
    local calls = {}
    for _, c in ipairs(prompt_calls(guide)) do calls[c] = true end
    for _, want in ipairs { "hint()", "skip()", "check()", "restart()" } do
      assert.truthy(calls[want], "the guide does not name " .. want)
    end
  end)

  for _, call in ipairs(prompt_calls(guide)) do
    it("runs `" .. call .. "` at a lesson's prompt", function()
      local cmd = ("env POOLSH_LEARN_STATE=%s POOLSH_HISTORY=%s %s --backend=sim learn same_stream")
        :format(H.quote(dir .. "/learn.json"), H.quote(dir .. "/history"), EXE)
      tmux("new-session -d -s guide -x 120 -y 50 " .. H.quote(cmd))
      assert.truthy(H.poll(function() return prompts() >= 1 end, 10), "no prompt:\n" .. screen())
      -- the lesson's p and s, and a buffer b for the calls that name one
      send('b = p:alloc("1 MiB", s)')
      assert.truthy(H.poll(function() return prompts() >= 2 end, 10), screen())
      send(call)
      assert.truthy(H.poll(function() return prompts() >= 3 end, 10), "no prompt after " .. call .. ":\n" .. screen())
      local s = screen()
      assert.is_nil(s:find("stack traceback", 1, true), s)
      assert.is_nil(s:find("attempt to", 1, true), s)
      assert.is_nil(s:find("stdin:%d+:"), s)   -- a Lua error's position
    end)
  end
end)
