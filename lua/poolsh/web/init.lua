-- poolsh.web: the Lua side of poolsh in a browser page (src/web.c,
-- docs/web.md). start() sets the page's REPL up as main.c sets the
-- terminal's, and puts a clear "not in the browser" error in place of
-- what a page cannot do: second processes (refused in src/process.c),
-- memory shared between processes (IPC pools, events and exports), the
-- cuda backend, running programs (os.execute, io.popen) and os.exit.
local M = {}

-- The error a refused function raises, naming it.
local function not_here(name, why)
  return function()
    error(name .. ": not in the browser (" .. why .. ")", 2)
  end
end

local IPC = "sharing memory between processes needs the native poolsh"

-- f, but refusing an options table with ipc = true, as name.
local function no_ipc(name, f)
  return function(opts, ...)
    if type(opts) == "table" and rawget(opts, "ipc") then
      error(name .. ": ipc = true is not in the browser (" .. IPC .. ")", 2)
    end
    return f(opts, ...)
  end
end

-- Replaces the IPC entry points of poolsh and of its objects' methods.
local function refuse_ipc(poolsh)
  poolsh.pool = no_ipc("poolsh.pool", poolsh.pool)
  poolsh.event = no_ipc("poolsh.event", poolsh.event)
  poolsh.import_pool = not_here("poolsh.import_pool", IPC)
  local reg = debug.getregistry()
  local methods = {
    ["poolsh.Pool"] = { "export", "import" },
    ["poolsh.Buffer"] = { "export" },
    ["poolsh.Event"] = { "export" },
  }
  for class, names in pairs(methods) do
    local mt = reg[class]
    for _, m in ipairs(names) do
      if mt and mt.methods and mt.methods[m] then
        mt.methods[m] = not_here(class:match("%.(%a+)$"):lower() .. ":" .. m, IPC)
      end
    end
  end
end

-- poolsh.configure, refusing the cuda backend.
local function sim_only(configure)
  return function(opts, ...)
    if type(opts) == "table" and opts.backend ~= nil and opts.backend ~= "sim" then
      error("poolsh.configure: backend '" .. tostring(opts.backend)
        .. "' is not in the browser (the page runs the sim; the cuda backend needs the native poolsh)", 2)
    end
    return configure(opts, ...)
  end
end

--- start(columns): poolsh on the sim, the REPL's settings (live lines in
-- colour at the terminal's width, help()), the refusals, and the banner.
function M.start(columns)
  local poolsh = _G.poolsh
  poolsh.configure { backend = "sim" }
  poolsh.sources(true)
  poolsh.configure = sim_only(poolsh.configure)
  refuse_ipc(poolsh)
  poolsh.spawn = poolsh.spawn or not_here("poolsh.spawn", "a second process needs the native poolsh")
  os.execute = not_here("os.execute", "a page cannot run programs")
  io.popen = not_here("io.popen", "a page cannot run programs")
  os.exit = not_here("os.exit", "reload the page to start again")
  M.resize(columns)
  poolsh.live.color = true
  poolsh.watch(true)
  if _G.help == nil then _G.help = require("poolsh.help").help end
  io.stdout:write(poolsh.version or "poolsh", " (", _VERSION, ") in the browser, on the sim\n",
    "help() shows what poolsh can do.\n")
end

--- resize(columns): the live lines' width, at least 40.
function M.resize(columns)
  columns = math.tointeger(columns)
  _G.poolsh.live.width = columns and math.max(columns, 40) or nil
end

return M
