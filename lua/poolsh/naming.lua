--- poolsh.naming: the names objects are shown by (docs/api.md, "Names").
-- An object given a name (poolsh.stream{name = "copies"}, or s.name =
-- "copies") is shown by it everywhere; the others by their kind's letter
-- and id ("s3"; the legacy default stream: "default"). Names outlive their
-- objects, so traces and exports name what is gone too. In the REPL and
-- in lessons, an object without a name takes the name of the global
-- variable it is first assigned to (naming.adopt).
local core = require "poolsh.core"

local naming = {}

--- naming.of(kind, id) -> the name shown for object id of kind ("pool",
-- "stream", "event" or "buffer").
naming.of = core.object_name

--- naming.all() -> {pool = {[id] = name}, stream = ..., event = ...,
-- buffer = ...}: every name given so far (ids without one are absent).
naming.all = core.object_names

--- naming.given(kind, id) -> the name object id of kind was given, or nil.
naming.given = core.object_given

-- The kinds a global's value can be named as, by its metatable's __name.
local KINDS = {
  ["poolsh.Pool"] = "pool", ["poolsh.Stream"] = "stream",
  ["poolsh.Event"] = "event", ["poolsh.Buffer"] = "buffer",
}

-- Objects already handled (named by adopt, or found named): each is
-- looked at once; weak, so they are still collected.
local seen = setmetatable({}, { __mode = "k" })

-- The names adopt gave, by kind ("pool", ..., "block"): name -> the
-- object holding it (weak: a collected holder frees its name), and the
-- name adopt gave each id, so that naming.all()'s names given by hand
-- (o.name = "x", later too) stay taken.
local holders, adopted = {}, {}
local function holders_of(kind)
  local t = holders[kind]
  if not t then t = setmetatable({}, { __mode = "v" }); holders[kind] = t end
  return t
end

-- Whether v is a Lua allocator's block: a table whose owner is an
-- allocator registered with the live view, under its allocator's label
-- ("torch.3": poolsh.live.allocators.label).
local function labelled_block(v)
  local label = rawget(v, "live_name")
  if type(label) ~= "string" or not label:match("^.+%.%d+$") then return false end
  return require("poolsh.live.allocators").is_allocator(rawget(v, "owner"))
end

-- Whether the object o holding a name adopt gave is alive: a Buffer not
-- freed, a Pool, Stream or Event not destroyed, a block not freed.
local function alive(kind, o)
  if kind == "block" then
    if rawget(o, "freed") then return false end
    local owner = rawget(o, "owner")
    local in_use = type(owner) == "table" and rawget(owner, "in_use")
    return type(in_use) ~= "table" or in_use[o] ~= nil
  end
  local ok, live = pcall(function() return o.live end)
  return ok and live ~= false
end

-- The longest variable name taken as is: a name has at most 64 bytes, and
-- room is kept for "#<n>".
local LONGEST = 56

-- The name free for kind: base itself unless a live object of that kind
-- holds it from adopt, or an object was given it by hand; else base#2,
-- base#3, ... (the first not taken). taken[kind] maps name -> true (by
-- hand) or its holder; a scope's start empty, the others from every name
-- given by hand.
local function free_name(taken, kind, base, scoped)
  local t = taken[kind]
  if not t then
    t = {}
    if not scoped and kind ~= "block" then
      local mine = adopted[kind] or {}
      for id, n in pairs(naming.all()[kind] or {}) do
        if mine[id] ~= n then t[n] = true end   -- renamed by hand since: taken
      end
    end
    taken[kind] = t
  end
  local global = not scoped and holders_of(kind)
  local function used(name)
    local h = t[name]
    if h == true or (h and alive(kind, h)) then return true end
    h = global and global[name]
    return h and alive(kind, h) or false
  end
  local name, i = base, 1
  while used(name) do
    i = i + 1
    name = ("%s#%d"):format(base, i)
  end
  return name
end

-- Notes that adopt gave name to o.
local function hold(taken, kind, name, o, scoped)
  taken[kind][name] = o
  if scoped then return end   -- outside its scope, a name a scope gave stays taken
  holders_of(kind)[name] = o
  if kind ~= "block" then
    adopted[kind] = adopted[kind] or {}
    adopted[kind][o.id] = name
  end
end

--- naming.adopt(env) -> how many objects it named: every global of env
-- (a table of variables: _G, a lesson's) whose value is a Pool, Stream,
-- Event or Buffer without a name gets the variable's name (o.name = key);
-- when another object of its kind has that name already, "key#2" (then
-- #3, ...). A name adopt gave is taken only while its object lives (a
-- Buffer not freed, a Pool, Stream or Event not destroyed, a block not
-- freed): `b = p:alloc(n, s); b:free(); b = p:alloc(n, s)` names both b.
-- A name given by hand stays taken. A Lua allocator's block (a table whose
-- owner is an allocator registered with the live view and whose live_name
-- is its label, "torch.3") takes the variable's name the same way.
-- Only env's own keys are looked at, not tables inside it; an
-- object in two new variables takes the name that sorts first; a name
-- once given stays when the object moves to another variable. With
-- scope (a table adopt keeps its names in), only the names given through
-- that scope (and still held) are taken: a scenario's `p` is `p` again in
-- the next one.
function naming.adopt(env, scope)
  local new
  for k, v in next, env do
    if type(v) == "table" and not seen[v] and type(k) == "string" then
      if labelled_block(v) and #k <= LONGEST and k:match("^[%a_][%w_]*$") then
        new = new or {}
        new[#new + 1] = { k, v, "block" }
      elseif rawget(v, "live_name") == nil then
        seen[v] = true     -- not a block: tables do not become blocks later
      end
    elseif type(v) == "userdata" and not seen[v] and type(k) == "string" then
      local mt = getmetatable(v)
      local kind = type(mt) == "table" and KINDS[rawget(mt, "__name")]
      if kind then
        if naming.given(kind, v.id) or #k > LONGEST or not k:match("^[%a_][%w_]*$") then
          seen[v] = true
        else
          new = new or {}
          new[#new + 1] = { k, v, kind }
        end
      end
    end
  end
  if not new then return 0 end
  table.sort(new, function(a, b) return a[1] < b[1] end)
  local taken, n = scope or {}, 0
  for _, e in ipairs(new) do
    local k, v, kind = e[1], e[2], e[3]
    if not seen[v] then
      seen[v] = true
      local ok, name = true, free_name(taken, kind, k, scope)
      if kind == "block" then v.live_name = name
      else ok = pcall(function() v.name = name end) end
      if ok then n = n + 1; hold(taken, kind, name, v, scope) end
    end
  end
  return n
end

return naming
