-- What a first-time user meets around the workshop: commands' usage in 80
-- columns, help for a Pool's own alloc and for a command, scenarios
-- naming their objects as their narration does, errors at the prompt
-- folded at words.
local poolsh = require "poolsh"
local H = require "helpers"

describe("the commands' usage", function()
  it("poolsh golden --help fits 80 columns", function()
    local out = H.sh(H.exe .. " golden --help 2>&1")
    for l in out:gmatch("[^\n]+") do assert.is_true(utf8.len(l) <= 80, l) end
  end)
end)

describe("help of a value", function()
  it("help(p.alloc) answers with Pool:alloc's entry, as help() and docs/cli.md say", function()
    local help = require "poolsh.help"
    local p = poolsh.pool {}
    local ok, e = pcall(help.entry, p.alloc)
    p:destroy()
    assert.is_true(ok, e)
    assert.equal(help.entry("Pool:alloc"), e)
  end)
end)

describe("a scenario's narration and live lines", function()
  it("name the same objects under run --all: internal_deps's s1 is s1 in its lines", function()
    local out = H.sh(H.exe .. " --backend=sim run --all 2>/dev/null")
    local sec = out:match("== internal_deps.-\n%s*2%.")
    assert.truthy(sec, out)
    assert.matches("on s1", sec, 1, true)
    assert.matches("from %S+ on s1:", sec)
  end)
  it("name the same objects in run same_stream: s and p", function()
    local out = H.sh(H.exe .. " --backend=sim run same_stream 2>/dev/null")
    assert.matches("allocate 4 MiB on s,", out, 1, true)
    assert.matches(" from p on s: ", out, 1, true)
  end)
end)

describe("errors at the prompt in 80 columns", function()
  local SOCK = ("poolsh-first-%d-%d"):format(os.time(), math.random(1e6))
  local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
  local function screen() return (tmux("capture-pane -p -S -200 -t first")) end
  after_each(function() tmux("kill-server") end)
  it("a long error is folded at a space, not cut mid-word", function()
    local dir = H.sh("mktemp -d"):gsub("%s+$", "")
    tmux("new-session -d -s first -x 80 -y 30 " .. H.quote(("env HOME=%s POOLSH_HISTORY=%s/h %s --backend=sim")
      :format(dir, dir, H.exe)))
    assert.truthy(H.poll(function() return screen():find("poolsh>", 1, true) end, 8), screen())
    tmux("send-keys -t first -l " .. H.quote('p = poolsh.pool{}; x = p:alloc("a lot")'))
    tmux("send-keys -t first Enter")
    assert.truthy(H.poll(function() return screen():find("invalid size", 1, true) end, 8), screen())
    H.rsleep(0.3)
    local s = screen()
    os.execute("rm -rf " .. H.quote(dir))
    for l in s:gmatch("[^\n]+") do
      assert.is_false(utf8.len(l) == 80 and not l:find("%s$"), "cut at the edge: " .. l .. "\n" .. s)
    end
  end)
end)

describe("poolsh help COMMAND", function()
  it("poolsh help run answers with run's usage", function()
    local out = H.sh(H.exe .. " --backend=sim help run 2>&1")
    assert.matches("usage: poolsh", out, 1, true)
  end)
end)
