-- poolsh.trace.start{stream_to = path}, and --trace FILE.csv: the events
-- are written to the file as the run goes, in batches, and dropped from
-- memory (docs/trace.md, "Streaming").
local H = require "helpers"
local q = H.quote

local tmpdir = H.sh("mktemp -d"):gsub("%s+$", "")
local function tmp(name) return tmpdir .. "/" .. name end

local function put(name, text)
  local f = assert(io.open(tmp(name), "wb"))
  f:write(text)
  f:close()
  return tmp(name)
end

-- A run of every kind of CSV row (pool allocs with frees and syncs, other
-- kinds of memory, a failed allocation) and the ops between them; it
-- prints the most events held in memory, then ends as arg[1] says.
local workload = put("work.lua", [[
local p, s = poolsh.pool{}, poolsh.stream()
local small = poolsh.pool{ max_size = "32 MiB" }
local most = 0
for i = 1, 2000 do
  local b = p:alloc(1024 * (i % 7 + 1), s)
  b:free(s)
  if i % 300 == 0 then
    s:sync()
    poolsh.malloc(64):free()
    poolsh.pinned(64):free()
    pcall(small.alloc, small, "64 MiB", s)
  end
  most = math.max(most, poolsh.trace.count())
end
print("most", most)
if arg[1] == "error" then error("the run fails") end
if arg[1] == "exit" then os.exit(3) end
]])

-- Runs the workload in a fresh poolsh: out, err, exit code. On the sim,
-- whose clock and addresses repeat from run to run, so that two runs'
-- files can be compared.
local function run(pre, args, how)
  return H.poolsh_cmd("--backend=sim " .. args .. " -e " .. q(pre) .. " " .. workload .. " " .. (how or ""))
end

-- The CSV of the workload saved at the end, not streamed.
local plain
local function plain_csv()
  if not plain then
    local path = tmp("plain.csv")
    local out, err, code = H.poolsh_cmd("--backend=sim -e " .. q("poolsh.trace.start()") .. " -e " ..
      q("dofile(" .. ("%q"):format(workload) .. ") poolsh.trace.save(" .. ("%q"):format(path) .. ")"))
    assert(code == 0, out .. err)
    plain = H.slurp(path)
  end
  return plain
end

local function most(out) return tonumber(out:match("most%s+(%d+)")) end

