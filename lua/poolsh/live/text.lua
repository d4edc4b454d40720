--- The layout helpers every view shares (docs/live.md): the settings
-- poolsh.live's fields hold, names, colour, the width views fit in,
-- cutting, folding and tables.
local core = require "poolsh.core"

local T = {}

--- settings: the table poolsh.live is (live.lua adds its functions to it),
-- so that `poolsh.live.width = 60` is what every view reads here.
local S = {
  --- color: ANSI colours, used only when on (the host turns it on when
  -- stdout is a terminal).
  color = false,
  --- width: columns the views fit in: nil picks them (columns()), or a
  -- number >= 40.
  width = nil,
  --- alloc_lines: at most this many allocations are listed one per line
  -- after a statement; more are summarised per pool and rule, then the
  -- last `examples` listed.
  alloc_lines = 8,
  examples = 3,
  --- collected_names: how many collected buffers the note names before
  -- "and N more".
  collected_names = 8,
  --- show_max: at most this many rows of live buffers and of pending frees
  -- in show(), and of lines in the leak report; the rest is counted on
  -- one line.
  show_max = 50,
  --- leak_group: sites with more live buffers than this get one line for
  -- all of them.
  leak_group = 3,
}
T.settings = S

-- Display names ("copies", else "s3"; stream 0 "default").
local naming = require "poolsh.naming"
function T.name(kind, id)
  if id == nil then return "?" end
  return naming.of(kind, id)
end

-- Colours readable on dark and white (projector) themes alike: shrinking
-- is magenta, not yellow.
local codes = { grow = "32", shrink = "35", rule = "36", dim = "2", bold = "1",
                pass = "1;32", fail = "1;31" }

--- colored() -> whether views paint: color is on and NO_COLOR
-- (no-color.org) is unset or empty.
function T.colored()
  local no = os.getenv("NO_COLOR")
  return S.color and (no == nil or no == "")
end

--- paint(kind, s) -> s in kind's colour when colored(), else s.
function T.paint(kind, s)
  if not T.colored() then return s end
  return "\27[" .. codes[kind] .. "m" .. s .. "\27[0m"
end

local function by_id(list)
  table.sort(list, function(a, b) return a.id < b.id end)
  return list
end

--- objects() -> the live pools and streams, by id.
function T.objects()
  local pools, streams = core.objects()
  return by_id(pools), by_id(streams)
end

-- The terminal's columns from stty, or nil.
local function terminal_columns()
  local f = io.popen("stty size </dev/tty 2>/dev/null")
  if not f then return nil end
  local out = f:read("a") or ""        -- nothing when the terminal is gone (SIGHUP)
  f:close()
  return tonumber(out:match("^%s*%d+%s+(%d+)"))
end

--- columns() -> the width the views fit in: poolsh.live.width when set;
-- else $COLUMNS; else the terminal's width when stdout is a terminal
-- (color on, as the REPL sets it); else 80. Never below 40.
function T.columns()
  local w = S.width
  if w ~= nil then
    if math.type(w) ~= "integer" or w < 40 then
      error("poolsh.live.width must be nil or an integer >= 40, got " .. tostring(w), 2)
    end
    return w
  end
  w = math.tointeger(tonumber(os.getenv("COLUMNS") or ""))
  if not w and S.color then w = terminal_columns() end
  return math.max(w or 80, 40)
end

--- vlen(s) -> the columns a string takes on screen: colour codes take
-- none, a UTF-8 sequence one.
function T.vlen(s)
  s = s:gsub("\27%[[%d;]*m", "")
  return utf8.len(s) or #s
end
local vlen = T.vlen

--- cut(s, n) -> s cut to n columns, ending in "..." when cut (s without
-- colour codes).
function T.cut(s, n)
  if vlen(s) <= n then return s end
  local at = utf8.len(s) and utf8.offset(s, n - 2) or n - 2
  return s:sub(1, at - 1) .. "..."
end
local cut = T.cut

