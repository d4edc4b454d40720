--- poolsh.render.call: how a call reads, as a user would write it
-- ("s2:sync()", "copies:sync()", "poolsh.sync()"). The one source of a
-- call's text: a release's cause (poolsh.trace.cause, events' cause, the
-- live view) and the out-of-memory advice (poolsh.render.oom). Objects are
-- shown by their names (poolsh.naming); the legacy default stream, unless
-- named, as poolsh.default_stream().
local naming = require "poolsh.naming"

local letters = { pool = "p", stream = "s", event = "e", buffer = "b" }

-- By op: the kind of the object called, and the call's text around it.
local calls = {
  stream_sync = { "stream", "%s:sync()" }, stream_destroy = { "stream", "%s:destroy()" },
  wait = { "stream", "%s:wait(e)" }, event_sync = { "event", "%s:sync()" },
  trim = { "pool", "%s:trim()" }, verify = { "buffer", "poolsh.verify(%s)" },
  read = { "buffer", "%s:read()" }, write = { "buffer", "%s:write()" },
  free = { "buffer", "%s:free()" },
}

-- The object as the call names it.
local function object(kind, id)
  if math.type(id) ~= "integer" or id < 0 then return letters[kind] .. tostring(id) end
  local name = naming.of(kind, id)
  if kind == "stream" and id == 0 and name == "default" then return "poolsh.default_stream()" end
  return name
end

--- call(op, id) -> the call of op (a trace op name) on object id:
-- ("stream_sync", 2) is "s2:sync()"; "device_sync" and an op it does not
-- know read "poolsh.sync()".
return function(op, id)
  local c = calls[op]
  if not c then return "poolsh.sync()" end
  return c[2]:format(object(c[1], id))
end
