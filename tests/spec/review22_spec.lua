-- Review of issue 22 (review22 branch): defects found, each a failing test.
local poolsh = require "poolsh"
local learn = require "poolsh.learn"
local H = require "helpers"

local function free_all(G)
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
  return s, G, type_in
end
local function passed(s, step) return s.step > step or s.finished == true end

describe("review22: 80 columns", function()
  it("poolsh golden --help fits 80 columns", function()
    local out = H.sh(H.exe .. " golden --help 2>&1")
    for l in out:gmatch("[^\n]+") do assert.is_true(utf8.len(l) <= 80, l) end
  end)
end)

describe("review22: help", function()
  it("help(p.alloc), as help() and docs/cli.md advertise, answers", function()
    local help = require "poolsh.help"
    local p = poolsh.pool {}
    local ok, e = pcall(help.entry, p.alloc)
    p:destroy()
    assert.is_true(ok, e)
    assert.equal(help.entry("Pool:alloc"), e)
  end)
end)

describe("review22: scenario narration and live lines name the same objects", function()
  it("run --all: internal_deps says 'on s1' and its lines say 'on s4'", function()
    local out = H.sh(H.exe .. " --backend=sim run --all 2>/dev/null")
    local sec = out:match("== internal_deps.-\n%s*2%.")
    assert.truthy(sec, out)
    assert.matches("on s1", sec, 1, true)
    assert.matches("from %S+ on s1:", sec)
  end)
  it("run same_stream: narration says 'on s', the lines 'on s1' and 'p1'", function()
    local out = H.sh(H.exe .. " --backend=sim run same_stream 2>/dev/null")
    assert.matches("allocate 4 MiB on s,", out, 1, true)
    assert.matches(" from p on s: ", out, 1, true)
  end)
end)

describe("review22: errors at the prompt in 80 columns", function()
  local SOCK = ("poolsh-r22-%d-%d"):format(os.time(), math.random(1e6))
  local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
  local function screen() return (tmux("capture-pane -p -S -200 -t r22")) end
  after_each(function() tmux("kill-server") end)
  it("a long error is folded at a space, not cut mid-word", function()
    local dir = H.sh("mktemp -d"):gsub("%s+$", "")
    tmux("new-session -d -s r22 -x 80 -y 30 " .. H.quote(("env HOME=%s POOLSH_HISTORY=%s/h %s --backend=sim")
      :format(dir, dir, H.exe)))
    assert.truthy(H.poll(function() return screen():find("poolsh>", 1, true) end, 8), screen())
    tmux("send-keys -t r22 -l " .. H.quote('p = poolsh.pool{}; x = p:alloc("a lot")'))
    tmux("send-keys -t r22 Enter")
    assert.truthy(H.poll(function() return screen():find("invalid size", 1, true) end, 8), screen())
    H.rsleep(0.3)
    local s = screen()
    os.execute("rm -rf " .. H.quote(dir))
    for l in s:gmatch("[^\n]+") do
      assert.is_false(utf8.len(l) == 80 and not l:find("%s$"), "cut at the edge: " .. l .. "\n" .. s)
    end
  end)
end)

describe("review22: poolsh help COMMAND", function()
  it("poolsh help run answers with run's help, not 'did you mean Raw'", function()
    local out = H.sh(H.exe .. " --backend=sim help run 2>&1")
    assert.matches("usage: poolsh", out, 1, true)
  end)
end)
