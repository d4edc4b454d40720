--- poolsh.allocators.pytorch_conf: PyTorch's PYTORCH_CUDA_ALLOC_CONF (or
-- PYTORCH_ALLOC_CONF) setting, read as PyTorch reads it, so that users can
-- paste theirs (docs/replay.md, PyTorch's allocator settings).
--
--   local conf = require "poolsh.allocators.pytorch_conf"
--   local t = conf.parse("expandable_segments:True,max_split_size_mb:128")
--
-- Syntax (c10's ConfigTokenizer): the characters , : [ ] are tokens of their
-- own, every other run of characters is one token, and all white space is
-- dropped; settings are KEY:VALUE separated by commas, a VALUE a token or a
-- [list]. Keys and the booleans True and False are case-sensitive. poolsh is
-- stricter than PyTorch where PyTorch accepts malformed text (a missing
-- separator, "128abc" for a number): it names what is wrong instead.
--
-- The table returned (sizes in bytes):
--   backend                      "native" or "cudaMallocAsync"
--   expandable_segments          boolean
--   max_split_size               bytes, or nil (no limit)
--   max_non_split_rounding       bytes (default 20 MiB)
--   large_segment_size           bytes (default 20 MiB)
--   roundup_power2_divisions     nil, or {[MiB interval] = divisions} for the
--                                16 intervals 1, 2, 4 ... 32768 (1: below 2 MiB)
--   garbage_collection_threshold nil, or a number in (0, 1)
--   per_process_memory_fraction  nil, or a number in [0, 1]
--   host_only                    {key = value}: the settings that change no
--                                device reservation (pinned host memory, locks)
--   native_specific              the keys given, in order, that PyTorch's CUDA
--                                parser flags as native-only: with
--                                backend:cudaMallocAsync they make it warn
--                                (M.ASYNC_WARNING)
--   text                         the text given
local M = {}

local MiB = 1024 * 1024
local INTERVALS = 16           -- divisions by power-of-2 MiB interval
M.KEYS = {                     -- every key PyTorch knows, in its docs' order
  "backend", "expandable_segments", "max_split_size_mb", "max_non_split_rounding_mb",
  "roundup_power2_divisions", "garbage_collection_threshold", "per_process_memory_fraction",
  "large_segment_size_mb", "release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
  "pinned_num_register_threads", "pinned_use_background_threads",
  "pinned_reserve_segment_size_mb", "graph_capture_record_stream_reuse",
}

-- The keys PyTorch 2.11's CUDAAllocatorConfig::parseArgs marks as
-- used_native_specific_option (the generic keys, max_split_size_mb and the
-- rest, are parsed elsewhere and not marked).
local NATIVE_SPECIFIC = {
  release_lock_on_cudamalloc = true, pinned_use_cuda_host_register = true,
  pinned_num_register_threads = true, pinned_reserve_segment_size_mb = true,
  graph_capture_record_stream_reuse = true, per_process_memory_fraction = true,
}

--- PyTorch's warning for backend:cudaMallocAsync with a native-specific key
-- (its text, spacing included).
M.ASYNC_WARNING = "backend:cudaMallocAsync ignores max_split_size_mb,"
  .. "roundup_power2_divisions, and garbage_collect_threshold."

local function fail(fmt, ...) error("alloc-conf: " .. fmt:format(...), 0) end

-- The tokens of text: separators alone, white space dropped.
local function tokenize(text)
  local tokens, word = {}, {}
  local function flush()
    if #word > 0 then tokens[#tokens + 1] = table.concat(word); word = {} end
  end
  for c in text:gmatch(".") do
    if c == "," or c == ":" or c == "[" or c == "]" then
      flush(); tokens[#tokens + 1] = c
    elseif not c:match("%s") then
      word[#word + 1] = c
    end
  end
  flush()
  return tokens
end

-- Reads the tokens in order; each failure names the key it was reading.
local Reader = {}
Reader.__index = Reader

function Reader:peek() return self.tokens[self.i] end

function Reader:take(what)
  local t = self.tokens[self.i]
  if t == nil then fail("%s expected at the end", what) end
  self.i = self.i + 1
  return t
end

function Reader:expect(sep, key)
  local t = self:take(("'%s' after %s"):format(sep, key))
  if t ~= sep then fail("'%s' expected after %s, got '%s'", sep, key, t) end
end

-- A value token (not a separator).
function Reader:value(key)
  local t = self:take("a value for " .. key)
  if #t == 1 and t:find("[,:%[%]]") then fail("a value expected for %s, got '%s'", key, t) end
  return t
end

local function boolean(key, t)
  if t == "True" then return true elseif t == "False" then return false end
  fail("%s must be True or False, got '%s'", key, t)
end

local function integer(key, t)
  local n = t:match("^%d+$") and math.tointeger(tonumber(t))
  if not n then fail("%s must be a whole number, got '%s'", key, t) end
  return n
end

local function real(key, t)
  local x = t:match("^%d*%.?%d*$") and t ~= "." and tonumber(t)
  if not x then fail("%s must be a number, got '%s'", key, t) end
  return x
end

local function is_pow2(n) return n > 0 and n & (n - 1) == 0 end

-- Megabytes as bytes, at least `least` MiB.
local function megabytes(key, t, least)
  local n = integer(key, t)
  if n < least then fail("%s must be at least %d, got %d", key, least, n) end
  if n > math.maxinteger // MiB then fail("%s is too large: %s", key, t) end
  return n * MiB
end

local function log2(n)
  local k = 0
  while n > 1 do n = n >> 1; k = k + 1 end
  return k
end

-- The divisions for one interval: 0 (off) or a power of 2.
local function divisions(t)
  local d = integer("roundup_power2_divisions", t)
  if d ~= 0 and not is_pow2(d) then
    fail("roundup_power2_divisions must be 0 or a power of 2, got %d", d)
  end
  return d
end

-- [MiB:DIV, ..., >:DIV]: the first entry also sets every interval below
-- it, '>' every interval after the last one named (PyTorch 2.9 and later);
-- a '>' before any named interval sets every one from [2, 4) MiB up, as
-- PyTorch's last_index starts at interval 0 (below 2 MiB keeps 0 unless a
-- named entry follows).
function Reader:division_list()
  local by_index, last = {}, nil
  repeat
    local bound = self:value("roundup_power2_divisions")
    self:expect(":", "roundup_power2_divisions' " .. bound)
    local d = divisions(self:value("roundup_power2_divisions"))
    if bound == ">" then
      for k = (last or 0) + 1, INTERVALS - 1 do by_index[k] = d end
    else
      local mib = integer("roundup_power2_divisions' interval", bound)
      if not is_pow2(mib) then
        fail("roundup_power2_divisions' interval must be a power of 2 MiB, got %s", bound)
      end
      local k = math.min(log2(mib), INTERVALS - 1)
      if last == nil then for j = 0, k - 1 do by_index[j] = d end end
      by_index[k], last = d, k
    end
    local sep = self:take("',' or ']' in roundup_power2_divisions")
    if sep ~= "," and sep ~= "]" then fail("',' or ']' expected in roundup_power2_divisions, got '%s'", sep) end
  until sep == "]"
  local t = {}
  for k = 0, INTERVALS - 1 do t[1 << k] = by_index[k] or 0 end
  return t
end

function Reader:roundup()
  if self:peek() == "[" then
    self.i = self.i + 1
    return self:division_list()
  end
  local d = integer("roundup_power2_divisions", self:value("roundup_power2_divisions"))
  if not is_pow2(d) then fail("roundup_power2_divisions must be a power of 2, got %d", d) end
  local t = {}
  for k = 0, INTERVALS - 1 do t[1 << k] = d end
  return t
end

-- key -> function(reader, settings, key): reads the value into settings.
local READ = {}

function READ.backend(r, s, key)
  local v = r:value(key)
  if v ~= "native" and v ~= "cudaMallocAsync" then
    fail("backend must be native or cudaMallocAsync, got '%s'", v)
  end
  s.backend = v
end
function READ.expandable_segments(r, s, key) s.expandable_segments = boolean(key, r:value(key)) end
function READ.max_split_size_mb(r, s, key) s.max_split_size = megabytes(key, r:value(key), 20) end
function READ.max_non_split_rounding_mb(r, s, key) s.max_non_split_rounding = megabytes(key, r:value(key), 20) end
function READ.large_segment_size_mb(r, s, key) s.large_segment_size = megabytes(key, r:value(key), 20) end
function READ.roundup_power2_divisions(r, s) s.roundup_power2_divisions = r:roundup() end
function READ.garbage_collection_threshold(r, s, key)
  local x = real(key, r:value(key))
  if not (x > 0 and x < 1) then fail("%s must be between 0 and 1 (both excluded), got %s", key, x) end
  s.garbage_collection_threshold = x
end
function READ.per_process_memory_fraction(r, s, key)
  local x = real(key, r:value(key))
  if x > 1 then fail("%s must be between 0 and 1, got %s", key, x) end
  s.per_process_memory_fraction = x
end
local function host_boolean(r, s, key) s.host_only[key] = boolean(key, r:value(key)) end
READ.release_lock_on_cudamalloc = host_boolean
READ.pinned_use_cuda_host_register = host_boolean
READ.pinned_use_background_threads = host_boolean
READ.graph_capture_record_stream_reuse = host_boolean
function READ.pinned_num_register_threads(r, s, key)
  local n = integer(key, r:value(key))
  if not is_pow2(n) then fail("%s must be a power of 2, got %d", key, n) end
  s.host_only[key] = n
end
function READ.pinned_reserve_segment_size_mb(r, s, key)
  local n = integer(key, r:value(key))
  if n == 0 then fail("%s must be above 0", key) end
  s.host_only[key] = n
end

--- The settings of `text` (the table described at the top), or an error
-- naming what is wrong.
function M.parse(text)
  if type(text) ~= "string" then fail("a string expected, got %s", type(text)) end
  if #text > 4096 then fail("%d bytes is too long for a setting", #text) end
  local s = {
    backend = "native", expandable_segments = false,
    max_non_split_rounding = 20 * MiB, large_segment_size = 20 * MiB,
    host_only = {}, native_specific = {}, text = text,
  }
  local r = setmetatable({ tokens = tokenize(text), i = 1 }, Reader)
  while r:peek() ~= nil do
    local key = r:take("a key")
    if #key == 1 and key:find("[,:%[%]]") then fail("a key expected, got '%s'", key) end
    local read = READ[key]
    if not read then
      fail("unknown key '%s' (PyTorch knows: %s)", key, table.concat(M.KEYS, ", "))
    end
    r:expect(":", key)
    read(r, s, key)
    if NATIVE_SPECIFIC[key] then s.native_specific[#s.native_specific + 1] = key end
    local sep = r:peek()
    if sep ~= nil then
      if sep ~= "," then fail("',' expected after %s's value, got '%s'", key, sep) end
      r.i = r.i + 1
    end
  end
  return s
end

return M
