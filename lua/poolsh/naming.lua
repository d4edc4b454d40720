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

-- The names Lua allocators' blocks were given by adopt ("block" kind).
local block_names = {}

-- Whether v is a Lua allocator's block still under its allocator's label
-- ("torch.3": poolsh.live.allocators.label).
local function labelled_block(v)
  local label = rawget(v, "live_name")
  return type(label) == "string" and label:match("^.+%.%d+$") ~= nil
end

-- The longest variable name taken as is: a name has at most 64 bytes, and
-- room is kept for "#<n>".
local LONGEST = 56

-- The name free for kind: base itself unless another object of that kind
-- was given it, else base#2, base#3, ... (the first not taken). A
-- scope's taken sets start empty; the others from every name given.
local function free_name(taken, kind, base, scoped)
  local t = taken[kind]
  if not t and scoped then
    t = {}
    taken[kind] = t
  elseif not t and kind == "block" then
    t = block_names
    taken[kind] = t
  elseif not t then
    t = {}
    for _, n in pairs(naming.all()[kind] or {}) do t[n] = true end
    taken[kind] = t
  end
  local name, i = base, 1
  while t[name] do
    i = i + 1
    name = ("%s#%d"):format(base, i)
  end
  t[name] = true
  return name
end

--- naming.adopt(env) -> how many objects it named: every global of env
-- (a table of variables: _G, a lesson's) whose value is a Pool, Stream,
-- Event or Buffer without a name gets the variable's name (o.name = key);
-- when another object of its kind has that name already, "key#2" (then
-- #3, ...). A Lua allocator's block (a table whose live_name is its
-- allocator's label, "torch.3") takes the variable's name the same way.
-- Only env's own keys are looked at, not tables inside it; an
-- object in two new variables takes the name that sorts first; a name
-- once given stays when the object moves to another variable. With
-- scope (a table adopt keeps its names in), only the names given through
-- that scope are taken: a scenario's `p` is `p` again in the next one.
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
      local ok = true
      if kind == "block" then v.live_name = free_name(taken, kind, k, scope)
      else ok = pcall(function() v.name = free_name(taken, kind, k, scope) end) end
      if ok then n = n + 1 end
    end
  end
  return n
end

return naming
