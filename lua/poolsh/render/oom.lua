--- poolsh.render.oom: the lines that follow an out-of-memory error's first
-- line (docs/errors.md, "Out of memory"). The observation layer reports
-- ids, bytes and which advice applies (src/observe.c, ps_obs_alloc_failed);
-- p:alloc raises with what this returns (src/pool.c, through ps_render).
local units = require "poolsh.units"
local naming = require "poolsh.naming"
local call = require "poolsh.render.call"

local fmt = units.fmt

local function stream(id) return id and naming.of("stream", id) or "?" end

-- Line 1: the pool's counters and its freed memory per stream.
local function counters(f, pool)
  local out = { ("%s: reserved %s, used %s, pending %s"):format(pool, fmt(f.reserved), fmt(f.used),
    fmt(f.pending)) }
  local by = f.by_stream or {}
  for i, v in ipairs(by) do
    out[#out + 1] = (i == 1 and " (" or ", ") .. stream(v.stream) .. " " .. fmt(v.pending)
    if v.done > 0 then out[#out + 1] = " + " .. fmt(v.done) .. " completed" end
    if i == #by then out[#out + 1] = (f.more or 0) > 0 and ", ...)" or ")" end
  end
  return table.concat(out)
end

-- Line 2: max_size as the driver rounds it, and the device's free memory.
local function limits(f)
  local out
  if f.max_size then
    local max, gran = f.max_size, f.granularity
    local rounded = max + (gran - max % gran) % gran
    out = "max_size " .. fmt(rounded)
    if rounded ~= max then out = out .. " (" .. fmt(max) .. " rounded up)" end
  else
    out = "no max_size"
  end
  if f.device then
    out = out .. ("; device %d: %s free of %s"):format(f.device, fmt(f.device_free), fmt(f.device_total))
  end
  return out
end

-- Line 4: what would have let the allocation use the freed memory.
local function advice(f, pool)
  if f.advice == "none" then
    return "no freed memory to reuse: free buffers" .. (f.max_size and " or raise max_size" or "")
  elseif f.advice == "no_extent" then
    return ("the freed memory (%s) was usable but holds no free extent of %s: synchronising "
            .. "would not help"):format(fmt(f.freed), fmt(f.size))
  end
  local s, first = stream(f.stream), stream(f.first_other)
  local out = ("%s freed on other streams was not usable from %s: with internal_dependencies on, "
               .. "%s would have made %s wait for them; so would %s before the allocation")
              :format(fmt(f.freed_other), s, pool, s, call("stream_sync", f.first_other))
  if f.follow_event_dependencies then
    out = out .. (", or %s on an event e recorded on %s after the frees"):format(call("wait", f.stream), first)
  end
  return out
end

--- render(facts) -> "\n  <line>" four times, or "" when facts is nil (a
-- failure other than out of memory).
return function(f)
  if f == nil then return "" end
  local pool = naming.of("pool", f.pool)
  return table.concat({ "", counters(f, pool), limits(f),
    ("collecting garbage before the retry freed %s of pool buffers (%s of %s)")
      :format(fmt(f.retry_freed), fmt(f.retry_pool_freed), pool),
    advice(f, pool) }, "\n  ")
end
