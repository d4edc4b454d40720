-- Probe: when does a free stop
-- being "young" (preferred by its stream), does a carved young free's
-- remainder behave like the free, and is best fit over whole runs or over
-- runs from any free's start? (docs/calibration/h200-2026-11-27-placement.md)
-- Usage: poolsh [--backend=cuda|sim] scripts/calibrate/probe_young_frees.lua OUT
-- Offsets in MiB from the pool's first block; blocks are laid out from 0 in
-- the order allocated; "sN" are 1 MiB separators that stay allocated.
local P = poolsh
local MiB = 1048576
local out = {}
local function say(s) print(s); out[#out + 1] = s end

-- Runs one case: layout is a list of {name, MiB}; steps get the blocks by
-- name and the helpers take(name_or_size) / free(name); returns the offset
-- of the block named "R".
local function case(label, layout, steps)
  local p = P.pool{ release_threshold = "max" }
  local s = P.stream()
  local b, base, keep = {}, nil, {}
  for _, l in ipairs(layout) do
    local x = p:alloc(math.floor(l[2] * MiB), s)
    base = base or x.addr
    b[l[1]] = x
  end
  local function at(x) return (x.addr - base) / MiB end
  local env = {
    free = function(n) b[n]:free(); b[n] = nil end,
    take = function(n, size) b[n] = p:alloc(math.floor(size * MiB), s); keep[#keep + 1] = n; return at(b[n]) end,
  }
  local notes = steps(env)
  local parts = {}
  for _, n in ipairs(keep) do parts[#parts + 1] = ("%s@%.3f"):format(n, at(b[n])) end
  say(("%s: %s%s"):format(label, table.concat(parts, " "), notes and ("  (" .. notes .. ")") or ""))
  for _, x in pairs(b) do x:free() end
  P.sync(); p:destroy(); s:destroy()
end

-- Q1: does a search (into an old hole) age a young free? H 16 old, Y 32
-- young, S 40 goes to the old hole O; R 12: Y if still young, else H.
local q1 = {{"h", 16}, {"s1", 1}, {"o", 40}, {"s2", 1}, {"y", 32}, {"s3", 1}}
case("Q1a a search between, Y whole", q1, function(e)
  e.free("h"); e.free("o"); e.take("g", 96); e.free("y"); e.take("S", 40); e.take("R", 12) end)
case("Q1b a search between, Y carved first (1 MiB)", q1, function(e)
  e.free("h"); e.free("o"); e.take("g", 96); e.free("y"); e.take("k", 1); e.take("S", 40); e.take("R", 12) end)
case("Q1c no search between, Y carved first", q1, function(e)
  e.free("h"); e.free("o"); e.take("g", 96); e.free("y"); e.take("k", 1); e.take("R", 12) end)
-- Q2: a search that takes fresh space at the top without mapping: H 8 old,
-- Y 16 young, S 20 from the top chunk's fresh space; R 6: Y young, else H.
local q2 = {{"h", 8}, {"s1", 1}, {"y", 16}, {"s2", 1}}
case("Q2a a top search between, Y whole", q2, function(e)
  e.free("h"); e.take("g", 40); e.free("y"); e.take("S", 20); e.take("R", 6) end)
case("Q2b a top search between, Y carved first", q2, function(e)
  e.free("h"); e.take("g", 40); e.free("y"); e.take("k", 1); e.take("S", 20); e.take("R", 6) end)
-- Q3: does a young free (whole or carved) join an older free after it in a
-- search? Y 16 young then O 16 old; H 24 old; R 28 fits only Y+O (else top).
local q3 = {{"y", 16}, {"o", 16}, {"s1", 1}, {"h", 24}, {"s2", 1}}
case("Q3a Y whole + O old, R 28", q3, function(e)
  e.free("o"); e.free("h"); e.take("g", 96); e.free("y"); e.take("R", 28) end)
case("Q3b Y carved + O old, R 28", q3, function(e)
  e.free("o"); e.free("h"); e.take("g", 96); e.free("y"); e.take("k", 1); e.take("R", 28) end)
case("Q3c Y carved, a search, + O old, R 28", q3, function(e)
  e.free("o"); e.free("h"); e.take("g", 96); e.free("y"); e.take("k", 1); e.take("S", 24); e.take("R", 28) end)
-- Q4: best fit over whole runs or from any free's start? A 4 + B 32 old and
-- adjacent, H 34 old alone; R 32: H (whole runs) or B (from B's start).
local q4 = {{"a", 4}, {"b", 32}, {"s1", 1}, {"h", 34}, {"s2", 1}}
case("Q4a A4+B32 run against H34, R 32", q4, function(e)
  e.free("a"); e.free("b"); e.free("h"); e.take("g", 96); e.take("R", 32) end)
case("Q4b the same, B freed before A", q4, function(e)
  e.free("b"); e.free("a"); e.free("h"); e.take("g", 96); e.take("R", 32) end)
-- Q5: two young frees: Y1 16 carved by 1 KiB, then Y2 17 freed; R 8: best
-- fit (Y1's remainder) or the newer free (Y2)?
local q5 = {{"y1", 16}, {"s1", 1}, {"y2", 17}, {"s2", 1}}
case("Q5a remainder of Y1 against a newer whole Y2, R 8", q5, function(e)
  e.free("y1"); e.take("k", 1 / 1024); e.free("y2"); e.take("R", 8) end)
case("Q5b both whole, Y2 newer, R 8", q5, function(e)
  e.free("y1"); e.free("y2"); e.take("R", 8) end)
case("Q5c Y1 carved, a search (S 30 to the top), Y2 freed after, R 8", q5, function(e)
  e.free("y1"); e.take("k", 1 / 1024); e.take("S", 30); e.free("y2"); e.take("R", 8) end)
if arg[1] then io.open(arg[1], "w"):write(table.concat(out, "\n"), "\n") end
