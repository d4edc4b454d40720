-- The playground page (docs/web.md) in headless Chromium, through
-- puppeteer-core (tests/web/playground.js): from disk and over
-- `python3 -m http.server`. Skipped, saying why, without the web build
-- (cmake --build build --target web), node or chromium.
local cjson = require "cjson"

local build = os.getenv("POOLSH_BUILD") or "build"
local web_src = os.getenv("POOLSH_WEB_SRC") or (build .. "/web-src")

local function sh(cmd)
  local p = io.popen(cmd)
  local out = p:read("a")
  local ok = p:close()
  return out, ok
end

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- Why the page cannot be tested here, or nil.
local function missing()
  if not exists(build .. "/web/index.html") or not exists(build .. "/web/poolsh.js") then
    return "no web build in " .. build .. "/web (cmake --build " .. build .. " --target web)"
  end
  if not select(2, sh("command -v node >/dev/null")) then return "node is not installed" end
  if not select(2, sh("command -v chromium >/dev/null")) then return "chromium is not installed" end
  if not exists(web_src .. "/node_modules/puppeteer-core/package.json") then
    return "puppeteer-core is not in " .. web_src .. " (scripts/web/fetch-sources.sh)"
  end
end

local tmpdir = sh("mktemp -d"):gsub("%s+$", "")
local root = sh("pwd"):gsub("%s+$", "")
local page_dir = build:sub(1, 1) == "/" and build .. "/web" or root .. "/" .. build .. "/web"

-- Runs tests/web/playground.js on url: what it saw (a table).
local function drive(url, shot)
  local out, ok = sh("NODE_PATH=" .. q(web_src .. "/node_modules") .. " timeout 300 node "
    .. "tests/web/playground.js " .. q(url) .. " " .. q(shot) .. " 2>" .. q(tmpdir .. "/node.err"))
  local f = io.open(tmpdir .. "/node.err")
  local err = f and f:read("a") or ""
  if f then f:close() end
  assert(ok and out ~= "", "playground.js failed on " .. url .. ":\n" .. err)
  return cjson.decode(out)
end

-- Serves dir on a free loopback port with python3's http.server:
-- the base URL and a function that stops it.
local function serve(dir)
  local log = tmpdir .. "/http.log"
  local pid = sh("python3 -u -m http.server --bind 127.0.0.1 -d " .. q(dir) .. " 0 >"
    .. q(log) .. " 2>&1 & echo $!"):gsub("%s+$", "")
  local port
  for _ = 1, 100 do
    local f = io.open(log)
    port = f and f:read("a"):match("port (%d+)")
    if f then f:close() end
    if port then break end
    sh("sleep 0.1")
  end
  assert(port, "python3 -m http.server did not start")
  return "http://127.0.0.1:" .. port .. "/", function() sh("kill " .. pid) end
end

describe("the playground page", function()
  local why = missing()
  if why then
    pending(why .. ": the page's tests are skipped")
    print("web_spec: skipped: " .. why)
    return
  end

  local function checks(name, seen)
    describe(name, function()
      local r
      setup(function() r = seen() end)

      it("starts at the prompt with the banner", function()
        assert.matches("in the browser, on the sim", r.banner)
        assert.matches("poolsh> ", r.banner)
        assert.same({}, r.page_errors)
      end)

      it("prints the live line of an allocation", function()
        assert.matches("a 4.00 MiB from p on s: fresh memory", r.alloc, 1, true)
      end)

      it("prints expressions, =expr and statements over several lines", function()
        assert.matches("4194304", r.expression, 1, true)
        assert.matches("   ...> ", r.multiline, 1, true)
        assert.matches("line%s+1", r.multiline)
        assert.matches("line%s+2", r.multiline)
      end)

      it("completes with Tab through the REPL's completion", function()
        assert.matches("poolsh> poolsh.stream():sync()", r.completion, 1, true)
        assert.not_matches("attempt to", r.completion, 1, true)
        assert.matches("poolsh.default_pool", r.candidates, 1, true)
        assert.matches("poolsh.default_stream", r.candidates, 1, true)
        assert.matches("^C", r.candidates, 1, true)
      end)

      it("interrupts a loop with Ctrl-C and keeps the session", function()
        assert.is_true(r.busy_in_loop)
        assert.matches("interrupted!", r.interrupt, 1, true)
        assert.matches("n counted%s+true", r.after_interrupt)
      end)

      it("refuses poolsh.spawn with a clear error", function()
        assert.matches("poolsh.spawn: not in the browser", r.spawn, 1, true)
      end)

      it("refuses what a page cannot do, naming it", function()
        for _, m in ipairs {
          "poolsh.pool: ipc = true is not in the browser",
          "pool:export: not in the browser",
          "poolsh.import_pool: not in the browser",
          "poolsh.configure: backend 'cuda' is not in the browser",
          "os.execute: not in the browser",
          "io.popen: not in the browser",
          "os.exit: not in the browser",
          "poolsh.connect: not in the browser",
        } do
          assert.matches(m, r.refusals, 1, true)
        end
      end)

      it("reads back a file poolsh saved (open_atomic) in the page's memory", function()
        assert.matches("read back:%s+kept", r.saved)
      end)

      it("answers help()", function()
        assert.matches("a Lua shell over CUDA's stream-ordered memory pools", r.help, 1, true)
      end)

      it("recalls the history with Up and edits at Home and End", function()
        assert.matches('print(print("n counted", n > 0))', r.history, 1, true)
      end)

      it("runs the statements of a ?e= link at the first prompt", function()
        assert.matches("poolsh> s = poolsh.stream()\npoolsh> q = poolsh.pool{}", r.link, 1, true)
        assert.matches("x 2.00 MiB from q on s: fresh memory", r.link, 1, true)
      end)

      it("runs a lesson with learn() and keeps its progress in the browser", function()
        assert.matches("1%s+same_stream%s+Same%-stream reuse%s+next", r.lessons)
        assert.matches("learn 1/4> ", r.lesson_start, 1, true)
        assert.matches("✓ step 1 done", r.lesson_step, 1, true)
        assert.matches("learn 2/4> ", r.lesson_step, 1, true)
        assert.matches("same_stream%s+Same%-stream reuse%s+1/4 steps, next", r.lessons_kept)
        assert.not_matches("cannot write", r.lesson_step, 1, true)
      end)

      it("edits a line longer than the terminal is wide", function()
        assert.equals('poolsh> =#"' .. ("x"):rep(150) .. '"\n150\npoolsh> ', r.long_line)
      end)

      it("clears the screen with Ctrl-L", function()
        assert.matches('^poolsh> b = p:alloc%("1 MiB", s%)\n', r.cleared)
        assert.matches("b 1.00 MiB from p on s", r.cleared, 1, true)
      end)

      it("shows the terminal, in colour, in a screenshot", function()
        assert.is_true(r.screenshot.ink > 2000, "ink " .. r.screenshot.ink)
        assert.is_true(r.screenshot.green > 20, "green " .. r.screenshot.green)
      end)
    end)
  end

  checks("opened from disk", function()
    return drive("file://" .. page_dir .. "/index.html", tmpdir .. "/file.png")
  end)

  checks("served by python3 -m http.server", function()
    local url, stop = serve(page_dir)
    local ok, r = pcall(drive, url, tmpdir .. "/http.png")
    stop()
    assert(ok, r)
    return r
  end)
end)
