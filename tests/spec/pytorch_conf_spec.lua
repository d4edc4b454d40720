-- poolsh.allocators.pytorch_conf: PYTORCH_CUDA_ALLOC_CONF read as PyTorch
-- reads it (c10's ConfigTokenizer and the allocator configs' checks), and
-- every malformed setting refused with a message naming what is wrong.
require "helpers"
local conf = require "poolsh.allocators.pytorch_conf"

local MiB = 1024 * 1024

local function refused(text, pattern)
  local ok, err = pcall(conf.parse, text)
  assert.is_false(ok, "accepted: " .. tostring(text))
  assert.truthy(tostring(err):find(pattern, 1, true), "message: " .. tostring(err))
  assert.truthy(tostring(err):find("^alloc%-conf: "), "message: " .. tostring(err))
end

-- The 16 intervals' divisions, lowest first.
local function divisions(t)
  local out = {}
  for k = 0, 15 do out[#out + 1] = t.roundup_power2_divisions[1 << k] end
  return out
end

describe("PYTORCH_CUDA_ALLOC_CONF", function()
  it("gives PyTorch's defaults for an empty setting", function()
    local t = conf.parse("")
    assert.equal("native", t.backend)
    assert.is_false(t.expandable_segments)
    assert.is_nil(t.max_split_size)
    assert.equal(20 * MiB, t.max_non_split_rounding)
    assert.equal(20 * MiB, t.large_segment_size)
    assert.is_nil(t.roundup_power2_divisions)
    assert.is_nil(t.garbage_collection_threshold)
    assert.is_nil(t.per_process_memory_fraction)
    assert.same({}, t.host_only)
    assert.same({}, t.native_specific)
  end)

  it("lists the keys PyTorch's CUDA parser marks native-specific, and only those", function()
    assert.same({ "per_process_memory_fraction", "release_lock_on_cudamalloc" },
      conf.parse("max_split_size_mb:128,per_process_memory_fraction:0.5,roundup_power2_divisions:4,"
        .. "garbage_collection_threshold:0.5,release_lock_on_cudamalloc:True").native_specific)
    assert.equal("backend:cudaMallocAsync ignores max_split_size_mb,roundup_power2_divisions, and "
      .. "garbage_collect_threshold.", conf.ASYNC_WARNING)
  end)

  it("reads every device setting, white space anywhere dropped", function()
    local t = conf.parse(" backend : native ,expandable_ segments:True,\tmax_split_size_mb:128,"
      .. "max_non_split_rounding_mb:40, garbage_collection_threshold:0.6,"
      .. "per_process_memory_fraction:0.5, large_segment_size_mb:64,")
    assert.equal("native", t.backend)
    assert.is_true(t.expandable_segments)
    assert.equal(128 * MiB, t.max_split_size)
    assert.equal(40 * MiB, t.max_non_split_rounding)
    assert.equal(0.6, t.garbage_collection_threshold)
    assert.equal(0.5, t.per_process_memory_fraction)
    assert.equal(64 * MiB, t.large_segment_size)
    assert.equal("cudaMallocAsync", conf.parse("backend:cudaMallocAsync").backend)
  end)

  it("accepts max_split_size_mb of exactly 20, PyTorch's least", function()
    assert.equal(20 * MiB, conf.parse("max_split_size_mb:20").max_split_size)
    refused("max_split_size_mb:19", "max_split_size_mb must be at least 20, got 19")
  end)

  it("keeps host-only settings apart: they change no device reservation", function()
    local t = conf.parse("release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:False,"
      .. "pinned_num_register_threads:8,pinned_use_background_threads:True,"
      .. "pinned_reserve_segment_size_mb:64,graph_capture_record_stream_reuse:True")
    assert.same({
      release_lock_on_cudamalloc = true, pinned_use_cuda_host_register = false,
      pinned_num_register_threads = 8, pinned_use_background_threads = true,
      pinned_reserve_segment_size_mb = 64, graph_capture_record_stream_reuse = true,
    }, t.host_only)
    refused("pinned_num_register_threads:6", "pinned_num_register_threads must be a power of 2, got 6")
  end)

  it("reads roundup_power2_divisions as one number for every interval", function()
    assert.same({ 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4 },
      divisions(conf.parse("roundup_power2_divisions:4")))
    refused("roundup_power2_divisions:3", "roundup_power2_divisions must be a power of 2, got 3")
    refused("roundup_power2_divisions:0", "roundup_power2_divisions must be a power of 2, got 0")
  end)

  it("reads the list form: the first entry fills below it, '>' after the last", function()
    -- PyTorch's documented example: [256:1,512:2,1024:4,>:8].
    assert.same({ 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 8, 8, 8, 8, 8 },
      divisions(conf.parse("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]")))
    -- Intervals left out between entries stay off; later entries win.
    assert.same({ 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
      divisions(conf.parse("roundup_power2_divisions:[4:2]")))
    assert.same({ 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
      divisions(conf.parse("roundup_power2_divisions:[1:4,1:8]")))
    assert.same({ 0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4 },
      divisions(conf.parse("roundup_power2_divisions:[1:0,>:4]")))
    -- '>' first fills from [2, 4) MiB up: PyTorch 2.11's last_index starts
    -- at interval 0 (c10/core/AllocatorConfig.cpp), so below 2 MiB stays 0
    -- unless a named entry follows, which then fills below itself as the
    -- first one named.
    assert.same({ 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 },
      divisions(conf.parse("roundup_power2_divisions:[>:2]")))
    assert.same({ 2, 2, 2, 2, 2, 2, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4 },
      divisions(conf.parse("roundup_power2_divisions:[>:4,64:2]")))
    -- an interval past 32 GiB is the last.
    assert.equal(16, divisions(conf.parse("roundup_power2_divisions:[1:1,65536:16]"))[16])
    refused("roundup_power2_divisions:[3:2]", "interval must be a power of 2 MiB, got 3")
    refused("roundup_power2_divisions:[4:3]", "must be 0 or a power of 2, got 3")
    refused("roundup_power2_divisions:[4:2", "',' or ']' in roundup_power2_divisions expected at the end")
    refused("roundup_power2_divisions:[4,2]", "':' expected after roundup_power2_divisions' 4, got ','")
  end)

  it("names an unknown key and the keys PyTorch knows", function()
    refused("expandable_segment:True", "unknown key 'expandable_segment' (PyTorch knows: backend, ")
    refused("Max_split_size_mb:128", "unknown key 'Max_split_size_mb'")
  end)

  it("refuses malformed values and separators, naming the key", function()
    refused("expandable_segments:true", "expandable_segments must be True or False, got 'true'")
    refused("expandable_segments:", "a value for expandable_segments expected at the end")
    refused("expandable_segments", "':' after expandable_segments expected at the end")
    refused("expandable_segments:True:False", "',' expected after expandable_segments's value, got ':'")
    refused("expandable_segments,True", "':' expected after expandable_segments, got ','")
    refused("max_split_size_mb:128abc", "max_split_size_mb must be a whole number, got '128abc'")
    refused("max_split_size_mb:-1", "max_split_size_mb must be a whole number, got '-1'")
    refused("max_split_size_mb:99999999999999999999", "max_split_size_mb must be a whole number")
    refused("max_split_size_mb:9999999999999", "max_split_size_mb is too large")
    refused("garbage_collection_threshold:1", "must be between 0 and 1 (both excluded), got 1")
    refused("garbage_collection_threshold:0", "got 0")
    refused("garbage_collection_threshold:x", "garbage_collection_threshold must be a number, got 'x'")
    refused("garbage_collection_threshold:.", "must be a number, got '.'")
    refused("per_process_memory_fraction:1.5", "per_process_memory_fraction must be between 0 and 1, got 1.5")
    refused("backend:async", "backend must be native or cudaMallocAsync, got 'async'")
    refused(",expandable_segments:True", "a key expected, got ','")
    refused(("x"):rep(5000), "too long")
    refused(42, "a string expected, got number")
  end)

  it("takes every key PyTorch documents and nothing else", function()
    local seen = {}
    for _, key in ipairs(conf.KEYS) do
      assert.is_nil(seen[key]); seen[key] = true
    end
    assert.equal(14, #conf.KEYS)
  end)
end)
