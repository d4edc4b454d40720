--- The files poolsh writes, its standard output and its module paths
-- (issue 17, sections 3 and 4; docs/cli.md, docs/trace.md): saves are
-- atomic and never follow a planted symlink, a failed save is an error
-- and a non-zero exit, a closed pipe or a full disk on standard output
-- ends poolsh cleanly, learn never writes in the current directory, and
-- the current directory is not searched for modules.
local H = require "helpers"
local q = H.quote

local tmpdir = H.sh("mktemp -d"):gsub("%s+$", "")
-- the spec's directory must be reachable by nobody: mktemp makes it 0700
os.execute("chmod 755 " .. q(tmpdir))
local exe = H.exe:sub(1, 1) == "/" and H.exe or (os.getenv("PWD") .. "/" .. H.exe)

-- A fresh directory under the spec's own.
local n = 0
local function fresh_dir()
  n = n + 1
  local d = tmpdir .. "/d" .. n
  assert(os.execute("mkdir -p " .. q(d)))
  return d
end

local function put(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
  return path
end

-- The names in dir (ls -A), sorted, one string.
local function listing(dir)
  local out = H.sh("ls -A " .. q(dir))
  return out
end

local function is_link(path) return os.execute("test -L " .. q(path)) == true end

-- A script making `pairs` alloc/free pairs on the sim.
local function workload(dir, pairs)
  return put(dir .. "/work.lua", ([[
    local p, s = poolsh.pool{}, poolsh.stream()
    for _ = 1, %d do p:alloc(4096, s):free(s) end
  ]]):format(pairs))
end

describe("saved files", function()
  for _, ext in ipairs { "json", "csv", "html" } do
    it("replace a symlink planted at the --trace path (." .. ext .. "), never follow it", function()
      local d = fresh_dir()
      local victim = put(d .. "/victim", "the victim's file\n")
      local path = d .. "/run." .. ext
      assert(os.execute("ln -s " .. q(victim) .. " " .. q(path)))
      local _, err, code = H.poolsh_cmd("--backend=sim --trace " .. q(path) .. " " .. q(workload(d, 5)))
      assert.equal(0, code, err)
      assert.equal("the victim's file\n", H.slurp(victim))
      assert.is_false(is_link(path))
      assert.truthy(#H.slurp(path) > 100)
      assert.equal("run." .. ext .. "\nvictim\nwork.lua\n", listing(d))   -- no temporary left
    end)
  end

  it("replace a symlink another user (nobody) planted in a shared sticky directory", function()
    local d = fresh_dir()
    assert(os.execute("chmod 1777 " .. q(d)))
    local victim = put(d .. "/victim", "root's file\n")
    local path = d .. "/run.json"
    local nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups "
    local _, err, code = H.sh(nobody .. "ln -s " .. q(victim) .. " " .. q(path))
    assert.equal(0, code, err)
    _, err, code = H.poolsh_cmd("--backend=sim --trace " .. q(path) .. " " .. q(workload(d, 5)))
    assert.equal(0, code, err)
    assert.equal("root's file\n", H.slurp(victim))
    assert.is_false(is_link(path))
    assert.equal("0\n", H.sh("stat -c %u " .. q(path)))   -- root's own file now
  end)

  it("poolsh.trace.save and export.save replace a symlink too", function()
    local d = fresh_dir()
    local victim = put(d .. "/victim", "keep\n")
    assert(os.execute("ln -s victim " .. q(d .. "/a.pickle") .. " && ln -s victim " .. q(d .. "/b.json")))
    local _, err, code = H.poolsh_cmd("--backend=sim -e " .. q(([[
      poolsh.trace.start()
      poolsh.pool{}:alloc(64, poolsh.stream()):free()
      poolsh.trace.save(%q)
      require("poolsh.export").save(%q, poolsh.trace.events(), poolsh.trace.meta())
    ]]):format(d .. "/a.pickle", d .. "/b.json")))
    assert.equal(0, code, err)
    assert.equal("keep\n", H.slurp(victim))
    assert.is_false(is_link(d .. "/a.pickle"))
    assert.is_false(is_link(d .. "/b.json"))
  end)

  it("calibrate --out and golden record replace symlinks and make no fixed-name temporary", function()
    local d = fresh_dir()
    local victim = put(d .. "/victim", "victim\n")
    -- a link at the path, one at the old fixed temporary's name, one dangling
    assert(os.execute(("ln -s victim %s && ln -s victim %s && ln -s %s %s && ln -s victim %s"):format(
      q(d .. "/p.lua"), q(d .. "/p.lua.tmp"), q(d .. "/created"), q(d .. "/q.lua"),
      q(d .. "/same_stream_reuse.lua"))))
    for _, args in ipairs { "calibrate --quick --out " .. q(d .. "/p.lua"),
                            "calibrate --quick --out " .. q(d .. "/q.lua"),
                            "golden record --out " .. q(d) .. " same_stream_reuse" } do
      local _, err, code = H.poolsh_cmd("--backend=sim " .. args)
      assert.equal(0, code, args .. ": " .. err)
    end
    assert.equal("victim\n", H.slurp(victim))
    assert.is_nil(io.open(d .. "/created"))
    for _, f in ipairs { "p.lua", "q.lua", "same_stream_reuse.lua" } do
      assert.is_false(is_link(d .. "/" .. f), f)
      assert.truthy(#H.slurp(d .. "/" .. f) > 100, f)
    end
  end)

  it("are made 0600 first and get 0644 less the umask, or the old file's own mode", function()
    local d = fresh_dir()
    local out, err, code = H.sh("umask 027; " .. exe .. " --backend=sim -e " .. q(([[
      local f = poolsh.core.open_atomic(%q)
      local p = io.popen("stat -c %%a " .. %q .. "/.new.json.*")
      print(p:read("a")) p:close()
      f:write("{}") f:commit()
    ]]):format(d .. "/new.json", d)))
    assert.equal(0, code, err)
    assert.equal("600", out:match("^(%d+)"))
    assert.equal("640\n", H.sh("stat -c %a " .. q(d .. "/new.json")))
    put(d .. "/private.json", "old")
    os.execute("chmod 600 " .. q(d .. "/private.json"))
    _, err, code = H.poolsh_cmd("--backend=sim --trace " .. q(d .. "/private.json") .. " -e 'x = 1'")
    assert.equal(0, code, err)
    assert.equal("600\n", H.sh("stat -c %a " .. q(d .. "/private.json")))
  end)

  it("refuse devices and links to them, naming the path", function()
    local d = fresh_dir()
    assert(os.execute("ln -s /dev/null " .. q(d .. "/null.json")))
    local out = H.poolsh_cmd("--backend=sim -e " .. q(([[
      for _, p in ipairs { "/dev/stdout", %q, %q } do print(select(2, pcall(poolsh.core.open_atomic, p))) end
    ]]):format(d .. "/null.json", d)))
    assert.truthy(out:find("cannot open '/dev/stdout' for writing: not a regular file", 1, true), out)
    assert.truthy(out:find("cannot open '" .. d .. "/null.json' for writing: not a regular file", 1, true), out)
    assert.truthy(out:find("cannot open '" .. d .. "' for writing: Is a directory", 1, true), out)
    local _, err, code = H.poolsh_cmd("--backend=sim --trace " .. q(d .. "/null.json") .. " -e 'x = 1'")
    assert.equal(1, code)
    assert.truthy(err:find("cannot be written: not a regular file", 1, true), err)
  end)

  -- Runs poolsh with a file size limit (writes past it fail with EFBIG, the
  -- signal ignored); its output goes through a pipe, which the limit does
  -- not cover. -> output (stdout and stderr), exit code.
  local function limited(blocks, args)
    local out = H.sh("{ ( trap '' XFSZ; ulimit -f " .. blocks .. "; " .. exe .. " " .. args
      .. "; echo \"rc=$?\" ) 2>&1 | cat; }")
    return out, tonumber(out:match("rc=(%d+)\n$"))
  end

  -- room: 512-byte blocks a file may fill (the CSV's header is written at the start)
  for _, case in ipairs { { ext = "json", room = 0, pairs = 3 }, { ext = "csv", room = 1, pairs = 20 } } do
    local ext = case.ext
    it("a failed --trace save (." .. ext .. ") says so, exits non-zero and keeps the old file", function()
      local d = fresh_dir()
      local path = put(d .. "/run." .. ext, "the previous trace\n")
      -- a small trace on a disk with no room: once "trace saved", exit 0, an empty file
      local out, code = limited(case.room, "--backend=sim --trace " .. q(path) .. " " .. q(workload(d, case.pairs)))
      assert.equal(1, code, out)
      assert.truthy(out:find("cannot write '" .. path .. "': File too large", 1, true)    -- export.save
        or out:find("writing '" .. path .. "' failed after %d+ events: File too large"), out) -- streaming
      assert.is_nil(out:find("trace saved", 1, true), out)
      assert.is_nil(out:find("traceback", 1, true), out)
      assert.equal("the previous trace\n", H.slurp(path))
      -- a big one that fills the room half-way
      out, code = limited(64, "--backend=sim --trace " .. q(path) .. " " .. q(workload(d, 3000)))
      assert.equal(1, code, out)
      assert.truthy(out:find("File too large", 1, true), out)
      assert.is_nil(out:find("trace saved", 1, true), out)
      assert.equal("the previous trace\n", H.slurp(path))
      assert.equal("run." .. ext .. "\nwork.lua\n", listing(d))   -- no temporary left
    end)
  end

  it("poolsh.trace.save with a failed write raises naming the file and keeps the old one", function()
    local d = fresh_dir()
    local path = put(d .. "/t.json", "old\n")
    local out, code = limited(0, "--backend=sim -e " .. q(([[
      poolsh.trace.start()
      poolsh.pool{}:alloc(64, poolsh.stream()):free()
      print(select(2, pcall(poolsh.trace.save, %q)))
    ]]):format(path)))
    assert.equal(0, code, out)
    assert.truthy(out:find("poolsh.export.save: cannot write '" .. path .. "': File too large", 1, true), out)
    assert.equal("old\n", H.slurp(path))
  end)

  -- A save killed half-way: the old file stays, or the whole new one is there.
  for _, how in ipairs { "TERM TERM", "INT" } do
    it("a save ended by SIG" .. how .. " leaves the previous file whole, and no temporary", function()
      local d = fresh_dir()
      local path = put(d .. "/big.json", "previous\n")
      local script = workload(d, 40000)
      local kills = {}
      for sig in how:gmatch("%a+") do kills[#kills + 1] = "kill -" .. sig .. " $pid; sleep 0.2" end
      local out = H.sh(([[{
        env --default-signal=INT %s --backend=sim --trace %s %s & pid=$!
        i=0
        while [ $i -lt 1200 ]; do   # until the save began: a temporary, or the file changed
          if ls -A %s | grep -q '^\.big\.json\.' || ! grep -qx previous %s; then break; fi
          sleep 0.05; i=$((i + 1))
        done
        %s
        wait $pid; echo "rc=$?"; }]]):format(exe, q(path), q(script), q(d), q(path), table.concat(kills, "; ")))
      local rc = tonumber(out:match("rc=(%d+)"))
      local text = H.slurp(path)
      if text ~= "previous\n" then   -- the save won the race: then it is whole
        assert.truthy(pcall(require("cjson").decode, text), "a truncated file: " .. #text .. " bytes")
      else
        assert.truthy(rc and rc > 128, out)
      end
      assert.equal("big.json\nwork.lua\n", listing(d))
    end)
  end
end)

describe("standard output", function()
  it("a reader gone (poolsh ... | head -1) ends the run through the exit path, status 141", function()
    local d = fresh_dir()
    local trace, errf = d .. "/t.json", d .. "/err"
    local p = assert(io.popen("exec " .. exe .. " --backend=sim --trace " .. q(trace) ..
      " -e 'local p, s = poolsh.pool{}, poolsh.stream() for i = 1, 1e7 do p:alloc(64, s):free(s) print(i) end' 2>"
      .. q(errf)))
    assert.equal("1", p:read("l"))
    local _, how, code = p:close()
    assert.equal("exit", how)
    assert.equal(141, code)
    local err = H.slurp(errf)
    assert.truthy(err:find("trace saved to " .. trace, 1, true), err)
    assert.is_nil(err:find("traceback", 1, true), err)
    assert.is_nil(err:find("standard output closed", 1, true), err)
    assert.truthy(pcall(require("cjson").decode, H.slurp(trace)))
  end)

  it("a reader gone also stops a script that ignores print's result", function()
    local d = fresh_dir()
    local p = assert(io.popen("exec " .. exe .. " --backend=sim -e 'while true do pcall(print, 1) end' 2>"
      .. q(d .. "/err")))
    p:read("l")
    local _, how, code = p:close()
    assert.same({ "exit", 141 }, { how, code })
    assert.equal("", H.slurp(d .. "/err"))
  end)

  it("a full disk (/dev/full) is an error at exit, in one line, for -e, a script and stdin", function()
    local d = fresh_dir()
    local script = put(d .. "/p.lua", "print(1) io.write('x\\n')")
    for _, args in ipairs { "-e 'print(1)'", "-e 'io.write(1)'", q(script), "- <" .. q(script) } do
      local _, err, code = H.sh("sh -c " .. q(exe .. " --backend=sim " .. args .. " >/dev/full"))
      assert.equal(1, code, args .. ": " .. err)
      assert.equal("cannot write to standard output: No space left on device\n", err:match(": (c.*)$"), args)
      local _, lines = err:gsub("\n", "")
      assert.equal(1, lines, err)
    end
  end)

  it("a full disk under the REPL (stdin a terminal, tmux) is said at exit, status 1", function()
    local d = fresh_dir()
    local sock = ("poolsh-sec-%d-%d"):format(os.time(), math.random(1e6))
    local function tmux(args) return H.sh("tmux -L " .. sock .. " " .. args) end
    local cmd = ("env POOLSH_HISTORY=%s %s --backend=sim >/dev/full 2>%s; echo $? >%s")
      :format(q(d .. "/hist"), exe, q(d .. "/err"), q(d .. "/rc"))
    tmux("new-session -d -s repl -x 120 -y 20 " .. q(cmd))
    H.rsleep(1)
    tmux("send-keys -t repl -l 'print(1)'")
    tmux("send-keys -t repl Enter")
    H.rsleep(0.3)
    tmux("send-keys -t repl C-d")
    local rc = H.poll(function() return H.slurp_or(d .. "/rc"):match("%d+") end, 10)
    tmux("kill-server")
    assert.equal("1", rc)
    assert.equal("cannot write to standard output: No space left on device\n",
      H.slurp(d .. "/err"):match(": (c.*)$"))
  end)
end)

describe("poolsh learn without HOME", function()
  it("writes nothing in the current directory and says once that progress is not saved", function()
    local d = fresh_dir()
    local out, err, code = H.sh("cd " .. q(d) .. " && env -u HOME -u XDG_STATE_HOME -u POOLSH_LEARN_STATE "
      .. exe .. " --backend=sim -e " .. q([[
        local learn = require "poolsh.learn"
        print(learn.save_progress { lessons = { trim = { done = 1, finished = false } } })
        print(learn.save_progress { lessons = { trim = { done = 2, finished = false } } })
      ]]))
    assert.equal(0, code, err)
    assert.equal("false\nfalse\n", out)
    assert.equal("poolsh learn: progress is not saved: HOME is not set (POOLSH_LEARN_STATE names a file for it)\n", (err:gsub("\n(.)", " %1")))   -- wrapped at 80
    assert.equal("", listing(d))
  end)

  it("saves through an exclusive temporary, not a fixed .tmp name a symlink could redirect", function()
    local d = fresh_dir()
    local victim = put(d .. "/victim", "victim\n")
    local state = d .. "/state/poolsh"
    assert(os.execute("mkdir -p " .. q(state) .. " && ln -s " .. q(victim) .. " " .. q(state .. "/learn.json.tmp")))
    local _, err, code = H.sh("env -u HOME XDG_STATE_HOME=" .. q(d .. "/state") .. " " .. exe
      .. " --backend=sim -e " .. q("assert(require('poolsh.learn').save_progress { lessons = {} })"))
    assert.equal(0, code, err)
    assert.equal("victim\n", H.slurp(victim))
    assert.truthy(H.slurp(state .. "/learn.json"):find('"lessons"', 1, true))
  end)

  it("makes its state directory private (0700)", function()
    local d = fresh_dir()
    local _, err, code = H.sh("HOME=" .. q(d) .. " " .. exe .. " --backend=sim -e "
      .. q("assert(require('poolsh.learn').save_progress { lessons = {} })"))
    assert.equal(0, code, err)
    assert.equal("700\n", H.sh("stat -c %a " .. q(d .. "/.local/state/poolsh")))
  end)
end)

describe("module paths", function()
  local d
  setup(function()
    d = fresh_dir()
    for _, m in ipairs { "zlib", "cjson", "evil" } do put(d .. "/" .. m .. ".lua", "print('EVIL " .. m .. "') return {}") end
    assert(os.execute("mkdir -p " .. q(d .. "/poolsh/cmd") .. " " .. q(d .. "/evil")))
    put(d .. "/poolsh/cmd/x.lua", "print('EVIL command') return function() end")
    put(d .. "/evil/init.lua", "print('EVIL init') return {}")
  end)

  local function here(args, env)
    return H.sh("cd " .. q(d) .. " && " .. (env or "") .. " " .. exe .. " --backend=sim " .. args)
  end

  it("do not search the current directory", function()
    local out, err = here("-e " .. q("require 'zlib' require 'cjson' print(pcall(require, 'evil'))"))
    assert.is_nil(out:find("EVIL", 1, true), out)
    assert.truthy(out:find("^false\t"), out .. err)
    out, err = here("x")
    assert.is_nil(out:find("EVIL", 1, true), out)
    assert.truthy(err:find("cannot open x", 1, true), err)
    out = here("-E -e " .. q("print(package.path, package.cpath)"))
    assert.is_nil(out:find("%./"), out)
    assert.is_nil(out:find("^%?") or out:find("[;\t]%?"), out)
  end)

  it("search a script's own directory, last", function()
    local s = fresh_dir()
    put(s .. "/mine.lua", "return 'mine'")
    -- cjson comes from its own installation, not from beside the script
    put(s .. "/run.lua", "print(require 'mine', (select(2, require 'cjson')):find(" .. ("%q"):format(s) .. ", 1, true) == nil)")
    put(s .. "/cjson.lua", "print('EVIL beside') return {}")
    local out, err, code = here(q(s .. "/run.lua"))
    assert.equal(0, code, err)
    assert.equal("mine\ttrue\n", out)
  end)

  it("POOLSH_CWD_MODULES=1 puts the current directory back", function()
    local out = here("-e " .. q("require 'evil'"), "POOLSH_CWD_MODULES=1")
    assert.equal("EVIL evil\n", out)
  end)
end)

describe("the spec's own files", function()
  it("are removed", function()
    assert(os.execute("rm -rf " .. q(tmpdir)))
  end)
end)
