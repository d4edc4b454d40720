-- The workshop pages (docs/workshop/*.md) run as shown: every `poolsh`
-- line of their ```sh blocks, and each page's ```lua blocks as one
-- script, on the sim. A line marked `# fails: why` must fail.
local H = require "helpers"

local DIR = "docs/workshop"

local function pages()
  local list = {}
  local f = assert(io.popen("ls " .. DIR .. "/*.md"))
  for path in f:lines() do list[#list + 1] = path end
  f:close()
  table.sort(list)
  return list
end

--- What a page shows: commands = {{line, n, fails}} from its sh blocks
-- (`$ ` dropped, a trailing `# comment` cut), lua = its lua blocks
-- joined.
local function extract(text)
  local commands, lua, fence, n = {}, {}, nil, 0
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local opening = line:match("^%s*```(%w*)%s*$")
    if fence == nil and opening then
      fence = opening
    elseif fence ~= nil and line:match("^%s*```%s*$") then
      fence = nil
    elseif fence == "sh" then
      local cmd = line:gsub("^%s*", ""):gsub("^%$ ", "")
      if cmd:match("^poolsh%f[%s]") or cmd == "poolsh" then
        local comment = cmd:match("%s#%s*(.*)$")
        cmd = cmd:gsub("%s+#.*$", "")
        commands[#commands + 1] = { line = cmd, n = n,
                                    fails = comment and comment:match("^fails:") ~= nil }
      end
    elseif fence == "lua" then
      lua[#lua + 1] = line
    end
  end
  assert(fence == nil, "a fence is not closed")
  return commands, table.concat(lua, "\n")
end

local function absolute(path)
  if path:sub(1, 1) == "/" then return path end
  return assert(os.getenv("PWD")) .. "/" .. path
end

local EXE = absolute(H.exe)

-- Runs a shown command in a scratch directory, on the sim, with learn's
-- progress in it; stdin is /dev/null, and 120 s end a hang.
local function run(cmdline, dir)
  local env = ("POOLSH_BACKEND=sim POOLSH_LEARN_STATE=%s POOLSH_HISTORY=%s")
    :format(H.quote(dir .. "/learn.json"), H.quote(dir .. "/history"))
  local cmd = cmdline:gsub("^poolsh", function() return H.quote(EXE) end)
  return H.sh(("cd %s && env %s timeout 120 %s"):format(H.quote(dir), env, cmd))
end

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. H.quote(d)))
  return d
end

describe("the workshop pages", function()
  local list = pages()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf " .. H.quote(dir)) end)

  it("are the guide and at least six lessons", function()
    assert.is_true(#list >= 7, #list .. " pages")
    assert.equal(DIR .. "/README.md", list[#list])
    local readme = H.slurp(DIR .. "/README.md")
    for _, path in ipairs(list) do
      local page = path:match("[^/]+$")
      if page ~= "README.md" then assert.matches("(" .. page .. ")", readme, 1, true) end
    end
  end)

  it("run every scenario and every lesson somewhere", function()
    local shown = {}
    for _, path in ipairs(list) do
      for _, c in ipairs((extract(H.slurp(path)))) do
        local what, name = c.line:match("^poolsh%s+(%a+)%s+([%w_]+)")
        if what then shown[what .. " " .. name] = true end
      end
    end
    for _, name in ipairs(require "poolsh.scenarios") do
      assert.is_true(shown["run " .. name], "no page runs scenario " .. name)
    end
    for _, name in ipairs(require "poolsh.lessons") do
      assert.is_true(shown["learn " .. name], "no page starts lesson " .. name)
    end
  end)

  for _, path in ipairs(list) do
    local commands, lua = extract(H.slurp(path))
    for _, c in ipairs(commands) do
      it(("%s:%d `%s` %s"):format(path, c.n, c.line, c.fails and "fails as marked" or "succeeds"), function()
        local out, err, code = run(c.line, dir)
        if c.fails then
          assert.is_true(code ~= 0, "marked to fail, exit 0:\n" .. out .. err)
          assert.is_true(code ~= 124, "hung (timeout)")
        else
          assert.equal(0, code, out .. err)
          assert.is_nil(err:find("stack traceback", 1, true), err)
        end
      end)
    end
    if lua ~= "" then
      it(path .. ": the lua blocks run as one script and leave nothing live", function()
        local f = assert(io.open(dir .. "/page.lua", "wb"))
        f:write(lua, "\n")
        f:close()
        local out, err, code = run("poolsh page.lua", dir)
        assert.equal(0, code, out .. err)
        assert.is_nil(err:find("still live at exit", 1, true), err)
      end)
    end
  end
end)

describe("the extractor", function()
  it("takes poolsh lines of sh blocks, the fails mark, and lua blocks", function()
    local commands, lua = extract(table.concat({
      "```sh", "$ poolsh run x   # a comment", "poolsh learn y  # fails: no such lesson",
      "echo poolsh", "```", "```", "poolsh run not_in_sh", "```",
      "```lua", "a = 1", "```", "text", "```lua", "b = 2", "```" }, "\n"))
    assert.same({ { line = "poolsh run x", n = 2, fails = false },
                  { line = "poolsh learn y", n = 3, fails = true } }, commands)
    assert.equal("a = 1\nb = 2", lua)
  end)
end)
