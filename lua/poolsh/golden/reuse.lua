--- poolsh.golden.reuse: the cross-stream reuse scenario for one
-- combination of the three reuse policies (the reuse_f*_o*_i* scenarios).
-- A block of 16 MiB is allocated and freed on s1, then 16 MiB is asked
-- for on s2, in each case:
--   pending        the free waits behind a 100 ms spin, no event
--   event before   s2 waits on an event recorded before the free (pending)
--   event after    s2 waits on an event recorded after the free (pending)
--   completed      the free ran 100 ms ago, no sync, no event
--   completed+ev   the same, and s2 waited on an event after the free
--   host sync      s1 was synchronised after the free
--   at the limit   a full max_size pool, the free pending (internal deps)
-- The pool keeps its memory (threshold max); each case ends with a device
-- sync and a trim, so the next starts from an empty pool.
local M = {}

local SPIN = "100 ms"

--- reuse.scenario(f, o, i) -> the scenario table for those policies.
function M.scenario(f, o, i)
  local name = ("reuse_f%d_o%d_i%d"):format(f and 1 or 0, o and 1 or 0, i and 1 or 0)
  local policies = { follow_event_dependencies = f, opportunistic = o, internal_dependencies = i }
  local function pool_opts(extra)
    local t = { release_threshold = "max" }
    for k, v in pairs(policies) do t[k] = v end
    for k, v in pairs(extra or {}) do t[k] = v end
    return t
  end
  return {
    name = name,
    summary = ("cross-stream reuse with follow_event_dependencies=%s, opportunistic=%s, internal_dependencies=%s")
      :format(tostring(f), tostring(o), tostring(i)),
    run = function(g)
      local p = g.pool(pool_opts())
      local s1, s2 = g.stream(), g.stream()
      local function reset() g.sync(); p:trim(0) end

      -- pending, no event: not reusable by s2 (the pool grows instead)
      local a = p:alloc("16 MiB", s1)
      s1:spin(SPIN); a:free()
      local b = p:alloc("16 MiB", s2)
      s2:query()
      b:free(); reset()

      -- an event recorded before the free does not cover it
      a = p:alloc("16 MiB", s1)
      local e = s1:record()
      s1:spin(SPIN); a:free()
      s2:wait(e)
      b = p:alloc("16 MiB", s2)
      s2:query()
      b:free(); reset()

      -- an event recorded after the free: reusable when following events
      a = p:alloc("16 MiB", s1)
      s1:spin(SPIN); a:free()
      e = s1:record()
      s2:wait(e)
      b = p:alloc("16 MiB", s2)
      s2:query()
      b:free(); reset()

      -- the free completed on the device, nothing synchronised
      a = p:alloc("16 MiB", s1)
      a:free()
      g.sleep("100 ms")
      b = p:alloc("16 MiB", s2)
      b:free(); reset()

      -- completed, and s2 waited on an event after the free
      a = p:alloc("16 MiB", s1)
      a:free()
      e = s1:record()
      g.sleep("100 ms")
      s2:wait(e)
      b = p:alloc("16 MiB", s2)
      b:free(); reset()

      -- s1 synchronised after the free: reusable by any stream
      a = p:alloc("16 MiB", s1)
      s1:spin("20 ms"); a:free()
      s1:sync()
      b = p:alloc("16 MiB", s2)
      b:free(); reset()

      -- at the limit: a full pool, the free pending on s1
      local q = g.pool(pool_opts { max_size = "32 MiB" })
      local x, y = q:alloc("16 MiB", s1), q:alloc("16 MiB", s1)
      s1:spin(SPIN); x:free()
      local z = q:alloc("16 MiB", s2)
      s2:query()
      s2:sync()
      s2:query()
      y:free()
      if z then z:free() end
      g.sync(); q:trim(0)
    end,
  }
end

return M
