--- The child side of poolsh.advise.run's parallel replays (opts.jobs > 1),
-- run by poolsh.spawn(path, file): it receives {confs, max_inflate,
-- streams, max_streams, series}, reads the recording itself, and sends back
-- one point per conf, in order: {conf, status, result, reason, series},
-- or {error = message} when a replay fails otherwise (then it stops).
-- The parent's global options (backend, --limit, --profile) are its own.
local poolsh = require "poolsh"
local replay = require "poolsh.replay"
local compare = require "poolsh.replay.compare"
local advise = require "poolsh.advise"

local file = ...
local parent = assert(poolsh.parent, "poolsh.advise.worker runs in a child of poolsh.spawn")
local job = parent:recv()
local ok, err = pcall(function()
  local rec = advise.shared(replay.read.open(file, { max_inflate = job.max_inflate }))
  local c = compare.new(rec, {}, job.series)
  local opts = { streams = job.streams, max_streams = job.max_streams }
  for _, conf in ipairs(job.confs) do
    local p = advise.point(c, rec, { conf = conf }, opts)
    local label = advise.label(conf)
    parent:send({ conf = conf, status = p.status, result = p.result, reason = p.reason,
                  series = c.series and c.series[label] })
  end
end)
poolsh.reset()
-- a parent that stopped listening (it raised on an earlier point and
-- closed the channel) has nobody to tell: exit quietly
if not ok then pcall(parent.send, parent, { error = tostring(err) }) end
