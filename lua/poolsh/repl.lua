--- The REPL's Lua half: how values print and how words complete.
-- The host (src/main.c) reads lines and calls print(...), complete(word)
-- and after() (run after each statement).
local M = {}

local poolsh

function M.init(p) poolsh = p end

local function is_identifier(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  return keys
end

--- repr(v [, depth [, seen]]) -> a readable string for any value; tables
-- print as constructors, nested up to 3 levels, cycles marked.
function M.repr(v, depth, seen)
  depth, seen = depth or 0, seen or {}
  local t = type(v)
  if t == "string" then return string.format("%q", v) end
  if t ~= "table" then return tostring(v) end
  if seen[v] then return "<cycle>" end
  if getmetatable(v) and getmetatable(v).__tostring then return tostring(v) end
  if depth >= 3 then return "{...}" end
  seen[v] = true
  local parts, n = {}, #v
  for i = 1, n do parts[#parts + 1] = M.repr(v[i], depth + 1, seen) end
  for _, k in ipairs(sorted_keys(v)) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then
      local key = is_identifier(k) and k or "[" .. M.repr(k, depth + 1, seen) .. "]"
      parts[#parts + 1] = key .. " = " .. M.repr(v[k], depth + 1, seen)
    end
  end
  seen[v] = nil
  local flat = "{" .. table.concat(parts, ", ") .. "}"
  if #flat <= 72 then return flat end
  local pad = string.rep("  ", depth + 1)
  return "{\n" .. pad .. table.concat(parts, ",\n" .. pad) .. "\n" .. string.rep("  ", depth) .. "}"
end

--- print(...): the values of an expression typed at the prompt.
function M.print(...)
  local n = select("#", ...)
  local out = {}
  for i = 1, n do out[i] = M.repr((select(i, ...))) end
  io.stdout:write(table.concat(out, "\t"), "\n")
end

--- Functions after() calls after the live view (`poolsh learn` adds its
-- check, lua/poolsh/learn.lua).
M.hooks = {}

--- The tables of variables whose objects take their variable's name
-- after each statement (poolsh.naming.adopt): the REPL's globals, and a
-- lesson's own table when it has one (lua/poolsh/learn.lua adds it).
M.envs = { _G }

--- after(): runs after each REPL statement: names the new objects after
-- their variables, then the live view (which shows those names), then
-- M.hooks.
function M.after()
  local adopt = require("poolsh.naming").adopt
  for _, env in ipairs(M.envs) do adopt(env) end
  require("poolsh.live").after()
  for _, f in ipairs(M.hooks) do f() end
end

--- traceback(): prints the full traceback of the last error typed at
-- the prompt (the host keeps it in M.last_traceback; the prompt shows
-- only the message).
function M.traceback()
  io.stdout:write(M.last_traceback or "no error yet", "\n")
end

-- poolsh's own plumbing, not offered after "poolsh.": benchmarks of the
-- binding, start-up configuration and the C core.
local HIDDEN = {
  bench_c = true, bench_fill = true, bench_floor = true, bench_heap = true,
  configure = true, set_parsers = true, core = true,
}

-- Names a value offers for completion: table keys (less poolsh's
-- HIDDEN ones), or a poolsh object's methods and fields (mt.methods and
-- mt.fields, the lists the C side binds).
local function members(v, methods_only)
  local names = {}
  local hidden = v == poolsh and HIDDEN or {}
  if type(v) == "table" then
    for k, x in pairs(v) do
      if is_identifier(k) and not hidden[k] and (not methods_only or type(x) == "function") then
        names[#names + 1] = k
      end
    end
  end
  local mt = getmetatable(v)
  if type(mt) == "table" and type(mt.methods) == "table" then
    for k in pairs(mt.methods) do names[#names + 1] = k end
    if not methods_only then
      for _, k in ipairs(mt.fields or {}) do names[#names + 1] = k end
    end
  end
  return names
end

--- complete(word) -> sorted candidates for the word under the cursor:
-- globals, or fields after "." and methods after ":" of what the prefix
-- names ("poolsh.de" -> poolsh.default_pool, poolsh.default_stream, ...).
function M.complete(word, env)
  env = env or _G
  local prefix, sep, partial = word:match("^(.*)([%.:])([%w_]*)$")
  local candidates, base = {}, ""
  if prefix then
    local v = env
    for part in prefix:gmatch("[^%.:]+") do
      if type(v) ~= "table" and type(v) ~= "userdata" then return {} end
      local ok, x = pcall(function() return v[part] end)
      if not ok then return {} end
      v = x
    end
    candidates, base = members(v, sep == ":"), prefix .. sep
  else
    partial = word
    candidates = members(env)
    for _, kw in ipairs {"and", "break", "do", "else", "elseif", "end", "false", "for",
                         "function", "goto", "if", "in", "local", "nil", "not", "or",
                         "repeat", "return", "then", "true", "until", "while"} do
      candidates[#candidates + 1] = kw
    end
  end
  local out, seen = {}, {}
  for _, name in ipairs(candidates) do
    if name:sub(1, #partial) == partial and not seen[name] then
      seen[name] = true
      out[#out + 1] = base .. name
    end
  end
  table.sort(out)
  return out
end

return M
