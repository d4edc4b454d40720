-- A bound on one decode while it runs, for the input fuzzers of the
-- readers (scripts/fuzz/*.lua): lib.lua checks an input's time and memory
-- after its decode returns, so a decode that never returns, or that grows
-- Lua's heap and frees it again, would pass unseen. bound(decode, name,
-- seconds, bytes) returns a decode that runs under a count hook: past
-- `seconds` of CPU time or `bytes` of Lua heap growth it reports the
-- failure as lib.lua does and exits 1 (the input stays in the file lib.run
-- handed to decode).
return function(decode, name, seconds, bytes)
  return function(input, path)
    collectgarbage("collect")
    local t0, m0 = os.clock(), collectgarbage("count") * 1024
    local function over(why)
      debug.sethook()
      io.stderr:write(("FUZZ FAILURE %s: %s while decoding the input in %s\n"):format(name, why, tostring(path)))
      io.stderr:write(("replay: poolsh --backend=sim scripts/fuzz/%s.lua --replay %s\n"):format(name, tostring(path)))
      os.exit(1)
    end
    debug.sethook(function()
      if os.clock() - t0 > seconds then over(("over %g s"):format(seconds)) end
      local grew = collectgarbage("count") * 1024 - m0
      if grew > bytes then over(("Lua's heap grew by %d MiB"):format(grew // (1 << 20))) end
    end, "", 10000)
    local ok, err = pcall(decode, input, path)
    debug.sethook()
    if not ok then error(err, 0) end
  end
end
