-- The sim's source files (src/sim/, docs/sim.md): sim.c is the backend's
-- face and calls down into the model files; no model file calls a function
-- that sim.c defines, the headers' inline helpers call no function a .c
-- file defines, and the only files that call each other are sim_pool.c
-- and sim_stream.c, which the model ties (a pool's free is ordered on its
-- stream, a stream's sync releases pools). Read from the sources: it needs
-- no build.
local H = require "helpers"

local DIR = "src/sim/"

-- The C text without comments and string literals: only code names count.
local function code(text)
  return ("\n" .. text):gsub("/%*.-%*/", " "):gsub("//[^\n]*", " "):gsub('"[^"\n]*"', '""')
end

-- src/sim's files: {name = code}.
local function sources()
  local files = {}
  local ls = assert(io.popen("ls " .. DIR))
  for name in ls:lines() do
    if name:match("%.[ch]$") then files[name] = code(H.slurp(DIR .. name)) end
  end
  ls:close()
  return files
end

-- The functions a .c file defines for other files to call (not static):
-- a name and its parameters at the start of a line, then a body.
local function exported(text)
  local names = {}
  for head, name in text:gmatch("\n([%a_][^\n;{}()=]-[%s%*])([%a_][%w_]*)%([^;{}]-%)%s*{") do
    if not head:match("^static%s") and not head:match("^typedef%s") then names[name] = true end
  end
  return names
end

-- Whether text calls the function name.
local function calls(text, name)
  return text:find("%f[%w_]" .. name .. "%s*%(") ~= nil
end

-- The calls between files: edges[a][b] = a name a calls that b defines.
local function graph(files)
  local defs = {}
  for f, text in pairs(files) do
    if f:match("%.c$") then defs[f] = exported(text) end
  end
  local edges = {}
  for a, text in pairs(files) do
    if a:match("%.c$") then
      edges[a] = {}
      for b, names in pairs(defs) do
        if a ~= b then
          for name in pairs(names) do
            if calls(text, name) then edges[a][b] = name break end
          end
        end
      end
    end
  end
  return edges, defs
end

describe("src/sim's files", function()
  local files = sources()
  local edges, defs = graph(files)

  it("are read: sim.c and the model files define functions", function()
    assert.truthy(defs["sim.c"] and next(defs["sim.c"]), "sim.c defines nothing the reader found")
    for _, f in ipairs { "sim_pool.c", "sim_stream.c", "sim_mem.c", "sim_fault.c", "sim_error.c" } do
      assert.truthy(defs[f] and next(defs[f]), f .. " defines nothing the reader found")
    end
    assert.are.equal("sim_error_code", edges["sim_fault.c"]["sim_error.c"])
  end)

  it("no model file calls a function that sim.c defines", function()
    for a, out in pairs(edges) do
      if a ~= "sim.c" then
        assert.is_nil(out["sim.c"], ("%s calls %s, which sim.c defines"):format(a, tostring(out["sim.c"])))
      end
    end
  end)

  it("the headers' inline helpers call no function a .c file defines", function()
    for h, text in pairs(files) do
      if h:match("%.h$") then
        for body in text:gmatch("static%s+inline[^;{}]-%b()%s*(%b{})") do
          for f, names in pairs(defs) do
            local own = f:gsub("%.c$", ".h") == h     -- a .c file's own header may
            for name in pairs(names) do
              assert.is_true(own or not calls(body, name),
                ("%s's inline helper calls %s, which %s defines"):format(h, name, f))
            end
          end
        end
      end
    end
  end)

  it("only sim_pool.c and sim_stream.c call each other, in any circle", function()
    local names = {}
    for f in pairs(edges) do names[#names + 1] = f end
    local reach = {}
    for _, a in ipairs(names) do
      reach[a] = {}
      for b in pairs(edges[a]) do reach[a][b] = true end
    end
    for _, k in ipairs(names) do
      for _, a in ipairs(names) do
        for _, b in ipairs(names) do
          if reach[a][k] and reach[k][b] then reach[a][b] = true end
        end
      end
    end
    local circles = {}
    for _, a in ipairs(names) do
      for _, b in ipairs(names) do
        if a < b and reach[a][b] and reach[b][a] then circles[#circles + 1] = a .. " <-> " .. b end
      end
    end
    table.sort(circles)
    assert.are.same({ "sim_pool.c <-> sim_stream.c" }, circles)
  end)
end)
