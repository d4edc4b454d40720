--- poolsh scenarios: lists the narrated scenarios, one line each
-- (docs/scenarios.md).
local scenario = require "poolsh.scenario"

return function(args)
  if args[1] == "--help" or args[1] == "-h" then
    io.stdout:write("usage: poolsh scenarios\nLists the scenarios `poolsh run NAME` runs.\n")
    return 0
  end
  if args[1] then error("poolsh scenarios: unexpected argument '" .. args[1] .. "' (takes none)", 0) end
  for _, name in ipairs(require "poolsh.scenarios") do
    io.stdout:write(("%-20s %s\n"):format(name, scenario.load(name).summary or ""))
  end
  return 0
end
