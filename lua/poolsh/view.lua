--- poolsh.view: the live memory-map picture of this session, served on
-- a local page (docs/view.md). The server is a C thread (src/vserve.c)
-- that answers from the last snapshot while Lua runs; this module starts
-- it with the page's files (lua/poolsh/web/), says its URL once, and
-- publishes the picture (poolsh.web.picture) when it changed: after each
-- REPL statement, and while code runs (a count hook, at most every
-- 100 ms).
local core = require "poolsh.core"

local M = {}

local PUBLISH_EVERY = 0.1      -- seconds of CPU time between publishes while code runs
local HOOK_COUNT = 10000       -- instructions between looks at the clock

local published               -- the picture's version state.json serves
local next_at = 0
local publishing = false
local hooked = false          -- our function is in poolsh.repl.hooks

local function picture() return require "poolsh.web.picture" end

--- publish(): hands the picture's snapshot to the server when its
-- version changed since the last one (nothing when no server runs).
function M.publish()
  if publishing or not core.view_url() then return end
  publishing = true
  local ok, err = pcall(function()
    local pic = picture()
    local v = pic.version()
    if v ~= published then
      core.view_publish(pic.snapshot(), v)
      published = v
    end
  end)
  publishing = false
  if not ok then error(err, 0) end
end

-- The count hook: publishes at most every PUBLISH_EVERY, and less often
-- when a publish is slow (a picture of many blocks), so that publishing
-- takes at most a tenth of the running code's time; never raises into
-- the code it interrupts.
local function tick()
  local t = os.clock()
  if t < next_at or publishing then return end
  pcall(M.publish)
  local now = os.clock()
  next_at = now + math.max(PUBLISH_EVERY, 9 * (now - t))
end

--- arm(): publishes while the running code runs (the host calls it
-- before each chunk, through the registry's "poolsh.view.arm"); leaves
-- a hook someone else set alone.
function M.arm()
  local h = debug.gethook()
  if h == nil or h == tick then debug.sethook(tick, "", HOOK_COUNT) end
end

local OPTIONS = { port = true }

local function check_options(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(("poolsh.view: expects a table of options ({port = N}) or false, got %s")
      :format(type(opts)), 3)
  end
  opts = opts or {}
  local names = {}
  for k in pairs(OPTIONS) do names[#names + 1] = k end
  for k in pairs(opts) do
    if not OPTIONS[k] then
      error(("poolsh.view: unknown option '%s'%s"):format(tostring(k),
        require("poolsh.words").did_you_mean(tostring(k), names)), 3)
    end
  end
  local port = opts.port or 0
  if math.type(port) ~= "integer" or port < 0 or port > 65535 then
    error(("poolsh.view: port must be an integer from 0 to 65535 (0: any free one), got %s")
      :format(type(port) == "string" and ("'" .. port .. "'") or tostring(port)), 3)
  end
  return port
end

-- The page's three files, from the picture's module.
local function page_files()
  local ok, pic = pcall(picture)
  if not ok then
    error("poolsh.view: the picture's module is missing (poolsh.web.picture): " .. tostring(pic), 0)
  end
  local files = pic.page_files()
  for _, name in ipairs { "view.html", "picture.js", "picture.css" } do
    if type(files[name]) ~= "string" then
      error(("poolsh.view: the page's file %s was not found beside poolsh.web.picture"):format(name), 0)
    end
  end
  return files
end

--- view([opts]) -> the URL; view(false) -> whether one was stopped.
-- Starts the server (opts.port: 0, any free one), says the URL on
-- standard error once, and publishes the picture from now on. A second
-- call returns the same URL.
function M.view(opts)
  if opts == false then
    local was = core.view_stop()
    debug.getregistry()["poolsh.view.arm"] = nil
    if debug.gethook() == tick then debug.sethook() end
    published = nil
    return was
  end
  local port = check_options(opts)
  local url = core.view_url()
  if url then
    local now = tonumber(url:match(":(%d+)/"))
    if port ~= 0 and port ~= now then
      error(("poolsh.view: already serving on port %d; poolsh.view(false) stops it"):format(now), 2)
    end
    return url
  end
  local files = page_files()
  url = core.view_start(port, files["view.html"], files["picture.js"], files["picture.css"])
  published, next_at = nil, 0
  local ok, err = pcall(M.publish)
  if not ok then
    core.view_stop()
    error(err, 0)
  end
  if not hooked then
    local repl = require "poolsh.repl"
    repl.hooks[#repl.hooks + 1] = function() pcall(M.publish) end
    hooked = true
  end
  debug.getregistry()["poolsh.view.arm"] = M.arm
  M.arm()
  io.stderr:write("view: ", url, "\n")
  io.stderr:flush()
  return url
end

--- from_cli(port): `poolsh --view[=PORT]`: starts serving; on a bad
-- port or a failure, says why in one line and returns false.
function M.from_cli(port)
  local n = tonumber(port)
  if port == "" or not port:match("^%d+$") or not n or n > 65535 then
    io.stderr:write(("poolsh: --view=PORT: the port must be a number from 0 to 65535, got '%s'\n")
      :format(port))
    return false
  end
  local ok, err = pcall(M.view, { port = math.tointeger(n) })
  if not ok then
    io.stderr:write("poolsh: --view: ", tostring(err):gsub("^poolsh%.view: ", ""), "\n")
    return false
  end
  return true
end

--- linger(): the end of a `poolsh --view` run that is not the REPL's:
-- publishes the last picture and serves it until Enter, Ctrl-C or the
-- end of standard input, then stops.
function M.linger()
  if not core.view_url() then return end
  pcall(M.publish)
  io.stderr:write("view: the run ended; the page keeps its last picture. "
    .. "Press Enter (or Ctrl-C) to stop serving.\n")
  io.stderr:flush()
  core.view_wait()
  M.view(false)
end

return M
