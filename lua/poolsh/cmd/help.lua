--- poolsh help: what poolsh can do, or one function's entry of docs/api.md
-- (poolsh help pool; lua/poolsh/help.lua).
local help = require "poolsh.help"

local USAGE = [[
usage: poolsh help [TOPIC]
Without TOPIC: the commands, the lessons and scenarios, the views, how to
see a traceback, and which device is in use and why. With TOPIC (pool,
Pool:alloc, poolsh.trace.start, ...): its entry of docs/api.md.]]

return function(args)
  if args[1] == "--help" or args[1] == "-h" then io.stdout:write(USAGE, "\n"); return 0 end
  if args[2] then error("poolsh help: one topic at a time: '" .. args[1] .. "' and '" .. args[2] .. "'", 0) end
  local ok, e = pcall(help.help, table.unpack(args, 1, #args))
  if not ok then error("poolsh " .. tostring(e), 0) end
  return 0
end
