--- poolsh.datafile: Lua files that are data (device profiles, golden
-- files). A data file runs with the environment it is given (empty by
-- default) and a bound on its work, so a file that loops forever is
-- stopped.
local M = {}

local MAX_INSTRUCTIONS = 10000000

--- datafile.decode(text, name [, env]) -> true and what the chunk
-- returns, or false and a message naming `name`.
function M.decode(text, name, env)
  local chunk, err = load(text, "=" .. name, "t", env or {})
  if not chunk then return false, err end
  local co = coroutine.create(chunk)
  debug.sethook(co, function() error("too much computation for a data file", 0) end, "",
                MAX_INSTRUCTIONS)
  local ok, v = coroutine.resume(co)
  if not ok then return false, name .. ": " .. tostring(v) end
  return true, v
end

--- datafile.read(path [, env]) -> as decode, for the file at `path`.
function M.read(path, env)
  local f, err = io.open(path, "r")
  if not f then return false, "cannot open " .. err end
  local text = f:read("a")
  f:close()
  return M.decode(text, path, env)
end

return M
