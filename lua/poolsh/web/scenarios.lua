--- run() and scenarios() at the page's prompt: `poolsh run` and `poolsh
-- scenarios` in this REPL (docs/web.md). What needs a terminal or files
-- (--step, --report) is refused; a scenario that runs a second process is
-- skipped, saying why (poolsh.scenario.second_process); before one that
-- needs more devices than the sim has, which restarts the sim, the page
-- says that this session's objects go with it.
local poolsh = require "poolsh"
local scenario = require "poolsh.scenario"
local words = require "poolsh.words"

local M = {}

-- The options a page cannot honour, and why.
local REFUSED = {
  ["--step"] = "the page prints every step at once",
  ["--report"] = "a page cannot save files: the native poolsh writes the report",
}

-- The scenarios args will run that restart the sim (sc.devices more than
-- it has), by name; unknown names are left to poolsh run to report.
local function restarting(args)
  local names = {}
  for _, a in ipairs(args) do
    if a == "--all" then names = require "poolsh.scenarios"; break end
    if a:sub(1, 1) ~= "-" then names[#names + 1] = scenario.renamed[a] or a end
  end
  local out = {}
  for _, name in ipairs(names) do
    local ok, sc = pcall(scenario.load, name)
    if ok and (sc.devices or 1) > poolsh.device_count() then out[#out + 1] = sc end
  end
  return out
end

--- run(NAME or "--all" [, "--quiet"]): runs scenarios as `poolsh run`.
function M.run(...)
  local args = table.pack(...)
  for i = 1, args.n do
    local a = args[i]
    if type(a) ~= "string" then
      error(("run: argument #%d must be a string (a scenario's name or an option), got %s")
        :format(i, type(a)), 2)
    end
    local opt = a:match("^%-%-%a+")
    if REFUSED[opt] then error(("run: %s is not in the browser (%s)"):format(opt, REFUSED[opt]), 2) end
  end
  args.n = nil
  for _, sc in ipairs(restarting(args)) do
    io.stdout:write(words.wrap(("%s needs %d devices: the sim restarts with them for it, so the pools, "
      .. "streams and buffers made before are gone\n"):format(sc.name, sc.devices)))
  end
  require("poolsh.cmd.run")(args)
end

--- scenarios(): the scenarios run() runs, as `poolsh scenarios`.
function M.scenarios()
  require("poolsh.cmd.scenarios")({})
end

return M
