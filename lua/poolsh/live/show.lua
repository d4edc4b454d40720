--- poolsh.show(): pools, streams, live buffers and pending frees as
-- tables (docs/live.md).
local core = require "poolsh.core"
local units = require "poolsh.units"
local text = require "poolsh.live.text"

local M = {}

local S = text.settings
local fmt = units.fmt
local name, paint, rows, more, append, one_line =
  text.name, text.paint, text.rows, text.more, text.append, text.one_line

--- show_lines() -> the table poolsh.show() prints: pools, streams with
-- their queued work, live buffers and pending frees.
function M.show_lines()
  local width = text.columns()
  local out = {}
  local pools, streams = text.objects()
  out[#out + 1] = paint("bold", "pools")
  local prow = {}
  for _, p in ipairs(pools) do
    local st = p:stats()
    local th = p.release_threshold
    prow[#prow + 1] = { name("pool", p.id) .. (p.default and " (default)" or ""), p.location,
                        fmt(st.reserved), fmt(st.used),
                        ("%s (%d)"):format(fmt(st.pending), st.pending_count),
                        ("%s (largest %s)"):format(fmt(st.free), fmt(st.largest_free)),
                        th == math.huge and "max" or fmt(th) }
  end
  append(out, rows({ "pool", "location", "reserved", "used", "pending", "free ~", "threshold" },
                   prow, width))
  out[#out + 1] = paint("bold", "streams")
  local srow = {}
  for _, s in ipairs(streams) do
    -- a peek, not s:query(): showing changes nothing (no clock moves, no
    -- free becomes known complete)
    local ops, done, idle = core.stream_state(s)
    local state = idle == nil and "?" or idle and "idle" or "busy"
    srow[#srow + 1] = { name("stream", s.id), state, idle and "0" or tostring(ops - done),
                        s.blocking and "blocking" or "non-blocking" }
  end
  append(out, rows({ "stream", "state", "queued", "kind" }, srow, width))
  out[#out + 1] = paint("bold", "buffers")
  local brow = {}
  local live, nlive = core.live(S.show_max)
  for _, b in ipairs(live) do
    brow[#brow + 1] = { name("buffer", b.buffer), fmt(b.size), b.kind,
                        b.pool and ("%s on %s"):format(name("pool", b.pool), name("stream", b.stream)) or "",
                        ("0x%x"):format(b.addr), one_line(b.src) or "" }
  end
  append(out, rows({ "buffer", "size", "kind", "pool", "addr", "allocated at" }, brow, width))
  more(out, nlive - #live, "buffers", "poolsh.leaks()")
  out[#out + 1] = paint("bold", "pending frees")
  local pending, npending = core.pending(S.show_max)
  table.sort(pending, function(a, b)
    if a.pool ~= b.pool then return a.pool < b.pool end
    return a.addr < b.addr
  end)
  local frow = {}
  for _, blk in ipairs(pending) do
    frow[#frow + 1] = { name("buffer", blk.buffer), fmt(blk.size), name("pool", blk.pool),
                        name("stream", blk.stream), ("0x%x"):format(blk.addr) }
  end
  append(out, rows({ "buffer", "size", "pool", "freed on", "addr" }, frow, width))
  more(out, npending - #pending, "pending frees", "poolsh.map(pool)")
  local ranges = core.vmm and core.vmm.ranges() or {}
  if #ranges > 0 then                   -- VMM ranges only while some live (docs/vmm.md)
    out[#out + 1] = paint("bold", "vmm ranges")
    append(out, rows({ "range", "addresses", "mappings", "mapped", "addr" },
                     require("poolsh.live.vmm").rows(ranges), width))
  end
  return out
end

function M.show()
  for _, l in ipairs(M.show_lines()) do io.stdout:write(l, "\n") end
end

return M
