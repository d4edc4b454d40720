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
  if not exists(build .. "/web/index.html") or not exists(build .. "/web/poolsh.js")
    or not exists(build .. "/web/poolsh-file.js") then
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
  if why and os.getenv("POOLSH_WEB") == "1" then
    -- CI builds the web target (POOLSH_WEB=1): there a missing page is a failure
    it("is built and can be driven (POOLSH_WEB=1)", function()
      error("POOLSH_WEB=1 but " .. why, 0)
    end)
    return
  elseif why then
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

      it("shows output written without a newline when the statement ends, on its own row", function()
        assert.equals('poolsh> do io.write("no newline yet") end\nno newline yet\npoolsh> ', r.no_newline)
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

      it("shows a hostile link's text without obeying it, and runs no overlong ?e=", function()
        assert.matches("?lesson=?2J?31mYOU ARE HACKED: not a lesson's name (learn() lists them)",
          r.link_controls, 1, true)
        assert.matches("?e=x = 1 x = 1 ", r.link_long, 1, true)
        assert.matches("6000 characters, more than a link may run (4096): not run", r.link_long:gsub("\n", ""), 1, true)
        assert.not_matches("poolsh> x = 1", r.link_long, 1, true)
        -- a ?e= link's C1 controls are not echoed: the screen is not cleared
        assert.matches("in the browser, on the sim", r.link_c1, 1, true)
        assert.matches("poolsh> 2J31mx = 1", r.link_c1, 1, true)
      end)

      it("runs the scenarios with run() and lists them with scenarios()", function()
        local function flat(text) return (text:gsub("%s+", " ")) end   -- folded at the terminal's width
        assert.matches("ipc_share%s+%(native poolsh only%)", r.scenarios)
        assert.matches("same_stream%s+a block freed on a stream", r.scenarios)
        assert.matches("== same_stream:", r.run_one, 1, true)
        assert.matches("\n 1%. ", r.run_one)
        assert.matches("PASS same_stream", r.run_one, 1, true)
        assert.matches("SKIP ipc_share: needs a second process: the native poolsh runs it", flat(r.run_ipc), 1, true)
        assert.matches("run: --step is not in the browser", flat(r.run_refused), 1, true)
        assert.matches("peer_access needs 2 devices: the sim restarts", flat(r.run_all), 1, true)
        local n = #require("poolsh.scenarios") - 2
        assert.matches(("%d/%d scenarios pass, 2 skipped"):format(n, n), r.run_all, 1, true)
      end)

      it("edits a line longer than the terminal is wide", function()
        assert.equals('poolsh> =#"' .. ("x"):rep(150) .. '"\n150\npoolsh> ', r.long_line)
      end)

      it("clears the screen with Ctrl-L", function()
        assert.matches('^poolsh> b = p:alloc%("1 MiB", s%)\n', r.cleared)
        assert.matches("b 1.00 MiB from p on s", r.cleared, 1, true)
      end)

      it("draws the memory map beside the terminal, as poolsh.core.blocks has it, after every statement", function()
        assert.is_false(r.map_empty.drawn)
        assert.matches("appears here", r.map_empty.pane, 1, true)
        -- an alloc: one live block now, in the live colour
        assert.same({ "live" }, r.blocks_alloc)
        assert.equal(1, r.map_alloc.live_now)
        assert.equal(0, r.map_alloc.pending_now)
        assert.same({ r.map_alloc.colours.live }, r.map_alloc.fills.live)
        assert.is_true(r.map_alloc.now >= 1, "the new block drawn as the last statement's")
        -- a free: pending on s now, in the stream's colour
        assert.same({ "pending" }, r.blocks_free)
        assert.equal(0, r.map_free.live_now)
        assert.equal(1, r.map_free.pending_now)
        assert.is_truthy(r.map_free.fills.pending)
        for _, fill in ipairs(r.map_free.fills.pending) do
          local known = false
          for _, c in ipairs(r.map_free.stream_colours) do known = known or c == fill end
          assert.is_true(known, fill .. " is a stream's colour")
        end
        assert.is_true(r.map_free.version > r.map_alloc.version)
        -- a reuse: the new block live, an arrow back to a's, drawn as the last statement's
        assert.same({ "live" }, r.blocks_reuse)
        assert.equal(1, r.map_reuse.live_now)
        assert.equal(0, r.map_reuse.pending_now)
        assert.equal(1, r.map_reuse.arrows)
        assert.is_true(r.map_reuse.now >= 2, "the new block and its arrow highlighted")
        -- a free and a sync: nothing live or pending now
        assert.same({}, r.blocks_sync)
        assert.equal(0, r.map_sync.live_now)
        assert.equal(0, r.map_sync.pending_now)
        assert.equal(2, r.map_sync.live)
      end)

      it("shows the map in a screenshot: the live colour inside the pane", function()
        assert.is_true(r.map_shot.inside > 500, "live-colour pixels in the pane: " .. r.map_shot.inside)
        assert.is_true(r.map_shot.ink > 2000, "ink " .. r.map_shot.ink)
      end)

      it("redraws the map while a long loop runs", function()
        assert.is_true(r.map_loop_busy[1], "the loop still ran")
        assert.is_true(r.map_loop_busy[2] > r.map_loop, "drawn " .. r.map_loop .. " then " .. r.map_loop_busy[2])
      end)

      it("opens a lesson from a ?lesson= link, refuses a wrong answer and takes a right one", function()
        assert.matches("learn 1/4> ", r.lesson_link, 1, true)
        assert.matches("✗ a's size: expected 4194304", r.lesson_wrong, 1, true)
        assert.not_matches("✓ step 1 done", r.lesson_wrong, 1, true)
        assert.matches("✓ step 1 done", r.lesson_right, 1, true)
        assert.matches("unknown lesson 'nosuch'", r.lesson_nosuch, 1, true)
        assert.matches("did you mean 'same_stream'", r.lesson_same_stram, 1, true)
      end)

      it("shows the terminal, in colour, in a screenshot", function()
        assert.is_true(r.screenshot.ink > 2000, "ink " .. r.screenshot.ink)
        assert.is_true(r.screenshot.green > 20, "green " .. r.screenshot.green)
      end)
    end)
  end

  local from_disk, served
  checks("opened from disk", function()
    from_disk = drive("file://" .. page_dir .. "/index.html", tmpdir .. "/file.png")
    return from_disk
  end)

  checks("served by python3 -m http.server", function()
    local url, stop = serve(page_dir)
    local ok, r = pcall(drive, url, tmpdir .. "/http.png")
    stop()
    assert(ok, r)
    served = r
    return r
  end)

  describe("start-up", function()
    it("loads the single file from disk and the split build over HTTP", function()
      assert.equal("poolsh-file.js", from_disk.build)
      assert.equal("poolsh.js", served.build)
      print(("web_spec: first prompt %.0f ms from disk, %.0f ms over HTTP (page: %.0f, %.0f ms)"):format(
        from_disk.first_prompt_ms, served.first_prompt_ms, from_disk.startup_ms, served.startup_ms))
      -- (the 2 s target is measured on an idle machine: docs/performance.md;
      -- here only a bound that a shared CI machine keeps)
      assert.is_true(served.startup_ms < 15000, served.startup_ms .. " ms")
    end)
  end)
end)
