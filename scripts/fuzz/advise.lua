-- Input fuzzer: poolsh advise's inputs. An input starting "args\n" is a
-- command line, one argument a line, through advise's option parser
-- (poolsh.replay.cli with advise's options); any other is a recording read
-- through poolsh.advise.shared, which keeps the first pass's events for
-- the next: the second pass must give exactly the events of the first,
-- every field (op, address, size, stream, recorded time)
-- (or the same error), and both what a plain reading gives. Each input is
-- bounded in time and memory by lib.run.
-- Usage: poolsh --backend=sim scripts/fuzz/advise.lua [--seed S] [--seconds T] [--tmpdir D]
local lib = dofile("scripts/fuzz/lib.lua")
local cli = require "poolsh.replay.cli"
local replay = require "poolsh.replay"
local advise = require "poolsh.advise"

local ONLY = { streams = true, ["max-streams"] = true, ["max-inflate"] = true, report = true,
               json = true, jobs = true }

local RMM = replay.read.rmm_header .. "\n"
  .. "1,00:00:00.000001,allocate,0x7f0000000000,1048576,0x0\n"
  .. "1,00:00:00.000002,allocate,0x7f0000100000,2097152,0x5\n"
  .. "1,00:00:00.000003,free,0x7f0000000000,1048576,0x0\n"
  .. "1,00:00:00.000004,free,0x7f0000100000,2097152,0x5\n"

-- Every event of one pass over rec, as text, or the pass's error.
local function pass(rec)
  local out = {}
  local ok, err = pcall(function()
    for op, addr, size, stream, t in rec:events() do   -- t paces a cudaMallocAsync replay
      out[#out + 1] = ("%s %s %s %s %s"):format(op, tostring(addr), tostring(size), tostring(stream), tostring(t))
      if #out > 200000 then error("fuzz: over 200000 events", 0) end
    end
  end)
  if not ok then return nil, tostring(err) end
  return table.concat(out, "\n")
end

-- A property broken: a table, which lib.run reports as no clear message.
local function broken(what)
  io.stderr:write("advise fuzz: ", what, "\n")
  error({ what }, 0)
end

lib.run({
  name = "advise",
  suffix = ".csv",
  corpus = {
    "args\ntests/data/torch/convnet.pickle.gz\n--json\n--report\nout.html\n--jobs\n2\n--streams=one",
    "args\nrun.csv\n--max-streams=8\n--max-inflate\n4 GiB\n--jobs=4",
    RMM,
    lib.slurp("tests/data/torch/convnet.pickle.gz"),
  },
  decode = function(input, path)
    if input:sub(1, 5) == "args\n" then
      local args = {}
      for a in (input:sub(6) .. "\n"):gmatch("(.-)\n") do args[#args + 1] = a end
      local function fail(msg) error("poolsh advise: " .. msg, 0) end
      cli.check(cli.parse(args, fail, ONLY), fail, "poolsh advise FILE")
      return
    end
    local plain, perr = pass(replay.read.open(path))
    local rec = advise.shared(replay.read.open(path))
    local first, ferr = pass(rec)
    local second, serr = pass(rec)
    if first ~= plain or ferr ~= perr then broken("the first shared pass differs from a plain reading") end
    if second ~= first or serr ~= ferr then broken("the second shared pass differs from the first") end
    if perr then error(perr, 0) end
  end,
}, ...)
