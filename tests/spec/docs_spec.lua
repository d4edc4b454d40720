--- Doc coverage, as luv's .ci/docscov.sh: every function and field of the
-- API has an entry in docs/api.md, and every entry names something that
-- exists. Entries are the `### ` headings (each backticked name in one)
-- and the rows of the "... fields" tables.
local H = require "helpers"
local poolsh = H.poolsh

local slurp = H.slurp

local API_MD = "docs/api.md"

-- Method receivers as api.md writes them.
local RECEIVER = { s = "Stream", e = "Event", p = "Pool", b = "Buffer", proc = "Process",
                   r = "Range", m = "Memory" }

-- Names left out of api.md on purpose, each with the reason. None today.
-- (Metamethods are not walked: api.md describes __tostring, __len and
-- __close in prose.)
local INTERNAL = {
}

-- Names api.md documents that exist only in some hosts.
local HOST_ONLY = {
  ["poolsh.program"] = true,   -- set by the poolsh host; nil under stock lua5.4
  ["poolsh.parent"] = true,    -- set in a process poolsh.spawn started; nil here
}

--- What api.md documents: a set of "poolsh.x.y", "Type:method" and
-- "Type.field" names, with the line of each.
local function documented(text)
  local names, section, n = {}, nil, 0
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local heading = line:match("^### (.*)")
    if heading then
      section = heading:match("^(%a+) fields")     -- "Stream fields (read-only)"
      for span in heading:gmatch("`([^`]+)`") do
        local r, m = span:match("^(%a+):([%w_]+)")
        local name = r and RECEIVER[r] and (RECEIVER[r] .. ":" .. m)
          or span:match("^(poolsh[%w_%.]*)")
        if name then names[name] = names[name] or n end
      end
    elseif line:match("^## ") then
      section = nil
    elseif section then
      local field = line:match("^| `([%a_][%w_]*)` |")
      if field then names[section .. "." .. field] = names[section .. "." .. field] or n end
    end
  end
  return names
end

--- Names in backticks anywhere in text ("poolsh.live.lines" from
-- `poolsh.live.lines()`): how poolsh.live's helpers are documented, in
-- the body of the entries they back.
local function mentioned(text)
  local set = {}
  text = text:gsub("\n```[^\n]*", "\n")   -- fences would pair the backticks wrongly
  for span in text:gmatch("`([^`]+)`") do
    for name in span:gmatch("(poolsh[%w_%.]*)") do set[name] = true end
  end
  return set
end

-- Each type's fields, as the C side lists them: mt.fields, the one list
-- its __index, REPL completion and this spec share.
local function c_fields(tname, mt)
  assert(type(mt.fields) == "table", tname .. "'s metatable has no fields list")
  return mt.fields
end

--- One live object of each type, plus a reused pool buffer so that every
-- Buffer field has a value somewhere. Returns {Type = {objects}}, cleanup.
local function objects()
  local s, e, p = poolsh.stream(), poolsh.event(), poolsh.pool{}
  local b1 = p:alloc(1024, s)
  b1:free(s)
  local b2 = p:alloc(1024, s)                       -- reuses b1's memory: stream order
  local m = poolsh.malloc(16)
  local s2, x = poolsh.stream(), p:alloc(1024, s)
  poolsh.spin(s, "10 ms")
  x:free()
  local b3 = p:alloc(1024, s2)                      -- fresh: x's free pends on s (why_fresh)
  local vr, vm = poolsh.vmm.reserve(2 * 1024 * 1024), poolsh.vmm.create(2 * 1024 * 1024)
  local objs = { Stream = { s }, Event = { e }, Pool = { p }, Buffer = { b2, m, b3 },
                 Range = { vr }, Memory = { vm } }
  -- An IPC pool imported into this same process, for the fields only
  -- imported objects have (the sim allows it; where the backend refuses,
  -- those fields are not checked).
  local path, unreadable = os.tmpname(), {}
  os.remove(path)
  path = path .. ".sock"
  local xp = poolsh.pool{ ipc = true }
  xp:export(path)
  local xb = xp:alloc(64, s)
  local ok, ip = pcall(poolsh.import_pool, path)
  local ib = ok and select(2, pcall(ip.import, ip, xb:export(), s)) or nil
  if ok and type(ib) == "userdata" then
    table.insert(objs.Pool, ip)
    table.insert(objs.Buffer, ib)
  else
    ib = nil
    unreadable = { ["Pool.exporter"] = true, ["Buffer.source"] = true }
  end
  return objs, function()
    if ib then ib:free() end
    xb:free()
    if ok then ip:destroy() end
    xp:destroy()
    b2:free(); m:free(); b3:free(); poolsh.sync(); p:destroy(); e:destroy(); s:destroy()
    vr:close(); vm:release()
    s2:destroy()
  end, unreadable
