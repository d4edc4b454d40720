--- One self-contained HTML page (no network: inline CSS and JS) that shows
-- a trace: per pool, reserved, used and pending over time; a lane per
-- stream with device work drawn from its start for its duration, allocs and
-- frees as ticks; zoom (wheel, buttons) and pan (drag) over time; and a
-- paged table of the events with their source locations. The events travel
-- as JSON rows in a <script>, written one row at a time; the page draws on
-- canvases, a pixel column at a time, so 10^6 events render.
local util = require "poolsh.export.util"

local M = {}

--- The colours the page draws with (the spec looks for them on screen).
M.colours = {
  reserved = "#1f77b4", used = "#d62728", pending = "#ff7f0e",
  kernel = "#2ca02c", copy = "#9467bd", alloc = "#17becf", free = "#8c564b",
}

--- Rows of the event table per page.
M.page_rows = 200

local quote, number = util.quote, util.number

-- The fields the table's details column lists.
local details = { "rule", "kind", "reused_from", "cause", "event", "dst", "src_buffer",
  "name", "value", "location", "default", "dur_estimated", "collected" }

local function num(v) return type(v) == "number" and number(v) or "null" end
local function str(v) return v ~= nil and quote(tostring(v)) or "null" end

-- One event as a JSON array: seq, t, op, stream, pool, start, dur, label,
-- src, buffer, addr, size, reserved, used, pending, details.
local function row(ev, t, start, dur, meta)
  local d = {}
  for _, k in ipairs(details) do
    if ev[k] ~= nil then d[#d + 1] = k .. "=" .. tostring(ev[k]) end
  end
  return table.concat({ "[", num(ev.seq), ",", number(t), ",", str(ev.op), ",", num(ev.stream), ",",
    num(ev.pool), ",", num(start), ",", num(dur), ",", quote(util.label(ev, meta)), ",", str(ev.src), ",",
    num(ev.buffer), ",", str(util.hex(ev.addr)), ",", num(ev.size), ",", num(ev.reserved), ",",
    num(ev.used), ",", num(ev.pending), ",", str(#d > 0 and table.concat(d, " ") or nil), "]" })
end

-- meta.notes, {{t = ms, text = ...}, ...} (narration), checked and copied.
local function notes(meta)
  local out = {}
  for i, n in ipairs(meta.notes or {}) do
    if type(n) ~= "table" or type(n.t) ~= "number" or type(n.text) ~= "string" then
      error("poolsh.export.html: meta.notes[" .. i .. "] must be {t = ms, text = string}", 0)
    end
    out[i] = { t = n.t, text = n.text }
  end
  return out[1] and out or nil
end

local function escape(s)
  return (s:gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

-- The notes as a list above the timeline; a note links to its time.
local function notes_list(meta)
  local items = {}
  for _, n in ipairs(notes(meta) or {}) do
    items[#items + 1] = ('<li><a href="#t=%s,%s">%s ms</a> %s</li>\n'):format(number(n.t), number(n.t + 1e-3),
      number(n.t), escape(n.text))
  end
  return #items > 0 and ('<h2>Steps</h2>\n<ol id="notes">\n' .. table.concat(items) .. "</ol>\n") or ""
end

-- The page's header data: title, lane and pool names, colours, notes.
local function header(meta)
  local streams, pools = {}, {}
  for id in pairs(meta.streams or {}) do streams[tostring(id)] = util.stream_name(meta, id) end
  for id in pairs(meta.pools or {}) do pools[tostring(id)] = util.pool_name(meta, id) end
  local dev = meta.device or {}
  return {
    title = string.format("poolsh trace (%s%s)", tostring(meta.backend or "?"),
      dev.name and (", " .. tostring(dev.name)) or ""),
    streams = streams, pools = pools, colours = M.colours, page_rows = M.page_rows,
    notes = notes(meta),
  }
end

local STYLE = [[
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }
h1 { font-size: 18px; margin: 0 0 8px; }
h2 { font-size: 14px; margin: 14px 0 4px; }
.legend span { margin-right: 14px; }
.legend i { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin-right: 4px; }
canvas { display: block; background: #fafafa; border: 1px solid #ddd; cursor: grab; }
.controls button { margin-right: 6px; }
table { border-collapse: collapse; margin-top: 6px; }
th, td { border-bottom: 1px solid #eee; padding: 2px 8px; text-align: left; white-space: nowrap; }
th { background: #f0f0f0; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #777; }
]]

-- Draws everything from the embedded data; plain DOM and canvas, no library.
local SCRIPT = [==[
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("poolsh-data").textContent);
  var R = JSON.parse(document.getElementById("poolsh-rows").textContent);
  var C = D.colours, W = 1100, PAD = 80, RIGHT = 10;
  var SEQ = 0, T = 1, OP = 2, ST = 3, PO = 4, START = 5, DUR = 6, LABEL = 7, SRC = 8,
      BUF = 9, ADDR = 10, SIZE = 11, RES = 12, USED = 13, PEND = 14, DET = 15;
  document.getElementById("title").textContent = D.title;

  function bytes(n) {
    var u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + " " + u[i];
  }

  // The whole time range, in loops (no Math.max.apply: it overflows the stack).
  var t0 = Infinity, t1 = -Infinity, i, r;
  for (i = 0; i < R.length; i++) {
    r = R[i];
    if (r[T] < t0) t0 = r[T];
    var end = (r[START] !== null ? r[START] : r[T]) + (r[DUR] !== null ? r[DUR] : 0);
    if (end > t1) t1 = end;
    if (r[T] > t1) t1 = r[T];
  }
  if (!R.length) { t0 = 0; t1 = 1; }
  if (t1 <= t0) t1 = t0 + 1;
  var view = { a: t0, b: t1 };

  // Per pool, its counters after each event that moves them: [t, reserved, used, pending].
  var pools = {}, order = [];
  for (i = 0; i < R.length; i++) {
    r = R[i];
    if (r[PO] === null) continue;
    var k = String(r[PO]), p = pools[k];
    if (!p) { p = pools[k] = { last: [0, 0, 0], pts: [] }; order.push(k); }
    var moved = false;
    [RES, USED, PEND].forEach(function (f, j) { if (r[f] !== null) { p.last[j] = r[f]; moved = true; } });
    if (r[OP] === "free_completed" && r[PEND] === null && r[SIZE] !== null) {
      p.last[2] = Math.max(0, p.last[2] - r[SIZE]); moved = true;
    }
    if (moved) p.pts.push([r[T], p.last[0], p.last[1], p.last[2]]);
  }

  var lanes = {}, laneIds = [];
  Object.keys(D.streams).forEach(function (id) { lanes[id] = D.streams[id]; });
  for (i = 0; i < R.length; i++) {
    if (R[i][ST] !== null && lanes[String(R[i][ST])] === undefined) lanes[String(R[i][ST])] = "s" + R[i][ST];
  }
  laneIds = Object.keys(lanes).sort(function (a, b) { return a - b; });

  function x(t) { return PAD + (t - view.a) / (view.b - view.a) * (W - PAD - RIGHT); }
  function tAt(px) { return view.a + (px - PAD) / (W - PAD - RIGHT) * (view.b - view.a); }

  function canvas(parent, h, cls) {
    var c = document.createElement("canvas");
    c.width = W; c.height = h; c.className = cls;
    parent.appendChild(c);
    return c;
  }

  // A time axis with "nice" ticks and labels in ms.
  function axis(g, h) {
    g.fillStyle = "#999"; g.fillRect(PAD, h - 18, W - PAD - RIGHT, 1);
    var span = view.b - view.a, step = Math.pow(10, Math.floor(Math.log10(span / 6)));
    if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
    g.fillStyle = "#555"; g.font = "11px sans-serif"; g.textAlign = "center";
    for (var t = Math.ceil(view.a / step) * step; t <= view.b; t += step) {
      var px = Math.round(x(t));
      g.fillRect(px, h - 18, 1, 4);
      var digits = Math.max(0, Math.min(6, -Math.floor(Math.log10(step))));
      g.fillText(t.toFixed(digits) + " ms", px, h - 4);
    }
  }

  var charts = [], H = 170, LH = 28;
  var poolsDiv = document.getElementById("pools");
  if (!order.length) poolsDiv.textContent = "No pool counters in this trace.";
  order.forEach(function (k) {
    var p = pools[k], max = 1, peak = 0;
    p.pts.forEach(function (q) { max = Math.max(max, q[1], q[2], q[3]); peak = Math.max(peak, q[1]); });
    var h2 = document.createElement("h2");
    h2.textContent = (D.pools[k] || "p" + k) + " (peak reserved " + bytes(peak) + ")";
    poolsDiv.appendChild(h2);
    var c = canvas(poolsDiv, H, "pool-chart");
    c.setAttribute("data-pool", D.pools[k] || "p" + k);
    charts.push({ c: c, p: p, max: max });
  });
  document.getElementById("streams").appendChild(document.createElement("div"));
  var lanesCanvas = canvas(document.getElementById("streams"), laneIds.length * LH + 24, "lanes");
  lanesCanvas.id = "lanes";

  // Step lines, one pixel column at a time: each column draws the range
  // its points span, so a million points cost one pass.
  function drawChart(ch) {
    var g = ch.c.getContext("2d"), top = 10, bottom = H - 24;
    g.clearRect(0, 0, W, H);
    function y(v) { return Math.round(bottom - v / ch.max * (bottom - top)); }
    g.fillStyle = "#555"; g.font = "11px sans-serif"; g.textAlign = "left";
    g.fillText(bytes(ch.max), 4, top + 8); g.fillText("0 B", 4, bottom);
    [["reserved", 1], ["used", 2], ["pending", 3]].forEach(function (f) {
      g.fillStyle = C[f[0]];
      var pts = ch.p.pts, j = 0, yp = y(0);
      while (j < pts.length && pts[j][0] < view.a) yp = y(pts[j++][f[1]]);
      var col = PAD, lo = yp, hi = yp;
      for (; j < pts.length && pts[j][0] <= view.b; j++) {
        var px = Math.round(x(pts[j][0]));
        if (px > col) {
          g.fillRect(col, lo - 1, 3, hi - lo + 3);
          g.fillRect(col, yp - 1, px - col, 3);
          col = px; lo = hi = yp;
        }
        yp = y(pts[j][f[1]]);
        lo = Math.min(lo, yp); hi = Math.max(hi, yp);
      }
      g.fillRect(col, lo - 1, 3, hi - lo + 3);
      g.fillRect(col, yp - 1, W - RIGHT - col, 3);
    });
    axis(g, H);
  }

  // Device work as bars from start for dur, allocs as ticks above them and
  // frees below; anything narrower than a pixel still shows.
  function drawLanes() {
    var g = lanesCanvas.getContext("2d"), h = lanesCanvas.height, lane = {};
    g.clearRect(0, 0, W, h);
    g.font = "11px sans-serif"; g.textAlign = "left";
    laneIds.forEach(function (id, j) {
      lane[id] = j * LH + 4;
      g.fillStyle = "#555"; g.fillText(lanes[id], 4, j * LH + 20);
      g.fillStyle = "#e5e5e5"; g.fillRect(PAD, j * LH + LH + 2, W - PAD - RIGHT, 1);
    });
    var kinds = { fill: "kernel", touch: "kernel", verify: "kernel", spin: "kernel", copy: "copy",
      alloc: "alloc", free: "free", free_completed: "free" };
    for (var j = 0; j < R.length; j++) {
      var e = R[j], kind = kinds[e[OP]];
      if (!kind || e[ST] === null) continue;
      var y0 = lane[String(e[ST])];
      if (kind === "kernel" || kind === "copy") {
        var s = e[START] !== null ? e[START] : e[T], d = e[DUR] !== null ? e[DUR] : 0;
        if (s + d < view.a || s > view.b) continue;
        var xa = Math.max(PAD, Math.round(x(s))), xb = Math.min(W - RIGHT, Math.round(x(s + d)));
        g.fillStyle = C[kind]; g.fillRect(xa, y0 + 5, Math.max(3, xb - xa), 12);
      } else {
        if (e[T] < view.a || e[T] > view.b) continue;
        g.fillStyle = C[kind];
        g.fillRect(Math.round(x(e[T])) - 1, y0 + (kind === "alloc" ? 0 : 18), 3, 4);
      }
    }
    // Notes: a labelled dashed line at each note's time.
    g.fillStyle = g.strokeStyle = "#444"; g.setLineDash([3, 3]);
    (D.notes || []).forEach(function (n) {
      if (n.t < view.a || n.t > view.b) return;
      var px = Math.round(x(n.t)) + 0.5;
      g.beginPath(); g.moveTo(px, 0); g.lineTo(px, h - 16); g.stroke();
      g.fillText(n.text.split(" ")[0], px + 2, 10);
    });
    g.setLineDash([]);
    axis(g, h);
  }

  function draw() {
    charts.forEach(drawChart);
    drawLanes();
    document.getElementById("range").textContent =
      view.a.toFixed(4) + " ms to " + view.b.toFixed(4) + " ms";
  }

  // Zoom around a time by a factor; pan by a time; never past the trace.
  function zoom(at, f) {
    var span = Math.max((view.b - view.a) * f, (t1 - t0) * 1e-9);
    view.a = at - (at - view.a) * span / (view.b - view.a);
    view.b = view.a + span;
    clamp();
  }
  function clamp() {
    var span = Math.min(view.b - view.a, t1 - t0);
    if (view.a < t0) view.a = t0;
    if (view.a + span > t1) view.a = t1 - span;
    view.b = view.a + span;
  }
  document.getElementById("zoom-in").onclick = function () { zoom((view.a + view.b) / 2, 0.5); draw(); };
  document.getElementById("zoom-out").onclick = function () { zoom((view.a + view.b) / 2, 2); draw(); };
  document.getElementById("zoom-reset").onclick = function () { view.a = t0; view.b = t1; draw(); };
  var drag = null;
  charts.map(function (ch) { return ch.c; }).concat([lanesCanvas]).forEach(function (c) {
    c.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      zoom(tAt(ev.offsetX), ev.deltaY < 0 ? 0.8 : 1.25); draw();
    });
    c.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, a: view.a, b: view.b }; });
  });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var dt = (ev.clientX - drag.x) / (W - PAD - RIGHT) * (drag.b - drag.a);
    view.a = drag.a - dt; view.b = drag.b - dt; clamp(); draw();
  });
  window.addEventListener("mouseup", function () { drag = null; });

  // The events, a page at a time, with their source locations.
  var page = 0, pages = Math.max(1, Math.ceil(R.length / D.page_rows));
  function showPage() {
    var body = document.getElementById("events");
    body.textContent = "";
    var first = page * D.page_rows, last = Math.min(R.length, first + D.page_rows);
    for (var j = first; j < last; j++) {
      var e = R[j], tr = document.createElement("tr");
      tr.className = "ev";
      [e[SEQ], e[T].toFixed(4), e[OP], e[SRC], e[ST], e[PO], e[BUF] !== null ? "b" + e[BUF] : "",
       e[START] !== null ? e[START].toFixed(4) : "", e[DUR] !== null ? e[DUR].toFixed(4) : "",
       e[ADDR], e[SIZE] !== null ? bytes(e[SIZE]) : "",
       e[RES] !== null ? bytes(e[RES]) : "", e[USED] !== null ? bytes(e[USED]) : "",
       e[PEND] !== null ? bytes(e[PEND]) : "", e[DET]]
        .forEach(function (v, c) {
          var td = document.createElement("td");
          td.textContent = v === undefined || v === null ? "" : String(v);
          if (c <= 1 || (c >= 7 && c <= 13)) td.className = "num";
          tr.appendChild(td);
        });
      body.appendChild(tr);
    }
    document.getElementById("count").textContent = R.length > D.page_rows
      ? "events " + (first + 1) + " to " + last + " of " + R.length + " events (page " + (page + 1) + " of " + pages + ")"
      : R.length + " events";
  }
  document.getElementById("prev").onclick = function () { if (page > 0) { page--; showPage(); } };
  document.getElementById("next").onclick = function () { if (page < pages - 1) { page++; showPage(); } };
  document.getElementById("page").onchange = function (ev) {
    var n = parseInt(ev.target.value, 10);
    if (n >= 1 && n <= pages) { page = n - 1; showPage(); }
  };

  // A link can name a range: page.html#t=10,20 shows 10 ms to 20 ms.
  var m = /^#t=([-\d.e]+),([-\d.e]+)$/.exec(location.hash);
  if (m && +m[2] > +m[1]) { view.a = +m[1]; view.b = +m[2]; clamp(); }
  draw();
  showPage();
})();
]==]

