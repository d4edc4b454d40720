-- The input fuzzers' shared loop (docs/fuzzing.md, "Inputs"): each target
-- in scripts/fuzz/ (one file per decoder or reader) hands lib.run a corpus
-- of valid inputs and a function that decodes one input; lib.run mutates
-- the corpus for a time or a count, and fails on what a hostile input must
-- never cause: an error that is not a clear message (a Lua internal error,
-- a non-string), an input over its time budget (CPU seconds), or memory
-- over its budget (Lua's heap while it runs, the process's after).
-- Crashes and sanitizer reports end the process (scripts/fuzz.sh sees them).
-- Usage of a target: poolsh --backend=sim scripts/fuzz/NAME.lua
--   [--seed S] [--seconds T | --inputs N] [--tmpdir DIR] [--replay FILE]
local lib = {}

local function options(args, name)
  local opt = {seed = 1, tmpdir = os.getenv("TMPDIR") or "/tmp"}
  local VALUE = {seed = "integer", seconds = "number", inputs = "integer",
                 tmpdir = "path", replay = "path"}
  local i = 1
  while args[i] do
    local k = args[i]:match("^%-%-(%w+)$")
    if not VALUE[k] then error(name .. ": unknown argument '" .. args[i] .. "'") end
    local v = args[i + 1] or error(name .. ": --" .. k .. " needs a value")
    if VALUE[k] ~= "path" then
      v = tonumber(v) or error(name .. ": --" .. k .. " must be a number")
    end
    opt[k] = v; i = i + 2
  end
  if not opt.seconds and not opt.inputs then opt.inputs = 2000 end
  return opt
end

-- Mutations of one input: each returns a new string.
local R = math.random
local INTERESTING = {"\0", "\255", "\127", "\128", "\0\0\0\0", "\255\255\255\255",
                     "\255\255\255\127", "\0\0\0\128", "\255\255\255\255\255\255\255\127",
                     "-1", "0", "4294967296", "9223372036854775807", "1e308", "nan", "\n", ",", "\""}
