--- C asks Lua for words through one door (src/render.c): a script that
-- replaces require, or a renderer that is broken, changes no message
-- beyond saying that the renderer failed; the error being worded stays.
local H = require "helpers"
local poolsh = H.poolsh

describe("the renderers C calls for words", function()
  local saved
  before_each(function()
    saved = {}
    for _, r in ipairs { "size", "oom" } do
      saved[r] = package.loaded["poolsh.render." .. r]
    end
  end)
  after_each(function()
    for r, f in pairs(saved) do package.loaded["poolsh.render." .. r] = f end
  end)

  it("keep the require there was when poolsh.core opened", function()
    local out, err, code = H.poolsh_cmd("--backend=sim -e " .. H.quote([[
      local b = poolsh.malloc(10)
      require = nil
      print(tostring(b)); print(select(2, pcall(poolsh.malloc, 1 << 60)))
      require = function() return function() return "HIJACK" end end
      print(tostring(b)); b:free()]]))
    assert.equal(0, code, err)
    assert.equal("poolsh.Buffer b1 (10 B malloc)\n"
      .. "cudaErrorMemoryAllocation: out of memory allocating 1.00 EiB of malloc memory\n"
      .. "poolsh.Buffer b1 (10 B malloc)\n", out)
  end)

  it("say a renderer failed instead of raising: an error, a table, a yield", function()
    local b = poolsh.malloc(10)
    package.loaded["poolsh.render.size"] = function() error("renderer broke", 0) end
    assert.equal("poolsh.Buffer " .. b.name .. " ((poolsh.render.size failed: renderer broke) malloc)",
                 tostring(b))
    package.loaded["poolsh.render.size"] = function() return {} end
    assert.equal("poolsh.Buffer " .. b.name
                 .. " ((poolsh.render.size failed: it returned a table, not a string) malloc)", tostring(b))
    package.loaded["poolsh.render.size"] = function() coroutine.yield() end
    assert.matches("size failed: attempt to yield",
                   coroutine.wrap(function() return tostring(b) end)(), 1, true)
    b:free()
  end)

  it("keep the CUDA error when the out-of-memory renderer breaks", function()
    package.loaded["poolsh.render.oom"] = function() error("oom renderer broke", 0) end
    local q <close> = poolsh.pool { max_size = "2 MiB" }
    local ok, err = pcall(q.alloc, q, "64 MiB")
    assert.is_false(ok)
    assert.matches("^cudaErrorMemoryAllocation: out of memory allocating 64.00 MiB from pool p%d+ "
                   .. "on stream default%(poolsh.render.oom failed: oom renderer broke%)$", err)
  end)
end)