local function legend()
  local parts = {}
  for _, k in ipairs { "reserved", "used", "pending", "kernel", "copy", "alloc", "free" } do
    parts[#parts + 1] = string.format('<span><i style="background:%s"></i>%s</span>', M.colours[k], k)
  end
  return '<div class="legend">' .. table.concat(parts) .. "</div>"
end

-- Rows read from the records in C at a time.
local CHUNK = 16384

--- Writes the page with out(string), the events one row at a time. From
-- poolsh's own record (export.save's record), the rows src/trace.c
-- formats as row() does, a chunk at a time.
function M.write(out, each, meta, record)
  meta = meta or {}
  out(table.concat {
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    "<title>poolsh trace</title>\n<style>", STYLE, "</style>\n</head>\n<body>\n",
    '<h1 id="title">poolsh trace</h1>\n', legend(), "\n",
    '<div class="controls"><button id="zoom-in">zoom in</button><button id="zoom-out">zoom out</button>',
    '<button id="zoom-reset">whole trace</button> <span class="note">wheel: zoom, drag: pan;',
    ' showing <span id="range"></span></span></div>\n',
    notes_list(meta), '<div id="pools"></div>\n<h2>Streams</h2>\n<div id="streams"></div>\n',
    '<h2>Events <span class="note" id="count"></span></h2>\n',
    '<div class="controls"><button id="prev">previous page</button><button id="next">next page</button>',
    ' page <input id="page" size="6"></div>\n',
    "<table>\n<thead><tr><th>seq</th><th>t (ms)</th><th>op</th><th>src</th><th>stream</th><th>pool</th>",
    "<th>buffer</th><th>start (ms)</th><th>dur (ms)</th><th>addr</th><th>size</th><th>reserved</th>",
    "<th>used</th><th>pending</th><th>details</th></tr></thead>\n",
    '<tbody id="events"></tbody>\n</table>\n',
    '<script type="application/json" id="poolsh-data">', util.json(header(meta)), "</script>\n",
    '<script type="application/json" id="poolsh-rows">[',
  })
  local clock, slice, first = util.clock(), util.slicer(0), true
  if record then
    local busy, names = {}, type(meta.names) == "table" and meta.names or {}
    for from = 1, record.count, CHUNK do
      local s = record.html(from, from + CHUNK - 1, names, busy, record.cause)
      if s ~= "" then
        if first then first = false else out(",") end
        out(s)
      end
    end
    each = function() end
  end
  each(function(ev)
    local t = clock(ev)
    local start, dur = slice(ev, t)
    local s = row(ev, t, start, dur, meta)
    if first then first = false else s = "," .. s end
    out(s)
  end)
  out("]</script>\n<script>" .. SCRIPT .. "</script>\n</body>\n</html>\n")
end

--- The page.
function M.encode(events, meta)
  return require("poolsh.export").to_string("html", events, meta)
end

return M
