--- Check: the HTML report of a large recorded trace still renders. Records
-- alloc/free pairs of 4 KiB on one stream (with a kernel every 1,000
-- pairs) until N events are kept, saves them with poolsh.trace.save as
-- .html, and loads the page in headless Chromium (--dump-dom), which runs
-- its script: the page must list its first page of rows and say
-- "of N events". Prints the file's size and the seconds each step took;
-- exits non-zero when the page did not render.
-- Usage: poolsh --backend=sim scripts/render_html.lua [N] (default 1000000)
--        [--keep DIR] keeps the page in DIR; [--timeout S] Chromium's
--        limit in seconds (default 600).
local poolsh = poolsh or require "poolsh"
local html = require "poolsh.export.html"

local n, keep, timeout = 1000000, nil, 600
local i = 1
while arg and arg[i] do
  if arg[i] == "--keep" then keep = arg[i + 1]; i = i + 1
  elseif arg[i] == "--timeout" then timeout = assert(math.tointeger(tonumber(arg[i + 1])), "S must be an integer"); i = i + 1
  else n = assert(math.tointeger(tonumber(arg[i])), "N must be an integer") end
  i = i + 1
end

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function run(cmd)
  local f = assert(io.popen(cmd, "r"))
  local out = f:read("a")
  local ok, _, code = f:close()
  return out, ok, code
end

local dir = keep or run("mktemp -d"):gsub("%s+$", "")
assert(dir ~= "", "mktemp -d failed")
local page = dir .. "/trace.html"

local s, p = poolsh.stream(), poolsh.pool {}
poolsh.trace.clear()
poolsh.trace.start()
local pairs_done = 0
while poolsh.trace.count() < n do
  p:alloc(4096, s):free()
  pairs_done = pairs_done + 1
  if pairs_done % 1000 == 0 then poolsh.spin(s, 0.001) end
end
poolsh.trace.stop()
s:sync()
local count = poolsh.trace.count()
local t0 = poolsh.wallclock()
poolsh.trace.save(page)
local saved = poolsh.wallclock() - t0
poolsh.trace.clear()
p:destroy(); s:destroy()
local f = assert(io.open(page, "rb"))
local bytes = f:seek("end")
f:close()

local profile = run("mktemp -d"):gsub("%s+$", "")
t0 = poolsh.wallclock()
local dom, ok = run(("timeout %d chromium --headless --no-sandbox --disable-gpu"
  .. " --disable-background-networking --disable-component-update --disable-sync --no-first-run"
  .. " --user-data-dir=%s --window-size=1200,800 --dump-dom file://%s 2>/dev/null"):format(timeout, q(profile), q(page)))
local rendered = poolsh.wallclock() - t0
os.execute("rm -rf " .. q(profile))
if not keep then os.execute("rm -rf " .. q(dir)) end

local rows = select(2, dom:gsub('<tr class="ev">', ""))
local want = ("events 1 to %d of %d events"):format(math.min(html.page_rows, count), count)
print(("%d events, %.0f MiB of HTML: saved in %.2f s, rendered in %.2f s, %d rows listed")
  :format(count, bytes / 1048576, saved, rendered, rows))
if not ok or rows ~= math.min(html.page_rows, count) or not dom:find(want, 1, true) then
  io.stderr:write(("render_html: the page did not render (%s; %d rows; %q %s)\n"):format(
    ok and "chromium exited" or "chromium failed or timed out", rows, want,
    dom:find(want, 1, true) and "found" or "not found"))
  os.exit(1)
end
