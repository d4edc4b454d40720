--- Trace exporters: write poolsh's recorded events (docs/trace.md) in
-- formats that other tools open. See docs/export.md.
--   export.save("run.json", poolsh.trace.events(), poolsh.trace.meta())
-- Events are an array, or a function each(fn) that calls fn(event) for
-- every event in order (poolsh.trace.each reads them from C in batches);
-- a writer may walk them more than once. Files are written in chunks.
-- poolsh.trace.save passes a fifth argument, `record`, when the events are
-- poolsh's own record: {count = n, csv = core.trace_csv, regions =
-- core.trace_regions, html = core.trace_html, json = core.trace_json,
-- pickle = core.trace_pickle, cause = poolsh.trace.cause},
-- what a writer may read from the records in C
-- instead of walking the events (the same bytes: tests/spec/formats_spec.lua).
local M = {}

-- Extension -> the module that writes it.
local modules = {
  json = "poolsh.export.chrome",
  csv = "poolsh.export.rmm",
  pickle = "poolsh.export.pytorch",
  html = "poolsh.export.html",
}
local aliases = { chrome = "json", rmm = "csv", pytorch = "pickle" }

--- The formats save() picks by extension.
M.formats = { "json", "csv", "pickle", "html" }

--- Line formats, one event a line after a header, which --trace streams to
-- its file as the run goes (poolsh.trace.start{stream_to = path}): the
-- extension -> the header line. src/trace.c writes the rows.
M.line_formats = { csv = require("poolsh.export.rmm").header }

--- The header of path's line format, nil when path's is not one.
function M.line_header(path)
  local ext = type(path) == "string" and path:match("%.([%w_]+)$")
  return ext and M.line_formats[ext:lower()] or nil
end

local function supported()
  return "." .. table.concat(M.formats, ", .")
end

-- events as a function each(fn) that skips what is not a table.
local function check_events(events, meta)
  if events == nil then events = {} end
  if type(events) ~= "table" and type(events) ~= "function" then
    error("poolsh.export: events must be a table (an array of events), got " .. type(events), 3)
  end
  if meta ~= nil and type(meta) ~= "table" then
    error("poolsh.export: meta must be a table or nil, got " .. type(meta), 3)
  end
  local source = events
  local function each(fn)
    if type(source) == "function" then
      source(function(ev) if type(ev) == "table" then fn(ev) end end)
    else
      for _, ev in ipairs(source) do
        if type(ev) == "table" then fn(ev) end
      end
    end
  end
  return each, meta or {}
end

--- The file's contents for format ("json", "csv", "pickle", "html", or
-- "chrome", "rmm", "pytorch") as a string. Raises on an unknown format.
function M.to_string(format, events, meta)
  local name = aliases[format] or format
  local mod = modules[name]
  if not mod then
    error(string.format("poolsh.export: unknown format '%s' (supported: %s)",
      tostring(format), table.concat(M.formats, ", ")), 2)
  end
  local each
  each, meta = check_events(events, meta)
  local out, text = require("poolsh.export.util").collector()
  require(mod).write(out, each, meta)
  return text()
end

--- Writes events to path in the format its extension names; returns path.
-- Raises naming the extension when it is not .json, .csv, .pickle, .html,
-- and naming the path when the file cannot be written.
function M.save(path, events, meta, record)
  if type(path) ~= "string" then
    error("poolsh.export.save: path must be a string, got " .. type(path), 2)
  end
  local ext = path:match("%.([%w_]+)$")
  local name = ext and ext:lower()
  if not (name and modules[name]) then
    error(string.format("poolsh.export.save: unsupported extension '%s' in '%s' (supported: %s)",
      ext and ("." .. ext) or "(none)", path, supported()), 2)
  end
  local each
  each, meta = check_events(events, meta)
  local f <close> = M.open(path, "poolsh.export.save")
  local out = require("poolsh.export.util").writer(f, path)
  require(modules[name]).write(out, each, meta, record)
  out()
  M.commit(f, "poolsh.export.save")
  return path
end

--- open(path, who) -> a poolsh.AtomicFile (poolsh.core.open_atomic): every
-- file poolsh saves is written to a temporary beside path and renamed over
-- it by commit, so a failed or interrupted save leaves path as it was and
-- a symlink at path is replaced, not followed. Raises "who: cannot open
-- 'path' for writing: why".
function M.open(path, who)
  local ok, f = pcall(require("poolsh.core").open_atomic, path)
  if not ok then error(who .. ": " .. tostring(f), 3) end
  return f
end

--- commit(f, who) -> path: puts f's file in place; raises "who: cannot
-- write 'path': why (nothing was replaced)".
function M.commit(f, who)
  local ok, path = pcall(f.commit, f)
  if not ok then error(who .. ": " .. tostring(path), 3) end
  return path
end

return M
