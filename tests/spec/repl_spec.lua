-- The REPL in a real pseudo-terminal (tmux): printing, multi-line input,
-- errors, completion, history, Ctrl-C.
local H = require "helpers"

local SOCK = "poolsh-test"
local hist = "/tmp/poolsh-test-history-" .. tostring(os.time()) .. "-" .. math.random(1e6)

local function tmux(args) return H.sh("tmux -L " .. SOCK .. " " .. args) end
local function screen() return (tmux("capture-pane -p -t repl")) end
local KEYS = { Enter = true, Tab = true, Up = true, ["C-c"] = true, ["C-d"] = true }
-- Sends text literally (-l: "end" is not the End key) and key names as keys.
local function send(...)
  for i = 1, select("#", ...) do
    local k = select(i, ...)
    tmux("send-keys -t repl " .. (KEYS[k] and "" or "-l ") .. H.quote(k))
  end
end
local function wait_for(pat, timeout)
  return H.poll(function() return screen():match(pat) end, timeout or 5)
end
local function prompts() local _, n = screen():gsub("[>]", ""); return n end
-- Types a line and waits for the next prompt.
local function line(text)
  local n = prompts()
  send(text, "Enter")
  H.poll(function() return prompts() > n end, 5)
end

local function start(backend)
  tmux("kill-server")
  local cmd = ("env POOLSH_HISTORY=%s %s --backend=%s"):format(hist, H.exe, backend or "sim")
  tmux("new-session -d -s repl -x 200 -y 50 " .. H.quote(cmd))
  assert.truthy(wait_for("poolsh>"), "no prompt: " .. screen())
end
local function stop() tmux("kill-server") end

describe("the REPL", function()
  after_each(stop)
  teardown(function() os.remove(hist) end)

  it("prints expression values, tables readably", function()
    start()
    send("1 + 2", "Enter")
    assert.truthy(wait_for("\n3\n"))
    send("{1, 2, x = 'y', t = {true}}", "Enter")
    assert.truthy(wait_for('{1, 2, t = {true}, x = "y"}'), screen())
    send("poolsh.size('4 MiB'), 'str'", "Enter")
    assert.truthy(wait_for('4194304%s+"str"'), screen())
  end)

  it("prints what changed after each statement: counters, deltas, reuse and why", function()
    start()
    line("s = poolsh.stream(); p = poolsh.pool{release_threshold = 'max'}")
    send("b = p:alloc('4 MiB', s)", "Enter")
    assert.truthy(wait_for("used 4%.00 MiB \27%[32m%+4%.00 MiB") or
                  wait_for("used 4%.00 MiB %(.-%+4%.00 MiB"), screen())
    assert.truthy(wait_for("b1 4%.00 MiB from p1 on s1: fresh memory"), screen())
    line("b:free()")
    send("c = p:alloc('4 MiB', s)", "Enter")
    assert.truthy(wait_for("b2 4%.00 MiB from p1 on s1: reused b1's memory %(.-stream order"), screen())
    line("poolsh.watch(false)")
    send("d = p:alloc('1 MiB', s)", "Enter")
    send("print('after' .. 'd')", "Enter")
    assert.truthy(wait_for("afterd"), screen())
    assert.is_nil(screen():match("b3 1%.00 MiB"))
  end)

  it("runs multi-line input", function()
    start()
    send("for i = 1, 3 do", "Enter")
    assert.truthy(wait_for("%.%.%.>"), screen())
    line("print('line' .. i * 10)")
    line("end")
    assert.truthy(wait_for("line30"), screen())
    assert.matches("line10\nline20\nline30", screen())
  end)

  it("does not lose pasted lines typed ahead of the prompt", function()
    start()
    send("for i = 1, 2 do", "Enter", "print('pasted' .. i)", "Enter", "end", "Enter")
    assert.truthy(wait_for("pasted2"), screen())
  end)

  it("prints an error and carries on", function()
    start()
    line("x = 5")
    line("error('kaboom')")
    assert.truthy(wait_for("kaboom"))
    line("poolsh.pool{bogus = 1}")
    assert.truthy(wait_for("unknown option 'bogus'"))
    send("print('x is', x)", "Enter")
    assert.truthy(wait_for("x is%s+5"), screen())
  end)

  it("completes poolsh.de to default_pool, default_stream, device...", function()
    start()
    send("poolsh.de", "Tab", "Tab")
    assert.truthy(wait_for("default_stream"), screen())
    local sc = screen()
    assert.matches("default_pool", sc)
    assert.matches("device_count", sc)
  end)

  it("completes p:al to p:alloc", function()
    start()
    line("p = poolsh.pool{}")
    send("p:al", "Tab")
    assert.truthy(wait_for("p:alloc"), screen())
    send("('1 KiB').size", "Enter")
    assert.truthy(wait_for("\n1024\n"), screen())
  end)

  it("keeps history across sessions", function()
    start()
    send("print('remember ' .. 6 * 7)", "Enter")
    assert.truthy(wait_for("remember 42"))
    send("C-d")
    H.poll(function() return not screen():match("poolsh>") or screen() == "" end, 3)
    stop()
    start()
    send("Up")
    assert.truthy(wait_for("poolsh> print%('remember ' %.%. 6 %* 7%)"), screen())
    send("Enter")
    assert.truthy(wait_for("remember 42"))
  end)

  it("Ctrl-C interrupts a running loop and keeps the state", function()
    start()
    line("keep = 'kept'; s = poolsh.stream()")
    send("while true do end", "Enter")
    H.rsleep(0.5)
    send("C-c")
    assert.truthy(wait_for("interrupted"), screen())
    send("print(keep, s.live)", "Enter")
    assert.truthy(wait_for("kept%s+true"), screen())
    send("poolsh.spin(s, '10 ms'); s:sync(); print('after spin')", "Enter")
    assert.truthy(wait_for("after spin"), screen())
  end)

  it("Ctrl-C interrupts a long device wait #cuda_only", function()
    if H.backend() ~= "cuda" then pending("cuda only") return end
    start("cuda")
    send("s = poolsh.stream(); poolsh.spin(s, '60 s'); s:sync()", "Enter")
    H.rsleep(1)
    send("C-c")
    assert.truthy(wait_for("interrupted", 5), screen())
    send("print('alive')", "Enter")
    assert.truthy(wait_for("alive", 5), screen())
  end)
end)

describe("completion's names", function()
  local poolsh = H.poolsh
  local complete = require("poolsh.repl").complete

  it("offer every field the C side lists (mt.fields), and every method", function()
    local s, p = poolsh.stream(), poolsh.pool{}
    local b <close> = p:alloc(64, s)
    local env = { s = s, p = p, b = b, e = poolsh.event() }
    for name, v in pairs(env) do
      local mt = getmetatable(v)
      local got = {}
      for _, w in ipairs(complete(name .. ".", env)) do got[w] = true end
      assert.is_true(#mt.fields >= 4, mt.__name)
      for _, f in ipairs(mt.fields) do
        assert.is_true(got[name .. "." .. f], mt.__name .. " completion misses " .. f)
      end
      for m in pairs(mt.methods) do
        assert.same({ name .. ":" .. m }, (function()
          local only = {}
          for _, w in ipairs(complete(name .. ":" .. m, env)) do
            if w == name .. ":" .. m then only[#only + 1] = w end
          end
          return only
        end)())
      end
    end
    assert.same({ "b.reuse_rule", "b.reused", "b.reused_from" }, complete("b.reuse", env))
    env.e:destroy(); p:destroy(); s:destroy()
  end)
end)
