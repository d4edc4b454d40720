--- poolsh.help: what `poolsh help` and `help()` at the prompt print (docs/cli.md).
-- help() is a short map of poolsh: the commands (each module under
-- poolsh/cmd/, its first comment line), the lessons and scenarios, the
-- views, tracebacks and the device in use. help(topic) prints one entry of
-- docs/api.md, read from the file itself (found beside the Lua library:
-- <source>/docs/api.md, or poolsh/api.md where cmake --install puts it),
-- so the reference and help never differ.
local words = require "poolsh.words"

local M = {}

-- The directory of poolsh's own Lua files (…/poolsh), from package.path.
local function lua_dir()
  local init = package.searchpath("poolsh", package.path)
  return init and init:match("^(.*)/[^/]*$")
end

local function readable(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end

--- api_path() -> the docs/api.md help reads, or nil and why: installed
-- beside the Lua library (poolsh/api.md), else in the source tree the
-- library is in (lua/poolsh/../../docs/api.md; the build tree's lua/ is a
-- link to it).
function M.api_path()
  local dir = lua_dir()
  if not dir then return nil, "the poolsh Lua library is not on package.path" end
  for _, p in ipairs { dir .. "/api.md", dir .. "/../../docs/api.md" } do
    if readable(p) then return p end
  end
  return nil, "no api.md beside " .. dir .. " (cmake --install puts it there)"
end

-- Method receivers as api.md writes them.
local RECEIVER = { s = "Stream", e = "Event", p = "Pool", b = "Buffer", proc = "Process",
                   r = "Range", m = "Memory" }

local cache

--- entries() -> the entries of docs/api.md, in order: {heading, body,
-- names = {...}, section}. Each `### ` heading is an entry (its names:
-- each backticked poolsh.x or Type:method in it, "Pool fields" for a
-- fields table); each `## ` heading too, for its introduction (its name:
-- the title's first word, "Pool"). The body is the text up to the next
-- heading.
function M.entries()
  if cache then return cache end
  local path, why = M.api_path()
  if not path then error("help: cannot find docs/api.md: " .. why, 0) end
  local f = assert(io.open(path, "r"))
  local text = f:read("a")
  f:close()
  local list, cur, section, fenced = {}, nil, nil, false
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if line:match("^```") then fenced = not fenced end
    local h2 = not fenced and line:match("^## (.*)")
    local h3 = not fenced and line:match("^### (.*)")
    if h2 or h3 then
      cur = { heading = h2 or h3, body = {}, names = {}, section = h2 and h2 or section }
      if h2 then
        section = h2
        cur.names[1] = h2:match("^([%w_]+)")
      else
        for span in h3:gmatch("`([^`]+)`") do
          local r, m = span:match("^(%a+):([%w_]+)")
          local name = r and RECEIVER[r] and (RECEIVER[r] .. ":" .. m) or span:match("^(poolsh[%w_%.]*)")
          if name then cur.names[#cur.names + 1] = name end
        end
        local t = h3:match("^(%a+) fields")
        if t then cur.names[#cur.names + 1] = t .. " fields" end
      end
      list[#list + 1] = cur
    elseif cur and line ~= "---" then
      cur.body[#cur.body + 1] = line
    end
  end
  for _, e in ipairs(list) do
    while e.body[1] == "" do table.remove(e.body, 1) end
    while e.body[#e.body] == "" do table.remove(e.body) end
    e.body = table.concat(e.body, "\n")
  end
  cache = list
  return list
end

-- Every name an entry answers to, as written and lower-cased, with its
-- entry (as written first: "Pool" is the section, "pool" poolsh.pool).
local function index()
  local by, lower = {}, {}
  for _, e in ipairs(M.entries()) do
    for _, n in ipairs(e.names) do
      by[n] = by[n] or e
      lower[n:lower()] = lower[n:lower()] or e
    end
  end
  return by, lower
end

--- names() -> every name help knows, sorted (for "did you mean").
function M.names()
  local list = {}
  for _, e in ipairs(M.entries()) do
    for _, n in ipairs(e.names) do list[#list + 1] = n end
  end
  table.sort(list)
  return list
end

-- The name of a function value: a field of poolsh or of one of its
-- tables ("poolsh.pool", "poolsh.trace.start"), or a method of a bound
-- type ("Pool:alloc"); nil when none.
local function name_of_function(f)
  local poolsh = package.loaded.poolsh
  if type(poolsh) == "table" then
    for k, v in pairs(poolsh) do
      if rawequal(v, f) then return "poolsh." .. k end
    end
    for k, t in pairs(poolsh) do
      if type(t) == "table" and k ~= "core" then
        for k2, v in pairs(t) do
          if rawequal(v, f) then return "poolsh." .. k .. "." .. k2 end
        end
      end
    end
  end
  for k, mt in pairs(debug.getregistry()) do
    local tname = type(k) == "string" and k:match("^poolsh%.(%u%a*)$")
    if tname and type(mt) == "table" and type(rawget(mt, "methods")) == "table" then
      for m, v in pairs(mt.methods) do
        if rawequal(v, f) then return tname .. ":" .. m end
      end
    end
  end
  if type(poolsh) == "table" and type(poolsh.core) == "table" then
    for k, v in pairs(poolsh.core) do
      if rawequal(v, f) then return "poolsh.core." .. k end
    end
    -- a Pool's own alloc: each Pool's metatable holds a closure of its own
    for _, p in ipairs((poolsh.core.objects())) do
      local idx = rawget(debug.getmetatable(p) or {}, "__index")
      if type(idx) == "table" then
        for m, v in pairs(idx) do
          if rawequal(v, f) then return "Pool:" .. m end
        end
      end
    end
  end
end

-- The topic a value stands for: a string as given, a function by its
-- name, a poolsh object by its type ("Pool"), a poolsh table by its name.
local function topic_of(v)
  if type(v) == "string" then return v end
  if type(v) == "function" then return name_of_function(v) end
  if type(v) == "userdata" or type(v) == "table" then
    local mt = getmetatable(v)
    local tname = type(mt) == "table" and rawget(mt, "__name")
    if type(tname) == "string" and tname:match("^poolsh%.%u") then return tname:match("^poolsh%.(.*)") end
    local poolsh = package.loaded.poolsh
    if rawequal(v, poolsh) then return "Module functions" end
    if type(poolsh) == "table" then
      for k, t in pairs(poolsh) do if rawequal(t, v) then return "poolsh." .. k end end
    end
  end
end

--- lookup(topic) -> the entry of api.md for topic: a name ("poolsh.pool",
-- "pool", "Pool:alloc", "p:alloc", "alloc", "Pool"), a poolsh function,
-- method, object or table. Raises a one-line error naming the topic, with
-- the closest names, when there is none.
function M.lookup(v)
  local topic = topic_of(v)
  if not topic then
    error(("help: no entry for this %s (help() lists what there is; help \"pool\" for one)"):format(type(v)), 0)
  end
  if #topic > 80 then   -- no name is this long: said without comparing it to every name
    error(("help: no entry for '%s...' (a topic is a name such as pool or Pool:alloc)")
      :format(topic:sub(1, 64)), 0)
  end
  local by, lower = index()
  local raw = topic:gsub("%(.*$", ""):gsub("^%s+", ""):gsub("%s+$", "")
  local t = raw:lower()
  local r, m = raw:match("^(%a+)[:.]([%w_]+)$")
  if by[raw] then return by[raw] end
  if by["poolsh." .. raw] then return by["poolsh." .. raw] end
  local cands = { t, "poolsh." .. t }
  if r then
    for short, long in pairs(RECEIVER) do
      if r == short or r:lower() == long:lower() then cands[#cands + 1] = long:lower() .. ":" .. m end
    end
  end
  for _, c in ipairs(cands) do if lower[c] then return lower[c] end end
  local by = lower
  local methods = {}                              -- "alloc": the method of that name
  for k, e in pairs(by) do
    if k:match(":" .. t:gsub("%p", "%%%0") .. "$") then methods[#methods + 1] = e end
  end
  if #methods == 1 then return methods[1] end
  if #methods > 1 then
    local names = {}
    for _, e in ipairs(methods) do names[#names + 1] = e.names[1] end
    table.sort(names)
    error(("help: '%s' is a method of several types: %s"):format(topic, table.concat(names, ", ")), 0)
  end
  local short, seen = {}, {}
  for _, n in ipairs(M.names()) do
    for _, k in ipairs { (n:gsub("^poolsh%.", "")), n:match(":([%w_]+)$") } do
      if not seen[k:lower()] then seen[k:lower()], short[#short + 1] = true, k end
    end
  end
  error(("help: no entry for '%s'%s (help() lists what there is)")
    :format(topic, words.did_you_mean(t:gsub("^poolsh%.", ""), short)), 0)
end

-- The cells of a markdown table row ("| a | b |"), backticks dropped.
local function cells(line)
  local list = {}
  for c in line:gsub("^%s*|", ""):gsub("|%s*$", ""):gmatch("[^|]*") do
    list[#list + 1] = (c:gsub("`", ""):gsub("^%s+", ""):gsub("%s+$", ""))
  end
  return list
end

-- Appends a markdown table's rows (header first) to out as columns
-- fitted to the terminal's width (live.text.rows: the last column folded).
local function put_table(out, rows)
  local header, list = cells(rows[1]), {}
  for i = 2, #rows do
    if not rows[i]:match("^%s*|[%s:|-]+|%s*$") then list[#list + 1] = cells(rows[i]) end
  end
  for _, l in ipairs(require("poolsh.live.text").rows(header, list)) do out[#out + 1] = l end
end

--- entry(topic) -> one entry's text: its heading and the paragraphs under
-- it, as in docs/api.md: prose reflowed and folded at the terminal's
-- width, tables as columns that fit it, code as it is.
function M.entry(v)
  local e = M.lookup(v)
  local heading = words.wrap((e.heading:gsub("`", "")))
  local out, fenced, para, rows = { heading }, false, nil, nil
  local widest = 0
  for l in heading:gmatch("[^\n]+") do widest = math.max(widest, utf8.len(l) or #l) end
  out[#out + 1] = ("="):rep(math.min(widest, 78))
  local function flush()
    if para then out[#out + 1] = words.wrap(para):gsub("\n$", ""); para = nil end
    if rows then put_table(out, rows); rows = nil end
  end
  for line in (e.body .. "\n"):gmatch("(.-)\n") do
    if line:match("^```") then flush(); fenced = not fenced
    elseif fenced then out[#out + 1] = "    " .. line
    elseif line:match("^%s*|") then
      if para then flush() end
      rows = rows or {}
      rows[#rows + 1] = line
    elseif line:match("^%s*$") then flush(); out[#out + 1] = ""
    elseif para and not line:match("^%s*[-*] ") and not line:match("^%s*%d+%. ") then
      para = para .. " " .. line:gsub("^%s+", "")
    else flush(); para = line end
  end
  flush()
  while out[#out] == "" do out[#out] = nil end
  return table.concat(out, "\n") .. "\n"
end

-- ---- the map ---------------------------------------------------------------

--- not_a_command(word) -> what `poolsh WORD` says when WORD is neither
-- a file nor a command, with the closest commands; nil for a name that
-- looks like a script's (a '/' or ending in .lua: lua.c's message stays)
-- or names a file.
function M.not_a_command(word)
  if word:find("/", 1, true) or word:match("%.lua$") then return nil end
  local f = io.open(word, "r")
  if f then f:close(); return nil end
  local names = {}
  for _, c in ipairs(M.commands()) do names[#names + 1] = c[1] end
  local hint = require("poolsh.words").did_you_mean(word, names)
  return ("cannot open %s: no such file, nor a command%s")
    :format(word, hint ~= "" and hint or " (poolsh help lists the commands)")
end

--- commands() -> {{name, line}, ...}: the modules under poolsh/cmd/ (each
-- a command), sorted, with the first line of each one's leading comment.
function M.commands()
  local dir = lua_dir()
  local list = {}
  if not dir then return list end
  local ok, lfs = pcall(require, "lfs")
  local files = {}
  if ok then
    for f in lfs.dir(dir .. "/cmd") do files[#files + 1] = f end
  else
    local p = io.popen("ls -1 '" .. (dir .. "/cmd"):gsub("'", "'\\''") .. "' 2>/dev/null")
    for f in p:lines() do files[#files + 1] = f end
    p:close()
  end
  for _, f in ipairs(files) do
    local name = f:match("^([%w_]+)%.lua$")
    if name then
      local h = io.open(dir .. "/cmd/" .. f, "r")
      local lead = {}
      for l in h and h:lines() or function() end do
        local c = l:match("^%-%-%-?%s?(.*)$")
        if not c then break end
        lead[#lead + 1] = c
      end
      if h then h:close() end
      local line = table.concat(lead, " "):match("^[^:]*:%s*(.*)$") or ""
      line = (line:match("^(.-)%.%s") or line:match("^(.-)%.?$") or line)
        :gsub("%s*%b()", function(p) return (p:find("[/.]") and "" or p) end)
      list[#list + 1] = { name, line }
    end
  end
  table.sort(list, function(a, b) return a[1] < b[1] end)
  return list
end

--- reason() -> why the simulated device is used although the user did
-- not choose it, in words a learner reads ("no NVIDIA GPU driver here"),
-- and the CUDA error behind it ("cudaErrorInsufficientDriver"); nil when
-- the GPU is used or the sim was chosen.
function M.reason()
  local poolsh = package.loaded.poolsh
  local why = type(poolsh) == "table" and poolsh.backend_reason and poolsh.backend_reason()
  if not why then return nil end
  local code = why:match("%((cuda%w+)%)")
  local words_for = {
    cudaErrorInsufficientDriver = "no NVIDIA GPU driver here",
    cudaErrorNoDevice = "no NVIDIA GPU here",
  }
  if not code then return "poolsh was built without CUDA", nil end
  return words_for[code] or "the NVIDIA GPU cannot be used", code
end

--- notice() -> the one line said at start-up when poolsh falls back to its
-- simulated GPU ("no NVIDIA GPU driver here: poolsh runs on its simulated
-- GPU"), or nil.
function M.notice()
  local r = M.reason()
  return r and (r .. ": poolsh runs on its simulated GPU (poolsh help says why)")
end

--- notice_path() -> the file that remembers the notice was said:
-- $XDG_STATE_HOME/poolsh/device-notice, else
-- $HOME/.local/state/poolsh/device-notice (the directory `poolsh learn`
-- keeps progress in); nil without an absolute XDG_STATE_HOME or HOME.
function M.notice_path()
  local base = os.getenv("XDG_STATE_HOME")
  if not (base and base:sub(1, 1) == "/") then
    local home = os.getenv("HOME")
    if not (home and home:sub(1, 1) == "/") then return nil end
    base = home .. "/.local/state"
  end
  return base .. "/poolsh/device-notice"
end

--- notice_once() -> notice(), the first time this user meets this reason
-- (the reason is remembered in notice_path()), else nil. A room of
-- learners reads it once, not before every command; `poolsh help` and
-- --version say it always. Where nothing can be remembered, it is said
-- each time.
function M.notice_once()
  local note = M.notice()
  if not note then return nil end
  local key = table.concat({ M.reason() }, " ")
  local path = M.notice_path()
  if not path then return note end
  local f = io.open(path, "r")
  local was = f and f:read("a")
  if f then f:close() end
  if was == key .. "\n" then return nil end
  local dir = path:match("^(.*)/[^/]*$")
  local there = io.open(dir .. "/.")
  if there then there:close()
  else os.execute("mkdir -p -m 0700 '" .. dir:gsub("'", "'\\''") .. "' 2>/dev/null") end
  pcall(function()
    local w <close> = require("poolsh.core").open_atomic(path)
    w:write(key, "\n")
    w:commit()
  end)
  return note
end

--- device_line() -> which device is in use and why, for help() and
-- --version: the backend, the device's name and, on a fallback, the CUDA
-- error behind it.
function M.device_line()
  local poolsh = package.loaded.poolsh
  if type(poolsh) ~= "table" then return "device: poolsh is not loaded" end
  local ok, dev = pcall(poolsh.device)
  local name = ok and dev and dev.name or "?"
  local r, code = M.reason()
  local src = os.getenv("POOLSH_BACKEND")
  local why
  if r then why = r .. (code and (" (" .. code .. ")") or "") .. ", so poolsh runs on its simulated GPU"
  elseif poolsh.backend() == "sim" then why = "chosen (--backend=sim or POOLSH_BACKEND" .. (src and ("=" .. src) or "") .. ")"
  else why = "a usable GPU" end
  return ("device: %s backend, %s: %s"):format(poolsh.backend(), name, why)
end

--- overview() -> the map help() and `poolsh help` print.
function M.overview()
  local poolsh = package.loaded.poolsh
  local out = {}
  local function add(s) out[#out + 1] = s end
  add(("%s: a Lua shell over CUDA's stream-ordered memory pools, streams, "
    .. "events and buffers, on a GPU or on a simulated one."):format(
    type(poolsh) == "table" and poolsh.version or "?"))
  add("")
  add("Commands (poolsh COMMAND --help for each):")
  local rows = {}
  for _, c in ipairs(M.commands()) do rows[#rows + 1] = { c[1], c[2] } end
  local text = require "poolsh.live.text"
  local lines = text.rows({ "", "" }, rows, text.columns())
  table.remove(lines, 1)
  for _, l in ipairs(lines) do add(l) end
  add("Without a command: poolsh is the prompt; poolsh FILE.lua runs a script.")
  add("")
  add("Lessons: poolsh learn lists them; poolsh learn same_stream starts the first.")
  add("Scenarios: poolsh scenarios lists them; poolsh run NAME runs one, "
    .. "poolsh run --all all of them.")
  add("")
  add("At the prompt:")
  lines = text.rows({ "", "" }, {
    { "poolsh.show()", "every pool, stream and live buffer now" },
    { "poolsh.map(p)", "where pool p's blocks sit" },
    { "help \"pool\"", "one function's entry, from docs/api.md: also help(poolsh.pool), "
      .. "help \"Pool:alloc\", help(p.alloc); poolsh help pool from the shell" },
  }, text.columns())
  table.remove(lines, 1)
  for _, l in ipairs(lines) do add(l) end
  add("")
  add("Errors: the prompt prints an error's message alone; poolsh.repl.traceback() "
    .. "prints the last one's traceback, POOLSH_TRACEBACK=1 prints every one's. "
    .. "Scripts print the traceback; commands print one line.")
  add("")
  add(M.device_line())
  return words.wrap(table.concat(out, "\n")) .. "\n"
end

--- help([topic]): prints the map, or one entry of docs/api.md (the global
-- `help` at the prompt).
function M.help(...)
  if select("#", ...) == 0 then io.stdout:write(M.overview()); return end
  local topic = ...
  if type(topic) == "string" then   -- a command's name: its usage
    for _, c in ipairs(M.commands()) do
      if c[1] == topic then require("poolsh.cmd." .. topic) { "--help" }; return end
    end
  end
  io.stdout:write(M.entry(topic))
end

return M
