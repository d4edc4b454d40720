--- The busted helper of the poolsh specs (.busted loads it before any spec).
--
-- After every test, as luv's test runner checks that a test closed its
-- handles, it checks that the test freed what it allocated:
--   1. a full collection, then a device sync, as luv runs the loop: what
--      the test dropped is finalized, queued frees complete;
--   2. the test fails if a buffer is still live (kept somewhere), if a
--      buffer was freed by its finalizer instead of by free() or <close>
--      (dropped while live, during the test or at step 1), or if a free is
--      still pending after the sync.
-- It runs after the test's own after_each hooks, and once more at the end
-- of each file (for buffers kept by setup()). A test that failed already
-- is not reported again for what its failure left behind. A test that leaves buffers
-- on purpose says so, with its reason, by H.leaves_buffers(reason); one
-- that drops them to the collector on purpose (it tests finalizers) by
-- H.drops_buffers(reason). Waived tests are listed at the end of the run,
-- after the skipped tests, on stdout and in $POOLSH_BUILD/busted-skipped.txt.
local busted = require "busted"
local poolsh = require "poolsh"
local core = poolsh.core

local M = {}
package.loaded.leakcheck = M   -- helpers.lua reaches the waivers through this

-- Leak reports name the allocation site (docs/api.md, poolsh.sources).
poolsh.sources(true)

local current           -- the running test
local failed            -- whether it failed already (then its leftovers are not reported)
local waiver = {}       -- "leaves" / "drops" -> the running test's reason
local known = {}        -- buffer id -> true: already reported or waived
local dropped = {}      -- buffers finalized while live since the last check
local skipped, waived = {}, {}
local reasons = {}      -- element -> the message pending() gave

-- Finalizers of live buffers note the buffer, then free it as before.
-- Freed buffers carry a metatable without __gc (src/buffer.c), so only
-- buffers dropped while live pass here. Arguments, results and errors are
-- the original's.
local mt = debug.getregistry()["poolsh.Buffer"]
local gc = mt.__gc
mt.__gc = function(b, ...)
  if getmetatable(b) == mt and b.live then
    dropped[#dropped + 1] = { id = b.id, size = b.size, kind = b.kind }
  end
  return gc(b, ...)
end

local SHOW = 10         -- dropped buffers listed per test, then a count

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

local function waive(kind, reason)
  assert(type(reason) == "string" and reason ~= "", "a leak check waiver needs a reason")
  assert(current, "a leak check waiver is for use inside a test")
  waiver[kind] = reason
end

--- H.leaves_buffers(reason): the running test leaves buffers live or frees
-- pending on purpose.
function M.leaves_buffers(reason) waive("leaves", reason) end

--- H.drops_buffers(reason): the running test lets the collector free live
-- buffers on purpose (it tests finalizers).
function M.drops_buffers(reason) waive("drops", reason) end

local function describe_live(b)
  local from = b.pool and (" from p%d on %s"):format(b.pool, stream_name(b.stream)) or ""
  return ("b%d, %s %s%s, allocated at %s"):format(b.buffer, poolsh.fmt(b.size), b.kind, from,
                                                 b.src or "?")
end

--- What the test left: two lists of lines, those it left live or pending
-- and those it dropped to the collector.
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
  for i, d in ipairs(dropped) do
    if i > SHOW then
      drops[#drops + 1] = ("  ... and %d more freed by the collector"):format(#dropped - SHOW)
      break
    end
    local b = sites[d.id]
    drops[#drops + 1] = "  freed by the collector: " .. (b and describe_live(b) or
      ("b%d, %s %s, collected during the test"):format(d.id, poolsh.fmt(d.size), d.kind))
  end
  dropped = {}
  return left, drops
end

busted.subscribe({ "test", "start" }, function(element)
  current, waiver, failed = element, {}, false
  return nil, true
end)

--- Checks one test's leftovers against its waivers; raises what remains.
local function check(name, why)
  local ndropped = #dropped
  local left, drops = leftovers()
  local lines = {}
  for _, k in ipairs { { "leaves", left, "left live or pending" },
                       { "drops", drops, "freed by the collector" } } do
    local kind, list, what = k[1], k[2], k[3]
    if #list > 0 and why[kind] then
      local n = kind == "drops" and ndropped or #list
      waived[#waived + 1] = ("%s - %s (%d %s)"):format(name, why[kind], n, what)
    elseif why[kind] then   -- a waiver that waives nothing would hide the next leak
      lines[#lines + 1] = ("  it is waived (%s) but nothing was %s"):format(why[kind], what)
    else
      table.move(list, 1, #list, #lines + 1, lines)
    end
  end
  if #lines > 0 then
    error(("leak check: %s:\n%s"):format(name,
      table.concat(lines, "\n")), 0)
  end
end

-- Registered at the root, so it runs after every test's own after_each.
busted.after_each(function()
  local test, why = current, waiver
  current, waiver = nil, {}
  if failed then leftovers() return end   -- what a failed test left is no news
  check(test and full_name(test) or "?", why)
end)

busted.subscribe({ "file", "end" }, function(file)
  check(file.name .. " (after its last test)", {})
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
    -- pending("why") in a test gives "file:line: why" (the line is busted's
    -- own after `return pending(...)`: then the test's line is used); a
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
