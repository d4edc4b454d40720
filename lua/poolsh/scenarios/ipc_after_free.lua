-- The importer touches memory after its free: poolsh refuses a freed
-- Buffer outright; the real hazard is the importer's *queued* work. Its
-- free returns at once, so without an IPC event the exporter may free and
-- reuse the block while the importer's work has not run yet: the late
-- write lands in the exporter's new buffer. The fix is CUDA's rule: the
-- importer's free must complete before the exporter's (the exporter waits
-- on the importer's IPC event). docs/ipc.md.
local poolsh = require "poolsh"
local socket_path = require("poolsh.scenario").socket_path

local SIZE, SPIN, LATE, NEW = "4 MiB", "50 ms", 0x11, 0x22

return {
  name = "ipc_after_free",
  summary = "an importer's work queued before its free lands in the exporter's reused block unless an IPC event orders them",
  processes = 2,
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local path = socket_path()
    local s = poolsh.stream()
    local p <close> = poolsh.pool { ipc = true, release_threshold = "max" }
    p:export(path)
    local peer <close> = poolsh.spawn()
    peer:eval("ip = poolsh.import_pool(...); s = poolsh.stream()", path)

    -- The exporter lends a block ready for the importer; returns it.
    local function lend()
      local b = p:alloc(SIZE, s)
      poolsh.fill(b, 0, s)
      local ready = poolsh.event { ipc = true }
      ready:record(s)
      peer:eval("local block, event = ...; ib = ip:import(block, s); s:wait(poolsh.import_event(event))",
        b:export(), ready:export())
      return b
    end

    step("the importer frees its import, then fills it",
      "poolsh refuses a freed Buffer before anything reaches the GPU")
    local a = lend()
    local err = peer:eval("ib:free(); return select(2, pcall(poolsh.fill, ib, 1, s))")
    ctx.say(tostring(err))
    expect.truthy(tostring(err):find("freed", 1, true), "the importer's fill after its free")
    a:free()
    s:sync()

    step("the importer queues 50 ms of work and a fill of 0x11, then frees its import at once",
      "its free returns before the fill has run: nothing tells the exporter")
    a = lend()
    peer:eval("poolsh.spin(s, ...); poolsh.fill(ib, select(2, ...), s); ib:free()", SPIN, LATE)

    step("the exporter frees the block, allocates again (the same memory, stream order) and fills it with 0x22",
      "allowed: no importer holds the block any more")
    a:free()
    local b = p:alloc(SIZE, s)
    expect.reused(b, "stream order")
    poolsh.fill(b, NEW, s)
    s:sync()

    step("the importer's queued work runs; the exporter verifies its 0x22",
      "the late 0x11 landed in the exporter's new buffer: a use-after-free across processes")
    peer:eval("s:sync()")
    local ok, off = poolsh.verify(b, NEW, s)
    ctx.say(("verify: %s, first wrong byte at %s"):format(tostring(ok), tostring(off)))
    expect.equal(ok, false, "verify of 0x22 after the importer's late write")
    b:free()
    s:sync()

    step("the fix: the importer records an IPC event after its work and free; the exporter waits on it before its free",
      "CUDA's rule: the importer's free completes before the exporter's; the new buffer keeps its 0x22")
    a = lend()
    local done = peer:eval([[
      poolsh.spin(s, ...); poolsh.fill(ib, select(2, ...), s); ib:free()
      done = poolsh.event{ipc = true}; done:record(s)
      return done:export()
    ]], SPIN, LATE)
    s:wait(poolsh.import_event(done))
    a:free()
    b = p:alloc(SIZE, s)
    poolsh.fill(b, NEW, s)
    s:sync()
    peer:eval("s:sync()")
    expect.equal(poolsh.verify(b, NEW, s), true, "verify of 0x22 with the importer's event waited on")
    b:free()
    s:sync()
    peer:eval("done = nil; ip:destroy(); s:destroy()")
  end,
}