local function pos(s) return R(0, #s) end
local MUTATE = {
  function(s) -- flip a bit
    if #s == 0 then return s end
    local i = R(#s)
    return s:sub(1, i - 1) .. string.char(s:byte(i) ~ (1 << R(0, 7))) .. s:sub(i + 1)
  end,
  function(s) -- set a byte
    if #s == 0 then return s end
    local i = R(#s)
    return s:sub(1, i - 1) .. string.char(R(0, 255)) .. s:sub(i + 1)
  end,
  function(s) -- insert something interesting
    local i = pos(s)
    return s:sub(1, i) .. INTERESTING[R(#INTERESTING)] .. s:sub(i + 1)
  end,
  function(s) -- overwrite with something interesting
    local i, v = pos(s), INTERESTING[R(#INTERESTING)]
    return s:sub(1, i) .. v .. s:sub(i + 1 + #v)
  end,
  function(s) -- delete a run
    local i = pos(s)
    return s:sub(1, i) .. s:sub(i + 1 + R(0, 64))
  end,
  function(s) -- duplicate a run
    local i = pos(s)
    local j = math.min(#s, i + R(1, 256))
    return s:sub(1, j) .. s:sub(i + 1, j) .. s:sub(j + 1)
  end,
  function(s) -- truncate
    return s:sub(1, pos(s))
  end,
}

-- One mutated input from the corpus: a few mutations, sometimes a splice.
function lib.mutate(corpus)
  local s = corpus[R(#corpus)]
  if #corpus > 1 and R() < 0.1 then
    local t = corpus[R(#corpus)]
    s = s:sub(1, pos(s)) .. t:sub(pos(t) + 1)
  end
  for _ = 1, R(1, 4) do s = MUTATE[R(#MUTATE)](s) end
  return s
end

--- lib.slurp(path) -> the bytes of a corpus file.
function lib.slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- The process's resident memory in bytes (/proc), or nil.
local function rss()
  local f = io.open("/proc/self/statm")
  if not f then return nil end
  local _, res = f:read("n", "n")
  f:close()
  return res and res * 4096
end

-- An error message is clear when it is a non-empty string that is not one
-- of Lua's own internal errors (a nil indexed, arithmetic on a nil, ...).
local INTERNAL = {"attempt to ", "stack overflow", "bad argument #%d+ to '%?'",
                  "C stack overflow", "not enough memory"}
function lib.unclear(err)
  if type(err) ~= "string" then return "raised a " .. type(err) .. ", not a message" end
  if err == "" then return "raised an empty message" end
  for _, p in ipairs(INTERNAL) do
    if err:find(p) then return "raised an internal error: " .. err end
  end
end

-- Runs target t: {name, corpus = {strings}, decode = function(input, path),
-- seconds_per_input = 2, memory_per_input = 256 MiB, suffix = ".bin"}.
-- decode gets the input and a file holding it (for readers of files); it
-- returns normally or raises a clear error. Exits 1 on the first failure,
-- saving the input under tmpdir and printing how to replay it.
function lib.run(t, ...)
  local opt = options({...}, t.name)
  math.randomseed(opt.seed)
  local budget_s = t.seconds_per_input or 2
  local budget_mem = t.memory_per_input or 256 * 1024 * 1024
  local path = ("%s/fuzz-%s-%d%s"):format(opt.tmpdir, t.name, opt.seed, t.suffix or ".bin")
  local function save(s)
    local f = assert(io.open(path, "wb")); f:write(s); f:close()
  end
  local function fail(n, input, why)
    local keep = path .. ".failed"
    local f = io.open(keep, "wb")
    if f then f:write(input); f:close() end
    io.stderr:write(("FUZZ FAILURE %s seed=%d input=%d: %s\n"):format(t.name, opt.seed, n, why))
    io.stderr:write(("replay: poolsh --backend=sim scripts/fuzz/%s.lua --replay %s\n")
      :format(t.name, keep))
    os.remove(path)
    os.exit(1)
  end
  local tally = {inputs = 0, ok = 0, refused = 0}
  local function one(n, input)
    save(input)
    collectgarbage("collect")
    local base, heap = rss() or 0, collectgarbage("count") * 1024
    local t0 = os.clock()
    -- While the decode runs, a count hook holds it to the budgets, so a
    -- decode that would never return, or whose heap grows and falls back,
    -- is seen too (work inside one C call is seen when it returns).
    debug.sethook(function()
      if os.clock() - t0 > budget_s then
        debug.sethook()
        fail(n, input, ("still running after %g s, the budget"):format(budget_s))
      end
      local grew = collectgarbage("count") * 1024 - heap
      if grew > budget_mem then
        debug.sethook()
        fail(n, input, ("grew Lua's heap by %d MiB, over the budget"):format(grew >> 20))
      end
    end, "", 10000)
    local ok, err = pcall(t.decode, input, path)
    debug.sethook()
    local took = os.clock() - t0
    tally.inputs = tally.inputs + 1
    if ok then tally.ok = tally.ok + 1
    else
      tally.refused = tally.refused + 1
      local why = lib.unclear(err)
      if why then fail(n, input, why) end
    end
    if took > budget_s then
      fail(n, input, ("took %.2f s, over the budget of %g s"):format(took, budget_s))
    end
    local grew = (rss() or 0) - base
    if grew > budget_mem then
      fail(n, input, ("grew the process by %d MiB, over the budget of %d MiB")
        :format(grew >> 20, budget_mem >> 20))
    end
  end
  if opt.replay then
    local f = assert(io.open(opt.replay, "rb"))
    local input = f:read("a"); f:close()
    one(1, input)
  else
    for i, c in ipairs(t.corpus) do one(i, c) end   -- valid inputs decode
    local stop = opt.seconds and os.clock() + opt.seconds
    local n = 0
    while (opt.inputs and n < opt.inputs) or (stop and os.clock() < stop) do
      n = n + 1
      one(n, lib.mutate(t.corpus))
    end
  end
  os.remove(path)
  print(("fuzz %s seed %d: %d inputs, %d decoded, %d refused with a clear error")
    :format(t.name, opt.seed, tally.inputs, tally.ok, tally.refused))
end

return lib
