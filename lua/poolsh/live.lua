--- What poolsh shows of the allocator: the REPL's live lines, show(),
-- map(pool), allocation sites, the summary and peaks, and the leak report
-- at exit (docs/live.md). One module per view under poolsh.live.*; this
-- table gathers their functions, and its fields are the settings they all
-- read (poolsh.live.text.settings: color, width, alloc_lines, examples,
-- collected_names, show_max, leak_group).
local text = require "poolsh.live.text"
local watch = require "poolsh.live.watch"
local show = require "poolsh.live.show"
local map = require "poolsh.live.map"
local sites = require "poolsh.live.sites"
local summary = require "poolsh.live.summary"
local leaks = require "poolsh.live.leaks"
local vmm = require "poolsh.live.vmm"
local allocators = require "poolsh.live.allocators"

local M = text.settings

-- shared helpers (poolsh.live.text)
M.objects, M.columns, M.fit, M.rows = text.objects, text.columns, text.fit, text.rows

-- the REPL's live lines (poolsh.live.watch)
M.watch, M.lines, M.after, M.reused_words = watch.watch, watch.lines, watch.after, watch.reused_words

-- show() (poolsh.live.show)
M.show, M.show_lines = show.show, show.show_lines

-- map(pool) (poolsh.live.map)
M.map, M.map_lines, M.granularity = map.map, map.map_lines, map.granularity

-- map(range): VMM ranges (poolsh.live.vmm)
M.range_lines = vmm.range_lines

-- allocation sites (poolsh.live.sites)
M.sites, M.sites_lines = sites.sites, sites.sites_lines

-- summary and scoped peaks (poolsh.live.summary)
M.summary, M.summary_lines, M.peak = summary.summary, summary.summary_lines, summary.peak

-- Lua allocators' own lines (poolsh.live.allocators)
M.register, M.label = allocators.register, allocators.label

-- at exit (poolsh.live.leaks)
M.leaks, M.leak_lines, M.report_leaks = leaks.leaks, leaks.leak_lines, leaks.report_leaks

--- reset(): after poolsh.core.reset(): forgets every pool and count seen,
-- so the next lines show only what comes after.
M.reset = watch.reset

return M
