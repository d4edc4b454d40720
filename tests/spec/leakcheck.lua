--- The busted helper of the poolsh specs (.busted loads it before any spec).
--
-- After every test it checks that the test freed what it allocated, as
-- luv's test runner checks that a test closed its handles:
--   1. a full collection, then a device sync (as luv runs the loop): what
--      the test dropped is finalized, queued frees complete;
--   2. the test fails if a buffer is still live (kept somewhere), if a free
--      is still pending after the sync, or if a buffer was freed by its
--      finalizer instead of by free() or <close> (dropped while live,
--      during the test or at step 1);
--   3. it fails if a process poolsh.spawn started is still there, not
--      waited for (poolsh.children(): a Process kept somewhere, or a
--      finalizer that did not reap its child).
-- It runs after the test's own after_each hooks, and again at the end of
-- each file (for buffers kept by setup()). A test that failed is not
-- reported again for what its failure left behind. A test that drops live
-- buffers on purpose (it tests finalizers) says so with
-- H.drops_buffers(reason).
--
-- At the end of the run it lists the skipped tests and the waived ones, on
-- stdout and in $POOLSH_BUILD/busted-skipped.txt.
local busted = require "busted"
local poolsh = require "poolsh"
local core = poolsh.core

local M = {}
package.loaded.leakcheck = M   -- helpers.lua reaches the waiver through this

-- Leak reports name the allocation site (docs/api.md, poolsh.sources).
poolsh.sources(true)

local SHOW = 10         -- dropped buffers listed per test, then a count

local current           -- the running test
local failed            -- whether it failed: then its leftovers are not reported
local waiver            -- why the running test may drop buffers, or nil
local known = {}        -- buffer id (negative: its pending free) -> true: reported
local dropped = {}      -- buffers finalized while live since the last check
local skipped, waived = {}, {}
local reasons = {}      -- element -> the message pending() gave

