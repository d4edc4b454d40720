-- Pinned against pageable host memory: copy bandwidth both ways, what
-- pinning costs (cudaHostAlloc, cudaHostRegister of an existing buffer),
-- and why kernels cannot reach pageable memory.
local poolsh = require "poolsh"
local scenario = require "poolsh.scenario"
local timed = scenario.timed

local SIZE = "128 MiB"

local ms = poolsh.fmt_duration

-- Copies src to dst on s once to warm up, then 3 times; returns the best
-- ms of a copy and its sync, and the best ms of the copy call alone.
local function copy_ms(dst, src, s)
  poolsh.copy(dst, src, { stream = s }); s:sync()
  local best, call = math.huge, math.huge
  for _ = 1, 3 do
    local t0 = poolsh.now()
    poolsh.copy(dst, src, { stream = s })
    local t1 = poolsh.now()
    s:sync()
    best, call = math.min(best, poolsh.now() - t0), math.min(call, t1 - t0)
  end
  return best, call
end

return {
  name = "pinned_vs_pageable",
  summary = "pinned copies beat pageable ones both ways and do not block the host; pinning costs ms (cudaHostAlloc, cudaHostRegister); kernels need registered memory",
  run = function(ctx)
    local step, expect = ctx.step, ctx.expect
    local n = poolsh.size(SIZE)
    local function gbps(t) return ("%.1f GB/s"):format(n / t / 1e6) end
    local s = poolsh.stream()
    local d = poolsh.malloc(n)
    local pin, page

    step("allocate " .. SIZE .. " of pinned (cudaHostAlloc) and of pageable (malloc) host memory, timed",
      "cudaHostAlloc locks every page up front; malloc only reserves address space")
    local pin_ms = timed(function() pin = poolsh.pinned(n) end)
    local page_ms = timed(function() page = poolsh.pageable(n) end)
    ctx.say(("cudaHostAlloc %s, malloc %s"):format(ms(pin_ms), ms(page_ms)))
    expect.faster(page_ms, pin_ms, 10, "malloc against cudaHostAlloc")

    step("copy host to device and back: pinned", "DMA straight from locked pages; the copy call returns at once")
    local pin_h2d, pin_h2d_call = copy_ms(d, pin, s)
    local pin_d2h = copy_ms(pin, d, s)
    ctx.say(("H2D %s, D2H %s; the copy call returned after %s"):format(gbps(pin_h2d), gbps(pin_d2h), ms(pin_h2d_call)))

    step("the same copies: pageable", "the driver stages them through its own pinned buffers: slower, and the call blocks the host")
    local page_h2d, page_h2d_call = copy_ms(d, page, s)
    local page_d2h, page_d2h_call = copy_ms(page, d, s)
    ctx.say(("H2D %s, D2H %s; the copy calls returned after %s and %s"):format(gbps(page_h2d), gbps(page_d2h),
      ms(page_h2d_call), ms(page_d2h_call)))
    expect.faster(pin_h2d, page_h2d, 1.5, "pinned H2D against pageable H2D")
    expect.faster(pin_d2h, page_d2h, 1.5, "pinned D2H against pageable D2H")
    expect.faster(pin_h2d_call, page_h2d_call, 10, "the pinned copy call against the pageable one")
    expect.faster(pin_h2d_call, page_d2h_call, 10, "the pinned copy call against the pageable D2H one")

    step("fill the pageable buffer with a kernel", "refused: these GPUs cannot reach pageable memory (pageableMemoryAccess = 0 on the H100s measured: no HMM)")
    local ok, err = pcall(poolsh.fill, page, 7, s)
    ctx.say(tostring(err))
    expect.equal(ok, false, "fill of a pageable buffer succeeded")
    expect.truthy(tostring(err):find("kernels cannot reach", 1, true), "the refusal names the cause")

    step("register the pageable buffer (cudaHostRegister), timed; fill and verify it",
      "its pages are resident (the copies touched them): registering only locks them, cheaper than cudaHostAlloc; kernels now reach it")
    local reg_ms = timed(function() poolsh.register(page) end)
    ctx.say(("cudaHostRegister %s against cudaHostAlloc %s"):format(ms(reg_ms), ms(pin_ms)))
    expect.faster(page_ms, reg_ms, 10, "malloc against cudaHostRegister")
    expect.at_most(reg_ms, pin_ms, "cudaHostRegister of resident pages against cudaHostAlloc (ms)")
    poolsh.fill(page, 7, s)
    expect.equal(poolsh.verify(page, 7, s), true, "verify of the registered buffer")

    step("copy the registered buffer both ways", "pinned speed: registered memory is pinned memory")
    local reg_h2d = copy_ms(d, page, s)
    local reg_d2h = copy_ms(page, d, s)
    ctx.say(("H2D %s, D2H %s"):format(gbps(reg_h2d), gbps(reg_d2h)))
    expect.faster(reg_h2d, page_h2d, 1.5, "registered H2D against pageable H2D")
    expect.faster(reg_d2h, page_d2h, 1.5, "registered D2H against pageable D2H")
    expect.at_most(reg_h2d * 0.8, pin_h2d, "registered H2D x0.8 against pinned H2D (ms)")
    expect.at_most(reg_d2h * 0.8, pin_d2h, "registered D2H x0.8 against pinned D2H (ms)")

    step("register a fresh " .. SIZE .. " pageable buffer, never touched, timed",
      "the system must first fault its pages in: about what cudaHostAlloc costs, several times the resident buffer's")
    local fresh = poolsh.pageable(n)
    local fresh_ms = timed(function() poolsh.register(fresh) end)
    ctx.say(("cudaHostRegister %s (resident pages: %s), cudaHostAlloc %s"):format(ms(fresh_ms), ms(reg_ms), ms(pin_ms)))
    expect.faster(reg_ms, fresh_ms, 1.5, "registering resident pages against fresh ones")
    expect.at_most(fresh_ms, 3 * pin_ms, "cudaHostRegister of fresh pages against 3x cudaHostAlloc (ms)")
    expect.at_most(pin_ms, 3 * fresh_ms, "cudaHostAlloc against 3x cudaHostRegister of fresh pages (ms)")

    step("unregister both, free the pinned buffer, timed", "giving the pages back costs too")
    local unreg_ms = timed(function() poolsh.unregister(page) end)
    poolsh.unregister(fresh)
    local unpin_ms = timed(function() pin:free() end)
    ctx.say(("cudaHostUnregister %s, cudaFreeHost %s"):format(ms(unreg_ms), ms(unpin_ms)))
    fresh:free(); page:free(); d:free()
  end,
}
