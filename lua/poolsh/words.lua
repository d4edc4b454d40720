--- poolsh.words: prose as people read it. wrap() folds text at words to
-- the terminal's width; suggest() answers "did you mean" for a mistyped
-- name. Every sentence poolsh prints that may be long goes through wrap.
local text = require "poolsh.live.text"

local M = {}

local vlen = text.vlen

-- One line (no newline) folded at its spaces to width columns; the
-- continuation lines start under the first word after the line's leading
-- spaces and any list marker ("- ", "1. ") or short label ("notice: ").
local function fold(line, width, out)
  if vlen(line) <= width then out[#out + 1] = line; return end
  local label = line:match("^%s*(%a+:%s+)")
  if label and #label > 12 then label = nil end   -- "notice: ", not "cudaErrorMemoryAllocation: "
  local lead = line:match("^%s*") .. (line:match("^%s*(%d+%.%s+)") or line:match("^%s*([-*]%s+)")
    or label or "")
  local hang = (" "):rep(vlen(lead))
  if vlen(hang) > width // 2 then hang = line:match("^%s*") end
  local cur, first = nil, true
  for word in line:sub(#line:match("^%s*") + 1):gmatch("%S+") do
    if cur == nil then cur = (first and line:match("^%s*") or hang) .. word
    elseif vlen(cur) + 1 + vlen(word) <= width then cur = cur .. " " .. word
    else
      out[#out + 1] = cur
      first, cur = false, hang .. word
    end
  end
  out[#out + 1] = cur or line
end

--- wrap(s [, width]) -> s with each of its lines folded at spaces so that
-- none is wider than width (default: the terminal's columns, 80 when
-- unknown). A word longer than the width stays whole on its own line.
-- Colour codes take no columns; a trailing newline is kept.
function M.wrap(s, width)
  s = tostring(s)
  width = width or text.columns()
  local out = {}
  local body, nl = s:match("^(.-)(\n?)$")
  for line in (body .. "\n"):gmatch("([^\n]*)\n") do fold(line, width, out) end
  return table.concat(out, "\n") .. nl
end

--- writer(write [, width]) -> a function(s) that calls write with s
-- wrapped (wrap), for the out(...) functions commands print through.
function M.writer(write, width)
  return function(s) return write(M.wrap(s, width)) end
end

-- Levenshtein distance between a and b, bytes.
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:byte(i) == b:byte(j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

--- suggest(word, names) -> the names closest to word (list, best first;
-- empty when none is close): those word is a prefix or part of, and those
-- within an edit distance of a third of their length (at least 2). A word
-- longer than 64 bytes has none.
function M.suggest(word, names)
  word = tostring(word):lower()
  if #word > 64 then return {} end   -- no name is that long: not compared
  local scored = {}
  for _, n in ipairs(names) do
    local ln = n:lower()
    local d = distance(word, ln)
    if #word >= 3 and (ln:find(word, 1, true) or word:find(ln, 1, true)) then d = math.min(d, 1) end
    if d <= math.max(2, #ln // 3) then scored[#scored + 1] = { n, d } end
  end
  table.sort(scored, function(a, b) if a[2] ~= b[2] then return a[2] < b[2] end return a[1] < b[1] end)
  local out = {}
  for i = 1, math.min(#scored, 3) do out[i] = scored[i][1] end
  return out
end

--- did_you_mean(word, names) -> " (did you mean 'x'?)" or " (did you mean
-- 'x' or 'y'?)", or "" when no name is close.
function M.did_you_mean(word, names)
  local s = M.suggest(word, names)
  if #s == 0 then return "" end
  for i, n in ipairs(s) do s[i] = "'" .. n .. "'" end
  local last = table.remove(s)
  return " (did you mean " .. (#s > 0 and table.concat(s, ", ") .. " or " or "") .. last .. "?)"
end

return M
