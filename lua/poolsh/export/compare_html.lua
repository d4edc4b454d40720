--- The `poolsh compare --report` page: one self-contained HTML page (no
-- network: inline CSS and JS) with the comparison's table and, drawn by
-- its script as SVG, each allocator's reserved (solid) and used (dashed)
-- bytes over the replay's events, one colour per allocator. The series
-- are poolsh.replay.compare's samples (at most compare.max_points each).
local util = require "poolsh.export.util"
local compare = require "poolsh.replay.compare"

local M = {}

--- One colour per allocator, in the order given (then again).
M.colours = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#e377c2" }

local STYLE = [[
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }
h1 { font-size: 18px; margin: 0 0 8px; }
h2 { font-size: 14px; margin: 14px 0 4px; }
.legend span { margin-right: 14px; }
.legend i { display: inline-block; width: 18px; height: 0; border-top: 3px solid; vertical-align: middle; margin-right: 4px; }
.legend i.used { border-top-style: dashed; }
svg { display: block; background: #fafafa; border: 1px solid #ddd; }
table { border-collapse: collapse; margin-top: 6px; }
th, td { border-bottom: 1px solid #eee; padding: 2px 8px; text-align: left; white-space: nowrap; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #777; }
]]

-- Draws the chart from the embedded data; plain DOM and SVG, no library.
local SCRIPT = [==[
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("poolsh-compare").textContent);
  var W = 1100, H = 360, PAD = 80, RIGHT = 30, TOP = 10, BOTTOM = 30;
  var NS = "http://www.w3.org/2000/svg";
  function bytes(n) {
    var u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + " " + u[i];
  }
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) parent.appendChild(e);
    return e;
  }
  var xmax = 1, ymax = 1;
  D.allocators.forEach(function (a) {
    var s = D.series[a.name];
    for (var j = 0; j < s.i.length; j++) {
      if (s.i[j] > xmax) xmax = s.i[j];
      if (s.reserved[j] > ymax) ymax = s.reserved[j];
      if (s.used[j] > ymax) ymax = s.used[j];
    }
  });
  function x(i) { return PAD + i / xmax * (W - PAD - RIGHT); }
  function y(v) { return H - BOTTOM - v / ymax * (H - TOP - BOTTOM); }
  var svg = el("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, id: "chart" });
  // axes: bytes on the left, events below, "nice" ticks
  function ticks(max, n) {
    var step = Math.pow(10, Math.floor(Math.log10(max / n)));
    if (max / step > 2 * n) step *= 5; else if (max / step > n) step *= 2;
    var t = [];
    for (var v = 0; v <= max; v += step) t.push(v);
    return t;
  }
  var by = ymax >= 1073741824 ? 1073741824 : ymax >= 1048576 ? 1048576 : 1;
  ticks(ymax / by, 5).forEach(function (v) {
    el("line", { x1: PAD, x2: W - RIGHT, y1: y(v * by), y2: y(v * by), stroke: "#e5e5e5" }, svg);
    el("text", { x: PAD - 6, y: y(v * by) + 4, "text-anchor": "end", "font-size": 11, fill: "#555" }, svg)
      .textContent = bytes(v * by);
  });
  ticks(xmax, 8).forEach(function (v) {
    el("line", { x1: x(v), x2: x(v), y1: H - BOTTOM, y2: H - BOTTOM + 4, stroke: "#999" }, svg);
    el("text", { x: x(v), y: H - BOTTOM + 16, "text-anchor": "middle", "font-size": 11, fill: "#555" }, svg)
      .textContent = String(v);
  });
  el("text", { x: W - RIGHT, y: H - BOTTOM - 6, "text-anchor": "end", "font-size": 11, fill: "#555" }, svg)
    .textContent = "events";
  el("line", { x1: PAD, x2: W - RIGHT, y1: H - BOTTOM, y2: H - BOTTOM, stroke: "#999" }, svg);
  // a step line per allocator and kind: the value holds until the next sample
  D.allocators.forEach(function (a) {
    var s = D.series[a.name];
    ["reserved", "used"].forEach(function (kind) {
      var d = [], v = s[kind];
      for (var j = 0; j < s.i.length; j++) {
        if (j === 0) d.push("M" + x(s.i[j]).toFixed(1) + " " + y(v[j]).toFixed(1));
        else d.push("H" + x(s.i[j]).toFixed(1) + "V" + y(v[j]).toFixed(1));
      }
      var p = el("path", { d: d.join(""), fill: "none", stroke: a.colour, "stroke-width": 2,
        "class": "series", "data-allocator": a.name, "data-kind": kind, "data-points": s.i.length }, svg);
      if (kind === "used") p.setAttribute("stroke-dasharray", "6 4");
    });
  });
  document.getElementById("chart-box").appendChild(svg);
  document.getElementById("drawn").textContent =
    D.allocators.length + " allocators drawn, up to " + D.max_points + " points a line";
})();
]==]

