-- Fuzz target: the Lua allocators' live lines (docs/live.md, "Lua
-- allocators"). Each input is a program, two bytes an operation: allocate
-- (a size from the second byte) from the caching, CuPy or pool allocator,
-- free a live block, empty a cache, or print the live lines at a width
-- from 40 to 167 columns. Allocators may refuse with clear errors (out of
-- memory); the live view must never raise, and no line may be wider than
-- its width.
-- Usage: poolsh --backend=sim scripts/fuzz/live_allocators.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local poolsh = poolsh or require "poolsh"
local live = poolsh.live

local MiB = 1024 * 1024

-- A broken promise of the live view: said on stderr, raised as a table
-- (lib.run fails on anything that is not a clear message).
local function broken(why)
  io.stderr:write("live_allocators: ", why, "\n")
  error({ why = why })
end

local function check_lines(width)
  live.width = width
  local ok, lines = pcall(live.lines)
  if not ok then broken("poolsh.live.lines raised: " .. tostring(lines)) end
  for _, l in ipairs(lines) do
    local n = utf8.len((l:gsub("\27%[[%d;]*m", ""))) or #l
    if n > width then broken(("a line of %d columns at width %d: %s"):format(n, width, l)) end
  end
end

local function decode(input)
  local s = poolsh.stream()
  local allocs = {
    require("poolsh.allocators.caching").new { name = "torch" },
    require("poolsh.allocators.cupy").new(),
    require("poolsh.allocators.pool").new { release_threshold = 0, name = "mp" },
  }
  local blocks = {}          -- {allocator index, block}
  poolsh.watch(true)
  local ok, err = pcall(function()
    for i = 1, #input - 1, 2 do
      local op, arg = input:byte(i), input:byte(i + 1)
      local k = op % 3 + 1
      local a = allocs[k]
      local what = (op // 3) % 4
      if what == 0 and #blocks < 256 then
        -- 1 B to 64 MiB, small sizes often
        local size = arg < 128 and arg * 512 + 1 or (arg - 127) * MiB // 2
        local got, b = pcall(a.alloc, a, size, s)
        if got and b then blocks[#blocks + 1] = { k, b } end
      elseif what == 1 and #blocks > 0 then
        local j = arg % #blocks + 1
        local e = table.remove(blocks, j)
        local x = allocs[e[1]]
        if e[1] == 3 then x:free(e[2], s) else x:free(e[2]) end   -- the caching one's 2nd: requested
      elseif what == 2 then
        if a.empty_cache then a:empty_cache() elseif a.free_all_blocks then a:free_all_blocks() end
      else
        check_lines(40 + arg % 128)
      end
    end
    check_lines(80)
  end)
  for _, e in ipairs(blocks) do pcall(allocs[e[1]].free, allocs[e[1]], e[2], e[1] == 3 and s or nil) end
  poolsh.sync()
  allocs[1]:empty_cache(); allocs[2]:free_all_blocks(); allocs[3]:close()
  live.lines()
  poolsh.watch(false)
  live.width = nil
  s:destroy()
  if not ok then error(err, 0) end
end

lib.run({
  name = "live_allocators",
  corpus = {
    "\0\1\3\1\6\1\9\0\11\80",                 -- allocate and free on torch, lines at 120
    "\1\200\4\0\7\1\10\40\2\10\5\0\8\0\11\0",  -- cupy: allocate, free, free_all_blocks, lines
    ("\2\100\11\20\5\0\11\60"):rep(4),         -- the pool allocator, lines at 60 and 100
    ("\0\2"):rep(20) .. "\9\0" .. ("\3\0"):rep(20) .. "\6\0\9\0",   -- many, freed, emptied
  },
  decode = decode,
  seconds_per_input = 2,
  memory_per_input = 256 * 1024 * 1024,
}, ...)
