--- lua/poolsh modules read the core's views (object_name, objects,
-- shown_max) from require "poolsh.core", in whatever order they load: a
-- module required before require "poolsh" works as well (src/init.c
-- returns the views). Each case runs in a fresh stock lua5.4.
local H = require "helpers"

local function run(first)
  local script = ([[
    package.path = "lua/?.lua;lua/?/init.lua"
    package.cpath = (os.getenv("POOLSH_BUILD") or "build") .. "/lib/?.so"
    require %q
    local poolsh = require "poolsh"
    local q = poolsh.pool { max_size = "64 MiB" }
    local ok, err = pcall(q.alloc, q, "128 MiB")
    io.write(tostring(err):match("^[^\n]*"), "\n")
    ok, err = pcall(poolsh.live.show_lines)
    io.write(ok and "show ok" or tostring(err), "\n")
    ok, err = pcall(poolsh.size, "17 EiB")
    io.write(tostring(err), "\n")
    q:destroy()
  ]]):format(first)
  local f = os.tmpname()
  local fh = assert(io.open(f, "w"))
  fh:write(script)
  fh:close()
  local out, err, code = H.sh("POOLSH_BACKEND=sim lua5.4 " .. H.quote(f))
  os.remove(f)
  assert.equal(0, code, err)
  return out
end

describe("a poolsh module required before require 'poolsh'", function()
  for _, first in ipairs { "poolsh.core", "poolsh.trace", "poolsh.live", "poolsh.naming", "poolsh.units" } do
    it("leaves out-of-memory messages and the show view working (" .. first .. " first)", function()
      assert.equal("cudaErrorMemoryAllocation: out of memory allocating 128.00 MiB from pool p1 on stream "
                   .. "default\nshow ok\npoolsh.size: invalid size '17 EiB' (use e.g. 4096, \"4 KiB\", \"1.5 GiB\", \"64MB\")\n",
                   run(first))
    end)
  end
end)