local function escape(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

-- The comparison's table as HTML.
local function table_html(c)
  local rows, out = compare.cells(c), { '<table id="results">\n<thead><tr>' }
  for _, h in ipairs(rows[1]) do out[#out + 1] = "<th>" .. escape(h) .. "</th>" end
  out[#out + 1] = "</tr></thead>\n<tbody>\n"
  for k = 2, #rows do
    out[#out + 1] = "<tr>"
    for j, v in ipairs(rows[k]) do
      out[#out + 1] = (j == 1 and "<td>%s</td>" or '<td class="num">%s</td>'):format(escape(v))
    end
    out[#out + 1] = "</tr>\n"
  end
  out[#out + 1] = "</tbody>\n</table>\n"
  return table.concat(out)
end

local function legend(allocs)
  local parts = {}
  for _, a in ipairs(allocs) do
    parts[#parts + 1] = ('<span><i style="border-color:%s"></i><i class="used" style="border-color:%s"></i>%s</span>')
      :format(a.colour, a.colour, escape(a.name))
  end
  return '<div class="legend">' .. table.concat(parts) .. ' <span class="note">solid: reserved, dashed: used</span></div>'
end

--- The page for c (poolsh.replay.compare.run with series = true).
function M.encode(c)
  if type(c) ~= "table" or type(c.series) ~= "table" then
    error("poolsh.export.compare_html: a comparison run with series = true expected", 0)
  end
  local allocs, series = {}, {}
  for k, name in ipairs(c.allocators) do
    allocs[k] = { name = name, colour = M.colours[(k - 1) % #M.colours + 1] }
    series[name] = c.series[name]
  end
  local data = { allocators = allocs, series = series, max_points = compare.max_points }
  local title = c.title or ("poolsh compare: %s (%s)"):format(tostring(c.file), tostring(c.backend))
  return table.concat {
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    "<title>", escape(title), "</title>\n<style>", STYLE, "</style>\n</head>\n<body>\n",
    "<h1>", escape(title), "</h1>\n",
    "<h2>Reserved and used over the replay</h2>\n", legend(allocs), "\n",
    '<div id="chart-box"></div>\n<p class="note" id="drawn"></p>\n',
    "<h2>Results</h2>\n", table_html(c),
    '<p class="note">Peaks, counts and times are the replays\' own; the lines are samples of each',
    " allocator's stats() taken every few events, so a peak between two samples shows in the",
    " table, not always on the line.</p>\n",
    '<script type="application/json" id="poolsh-compare">', util.json(data), "</script>\n",
    "<script>", SCRIPT, "</script>\n</body>\n</html>\n",
  }
end

--- Writes the page to path, as every saved file (poolsh.export.open): a
-- temporary renamed into place. Raises naming path when it cannot.
function M.save(path, c)
  local text = M.encode(c)
  local export = require "poolsh.export"
  local f <close> = export.open(path, "poolsh.export.compare_html")
  f:write(text)   -- a failed write makes the commit raise
  export.commit(f, "poolsh.export.compare_html")
end

return M