--- cut_left(s, n) -> s cut to n columns from the left, starting with
-- "..." when cut: a path keeps its file and line.
function T.cut_left(s, n)
  if vlen(s) <= n then return s end
  local len = utf8.len(s)
  if not len then return "..." .. s:sub(#s - n + 4) end   -- bytes: the last n - 3
  return "..." .. s:sub(utf8.offset(s, len - (n - 3) + 1))
end
local cut_left = T.cut_left

--- one_line(site) -> a site on one line: a REPL statement's text can span
-- several.
function T.one_line(site) return site and (site:gsub("%s+", " ")) end

--- fit(out, parts, width [, indent]): appends parts to out as lines of at
-- most width columns: parts joined by two spaces, a part that does not fit
-- starting a line of its own after indent, a part too long for any line
-- broken at its spaces (its leading spaces kept; a lone "<", which joins
-- the frames of a call stack, stays with the word after it).
function T.fit(out, parts, width, indent)
  indent = indent or "    "
  local line
  local function put(sep, piece)
    if line == nil then line = piece
    elseif vlen(line) + #sep + vlen(piece) <= width then line = line .. sep .. piece
    else out[#out + 1] = line; line = indent .. piece end
  end
  for _, p in ipairs(parts) do
    if vlen(p) > width - #indent then
      local sep, lead, carry = "  ", p:match("^%s*"), nil
      for w in p:gmatch("%S+") do
        if w == "<" then carry = (carry and carry .. " " or "") .. w
        else
          put(sep, lead .. (carry and carry .. " " or "") .. w); sep, lead, carry = " ", "", nil
        end
      end
      if carry then put(sep, lead .. carry) end
    else
      put("  ", p)
    end
  end
  if line then out[#out + 1] = line end
  return out
end
local fit = T.fit

--- by_count(t) -> "stream order 399990, host synchronisation 10": counts
-- by name, most first.
function T.by_count(t)
  local list = {}
  for k, n in pairs(t) do if n > 0 then list[#list + 1] = { k, n } end end
  table.sort(list, function(a, b) if a[2] ~= b[2] then return a[2] > b[2] end return a[1] < b[1] end)
  for i, e in ipairs(list) do list[i] = ("%s %d"):format(e[1], e[2]) end
  return table.concat(list, ", ")
end

local function pad(s, n) return s .. string.rep(" ", n - vlen(s)) end

--- rows(header, list [, width]) -> a table's lines, fitted to width
-- columns: when the columns do not fit side by side they are printed in
-- blocks, each repeating the first column; the last column stays when 16
-- columns are left for it, its cells folded at their spaces under
-- themselves; what is still too wide is cut with "...". No lines for no
-- rows.
function T.rows(header, list, width)
  width = width or T.columns()
  local out = {}
  if #list == 0 then return out end
  local w = {}
  for i, h in ipairs(header) do w[i] = vlen(h) end
  for _, r in ipairs(list) do
    for i = 1, #header do w[i] = math.max(w[i], vlen(r[i] or "")) end
  end
  local blocks, cur, used = {}, { 1 }, 2 + w[1]
  for i = 2, #header do
    -- a last column with 16 columns left is cut rather than moved
    local cut_last = i == #header and width - used - 2 >= 16
    if used + 2 + w[i] > width and #cur > 1 and not cut_last then
      blocks[#blocks + 1], cur, used = cur, { 1 }, 2 + w[1]
    end
    cur[#cur + 1], used = i, used + 2 + w[i]
  end
  blocks[#blocks + 1] = cur
  for _, b in ipairs(blocks) do
    local function line(r)
      local cells = {}
      for k = 1, #b - 1 do cells[k] = pad(r[b[k]] or "", w[b[k]]) end
      local lead = "  " .. table.concat(cells, "  ") .. (#b > 1 and "  " or "")
      local last = r[b[#b]] or ""
      if vlen(lead) + vlen(last) <= width or width - vlen(lead) < 16 then
        out[#out + 1] = cut((lead .. last):gsub("%s+$", ""), width)
      else   -- the last cell folded at its spaces, under itself
        local room = width - vlen(lead)
        local folded = fit({}, { last }, room, "")
        for k, l in ipairs(folded) do
          -- a word wider than the room (a path) keeps its end: file and line
          if vlen(l) > room then
            local arrow = l:match("^< ") or ""
            l = arrow .. cut_left(l:sub(#arrow + 1), room - #arrow)
          end
          out[#out + 1] = cut(((k == 1 and lead or (" "):rep(vlen(lead))) .. l):gsub("%s+$", ""), width)
        end
      end
    end
    line(header)
    for _, r in ipairs(list) do line(r) end
  end
  return out
end

--- more(out, n, what, hint): the line under a table cut at show_max rows.
function T.more(out, n, what, hint)
  if n > 0 then out[#out + 1] = T.paint("dim", ("  ... and %d more %s (%s lists them)"):format(n, what, hint)) end
end

--- append(out, lines): lines added at the end of out.
function T.append(out, lines)
  for _, l in ipairs(lines) do out[#out + 1] = l end
end

return T
