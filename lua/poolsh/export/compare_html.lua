--- The `poolsh compare --report` page: one self-contained HTML page (no
-- network: inline CSS and JS) with the comparison's table and, drawn by
-- its script as SVG across the window's width, each allocator's reserved
-- (solid) and used (dashed) bytes over the replay's events, one colour and
-- one dash pattern per allocator; lines that coincide are drawn a few
-- pixels apart and the legend says which coincide; what the recording
-- itself reserved and used at its peak (c.recorded) is drawn as labelled
-- reference lines. The series are poolsh.replay.compare's samples (at most
-- compare.max_points each).
local util = require "poolsh.export.util"
local compare = require "poolsh.replay.compare"

local M = {}

--- One colour per allocator, in the order given (then again).
M.colours = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#e377c2" }

local STYLE = [[
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }
h1 { font-size: 18px; margin: 0 0 8px; }
h2 { font-size: 14px; margin: 14px 0 4px; }
.legend span { margin-right: 14px; white-space: nowrap; display: inline-block; }
.legend i { display: inline-block; width: 18px; height: 0; border-top: 3px solid; vertical-align: middle; margin-right: 4px; }
.legend i.used { border-top-style: dashed; }
svg { display: block; background: #fafafa; border: 1px solid #ddd; max-width: 100%; }
#chart-box { max-width: 100%; }
.scroll { overflow: auto; max-width: 100%; }
#coincide { color: #8a5a00; }
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
  var xmax = 1, ymax = 1, rec = D.recorded || {};
  D.allocators.forEach(function (a) {
    var s = D.series[a.name];
    for (var j = 0; j < s.i.length; j++) {
      if (s.i[j] > xmax) xmax = s.i[j];
      if (s.reserved[j] > ymax) ymax = s.reserved[j];
      if (s.used[j] > ymax) ymax = s.used[j];
    }
  });
  ["peak_reserved", "peak_used"].forEach(function (k) { if (typeof rec[k] === "number" && rec[k] > ymax) ymax = rec[k]; });
  ymax *= 1.04;
  var box = document.getElementById("chart-box");
  W = Math.max(500, Math.floor(box.clientWidth) - 2);
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
  // the recording's own figures: a reference line each, labelled
  [["peak_reserved", "recorded peak reserved"], ["peak_used", "recorded peak used"]].forEach(function (r, j) {
    var v = rec[r[0]];
    if (typeof v !== "number") return;
    el("line", { x1: PAD, x2: W - RIGHT, y1: y(v), y2: y(v), stroke: "#555", "stroke-width": 1.5,
      "stroke-dasharray": j ? "1 3" : "10 3 2 3", "class": "recorded", "data-kind": r[0] }, svg);
    el("text", { x: W - RIGHT - 4, y: y(v) - 4 + (j ? 14 : 0), "text-anchor": "end", "font-size": 11, fill: "#333",
      "class": "recorded-label" }, svg).textContent = r[1] + " " + bytes(v);
  });
  // The value of a series at event i (the last sample at or before i).
  function at(s, kind, i) {
    var lo = 0, hi = s.i.length - 1;
    if (hi < 0 || i < s.i[0]) return 0;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (s.i[mid] <= i) lo = mid; else hi = mid - 1; }
    return s[kind][lo];
  }
  // Lines that coincide: within half a percent of the scale at 400 points across.
  function same(a, b, kind) {
    var sa = D.series[a.name], sb = D.series[b.name];
    for (var k = 0; k <= 400; k++) {
      var i = xmax * k / 400;
      if (Math.abs(at(sa, kind, i) - at(sb, kind, i)) > ymax * 0.005) return false;
    }
    return true;
  }
  var DASH = D.dash;
  var notes = [];
  ["reserved", "used"].forEach(function (kind) {
    var groups = [];
    D.allocators.forEach(function (a) {
      var g = groups.filter(function (g2) { return same(g2[0], a, kind); })[0];
      if (g) g.push(a); else groups.push([a]);
    });
    var alike = [];
    groups.forEach(function (g) {
      // 3 px apart, at most 4 steps (then the dashes tell them apart)
      g.forEach(function (a, j) { a[kind + "_shift"] = (j % 4) * 3; a[kind + "_with"] = g.length > 1 ? g : null; });
      if (g.length > 1) alike.push(g.map(function (a) { return a.name; }).join(" and "));
    });
    if (alike.length) notes.push(kind + " lines that coincide (drawn 3 px apart, each with its own dashes): " +
      alike.join("; "));
  });
  // a step line per allocator and kind: the value holds until the next sample
  D.allocators.forEach(function (a, n) {
    var s = D.series[a.name];
    ["reserved", "used"].forEach(function (kind) {
      var d = [], v = s[kind], dy = a[kind + "_shift"] || 0;
      for (var j = 0; j < s.i.length; j++) {
        if (j === 0) d.push("M" + x(s.i[j]).toFixed(1) + " " + (y(v[j]) - dy).toFixed(1));
        else d.push("H" + x(s.i[j]).toFixed(1) + "V" + (y(v[j]) - dy).toFixed(1));
      }
      var p = el("path", { d: d.join(""), fill: "none", stroke: a.colour, "stroke-width": 2,
        "class": "series", "data-allocator": a.name, "data-kind": kind, "data-points": s.i.length,
        "data-shift": dy }, svg);
      var dash = DASH[kind][n % DASH[kind].length];
      if (dash) p.setAttribute("stroke-dasharray", dash);
      if (a[kind + "_with"]) p.setAttribute("data-coincides", a[kind + "_with"].map(function (b) { return b.name; }).join(" "));
    });
  });
  // many groups (advise's settings): folded under a one-line summary
  var said = notes.join(". "), cbox = document.getElementById("coincide"), groupsSaid = 0;
  notes.forEach(function (t) { groupsSaid += t.split("; ").length; });
  if (said.length > 300) {
    var det = document.createElement("details"), sm = document.createElement("summary");
    sm.textContent = groupsSaid + " groups of lines coincide (drawn 3 px apart, each with its own dashes): which";
    det.appendChild(sm); det.appendChild(document.createTextNode(said)); cbox.appendChild(det);
  } else cbox.textContent = said;
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

local reserved_dash = { "", "12 4", "4 3", "14 3 3 3" }
local used_dash = { "6 4", "2 2", "9 3 1 3", "1 5" }

-- A swatch: a short line in colour with dash pattern.
local function swatch(colour, dash)
  return ('<svg width="30" height="8" style="display:inline;border:0;background:none;vertical-align:middle">'
    .. '<line x1="0" y1="4" x2="30" y2="4" stroke="%s" stroke-width="2"%s/></svg>')
    :format(colour, dash ~= "" and (' stroke-dasharray="' .. dash .. '"') or "")
end

local function legend(allocs, recorded)
  local parts = {}
  for k, a in ipairs(allocs) do
    parts[#parts + 1] = ("<span>%s: %s reserved %s used</span>"):format(escape(a.name),
      swatch(a.colour, reserved_dash[(k - 1) % #reserved_dash + 1]),
      swatch(a.colour, used_dash[(k - 1) % #used_dash + 1]))
  end
  if recorded and recorded.peak_reserved then
    parts[#parts + 1] = "<span>" .. swatch("#555", "10 3 2 3") .. " recorded peak reserved</span>"
  end
  if recorded and recorded.peak_used then
    parts[#parts + 1] = "<span>" .. swatch("#555", "1 3") .. " recorded peak used</span>"
  end
  return '<div class="legend">' .. table.concat(parts)
    .. ' <span class="note">each allocator its own colour and dashes</span></div>\n<p class="note" id="coincide"></p>'
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
  local data = { allocators = allocs, series = series, max_points = compare.max_points, recorded = c.recorded,
    dash = { reserved = reserved_dash, used = used_dash } }
  local title = c.title or ("poolsh compare: %s (%s)"):format(tostring(c.file), tostring(c.backend))
  return table.concat {
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    "<title>", escape(title), "</title>\n<style>", STYLE, "</style>\n</head>\n<body>\n",
    "<h1>", escape(title), "</h1>\n",
    "<h2>Reserved and used over the replay</h2>\n", legend(allocs, c.recorded), "\n",
    '<div id="chart-box"></div>\n<p class="note" id="drawn"></p>\n',
    "<h2>Results</h2>\n", '<div class="scroll">', table_html(c), "</div>\n",
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