-- Finalizers of live buffers note the buffer, then free it as before.
-- Freed buffers carry a metatable without __gc (src/buffer.c), so only
-- buffers dropped while live pass here. Arguments, results and errors are
-- the original's. A pool Buffer's metatable is a copy of this one made
-- after this file ran (one per pool and stream): it has this __gc too.
local mt = debug.getregistry()["poolsh.Buffer"]
local gc = mt.__gc
mt.__gc = function(b, ...)
  local bmt = type(b) == "userdata" and getmetatable(b)
  if bmt and bmt.__name == "poolsh.Buffer" and b.live then
    dropped[#dropped + 1] = { id = b.id, size = b.size, kind = b.kind }
  end
  return gc(b, ...)
end

local function stream_name(id) return id == 0 and "default" or "s" .. id end

--- The test's name as busted prints it, prefixed with its file unless bare.
local function full_name(element, bare)
  local names, file = { element.name or element.descriptor }, nil
  local parent = busted.parent(element)
  while parent do
    if parent.descriptor == "file" then file = parent.name break end
    if parent.name then table.insert(names, 1, parent.name) end
    parent = busted.parent(parent)
  end
  local name = table.concat(names, " ")
  return (file and not bare) and (file .. ": " .. name) or name
end

--- H.drops_buffers(reason): the running test lets the collector free live
-- buffers on purpose (it tests finalizers).
function M.drops_buffers(reason)
  assert(type(reason) == "string" and reason ~= "", "drops_buffers needs a reason")
  assert(current, "drops_buffers is for use inside a test")
  waiver = reason
end

--- A row of poolsh.core.live() as text.
local function describe_live(b)
  local from = b.pool and (" from p%d on %s"):format(b.pool, stream_name(b.stream)) or ""
  return ("b%d, %s %s%s, allocated at %s"):format(b.buffer, poolsh.fmt(b.size), b.kind, from,
                                                 b.src or "?")
end

--- What the test left: lines for what is live or pending after a
-- collection and a device sync, and lines for what it dropped.
local function leftovers()
  local sites = {}
  for _, b in ipairs(core.live()) do sites[b.buffer] = b end
  collectgarbage(); collectgarbage()
  local ok, err = pcall(poolsh.sync)
  local left, drops = {}, {}
  if not ok then left[1] = "  the device sync after the test raised: " .. tostring(err) end
  for _, b in ipairs(core.live()) do
    if not known[b.buffer] then
      known[b.buffer] = true
      left[#left + 1] = "  live: " .. describe_live(b)
    end
  end
  for _, f in ipairs(core.pending()) do
    if not known[-f.buffer] then
      known[-f.buffer] = true
      left[#left + 1] = ("  pending after a device sync: the free of b%d, %s of p%d, queued on %s")
        :format(f.buffer, poolsh.fmt(f.size), f.pool, stream_name(f.stream))
    end
  end
  for _, pid in ipairs(poolsh.children()) do
    if not known["pid" .. pid] then
      known["pid" .. pid] = true
      left[#left + 1] = ("  process %d spawned and not waited for: close it (p:close() or <close>)")
        :format(pid)
    end
  end
  for i, d in ipairs(dropped) do
    if i > SHOW then
      drops[#drops + 1] = ("  ... and %d more freed by the collector"):format(#dropped - SHOW)
      break
    end
    local b = sites[d.id]
    drops[#drops + 1] = "  freed by the collector: " .. (b and describe_live(b) or
      ("b%d, %s %s, collected during the test"):format(d.id, poolsh.fmt(d.size), d.kind))
  end
  local n = #dropped
  dropped = {}
  return left, drops, n
end

--- Checks what the test name left; raises unless nothing, or only what its
-- waiver why allows.
local function check(name, why)
  local lines, drops, n = leftovers()
  if why and n > 0 then
    waived[#waived + 1] = ("%s - %s (%d freed by the collector)"):format(name, why, n)
  elseif why then   -- a waiver that waives nothing would hide the next leak
    lines[#lines + 1] = ("  drops_buffers(%q), but the collector freed no live buffer"):format(why)
  else
    table.move(drops, 1, #drops, #lines + 1, lines)
  end
  if #lines > 0 then error(("leak check: %s:\n%s"):format(name, table.concat(lines, "\n")), 0) end
end

busted.subscribe({ "test", "start" }, function(element)
  current, waiver, failed = element, nil, false
  return nil, true
end)

-- Registered at the root, so it runs after every test's own after_each.
busted.after_each(function()
  local test, why = current, waiver
  current, waiver = nil, nil
  if failed then leftovers() return end   -- what a failed test left is no news
  check(test and full_name(test) or "?", why)
end)

busted.subscribe({ "file", "end" }, function(file)
  check(file.name .. " (after its last test)")
  return nil, true
end)

-- ---- the skip list --------------------------------------------------------

busted.subscribe({ "pending", "it" }, function(element, _, message)
  reasons[element] = tostring(message or "")
  return nil, true
end)

busted.subscribe({ "test", "end" }, function(element, _, status)
  failed = status == "failure" or status == "error"
  if status == "pending" then
    -- pending("why") in a test gives "file:line: why" (busted's own line
    -- after `return pending(...)`: then the test's line is used); a
    -- pending("name") block gives nothing
    local where, why = (reasons[element] or ""):match("^(.-:%d+): (.*)$")
    local t = element.trace
    if (not where or not where:match("_spec%.lua:")) and t then
      where = ("%s:%d"):format(t.short_src, t.currentline)
    end
    skipped[#skipped + 1] = ("%s - %s (%s)"):format(full_name(element, true),
                                                   why or "no reason given", where or "?")
  end
  return nil, true
end)

--- The end-of-run lines: skipped tests, then waived leak checks.
function M.summary()
  local out = { ("skipped (%d):"):format(#skipped) }
  for _, l in ipairs(skipped) do out[#out + 1] = "  " .. l end
  out[#out + 1] = ("leak check waived (%d):"):format(#waived)
  for _, l in ipairs(waived) do out[#out + 1] = "  " .. l end
  return out
end

busted.subscribe({ "suite", "end" }, function()
  local text = table.concat(M.summary(), "\n") .. "\n"
  io.stdout:write("\n", text)
  io.stdout:flush()
  local path = (os.getenv("POOLSH_BUILD") or "build") .. "/busted-skipped.txt"
  local f = io.open(path, "w")
  if f then f:write(text); f:close() end
  return nil, true
end)

return M
