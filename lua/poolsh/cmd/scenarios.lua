--- poolsh scenarios: lists the narrated scenarios, each with its summary
-- (folded under itself at the terminal's width; docs/scenarios.md).
local scenario = require "poolsh.scenario"
local text = require "poolsh.live.text"
local words = require "poolsh.words"

local USAGE = [[
usage: poolsh scenarios
Lists the scenarios `poolsh run NAME` runs, each with what it shows.]]

return function(args)
  if args[1] == "--help" or args[1] == "-h" then
    io.stdout:write(words.wrap(USAGE .. "\n"))
    return 0
  end
  if args[1] then error("poolsh scenarios: unexpected argument '" .. args[1] .. "' (takes none)", 0) end
  local rows = {}
  for _, name in ipairs(require "poolsh.scenarios") do
    local sc = scenario.load(name)
    local only = (sc.processes or 1) > 1 and not scenario.second_process and "(native poolsh only) " or ""
    rows[#rows + 1] = { name, only .. (sc.summary or "") }
  end
  local lines = text.rows({ "", "" }, rows, text.columns() + 2)   -- less the lead cut below
  table.remove(lines, 1)   -- no header row
  for _, l in ipairs(lines) do io.stdout:write((l:gsub("^  ", "")), "\n") end
  return 0
end
