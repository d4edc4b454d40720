-- Probe for docs/calibration/h100-2026-11-24-placement.log.
-- Usage: poolsh --backend=cuda scripts/calibrate/probe_placement_chunk_runs.lua OUT
-- Do free runs that cross 32 MiB chunk boundaries count whole for best fit?
local P = poolsh
local MiB = 1048576
local out = {}
local function say(...) local s = table.concat({...}, " "); print(s); out[#out+1] = s end
-- sizes in MiB allocated back to back on one stream from offset 0; `holes`
-- lists the indexes freed; then `req` MiB is asked for.
local function case(name, sizes, holes, req)
  local p = P.pool{ release_threshold = "max" }
  local s = P.stream()
  local bs, base = {}, nil
  for i, m in ipairs(sizes) do bs[i] = p:alloc(m * MiB, s); base = base or bs[i].addr end
  for _, i in ipairs(holes) do bs[i]:free() end
  local n = p:alloc(req * MiB, s)
  local at = {}
  for _, i in ipairs(holes) do at[#at + 1] = ("%d@%.0f"):format(i, (bs[i].addr - base) / MiB) end
  say(name, "holes " .. table.concat(at, " "), ("-> @%.3f"):format((n.addr - base) / MiB), "reserved", p:stats{estimates=false}.reserved // MiB)
  n:free()
  for i, b in ipairs(bs) do if b.live then b:free() end end
  P.sync(); p:destroy(); s:destroy()
end
-- X9: A = [4,36) (28 MiB in chunk 0), B = [37,101) (27 MiB in chunk 1); 16 MiB
case("X9 A32 straddling (28+4), B64 (27+32+5); req 16", { 4, 32, 1, 64, 1 }, { 2, 4 }, 16)
-- X9b: the same with A's first part smaller than B's: A = [12,44) (20+12), B = [45,109) (19+32+13)
case("X9b A32 (20+12), B64 (19+32+13); req 16", { 12, 32, 1, 64, 1 }, { 2, 4 }, 16)
-- X13: A = [4,24) 20 MiB in chunk 0; B = [25,89) (7+32+25); req 22
case("X13 A20 in a chunk, B64 (7+32+25); req 22", { 4, 20, 1, 64, 1 }, { 2, 4 }, 22)
-- X14: like convnet #42: A = 32 MiB - 1 KiB-ish (straddles), B = 64 MiB whose first part is 1.5 KiB shorter
case("X14 A32 (28+4) vs B64 (28+32+4) equal first parts; req 16", { 4, 32, 1, 27, 64, 1 }, { 2, 5 }, 16)
io.open(arg[1], "w"):write(table.concat(out, "\n"), "\n")
