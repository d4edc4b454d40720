--- The layering of src/ stays true without a reviewer: every C file is in
-- one layer of docs/architecture.md's "Layers of src/" table, and every
-- include and every call (read from the object files' symbols) goes to a
-- file of its own layer or one below. Within a layer, files form no
-- circle (except the pairs the table allows).
local H = require "helpers"

local ARCH_MD = "docs/architecture.md"
local BUILD = os.getenv("POOLSH_BUILD") or "build"
local OBJDIR = BUILD .. "/CMakeFiles/poolsh_core.dir/src"

--- The table: { rank = {file pattern...} }, the patterns by rank and the
-- allowed circles ({a, b} pairs) from "| rank | layer | files |" rows
-- and the "Allowed circles:" line.
local function read_layers()
  local text = H.slurp(ARCH_MD)
  local section = text:match("\n## Layers of src/\n(.-)\n## ")
  assert(section, ARCH_MD .. " has no '## Layers of src/' section")
  local layers, allowed = {}, {}
  for rank, name, files in section:gmatch("\n| (%d+) | ([^|]-) | ([^\n]-) |") do
    local patterns = {}
    for f in files:gmatch("`([^`]+)`") do patterns[#patterns + 1] = f end
    layers[#layers + 1] = { rank = tonumber(rank), name = name, patterns = patterns }
  end
  for a, b in section:gmatch("`([%w_/%.]+)` <%-> `([%w_/%.]+)`") do
    allowed[#allowed + 1] = { a, b }
  end
  assert(#layers > 0, ARCH_MD .. ": the layers table has no rows")
  return layers, allowed
end

--- Shell-style pattern ("sim/*") to a Lua pattern.
local function glob(p)
  return "^" .. p:gsub("[%.%-]", "%%%0"):gsub("%*", "[^/]*") .. "$"
end

--- Every C, CUDA and header file under src/, relative to src/.
local function source_files()
  local files = {}
  local p = assert(io.popen("cd src && find . -type f \\( -name '*.c' -o -name '*.h' -o -name '*.cu' \\) | sort"))
  for line in p:lines() do files[#files + 1] = line:sub(3) end
  p:close()
  return files
end

--- file -> rank; raises listing files in no layer or in two.
local function rank_of_files(layers, files)
  local rank, problems = {}, {}
  for _, f in ipairs(files) do
    local found = {}
    for _, l in ipairs(layers) do
      for _, pat in ipairs(l.patterns) do
        if f:match(glob(pat)) then found[#found + 1] = l.rank; break end
      end
    end
    if #found ~= 1 then
      problems[#problems + 1] = ("src/%s is in %d layers of %s (it must be in one)"):format(f, #found, ARCH_MD)
    end
    rank[f] = found[1]
  end
  return rank, problems
end

--- The room of a file, as farm-studio draws it: a source with its header.
local function room(f) return (f:gsub("%.[ch]$", ""):gsub("%.cu$", "")) end

--- Edges from includes: { {from, to, why} }.
local function include_edges(files, known)
  local edges = {}
  for _, f in ipairs(files) do
    local dir = f:match("^(.*)/") or ""
    for inc in ("\n" .. H.slurp("src/" .. f)):gmatch('\n%s*#%s*include%s+"([^"]+)"') do
      local to = (dir ~= "" and known[dir .. "/" .. inc] and dir .. "/" .. inc) or (known[inc] and inc)
      if to and to ~= f then edges[#edges + 1] = { f, to, '#include "' .. inc .. '"' } end
    end
  end
  return edges
end

--- Edges from calls: an object's undefined symbol defined by another
-- object of the core library (objects of sources that are gone, left in
-- a reused build directory, are not read). Also returns symbol -> file.
local function call_edges(known)
  local defined, wanted = {}, {}
  local p = assert(io.popen("cd " .. OBJDIR .. " 2>/dev/null && find . -name '*.o' | sort"))
  local objects = {}
  for line in p:lines() do objects[#objects + 1] = line:sub(3) end
  p:close()
  assert(#objects > 0, "no object files under " .. OBJDIR .. ": build first (POOLSH_BUILD)")
  for _, o in ipairs(objects) do
    local f = o:gsub("%.o$", "")
    if not known[f] then goto next_object end
    local nm = assert(io.popen("nm " .. OBJDIR .. "/" .. o .. " 2>/dev/null"))
    for line in nm:lines() do
      local kind, sym = line:match("^%s*%x*%s+(%a)%s+(%S+)$")
      if kind == "U" then
        wanted[#wanted + 1] = { f, sym }
      elseif kind and kind:match("[TDBRC]") then
        defined[sym] = f
      end
    end
    nm:close()
    ::next_object::
  end
  local edges = {}
  for _, w in ipairs(wanted) do
    local to = defined[w[2]]
    if to and to ~= w[1] then edges[#edges + 1] = { w[1], to, w[2] .. "()" } end
  end
  return edges, defined
end

--- Edges from headers: a function a header declares or calls (a static
-- inline's body is compiled into each includer) that a .c file defines.
local function header_edges(files, defined)
  local edges = {}
  for _, f in ipairs(files) do
    if f:match("%.h$") then
      local code = H.slurp("src/" .. f):gsub("/%*.-%*/", ""):gsub("//[^\n]*", "")
      for name in code:gmatch("([%a_][%w_]*)%s*%(") do
        local to = defined[name]
        if to and to ~= f:gsub("%.h$", ".c") then edges[#edges + 1] = { f, to, name .. "()" } end
      end
    end
  end
  return edges
end

--- Circles among rooms of one rank (Tarjan), less the allowed pairs.
local function circles(edges, rank, allowed)
  local next_of = {}
  local ok = {}
  for _, pair in ipairs(allowed) do
    ok[room(pair[1]) .. ">" .. room(pair[2])] = true
    ok[room(pair[2]) .. ">" .. room(pair[1])] = true
  end
  for _, e in ipairs(edges) do
    local a, b = room(e[1]), room(e[2])
    if a ~= b and rank[e[1]] == rank[e[2]] and not ok[a .. ">" .. b] then
      next_of[a] = next_of[a] or {}
      next_of[a][b] = true
    end
  end
  local index, low, stack, on, found, n = {}, {}, {}, {}, {}, 0
  local function visit(v)
    n = n + 1; index[v], low[v] = n, n
    stack[#stack + 1] = v; on[v] = true
    for w in pairs(next_of[v] or {}) do
      if not index[w] then visit(w); low[v] = math.min(low[v], low[w])
      elseif on[w] then low[v] = math.min(low[v], index[w]) end
    end
    if low[v] == index[v] then
      local comp = {}
      repeat local w = table.remove(stack); on[w] = nil; comp[#comp + 1] = w until w == v
      if #comp > 1 then table.sort(comp); found[#found + 1] = table.concat(comp, ", ") end
    end
  end
  local rooms = {}
  for v in pairs(next_of) do rooms[#rooms + 1] = v end
  table.sort(rooms)
  for _, v in ipairs(rooms) do if not index[v] then visit(v) end end
  return found
end

describe("the layers of src/ (docs/architecture.md)", function()
  local layers, allowed = read_layers()
  local files = source_files()
  local rank, unplaced = rank_of_files(layers, files)
  local known = {}
  for _, f in ipairs(files) do known[f] = true end

  it("places every file under src/ in exactly one layer", function()
    assert.are.same({}, unplaced)
  end)

  it("names only files that exist", function()
    local missing = {}
    for _, l in ipairs(layers) do
      for _, pat in ipairs(l.patterns) do
        local any = false
        for _, f in ipairs(files) do if f:match(glob(pat)) then any = true end end
        if not any then missing[#missing + 1] = pat .. " (layer " .. l.name .. ")" end
      end
    end
    assert.are.same({}, missing)
  end)

  local edges = include_edges(files, known)
  local calls, defined = call_edges(known)
  for _, e in ipairs(calls) do edges[#edges + 1] = e end
  -- a header's declarations point up or level, never in a circle: they
  -- count for the layers, not for circles
  local declared = header_edges(files, defined)

  it("has no include or call that goes up a layer", function()
    local up, seen = {}, {}
    local all = { table.unpack(edges) }
    for _, e in ipairs(declared) do all[#all + 1] = e end
    for _, e in ipairs(all) do
      local a, b = rank[e[1]], rank[e[2]]
      if a and b and b > a then
        local line = ("src/%s (layer %d) -> src/%s (layer %d): %s"):format(e[1], a, e[2], b, e[3])
        if not seen[line] then seen[line] = true; up[#up + 1] = line end
      end
    end
    table.sort(up)
    assert.are.same({}, up)
  end)

  it("has no circle of files within a layer", function()
    assert.are.same({}, circles(edges, rank, allowed))
  end)

  it("reads calls from the objects (a call up is caught, not missed)", function()
    -- Guards the reader: the roof calls each binding's open function.
    local roof_calls = false
    for _, e in ipairs(edges) do
      if e[3]:match("^poolsh_open_") then roof_calls = true end
    end
    assert.is_true(roof_calls)
  end)
end)
