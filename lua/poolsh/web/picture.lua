--- poolsh.web.picture: the live memory-map picture's data (docs/web.md,
-- "The picture"), for the playground's pane and `poolsh --view`. The
-- picture is issue 22's memory map (lua/poolsh/export/html.lua) drawn by
-- the one renderer, lua/poolsh/web/picture.js, from the event rows of a
-- recording: the first time the picture is wanted it starts a ring
-- recording (poolsh.trace.start{max_events = picture.max_events}) unless
-- one runs already; a snapshot holds the last picture.window events, and
-- the blocks that are live or pending now but were allocated before them
-- (from poolsh.core.blocks, the ledger's truth) as rows at its start.
local core = require "poolsh.core"
local naming = require "poolsh.naming"

local picture = {}

--- Events the ring the picture starts keeps.
picture.max_events = 4096

--- Events a snapshot holds at most (the newest).
picture.window = 600

--- Blocks allocated before the window a snapshot holds at most (the
-- largest first).
picture.max_before = 1000

--- Pools a snapshot holds at most (the newest), and blocks it lists for
-- each (in address order; count says how many there are).
picture.max_pools = 32
picture.max_listed = 256

--- Blocks of a pool the picture reads at most (the lowest addresses; the
-- picture says when a pool has more): what bounds a snapshot's work.
picture.max_read = 20000

--- The colour of what the last statement did (an outline).
picture.now_colour = "#111111"

-- What the picture knows between calls: whether it started the recording,
-- the key of the last state seen, its version, and the events counted at
-- the last two changes (the last statement's events lie between them).
local state = { ours = false, wanted = false, key = nil, version = 0, total = 0, before = 0, cleared = false }

-- The events recorded since the last clear, kept or not, and the count kept.
local function totals()
  local n, dropped = core.trace_count()
  local _, written = core.trace_streaming()
  return n + dropped + (written or 0), n, dropped + (written or 0)
end

-- Starts the ring once, when the picture is first wanted and nothing is
-- being recorded or was recorded.
local function want()
  if state.wanted then return end
  state.wanted = true
  if not core.trace_recording() and totals() == 0 then
    local trace = require "poolsh.trace"
    trace.start { max_events = picture.max_events }
    state.ours, state.start = true, trace.starts
  end
end

-- A cheap key of the names given: changes when one is given or changed.
local function names_key()
  local count, len = 0, 0
  for _, kind in pairs(naming.all()) do
    for _, name in pairs(kind) do
      count, len = count + 1, len + #tostring(name)
      if count > 10000 then return "many" end
    end
  end
  return count .. "/" .. len
end

-- Moves the version on when the state changed since the last call.
local function refresh()
  want()
  local total, n = totals()
  local recording = core.trace_recording()
  local trace = require "poolsh.trace"
  if state.ours and (not recording or trace.starts ~= state.start) then
    state.ours = false            -- stopped, or the user started their own: theirs from now on
  elseif state.ours and n > picture.max_events then
    -- poolsh.reset() records on without a bound: the ring the picture
    -- started stays bounded
    trace.start { max_events = picture.max_events }
    state.start = trace.starts
    total, n = totals()
  end
  local key = { total, n, recording and 1 or 0, names_key() }
  local pools = core.objects()
  table.sort(pools, function(a, b) return a.id > b.id end)   -- (a stable key: the newest, as drawn)
  for i, p in ipairs(pools) do       -- what no event says: a free not recorded
    if i > 64 then break end
    local st = p:stats { estimates = false }
    key[#key + 1] = p.id .. "=" .. st.reserved .. "/" .. st.used .. "/" .. st.pending
  end
  key = table.concat(key, ":")
  if key ~= state.key then
    if total < state.total then state.cleared = true end
    state.key, state.version = key, state.version + 1
    state.before, state.total = math.min(state.total, total), total
  end
end

--- picture.version() -> an integer that increases whenever the picture
-- changed (so a poller can skip unchanged ones); starts the recording
-- the picture draws from if it is not yet started.
function picture.version()
  refresh()
  return state.version
end

-- What the picture says about its recording and what it left out (nil:
-- nothing to say).
local function status(recording, pools_left, unread)
  if unread and unread > 0 then
    local said = ("%d blocks past the lowest %d of a pool are not read: the picture may miss some of its blocks")
      :format(unread, picture.max_read)
    local more = status(recording, pools_left)
    return more and said .. "; " .. more or said
  end
  if pools_left > 0 then
    local said = ("%d older live pool%s not drawn: the picture shows the newest %d"):format(pools_left,
      pools_left == 1 and " is" or "s are", picture.max_pools)
    local more = status(recording, 0)
    return more and said .. "; " .. more or said
  end
  if not recording then
    return "the recording the picture draws from is stopped (poolsh.trace.stop()): the map shows what was "
      .. "recorded until then; poolsh.trace.start{max_events = " .. picture.max_events .. "} draws again"
  elseif state.cleared then
    return "the recording was cleared (poolsh.trace.clear() or poolsh.reset()): the map's history starts there"
  end
  return nil
end

local function null_to_nil(v) if v == nil or v == require("cjson").null then return nil end return v end

-- Rows at the window's start for the blocks allocated before it: those
-- the window frees and those core.blocks says are live or pending now;
-- -> rows, how many were left out (past picture.max_before).
local function before_rows(rows, pools, first_seq, first_t)
  local null = require("cjson").null
  local allocated, freed, seen, want_rows = {}, {}, {}, {}
  for _, r in ipairs(rows) do
    local op, buf = r[3], null_to_nil(r[10])
    if buf then
      if op == "alloc" then allocated[buf] = true
      elseif (op == "free" or op == "free_completed") and not allocated[buf] and not seen[buf] then
        seen[buf] = true
        want_rows[#want_rows + 1] = { buf = buf, addr = null_to_nil(r[11]), size = null_to_nil(r[12]) or 0,
          pool = null_to_nil(r[5]), stream = null_to_nil(r[4]) }
      end
      if op == "free" then freed[buf] = true end
    end
  end
  for _, p in ipairs(pools) do
    for _, b in ipairs(p.truth) do
      local buf = b.buffer
      if buf and not allocated[buf] and not seen[buf] then
        seen[buf] = true
        want_rows[#want_rows + 1] = { buf = buf, addr = string.format("0x%x", b.addr), size = b.size,
          pool = p.id, stream = b.stream, pending = b.pending and not freed[buf] }
      end
    end
  end
  local left = 0
  if #want_rows > picture.max_before then
    table.sort(want_rows, function(a, b) return a.size > b.size end)
    left = #want_rows - picture.max_before
    for i = #want_rows, picture.max_before + 1, -1 do want_rows[i] = nil end
  end
  table.sort(want_rows, function(a, b) return a.buf < b.buf end)
  local out = {}
  for _, w in ipairs(want_rows) do
    if w.addr and w.pool then
      local name = naming.of("buffer", w.buf)
      out[#out + 1] = { first_seq, first_t, "alloc", w.stream or null, w.pool, null, null, "alloc " .. name, null,
        w.buf, w.addr, w.size, null, null, null, "kind=pool before=true" }
      if w.pending then
        out[#out + 1] = { first_seq, first_t, "free", w.stream or null, w.pool, null, null, "free " .. name, null,
          w.buf, w.addr, w.size, null, null, w.size, "before=true" }
      end
    end
  end
  return out, left
end

-- The live pools (the newest picture.max_pools): id, name, counters and
-- core.blocks' blocks (the lowest picture.max_read of them, and their
-- count); how many were left out, and the ids of those (a set).
local function live_pools()
  local out = {}
  local pools = core.objects()
  table.sort(pools, function(a, b) return a.id > b.id end)
  local left, unlisted = math.max(0, #pools - picture.max_pools), {}
  for i = #pools, picture.max_pools + 1, -1 do unlisted[pools[i].id], pools[i] = true, nil end
  table.sort(pools, function(a, b) return a.id < b.id end)
  for _, p in ipairs(pools) do
    local st = p:stats { estimates = false }
    local truth, _, count = core.blocks(p, false, picture.max_read)
    out[#out + 1] = { id = p.id, name = naming.of("pool", p.id), reserved = st.reserved, used = st.used,
      pending = st.pending, truth = truth, count = count }
  end
  return out, left, unlisted
end

--- picture.snapshot() -> a JSON string: everything PoolshPicture.draw
-- needs to draw the session's picture now: version, status (a line, or
-- null), rows (issue 22's event rows: the blocks from before the window,
-- then the last picture.window events), now (the index, from 0, of the
-- first row of the last change's events), left_out (older events not in
-- it), pools ({id, name, reserved, used, pending, blocks = {{name, addr,
-- size, state = "live" | "pending", stream}}}, from poolsh.core.blocks),
-- pools_named and streams (id -> name), colours, stream_colours,
-- max_blocks. Bounded whatever the session did: picture.window events,
-- picture.max_before blocks from before them, picture.max_pools pools
-- of picture.max_listed blocks listed each (the *_left_out fields and
-- each pool's count say what was left out).
function picture.snapshot()
  refresh()
  local cjson = require "cjson"
  local html = require "poolsh.export.html"
  local trace = require "poolsh.trace"
  local total, n, gone = totals()
  local recording = core.trace_recording()
  local from = math.max(1, n - picture.window + 1)
  local rows = {}
  if n > 0 then
    rows = cjson.decode("[" .. core.trace_html(from, n, naming.all(), {}, trace.cause) .. "]")
    for _, r in ipairs(rows) do      -- (cjson reads numbers as floats: ids and seqs back to integers)
      for _, i in ipairs { 1, 4, 5, 10 } do r[i] = math.tointeger(r[i]) or r[i] end
    end
  end
  if from > 1 or gone > 0 then state.cleared = false end   -- the window no longer reaches back to the clear
  local first_seq, first_t = rows[1] and rows[1][1] or total, rows[1] and rows[1][2] or 0
  local pools, pools_left, unlisted = live_pools()
  if pools_left > 0 then           -- a live pool left out is not drawn from its rows either
    local kept = {}
    for _, r in ipairs(rows) do
      if not unlisted[null_to_nil(r[5])] then kept[#kept + 1] = r end
    end
    rows = kept
  end
  local early, left = before_rows(rows, pools, first_seq, first_t)
  local all = {}
  for _, r in ipairs(early) do all[#all + 1] = r end
  local now = nil
  for _, r in ipairs(rows) do
    all[#all + 1] = r
    if not now and r[1] > state.before then now = #all - 1 end
  end
  local streams, named = {}, {}
  for _, r in ipairs(all) do
    local s, p = null_to_nil(r[4]), null_to_nil(r[5])
    if s then streams[tostring(s)] = naming.of("stream", s) end
    if p then named[tostring(p)] = naming.of("pool", p) end
  end
  local out_pools, unread = {}, 0
  local truth_max = picture.max_listed
  for _, p in ipairs(pools) do
    named[tostring(p.id)] = p.name
    local blocks = {}
    for i, b in ipairs(p.truth) do
      if i > truth_max then break end
      blocks[i] = { name = b.buffer and naming.of("buffer", b.buffer) or cjson.null, addr = string.format("0x%x", b.addr),
        size = b.size, state = b.pending and "pending" or "live",
        stream = b.stream and naming.of("stream", b.stream) or cjson.null }
    end
    out_pools[#out_pools + 1] = { id = p.id, name = p.name, reserved = p.reserved, used = p.used,
      pending = p.pending, count = p.count, blocks = setmetatable(blocks, cjson.array_mt) }
    unread = unread + math.max(0, p.count - #p.truth)
  end
  local colours = {}
  for k, v in pairs(html.colours) do colours[k] = v end
  colours.now = picture.now_colour
  return cjson.encode {
    version = state.version, status = status(recording, pools_left, unread) or cjson.null, recording = recording,
    started_by_picture = state.ours, rows = setmetatable(all, cjson.array_mt), now = now or cjson.null,
    left_out = (from - 1) + gone, before_left_out = left, pools_left_out = pools_left, events = total,
    pools = setmetatable(out_pools, cjson.array_mt), pools_named = named, streams = streams,
    colours = colours, stream_colours = html.stream_colours, max_blocks = html.max_blocks,
    window = picture.window,
  }
end

--- picture.dir() -> the directory of the picture's files (where
-- package.searchpath finds poolsh.web.picture: the source tree,
-- POOLSH_LUA_DIR, an install, the page's file system).
function picture.dir()
  local path = package.searchpath("poolsh.web.picture", package.path)
  if not path then error("poolsh.web.picture: cannot find the picture's files on package.path", 2) end
  return (path:match("^(.*)[/\\][^/\\]*$") or ".")
end

--- picture.read(name) -> the text of one of the picture's files
-- ("picture.js", "picture.css", "view.html").
function picture.read(name)
  if type(name) ~= "string" or not name:match("^[%w_]+%.%a+$") then
    error("poolsh.web.picture.read: a file name expected (picture.js, picture.css or view.html), got "
      .. tostring(name), 2)
  end
  local path = picture.dir() .. "/" .. name
  local f, err = io.open(path, "rb")
  if not f then error("poolsh.web.picture: cannot read " .. name .. ": " .. tostring(err), 2) end
  local s = f:read("a")
  f:close()
  return s
end

--- picture.page_files() -> {["view.html"] = text, ["picture.js"] = text,
-- ["picture.css"] = text}: the files of `poolsh --view`'s page.
function picture.page_files()
  return { ["view.html"] = picture.read("view.html"), ["picture.js"] = picture.read("picture.js"),
           ["picture.css"] = picture.read("picture.css") }
end

--- picture.forget(): forgets what the picture knew (a fresh session:
-- the next want starts a recording again).
function picture.forget()
  state = { ours = false, wanted = false, key = nil, version = state.version, total = 0, before = 0, cleared = false }
end

return picture
