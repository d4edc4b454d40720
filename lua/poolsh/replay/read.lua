--- poolsh.replay.read: opens a recording as a Recording (docs/replay.md),
-- picking the reader by the file's content:
--   gzip or pickle bytes                       -> poolsh.replay.torch
--   a CSV whose header is RMM's (poolsh's .csv
--   traces are RMM logs, docs/export.md)       -> poolsh.replay.rmm
--   JSON (a poolsh .json trace)                -> poolsh.replay.poolsh_trace
local M = {}

--- RMM's logging CSV header (poolsh.export.rmm writes the same).
M.rmm_header = "Thread,Time,Action,Pointer,Size,Stream"

local function fail(fmt, ...) error("poolsh.replay: " .. fmt:format(...), 0) end

--- The file's base name.
function M.basename(path) return (path:match("([^/]+)$") or path) end

-- The reader module `name` names, or an error saying it is missing.
local function reader(name, path)
  local mod = "poolsh.replay." .. name
  if not package.searchpath(mod, package.path) then
    fail("%s: no reader for this format here (%s is not installed)", M.basename(path), mod)
  end
  return require(mod)
end

--- The reader's name for a file that starts with `head`, or nil.
function M.kind(head)
  if head:sub(1, 2) == "\31\139" or head:byte(1) == 0x80 then return "torch" end
  local line = head:gsub("^\239\187\191", ""):match("^([^\r\n]*)")
  if line == M.rmm_header then return "rmm" end
  if head:match("^%s*{") then return "poolsh_trace" end
  return nil
end

--- open(path [, opts]) -> a Recording; opts go to the reader. Raises one
-- line naming the file when it cannot be read or is no known format.
function M.open(path, opts)
  if type(path) ~= "string" then fail("a file name expected, got %s", type(path)) end
  local f, err = io.open(path, "rb")
  if not f then fail("cannot open %s", err) end
  local head = f:read(512) or ""
  f:close()
  if head == "" then fail("%s: the file is empty", M.basename(path)) end
  local kind = M.kind(head)
  if not kind then
    fail("%s: not a recording poolsh reads (a PyTorch snapshot .pickle[.gz], an RMM log .csv, a poolsh trace .json or .csv)",
      M.basename(path))
  end
  local mod = reader(kind, path)
  local rec = (mod.open or mod.read)(path, opts)
  rec.file = rec.file or M.basename(path)
  return rec
end

return M