describe("streaming the trace", function()
  it("writes the same CSV as the save at the end, holding at most a batch", function()
    local path = tmp("streamed.csv")
    local out, err, code = run(("poolsh.trace.start{stream_to = %q, batch = 64}"):format(path), "")
    assert.equal(0, code, err)
    local expected = plain_csv()
    assert.truthy(#expected > 100000)                 -- thousands of rows
    assert.truthy(expected:find("allocate failure", 1, true))
    assert.truthy(most(out) <= 64, out)
    -- not saved explicitly: the file is completed when the state closes
    assert.equal(expected, H.slurp(path))
  end)

  it("--trace FILE.csv streams, and every exit path leaves the complete file", function()
    for _, how in ipairs { "", "error", "exit" } do
      local path = tmp("cli_" .. how .. ".csv")
      local out, err, code = run(("poolsh.trace.start{stream_to = %q, batch = 100}"):format(path),
        "--trace=" .. q(path), how)
      assert.equal(how == "" and 0 or how == "error" and 1 or 3, code, err)
      assert.truthy(most(out) <= 100, out)
      assert.truthy(err:find("trace saved to " .. path, 1, true), err)
      assert.equal(plain_csv(), H.slurp(path))
    end
  end)

  it("--trace with its default batch keeps the run's events in memory until it ends", function()
    local path = tmp("default.csv")
    local out, err, code = run("", "--trace=" .. q(path))
    assert.equal(0, code, err)
    assert.truthy(most(out) > 100)
    assert.equal(plain_csv(), H.slurp(path))
    local n = tonumber(err:match("%((%d+) events%)"))
    assert.equal(most(out), n)                          -- the default batch is larger
  end)

  it("--trace with a format that is not a line format does not stream", function()
    local path = tmp("whole.json")
    local out, err, code = run("", "--trace=" .. q(path))
    assert.equal(0, code, err)
    assert.truthy(most(out) > 4000, out)
    assert.equal(most(out), tonumber(err:match("%((%d+) events%)")))
  end)

  it("numbers events on across the writes, and reports what it wrote", function()
    local path = tmp("api.csv")
    local out, err, code = H.poolsh_cmd("--backend=sim -e " .. q(([[
      poolsh.trace.start{stream_to = %q, batch = 10}
      local p, s = poolsh.pool{}, poolsh.stream()
      for _ = 1, 25 do p:alloc(4096, s):free(s) end
      local where, written = poolsh.trace.streaming()
      local ev = poolsh.trace.events()
      print(where == %q, written, poolsh.trace.count(), ev[1].seq, ev[#ev].seq)
      local saved, n = poolsh.trace.save(%q)
      print(saved == %q, n, poolsh.trace.count(), (poolsh.trace.streaming()))
    ]]):format(path, path, path, path)))
    assert.equal(0, code, err)
    local a, b = out:match("^(.-)\n(.-)\n$")
    -- 2 creates, a reserve, 50 alloc/free: 50 written in batches of 10, 3 kept
    local _, written, kept, first, last = a:match("^(%a+)\t(%d+)\t(%d+)\t(%d+)\t(%d+)$")
    assert.same({ "true", 50, 3, 51, 53 },
      { a:match("^%a+"), tonumber(written), tonumber(kept), tonumber(first), tonumber(last) })
    assert.equal("true\t53\t0\tnil", b)
    local _, rows = H.slurp(path):gsub("\n", "")
    assert.equal(1 + 50, rows)
  end)

  it("a failed write stops streaming, keeps the events not written, and says so", function()
    local path = tmp("limited.csv")
    local script = put("limited.lua", ([[
      poolsh.trace.start{stream_to = %q, batch = 50}
      local p, s = poolsh.pool{}, poolsh.stream()
      for _ = 1, 2000 do p:alloc(4096, s):free(s) end
      local _, written, why = poolsh.trace.streaming()
      print(written, why, poolsh.trace.count())
      print(select(2, pcall(poolsh.trace.save, %q)))
    ]]):format(path, path))
    -- files over a few KiB cannot be written (EFBIG, the signal ignored)
    local out, err, code = H.sh("trap '' XFSZ; ulimit -f 8; " .. H.exe .. " --backend=sim " .. script)
    assert.equal(0, code, err)
    local written, why, kept = out:match("^(%d+)\t(.-)\t(%d+)\n")
    assert.equal("File too large", why)
    assert.equal(4003, tonumber(written) + tonumber(kept))  -- none lost
    assert.truthy(tonumber(kept) > 50)
    assert.truthy(out:find("writing '" .. path .. "' failed after " .. written ..
      " events: File too large; the " .. kept .. " events not written are kept", 1, true), out)
  end)

  it("says what is wrong with its options", function()
    local cases = {
      { "{stream_to = 'x.json'}", "stream_to must name a line format %(%.csv%), got 'x.json'" },
      { "{stream_to = 42}", "stream_to must be a path %(a string%), got number" },
      { "{stream_to = 'x.csv', batch = 0}", "batch must be a positive integer, got 0" },
      { "{batch = 10}", "batch is the size of stream_to's writes: give stream_to too" },
      { "{stream_to = 'x.csv', max_events = 5}", "stream_to cannot be combined with max_events" },
      { "{stream_to = '/no/such/dir/x.csv'}", "cannot open '/no/such/dir/x.csv' for writing: No such file" },
    }
    for _, c in ipairs(cases) do
      local out, err = H.poolsh_cmd("-e " .. q("print(pcall(poolsh.trace.start, " .. c[1] ..
        ")) print(poolsh.trace.recording())"))
      assert.truthy(out:find("^false\t[^\n]*" .. c[2]), c[1] .. ": " .. out .. err)
      assert.truthy(out:find("\nfalse\n$"), c[1] .. ": " .. out)
    end
    local out = H.poolsh_cmd("-e " .. q([[
      poolsh.trace.start{max_events = 5}
      print(pcall(poolsh.trace.start, {stream_to = "x.csv"}))
    ]]))
    assert.truthy(out:find("stream_to cannot be combined with max_events", 1, true), out)
    local full = put("full.csv", "")
    os.remove(full)
    assert(os.execute("ln -s /dev/full " .. q(full)))
    out = H.poolsh_cmd("-e " .. q(("print(pcall(poolsh.trace.start, {stream_to = %q}))"):format(full)))
    -- a link to a device is not followed (atomic_file.c): refused, nothing written there
    assert.truthy(out:find("cannot open '" .. full .. "' for writing: not a regular file", 1, true), out)
  end)
end)
