--- poolsh.render.why_fresh: the words of b.why_fresh (docs/explain.md,
-- "Why fresh memory"). The ledger says why an allocation took fresh memory
-- as a code and ids (src/ledger.c, ps_push_why); the binding that shows it
-- (buffer.c's why_fresh, poolsh.core.recent) calls this function on them
-- through ps_render (src/render.c). Objects are named as naming.of names
-- them, at the time the words are asked for.
local core = require "poolsh.core"
local units = require "poolsh.units"

local letters = { pool = "p", stream = "s", buffer = "b" }

-- The name shown for object kind/id; an id that no object can have (-1:
-- none known) as its letter and the number.
local function name(kind, id)
  if math.type(id) ~= "integer" or id < 0 or id > 0x7fffffff then
    return letters[kind] .. tostring(id)
  end
  return core.object_name(kind, id)
end

-- The words when the details are gone (the ring of whys moved on).
local bare = {
  other_stream = "a freed block large enough is pending on another stream, with no event "
    .. "dependency on it",
  event_before = "the stream waited on an event recorded before the free of a block large enough",
  not_followed = "the stream waited on an event recorded after a free, but the pool does not "
    .. "follow event dependencies",
  opportunistic_off = "a free of a block large enough completed, but opportunistic reuse is off",
  fragmented = "no freed block is large enough",
  placed = "a freed block large enough was reusable, but the pool placed the allocation elsewhere",
}

-- The words with the details: w.freed (buffer) freed on w.freed_on; the
-- allocation's w.stream and w.pool.
local said = {
  other_stream = function(w)
    return ("%s's free is pending on %s, and %s has no event dependency on it"):format(
      name("buffer", w.freed), name("stream", w.freed_on), name("stream", w.stream))
  end,
  event_before = function(w)
    return ("%s waited on an event recorded on %s before %s's free"):format(
      name("stream", w.stream), name("stream", w.freed_on), name("buffer", w.freed))
  end,
  not_followed = function(w)
    return ("%s waited on an event recorded on %s after %s's free, but %s does not follow "
      .. "event dependencies"):format(name("stream", w.stream), name("stream", w.freed_on),
      name("buffer", w.freed), name("pool", w.pool))
  end,
  opportunistic_off = function(w)
    return ("%s's free on %s completed, but opportunistic reuse is off in %s"):format(
      name("buffer", w.freed), name("stream", w.freed_on), name("pool", w.pool))
  end,
  fragmented = function(w)
    return "no freed block is large enough: the largest is " .. units.fmt(w.largest)
  end,
  placed = function(w)
    return ("%s's block was reusable (%s), but the pool placed the allocation elsewhere"):format(
      name("buffer", w.freed), w.rule or "?")
  end,
}

--- why_fresh(w) -> the sentence for why w = {reason, pool, stream, ...}
-- took fresh memory, or nil for nil (it reused, or nothing explains it).
-- Raises on anything else, or a reason it does not know.
return function(w)
  if w == nil then return nil end
  if type(w) ~= "table" then
    error(("poolsh.render.why_fresh: a table of codes expected, got %s"):format(type(w)), 2)
  end
  local reason = w.reason
  if not bare[reason] then
    error(("poolsh.render.why_fresh: unknown reason '%s'"):format(tostring(reason)), 2)
  end
  local detailed = reason == "fragmented" and w.largest or w.freed
  return detailed and said[reason](w) or bare[reason]
end
