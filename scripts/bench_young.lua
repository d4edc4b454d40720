-- The sim's young-free search in its worst common case: 100k alloc/free pairs of
-- 4 KiB on a stream holding 5000 young 4 KiB holes (docs/performance.md).
-- Usage: poolsh --backend=sim scripts/bench_young.lua
local p = poolsh.pool{ release_threshold = "max" }
local s = poolsh.stream()
local bs = {}
for i = 1, 10000 do bs[i] = p:alloc(4096, s) end
for i = 1, 10000, 2 do bs[i]:free() end
local t = os.clock()
for _ = 1, 100000 do local b = p:alloc(4096, s); b:free() end
print(("100k pairs with 5000 young holes: %.2f s"):format(os.clock() - t))
for i = 2, 10000, 2 do bs[i]:free() end
poolsh.sync()
