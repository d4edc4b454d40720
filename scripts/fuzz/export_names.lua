-- Input fuzzer: names and a source holding any bytes, through every
-- format poolsh.trace.save writes from the records in C (src/trace.c's
-- escaping) and the Lua writers. The input is split at "|" into a pool's,
-- a stream's, a buffer's and an event's name (controls dropped, cut to 64
-- bytes: what poolsh.naming accepts) and a chunk name (any bytes). A name
-- poolsh refuses is a clear error; otherwise each format must be the same
-- bytes from C as from Lua, the .json valid UTF-8 that cjson reads, and
-- the .html's data unable to close its script early. A broken invariant
-- raises a table, which lib.run reports as a failure.
-- Usage: poolsh --backend=sim scripts/fuzz/export_names.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local poolsh = poolsh or require "poolsh"
local export = require "poolsh.export"
local cjson = require "cjson"

local function broken(why)
  io.stderr:write("export_names: " .. why .. "\n")
  error({ why }, 0)
end

local function name(s)
  s = (s or ""):gsub("%c", ""):sub(1, 64)
  return s ~= "" and s or nil
end

local WORK = "local p, s, e, bname = ... local b = p:alloc(4096, s) if bname then b.name = bname end "
  .. "poolsh.fill(b, 1, s) e:record(s) s:wait(e) b:free(s) s:sync() p:alloc(100, s):free(s) "
  .. "assert(not pcall(p.alloc, p, '1 TiB', s))"

lib.run({
  name = "export_names",
  corpus = { 'copies|weights|done|work.lua', 'q"b\\s</script>|\xff\xc3(|\xed\xa0\x80|\xf4\x90\x80\x80\xc0\xaf|src\1\n\127</' },
  seconds_per_input = 4,
  decode = function(input, path)
    local parts = {}
    for part in (input .. "|"):gmatch("([^|]*)|") do parts[#parts + 1] = part end
    local chunk = "=" .. (parts[5] or "x"):sub(1, 200)
    poolsh.trace.stop(); poolsh.trace.clear()
    local p = poolsh.pool { name = name(parts[1]), release_threshold = 0, max_size = "64 MiB" }
    local s = poolsh.stream { name = name(parts[2]) }
    local e = poolsh.event { name = name(parts[4]) }
    poolsh.trace.start()
    local ok, err = pcall(assert(load(WORK, chunk, "t", setmetatable({ poolsh = poolsh }, { __index = _G }))),
      p, s, e, name(parts[3]))
    poolsh.trace.stop()
    local events = poolsh.trace.events()
    local files = {}
    for _, ext in ipairs(export.formats) do
      local fast, slow = path .. ".c." .. ext, path .. ".lua." .. ext
      poolsh.trace.save(fast)
      export.save(slow, events, poolsh.trace.meta(events))
      local a, b = lib.slurp(fast), lib.slurp(slow)
      os.remove(fast); os.remove(slow)
      if a ~= b then broken(ext .. ": trace.save and the Lua writers differ") end
      files[ext] = a
    end
    poolsh.trace.clear()
    poolsh.sync(); p:destroy(); s:destroy(); e:destroy()
    if not utf8.len(files.json) then broken("the .json is not UTF-8") end
    if not pcall(cjson.decode, files.json) then broken("cjson cannot read the .json") end
    local _, opened = files.html:gsub("<script", "")
    local _, closed = files.html:gsub("</script>", "")
    if opened ~= closed then broken("the .html closes a script early") end
    local rows = files.html:match('<script type="application/json" id="poolsh%-rows">(.-)</script>')
    if not rows or rows:find("<", 1, true) then broken("a < in the .html's data") end
    if not ok then error(err, 0) end
  end,
}, ...)