end

--- What exists: the same kind of names as documented() returns. Tables
-- (poolsh.sim, poolsh.trace, ...) are walked, not documented themselves.
local function existing(objs)
  local names = {}
  local function walk(t, prefix, depth)
    for k, v in pairs(t) do
      local name = prefix .. "." .. k
      if type(v) == "table" and depth < 2 and k ~= "core" then
        names[name] = "table"
        walk(v, name, depth + 1)
      else
        names[name] = type(v)
      end
    end
  end
  walk(poolsh, "poolsh", 1)
  for k, v in pairs(poolsh.core) do names["poolsh.core." .. k] = type(v) end
  for tname, list in pairs(objs) do
    local mt = getmetatable(list[1])
    for k in pairs(mt.methods) do names[tname .. ":" .. k] = "method" end
    for _, k in ipairs(c_fields(tname, mt)) do names[tname .. "." .. k] = "field" end
  end
  -- poolsh.Process: from its metatable (a live one needs a child process)
  local pmt = debug.getregistry()["poolsh.Process"]
  for k in pairs(pmt.methods) do names["Process:" .. k] = "method" end
  for _, k in ipairs(c_fields("Process", pmt)) do names["Process." .. k] = "field" end
  return names
end

--- Whether api.md covers name, an existing API name.
local function covered(name, docs, ment)
  if docs[name] or INTERNAL[name] then return true end
  -- poolsh.core.x that require "poolsh" copies into poolsh (or wraps as
  -- poolsh.trace.x for trace_x) is documented there.
  local k = name:match("^poolsh%.core%.([%w_]+)$")
  if k then
    local t = k:match("^trace_([%w_]+)$")
    return docs["poolsh." .. k] ~= nil or (t ~= nil and docs["poolsh.trace." .. t] ~= nil)
  end
  -- poolsh.live.x: the helpers behind poolsh.watch/show/map/leaks, named
  -- in those entries' text; the ones with a poolsh.x of their own by it.
  k = name:match("^poolsh%.live%.([%w_]+)$")
  if k then return ment[name] or docs["poolsh." .. k] ~= nil end
  return false
end

describe("docs/api.md", function()
  local text = slurp(API_MD)
  local docs, ment = documented(text), mentioned(text)
  local objs, cleanup, unreadable
  before_each(function() objs, cleanup, unreadable = objects() end)
  after_each(function() cleanup() end)

  it("reads entries of every kind", function()
    -- the parser finds what it looks for, so an empty result cannot pass
    assert.is_truthy(docs["poolsh.pool"])
    assert.is_truthy(docs["Stream:sync"])
    assert.is_truthy(docs["Pool.release_threshold"])
    assert.is_truthy(docs["Buffer.reuse_rule"])
  end)

  it("finds the fields the C side lists, each readable on a live object", function()
    for tname, list in pairs(objs) do
      local fields = c_fields(tname, getmetatable(list[1]))
      assert.is_true(#fields >= 4, tname .. " has too few fields: " .. #fields)
      for _, k in ipairs(fields) do
        local seen = false
        for _, o in ipairs(list) do    -- an imported pool's settings raise (api.md)
          local ok, v = pcall(function() return o[k] end)
          if ok and v ~= nil then seen = true end
        end
        assert.is_true(seen or unreadable[tname .. "." .. k] ~= nil,
                       tname .. "." .. k .. " reads nil on every object")
      end
    end
  end)

  it("documents every function, method and field", function()
    local missing = {}
    for name, kind in pairs(existing(objs)) do
      if kind ~= "table" and not covered(name, docs, ment) then missing[#missing + 1] = name end
    end
    table.sort(missing)
    assert.are.same({}, missing)
  end)

  it("names only what exists", function()
    local have, stale = existing(objs), {}
    for name, line in pairs(docs) do
      if not have[name] and not HOST_ONLY[name] then
        stale[#stale + 1] = ("%s (line %d)"):format(name, line)
      end
    end
    table.sort(stale)
    assert.are.same({}, stale)
  end)
end)
