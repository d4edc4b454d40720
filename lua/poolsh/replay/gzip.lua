--- poolsh.replay.gzip: inflates gzip data (one member or several, one
-- after another) for every reader of recordings, with a bound: a file of
-- gzip members of zeros must not grow poolsh without end (docs/replay.md,
-- "Limits").
--   local bytes = require("poolsh.replay.gzip").inflate(data, file [, opts])
-- opts.max: the most inflated bytes (default M.limit(#data)); opts.first:
-- a function called with the first inflated bytes, before the rest are
-- inflated (a reader checks its format there and raises).
-- The input is fed to zlib in pieces (so one call inflates at most
-- M.max_piece * 1032 bytes, zlib's largest ratio) and each member starts
-- at an offset into the data, never a copy of the rest: the work is
-- linear in the data whatever the number of members.
local M = {}

--- The inflated size may be this many times the gzip data's size ...
M.ratio = 64
--- ... and at least this many bytes.
M.floor = 64 << 20
--- The first piece of a member fed to zlib (an empty member takes 20
-- bytes), doubling up to M.max_piece.
M.first_piece = 64
M.max_piece = 16 << 10

local sub = string.sub

local function bad(file, fmt, ...) error(file .. ": " .. fmt:format(...), 0) end

--- The most bytes n bytes of gzip data may inflate to by default.
function M.limit(n) return math.max(M.ratio * n, M.floor) end

--- Whether s starts with gzip's magic bytes.
function M.is_gzip(s) return sub(s, 1, 2) == "\31\139" end

--- inflate(data, file [, opts]) -> the inflated bytes of every member, or a
-- one-line error naming `file`: bad or truncated gzip data, more than
-- opts.max bytes, or what opts.first raises.
function M.inflate(data, file, opts)
  opts = opts or {}
  local zlib = require "zlib"
  local max, first = opts.max or M.limit(#data), opts.first
  local out, total, at, len = {}, 0, 1, #data
  while at <= len do
    local stream, piece, start = zlib.inflate(), M.first_piece, at
    while true do
      local chunk = sub(data, at, at + piece - 1)
      local ok, s, eof, used = pcall(stream, chunk)
      if not ok then
        bad(file, "bad gzip data at byte %d: %s", start - 1, (tostring(s):gsub(" at lua_zlib.*", "")))
      end
      if #s > 0 then
        total = total + #s
        if total > max then
          bad(file, "inflates to more than %d bytes, the limit for %d bytes of gzip data (--max-inflate SIZE raises it)",
            max, len)
        end
        out[#out + 1] = s
        if first then first(s); first = nil end
      end
      if eof then at = start + used; break end   -- used: the member's bytes so far
      at = at + #chunk
      if at > len then bad(file, "truncated gzip data (%d bytes read)", len) end
      if piece < M.max_piece then piece = piece * 2 end
    end
  end
  return table.concat(out)
end

return M
