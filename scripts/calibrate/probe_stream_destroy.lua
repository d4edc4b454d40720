-- Probe: does destroying the stream a free was queued on make the pool give
-- memory back (docs/calibration.md E3)? Prints reserved and used after each
-- step, for an idle and a busy stream and a device sync instead of the
-- event sync. Run: ./build/poolsh scripts/calibrate/probe_stream_destroy.lua
local function line(tag, p) local st = p:stats(); print(string.format("%-40s reserved %8d used %8d", tag, st.reserved, st.used)) end
for _, variant in ipairs { "event sync", "event sync after spin", "device sync" } do
  local p = poolsh.pool { release_threshold = 0 }
  local s, s2 = poolsh.stream(), poolsh.stream()
  print("== " .. variant)
  local a = p:alloc("8 MiB", s)
  if variant == "event sync after spin" then poolsh.spin(s, "20 ms") end
  a:free()
  local e = s:record()
  line("after free + record", p)
  s:destroy()
  line("after s:destroy()", p)
  if variant == "device sync" then poolsh.sync() else e:sync() end
  line("after " .. variant, p)
  poolsh.sleep("10 ms")
  s2:sync()
  line("after s2:sync()", p)
  poolsh.sync()
  line("after poolsh.sync()", p)
  p:destroy()
end
