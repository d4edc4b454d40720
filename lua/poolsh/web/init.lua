-- poolsh.web: the Lua side of poolsh in a browser page (src/web.c,
-- docs/web.md). start() sets the page's REPL up as main.c sets the
-- terminal's, and puts a clear "not in the browser" error in place of
-- what a page cannot do: second processes (refused in src/process.c;
-- the scenarios that need one are skipped: poolsh.web.scenarios),
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

M.LEARN_KEY = "poolsh/v1/learn"        -- file:// pages share one storage: namespaced
M.LEARN_FILE = "/storage/learn.json"   -- in the page's memory, mirrored under LEARN_KEY

-- learn's progress kept in this browser's storage: learn reads its file
-- as ever (LEARN_FILE, in the page's memory), filled from the storage
-- first; a save goes to the storage, in the file's format.
local function learn_in_storage()
  local learn, storage = require "poolsh.learn", require "poolsh.web.storage"
  local load = learn.load_progress
  learn.path = M.LEARN_FILE
  learn.progress_place = "this browser's storage (" .. M.LEARN_KEY .. ")"
  function learn.load_progress()
    local text = storage.get(M.LEARN_KEY)
    local f = text and io.open(M.LEARN_FILE, "wb")
    if f then f:write(text) f:close() end
    if not text then os.remove(M.LEARN_FILE) end
    return load()
  end
  function learn.save_progress(prog)
    local lessons = {}
    for name, l in pairs(prog.lessons) do lessons[name] = { done = l.done, finished = l.finished } end
    local text = require("cjson").encode { version = 1, lessons = lessons } .. "\n"
    if storage.set(M.LEARN_KEY, text) then return true end
    io.stderr:write("poolsh learn: this browser refused to keep the progress (storage full or off)\n")
    return false
  end
  function learn.reset()
    os.remove(M.LEARN_FILE)
    storage.set(M.LEARN_KEY, nil)
    return "this browser's storage, " .. M.LEARN_KEY
  end
end

--- learn([LESSON or "--reset"]): poolsh learn in the page. Without an
-- argument, the lessons and the progress kept in this browser; with a
-- lesson's name or number, the lesson started in this REPL (hint(),
-- skip(), lesson(), check(), restart() as at the terminal).
function M.learn(which)
  if which == nil or which == "--reset" or which == "--help" then
    require("poolsh.cmd.learn")({ which })
    return
  end
  local ok, e = pcall(require("poolsh.learn").start, which)
  if not ok then error("poolsh learn: " .. tostring(e):gsub("poolsh learn lists them", "learn() lists them"), 0) end
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
  learn_in_storage()
  _G.learn = M.learn
  local scenarios = require "poolsh.web.scenarios"
  require("poolsh.scenario").second_process = false
  _G.run, _G.scenarios = scenarios.run, scenarios.scenarios
  io.stdout:write(poolsh.version or "poolsh", " (", _VERSION, ") in the browser, on the sim\n",
    "help() shows what poolsh can do; learn() lists the lessons;\n",
    "scenarios() lists the scenarios, and run \"NAME\" runs one.\n")
end

--- resize(columns): the live lines' width, at least 40.
function M.resize(columns)
  columns = math.tointeger(columns)
  _G.poolsh.live.width = columns and math.max(columns, 40) or nil
end

return M
