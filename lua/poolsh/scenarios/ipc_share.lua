-- Sharing a pool and a buffer between two processes (CUDA's IPC pools): the
-- exporter serves an IPC pool at a socket, fills a block and records an IPC
-- event; a second poolsh (poolsh.spawn) imports the pool, the block and the
-- event, waits on it and reads the data; it writes back, records its own
-- IPC event and frees its import; the exporter waits on that event, then
-- frees. docs/ipc.md.
local poolsh = require "poolsh"
local socket_path = require("poolsh.scenario").socket_path

local SIZE, MINE, THEIRS = "8 MiB", 0xAB, 0xCD

return {
  name = "ipc_share",
  summary = "an IPC pool shared with a second poolsh: IPC events order each side's access, the importer frees first",
  processes = 2,
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local path = socket_path()
    local s = poolsh.stream()
    local p <close> = poolsh.pool { ipc = true, release_threshold = 0 }
    local peer <close> = poolsh.spawn()

    step("exporter: serve an IPC pool at a socket; fill an 8 MiB block with 0xAB; record an IPC event after the fill",
      "cudaMemPoolExportToShareableHandle gives a file descriptor; the socket passes it (SCM_RIGHTS)")
    p:export(path)
    local b = p:alloc(SIZE, s)
    poolsh.fill(b, MINE, s)
    local ready = poolsh.event { ipc = true }
    ready:record(s)

    step("importer (a second poolsh): import the pool, the block and the event; its stream waits on the event, then verifies",
      "the importer reads the exporter's bytes only after the exporter's fill: the IPC event orders them")
    local ok, reserved, used = peer:eval([[
      local path, block, event = ...
      ip = poolsh.import_pool(path)
      s = poolsh.stream()
      ib = ip:import(block, s)
      s:wait(poolsh.import_event(event))
      local st = ip:stats()
      return poolsh.verify(ib, ]] .. MINE .. [[, s), st.reserved, st.used
    ]], path, b:export(), ready:export())
    expect.equal(ok, true, "the importer's verify of 0xAB")
    expect.equal(reserved, 0, "the imported pool's reserved (the block counts in the exporter's pool)")
    expect.equal(used, 0, "the imported pool's used")

    step("importer: allocate 4 KiB from the imported pool",
      "refused: an imported pool cannot allocate (cudaErrorInvalidValue); only the exporter does")
    local refusal = peer:eval("return select(2, pcall(ip.alloc, ip, 4096, s))")
    ctx.say(refusal)
    expect.truthy(tostring(refusal):find("cudaErrorInvalidValue", 1, true), "the imported pool's refusal")

    step("exporter: free the block while the importer still holds it",
      "poolsh refuses: every importer must free first (the driver would let it, and reuse the memory under the importer)")
    local freed, why = pcall(b.free, b)
    ctx.say(tostring(why))
    expect.equal(freed, false, "the exporter's free while imported")
    expect.truthy(tostring(why):find("still imported", 1, true), "the refusal names the rule")

    step("importer: write 0xCD, record its own IPC event, free its import",
      "the import goes; the exporter's block stays allocated in the exporter's pool")
    local finished = peer:eval([[
      poolsh.fill(ib, ]] .. THEIRS .. [[, s)
      finished = poolsh.event{ipc = true}
      finished:record(s)
      ib:free()
      return finished:export()
    ]])
    expect.stats(p, { used = SIZE })

    step("exporter: wait on the importer's event, verify 0xCD, free, synchronise",
      "the importer's write is there; at threshold 0 the sync gives the chunk back, as for any pool")
    s:wait(poolsh.import_event(finished))
    expect.equal(poolsh.verify(b, THEIRS, s), true, "the exporter's verify of the importer's 0xCD")
    b:free()
    s:sync()
    expect.stats(p, { used = 0, reserved = 0 })
    peer:eval("finished = nil; ip:destroy(); s:destroy()")
  end,
}
