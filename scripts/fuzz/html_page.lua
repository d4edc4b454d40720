-- Input fuzzer: what a caller hands the HTML page (a scenario's title,
-- summary, steps with notices and measured lines, verdict, the script's
-- directory and the sites of its events) holding any bytes, through
-- poolsh.export's .html and poolsh.export.html.save_scenarios. The input is
-- split at "|" into: title, summary, a step's text, a notice, a measured
-- line, the verdict's message, the script's directory, a site, and a step
-- time. The page must keep every script element closed where it ends, no
-- "<" in its data, and no absolute path under the script's directory
-- (sites are shown relative to it). A broken invariant raises a table,
-- which lib.run reports as a failure.
-- Usage: poolsh --backend=sim scripts/fuzz/html_page.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local export = require "poolsh.export"
local html = require "poolsh.export.html"

local function broken(why)
  io.stderr:write("html_page: " .. why .. "\n")
  error({ why }, 0)
end

local MiB = 1048576

-- The page's checks: scripts closed where they end, no "<" in the data.
local function check(page)
  local _, opened = page:gsub("<script", "")
  local _, closed = page:gsub("</script>", "")
  if opened ~= closed then broken("a script is closed early") end
  for data in page:gmatch('<script type="application/json"[^>]*>(.-)</script>') do
    if data:find("<", 1, true) then broken("a < in the page's data") end
  end
end

lib.run({
  name = "html_page",
  corpus = {
    "same_stream_reuse|a block freed on a stream is reused|1. allocate 4 MiB|watch s|measured 3 ms"
      .. "|expected 2, observed 1|/home/u/proj|/home/u/proj/lib/work.lua:12|0.5",
    "t</script><b>|s\"q\\|\xff\xfe step|\0notice|said\n\t|/abs/x.lua:3: err|/a b/c|.../b/c/x.lua:9|1e308",
  },
  seconds_per_input = 4,
  memory_per_input = 256 * MiB,
  decode = function(input, path)
    local f = {}
    for part in (input .. "|"):gmatch("([^|]*)|") do f[#f + 1] = part end
    local dir, site = f[7] or "", f[8] or "x.lua:1"
    local events = {
      { seq = 1, t = 0, op = "reserve", pool = 1, addr = 0x7f0000000000, size = 32 * MiB, reserved = 32 * MiB, src = site },
      { seq = 2, t = 0.01, op = "alloc", pool = 1, stream = 1, kind = "pool", buffer = 1, addr = 0x7f0000000000,
        size = MiB, reserved = 32 * MiB, used = MiB, pending = 0, src = site },
      { seq = 3, t = 0.02, op = "free", pool = 1, stream = 1, kind = "pool", buffer = 1, addr = 0x7f0000000000,
        size = MiB, reserved = 32 * MiB, used = 0, pending = MiB, src = site },
      { seq = 4, t = 0.03, op = "alloc", pool = 1, stream = 1, kind = "pool", buffer = 2, addr = 0x7f0000000000,
        size = MiB, reused = true, reused_from = 1, rule = "stream order", src = dir .. "/" .. site },
      { seq = 5, t = 0.04, op = "release", pool = 1, size = 32 * MiB, cause = f[6], reserved = 0 },
    }
    local meta = {
      backend = "sim", title = f[1], summary = f[2], script_dir = dir,
      notes = { { t = tonumber(f[9]) or 0, text = f[3] or "", notices = { f[4] or "" }, said = { f[5] or "" } } },
      verdict = { ok = false, step = f[3], err = f[6] },
    }
    local page = export.to_string("html", events, meta)
    check(page)
    local rows = page:match('id="poolsh%-rows">(.-)</script>')
    local abs = dir:match("^/[%w_%-%.]+/[%w_%-%./]*%w") and dir
    if abs and rows:find('"' .. abs .. "/", 1, true) then broken("a site under the script's directory is absolute") end
    local out = path .. ".html"
    html.save_scenarios(out, { { meta = meta, events = events }, { meta = { title = f[2] }, events = {} } })
    local all = lib.slurp(out)
    os.remove(out)
    check(all)
  end,
}, ...)
