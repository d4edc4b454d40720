--- poolsh.golden.scenarios: the fidelity scenarios by name
-- (lua/poolsh/fidelity/, docs/fidelity.md).
local M = {}

local function fail(msg) error("poolsh golden: " .. msg, 0) end

--- names() -> the scenarios' names, in poolsh.fidelity's order.
function M.names() return require "poolsh.fidelity" end

--- load(name) -> scenario `name`; raises a clear error for an unknown one.
function M.load(name)
  if type(name) ~= "string" or not name:match("^[%w_]+$") or name == "init" then
    fail(("unknown scenario '%s' (poolsh golden list shows them)"):format(tostring(name)))
  end
  local mod = "poolsh.fidelity." .. name
  if not package.searchpath(mod, package.path) then
    fail(("unknown scenario '%s' (poolsh golden list shows them)"):format(name))
  end
  local sc = require(mod)
  if type(sc) ~= "table" or type(sc.run) ~= "function" then
    fail(("scenario '%s' is not a table with a run function"):format(name))
  end
  return sc
end

return M
