-- Probe: does a destroyed busy stream's end release pools it did not free into? (docs/calibration/h100-2026-11-23-probe.log)
-- Usage: poolsh --backend=cuda scripts/calibrate/probe_destroy_other_pools.lua
-- Does a destroyed busy stream's completion release OTHER pools above their threshold?
local P = poolsh
local pm = P.pool{ release_threshold = "max" }
local s = P.stream()
local b = pm:alloc("64 MiB", s); b:free(); s:sync()
pm.release_threshold = 0            -- lowered, no sync since
print("pm reserved after lowering the threshold", pm:stats{estimates=false}.reserved)
local p2 = P.pool{ release_threshold = 0 }
local s2 = P.stream()
local c = p2:alloc("32 MiB", s2); P.spin(s2, 30); c:free(); s2:destroy()
P.sleep(80)
print("after the busy stream's work ended: pm", pm:stats{estimates=false}.reserved, "p2", p2:stats{estimates=false}.reserved)
P.sync()
print("after a device sync: pm", pm:stats{estimates=false}.reserved, "p2", p2:stats{estimates=false}.reserved)
