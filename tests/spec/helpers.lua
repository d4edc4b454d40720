--- Shared helpers of the poolsh specs: the backend, errors, the CLI.
local poolsh = require "poolsh"

local H = {}
H.poolsh = poolsh
H.KiB, H.MiB, H.GiB = 1024, 1024 * 1024, 1024 * 1024 * 1024

--- "sim" or "cuda".
function H.backend() return (poolsh.backend()) end
function H.is_sim() return H.backend() == "sim" end

--- The driver's four counters of p:stats() (it has more fields).
function H.counters(p)
  local st = p:stats()
  return { reserved = st.reserved, used = st.used, reserved_high = st.reserved_high,
           used_high = st.used_high }
end

--- The message of the error f(...) raises; fails when it does not raise.
function H.err(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, "expected an error, got success")
  return tostring(e)
end

--- A fresh stream and a fresh pool (threshold 0 unless opts say).
function H.fresh(opts)
  return poolsh.stream(), poolsh.pool(opts or {})
end

--- H.drops_buffers(reason): the running test lets the collector free live
-- buffers on purpose (it tests finalizers). The leak check
-- (tests/spec/leakcheck.lua) then lists it, with the reason, at the end of
-- the run instead of failing it.
function H.drops_buffers(reason) package.loaded.leakcheck.drops_buffers(reason) end

--- The whole contents of the file at path.
function H.slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

--- The whole contents of the file at path, "" when it cannot be read.
function H.slurp_or(path)
  local f = io.open(path, "rb")
  if not f then return "" end
  local s = f:read("a")
  f:close()
  return s
end

--- Real-time sleep for the CLI/REPL tests (not the device's clock).
function H.rsleep(s) os.execute("sleep " .. s) end

--- Polls fn() every 0.1 s until it returns a truthy value or timeout
-- seconds pass; returns its last value.
function H.poll(fn, timeout)
  local tries = math.floor((timeout or 5) / 0.1)
  local v
  for _ = 1, tries do
    v = fn()
    if v then return v end
    H.rsleep(0.1)
  end
  return fn()
end

H.build = os.getenv("POOLSH_BUILD") or "build"
H.exe = H.build .. "/poolsh"

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
H.quote = q

local contents = H.slurp_or   -- a command's output files

--- Runs a shell command; returns stdout, stderr, exit code.
function H.sh(cmd, stdin)
  local out, err, inp = os.tmpname(), os.tmpname(), nil
  local full = cmd .. " >" .. out .. " 2>" .. err
  if stdin then
    inp = os.tmpname()
    local f = io.open(inp, "wb"); f:write(stdin); f:close()
    full = full .. " <" .. inp
  else
    full = full .. " </dev/null"
  end
  local ok, how, code = os.execute(full)
  local o, e = contents(out), contents(err)
  os.remove(out); os.remove(err)
  if inp then os.remove(inp) end
  if how == "signal" then code = 128 + code end
  return o, e, code
end

--- Runs build/poolsh with the given argument string (already quoted).
function H.poolsh_cmd(args, env, stdin)
  return H.sh((env or "") .. " " .. H.exe .. " " .. args, stdin)
end

--- Frees what a lesson left in its globals G: the live buffers in
-- globals and in plain tables of them, and the caching allocator's blocks
-- and cache (lessons' `cache`, `blocks`, `again`); then syncs.
function H.free_lesson(G)
  if rawget(G, "cache") then
    for _, b in ipairs(rawget(G, "blocks") or {}) do pcall(G.cache.free, G.cache, b) end
    if rawget(G, "again") then pcall(G.cache.free, G.cache, G.again) end
    G.cache:empty_cache()
  end
  local function free(v)
    local mt = type(v) == "userdata" and getmetatable(v)
    if mt and mt.__name == "poolsh.Buffer" and v.live then v:free() end
  end
  for _, v in pairs(G) do
    if type(v) == "table" and getmetatable(v) == nil then for _, x in pairs(v) do free(x) end
    else free(v) end
  end
  poolsh.sync()
end

return H
