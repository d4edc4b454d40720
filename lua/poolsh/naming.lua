--- poolsh.naming: the names objects are shown by (docs/api.md, "Names").
-- An object given a name (poolsh.stream{name = "copies"}, or s.name =
-- "copies") is shown by it everywhere; the others by their kind's letter
-- and id ("s3"; the legacy default stream: "default"). Names outlive their
-- objects, so traces and exports name what is gone too.
local core = require "poolsh.core"

local naming = {}

--- naming.of(kind, id) -> the name shown for object id of kind ("pool",
-- "stream", "event" or "buffer").
naming.of = core.object_name

--- naming.all() -> {pool = {[id] = name}, stream = ..., event = ...,
-- buffer = ...}: every name given so far (ids without one are absent).
naming.all = core.object_names

return naming
