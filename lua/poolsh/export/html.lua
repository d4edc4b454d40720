--- One self-contained HTML page (no network: inline CSS and JS) that shows
-- a trace: per pool, a memory map (address against time or event order:
-- each block a rectangle from its alloc to its free and on to when the free
-- completed, reuse drawn as an arrow back to the block whose bytes it took,
-- releases as marks with their cause, a tooltip per block) and reserved,
-- used and pending over time; a lane per stream with device work drawn
-- from its start for its duration; memory that is no pool's in its own
-- lane; zoom and pan; a scenario's title, summary, steps (click one to
-- zoom there) and verdict; and a paged table of the events with their
-- sites, relative to the script's directory. The events travel as JSON rows
-- in a <script>, written one row at a time; the page draws them in the
-- browser (the map at most M.max_blocks rectangles a pool, the largest
-- first), so 10^6 events render. save_scenarios writes one page with a
-- section per scenario (`poolsh run --all --report`).
local util = require "poolsh.export.util"

local M = {}

--- The colours the page draws with (the spec looks for them on screen).
M.colours = {
  reserved = "#1f77b4", used = "#d62728", pending = "#ff7f0e",
  kernel = "#2ca02c", copy = "#9467bd", alloc = "#17becf", free = "#8c564b",
  live = "#4e79a7", chunk = "#e8e8e8", released = "#f4c7c3", other = "#b07aa1",
}

--- One colour per stream for the pending part of a block (then again).
M.stream_colours = { "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#ff9da7", "#9c755f", "#bab0ac" }

--- Rows of the event table per page.
M.page_rows = 200

--- Block rectangles the map draws a pool at most, in the range shown (the
-- largest size x duration first; the page says how many it left out).
M.max_blocks = 3000

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

-- A list of strings from meta.notes[i][field] (nil: none), checked.
local function strings(v, what, dir)
  if v == nil then return nil end
  if type(v) == "string" then v = { v } end
  if type(v) ~= "table" then error(("poolsh.export.html: %s must be a list of strings, got %s"):format(what, type(v)), 0) end
  local out = {}
  for j, s in ipairs(v) do
    if type(s) ~= "string" then
      error(("poolsh.export.html: %s[%d] must be a string, got %s"):format(what, j, type(s)), 0)
    end
    out[j] = util.relative_paths(s, dir)
  end
  return out[1] and out or nil
end

-- meta.notes, {{t = ms, text = ..., notices = {...}, said = {...}}, ...}
-- (a scenario's steps), checked and copied.
local function notes(meta, dir)
  local out = {}
  if meta.notes ~= nil and type(meta.notes) ~= "table" then
    error("poolsh.export.html: meta.notes must be a list of {t = ms, text = string}, got " .. type(meta.notes), 0)
  end
  for i, n in ipairs(meta.notes or {}) do
    if type(n) ~= "table" or type(n.t) ~= "number" or n.t ~= n.t or type(n.text) ~= "string" then
      error("poolsh.export.html: meta.notes[" .. i .. "] must be {t = ms, text = string}", 0)
    end
    out[i] = { t = n.t, text = util.relative_paths(n.text, dir),
      notices = strings(n.notices or n.notice, "meta.notes[" .. i .. "].notices", dir),
      said = strings(n.said, "meta.notes[" .. i .. "].said", dir) }
  end
  return out[1] and out or nil
end

-- meta.verdict = {ok, step, err, skipped}, as a line and a class.
local function verdict(meta, dir)
  local v = meta.verdict
  if v == nil then return nil end
  if type(v) ~= "table" then
    error("poolsh.export.html: meta.verdict must be a table {ok, step, err, skipped}, got " .. type(v), 0)
  end
  if v.skipped then
    return { class = "skip", text = "SKIP" .. (type(v.skipped) == "string" and (": " .. util.relative_paths(v.skipped, dir)) or "") }
  elseif v.ok then
    return { class = "pass", text = "PASS" }
  end
  local step = v.step ~= nil and tostring(v.step) or "?"
  step = step:match("^(%d+)%.") or step
  return { class = "fail", text = ("FAIL at step %s: %s"):format(step, util.relative_paths(tostring(v.err or "failed"), dir)) }
end

local function escape(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

-- The page's title: meta.title, else the scenario's name, else the
-- script's file name (if any) and the backend and device.
local function title(meta)
  if type(meta.title) == "string" and meta.title ~= "" then return meta.title end
  if type(meta.name) == "string" and meta.name ~= "" then return meta.name end
  local dev = type(meta.device) == "table" and meta.device or {}
  local script = util.script(meta)
  return string.format("%spoolsh trace (%s%s)", script and (script:match("[^/]*$") .. ": ") or "",
    tostring(meta.backend or "?"), dev.name and (", " .. tostring(dev.name)) or "")
end

-- The section's header data: title, lane and pool names, colours, notes.
local function header(meta, dir)
  local streams, pools = {}, {}
  for id in pairs(type(meta.streams) == "table" and meta.streams or {}) do streams[tostring(id)] = util.stream_name(meta, id) end
  for id in pairs(type(meta.pools) == "table" and meta.pools or {}) do pools[tostring(id)] = util.pool_name(meta, id) end
  local n = notes(meta, dir)
  return {
    title = title(meta), streams = streams, pools = pools, colours = M.colours,
    stream_colours = M.stream_colours, page_rows = M.page_rows, max_blocks = M.max_blocks,
    notes = n, mode = n and "order" or "time",
  }
end

local STYLE = [[
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }
h1 { font-size: 18px; margin: 0 0 8px; }
h2 { font-size: 14px; margin: 14px 0 4px; }
h3 { font-size: 13px; margin: 10px 0 2px; }
section.trace { margin-bottom: 32px; }
.legend span { margin-right: 14px; white-space: nowrap; display: inline-block; }
.legend i { display: inline-block; width: 14px; height: 10px; vertical-align: middle; margin-right: 4px; }
.legend i.line { height: 3px; }
canvas { display: block; background: #fafafa; border: 1px solid #ddd; cursor: grab; max-width: 100%; }
svg.map { display: block; background: #fff; border: 1px solid #ddd; max-width: 100%; }
svg.map text { font: 11px system-ui, sans-serif; fill: #444; }
.controls button { margin-right: 6px; }
.controls button.on { font-weight: bold; }
.layout { display: flex; gap: 16px; align-items: flex-start; }
.layout .main { flex: 1 1 auto; min-width: 0; }
.layout aside { flex: 0 0 300px; max-height: 80vh; overflow: auto; border-left: 1px solid #eee; padding-left: 10px; }
@media (max-width: 1279px) { .layout { display: block; } .layout aside { max-height: none; border: 0; padding: 0; } }
ol.notes, #notes { list-style: none; padding-left: 4px; margin: 4px 0; }
ol.notes li, #notes li { margin-bottom: 6px; cursor: pointer; }
ol.notes li.on, #notes li.on { background: #fff3c4; }
ol.notes .notice, #notes .notice { color: #8a5a00; }
ol.notes .said, #notes .said { color: #555; font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
.verdict { font-weight: bold; padding: 2px 8px; display: inline-block; border-radius: 3px; overflow-wrap: anywhere; white-space: pre-wrap; max-width: 100%; box-sizing: border-box; }
.verdict.pass { background: #d9f2d9; color: #1a5e1a; }
.verdict.fail { background: #f9d6d5; color: #8b1a16; }
.verdict.skip { background: #eee; color: #555; }
.scroll { overflow: auto; max-width: 100%; max-height: 70vh; }
table { border-collapse: collapse; margin-top: 6px; }
th, td { border-bottom: 1px solid #eee; padding: 2px 8px; text-align: left; white-space: nowrap; }
th { background: #f0f0f0; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #777; }
#poolsh-tip { position: fixed; display: none; pointer-events: none; background: #222; color: #fff; padding: 4px 8px;
  border-radius: 3px; font-size: 12px; white-space: pre; z-index: 10; max-width: 60vw; overflow: hidden; }
nav.toc td, nav.toc th { white-space: normal; }
nav.toc .verdict { white-space: nowrap; }
]]

-- Draws every section from its embedded data; plain DOM, SVG and canvas,
-- no library. The memory map's model and drawing are picture.js's
-- (lua/poolsh/web/picture.js, inlined before this script by tail()): the
-- one renderer the playground's pane and `poolsh --view` draw with too.
local SCRIPT = [==[
(function () {
  "use strict";
  var P = PoolshPicture, bytes = P.bytes, el = P.el, tip = document.getElementById("poolsh-tip");
  var F = P.rows, SEQ = F.SEQ, T = F.T, OP = F.OP, ST = F.ST, PO = F.PO, START = F.START, DUR = F.DUR,
      LABEL = F.LABEL, SRC = F.SRC, BUF = F.BUF, ADDR = F.ADDR, SIZE = F.SIZE, RES = F.RES, USED = F.USED,
      PEND = F.PEND, DET = F.DET;

  function init(root) {
    function q(c) { return root.querySelector("." + c); }
    // (the one-trace page names its data by id, as it always has)
    var D = JSON.parse(root.querySelector(".poolsh-data, #poolsh-data").textContent);
    var R = JSON.parse(root.querySelector(".poolsh-rows, #poolsh-rows").textContent);
    var C = D.colours, W = 1100, PAD = 80, RIGHT = 10, i, r, n = R.length;
    var mainBox = q("main");
    function width() { return Math.max(400, Math.floor(mainBox.clientWidth) - 2); }
    W = width();

    // The whole time range, in loops (no Math.max.apply: it overflows the stack).
    var t0 = Infinity, t1 = -Infinity;
    for (i = 0; i < n; i++) {
      r = R[i];
      if (r[T] < t0) t0 = r[T];
      var end = (r[START] !== null ? r[START] : r[T]) + (r[DUR] !== null ? r[DUR] : 0);
      if (end > t1) t1 = end;
      if (r[T] > t1) t1 = r[T];
    }
    if (!n) { t0 = 0; t1 = 1; }
    if (t1 <= t0) t1 = t0 + 1;
    var view = { a: t0, b: t1 };

    // Per pool, its counters after each event that moves them: [t, reserved, used, pending].
    var pools = {}, order = [];
    for (i = 0; i < n; i++) {
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
    for (i = 0; i < n; i++) {
      if (R[i][ST] !== null && lanes[String(R[i][ST])] === undefined) lanes[String(R[i][ST])] = "s" + R[i][ST];
    }
    laneIds = Object.keys(lanes).sort(function (a, b) { return a - b; });
    function streamName(id) { return id === null || id === undefined ? "no stream" : (lanes[String(id)] || "s" + id); }
    function streamColour(id) {
      var j = laneIds.indexOf(String(id));
      return D.stream_colours[(j < 0 ? 0 : j) % D.stream_colours.length];
    }

    // ---- The memory map's model (lua/poolsh/web/picture.js): blocks, reservations and releases per pool.
    var mdl = P.model(R), maps = mdl.maps, mapOrder = mdl.order, others = mdl.others;

    // ---- Where things go on the map: x in ms or in events, y in bytes.
    var mode = D.mode === "order" ? "order" : "time", mv = null;
    function whole() { return mode === "time" ? { a: t0, b: t1 } : { a: 0, b: Math.max(1, n) }; }
    function xval(j, last) {   // a row index as a position on the map's axis
      if (j === null) return mode === "time" ? t1 : n;
      return mode === "time" ? R[j][T] : j + (last ? 1 : 0);
    }
    function indexAt(t) {      // the first row at or after t
      var lo = 0, hi = n;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (R[mid][T] < t) lo = mid + 1; else hi = mid; }
      return lo;
    }
    mv = whole();
    var MH = 220, MTOP = 38, MBOT = 22, GAP = 4;

    // (describe and hover: picture.js's, with this page's rows and names)
    var gtip = { R: R, streamName: streamName };
    function describe(b) { return P.describe(b, gtip); }
    function hover(svg, list) { P.hover(tip, svg, list, describe); }

    function mapAxis(svg, h) {
      var span = mv.b - mv.a, step = Math.pow(10, Math.floor(Math.log10(span / 6)));
      if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
      if (mode === "order") step = Math.max(1, step);
      el("line", { x1: PAD, x2: W - RIGHT, y1: h - MBOT, y2: h - MBOT, stroke: "#999" }, svg);
      for (var v = Math.ceil(mv.a / step) * step; v <= mv.b; v += step) {
        var px = mx(v);
        el("line", { x1: px, x2: px, y1: h - MBOT, y2: h - MBOT + 4, stroke: "#999" }, svg);
        var digits = Math.max(0, Math.min(6, -Math.floor(Math.log10(step))));
        el("text", { x: px, y: h - 6, "text-anchor": "middle" }, svg).textContent =
          mode === "time" ? v.toFixed(digits) + " ms" : "event " + Math.round(v);
      }
    }
    function mx(v) { return PAD + (v - mv.a) / (mv.b - mv.a) * (W - PAD - RIGHT); }
    function clip(v) { return Math.max(PAD, Math.min(W - RIGHT, v)); }
    function steps(svg, h) {
      (D.notes || []).forEach(function (note, j) {
        var v = mode === "time" ? note.t : indexAt(note.t);
        if (v < mv.a || v > mv.b) return;
        var px = mx(v);
        el("line", { x1: px, x2: px, y1: 0, y2: h - MBOT, stroke: "#444", "stroke-dasharray": "3 3", "class": "step-mark" }, svg);
        el("text", { x: px + 2, y: 10 }, svg).textContent = String(j + 1);
      });
    }

    function drawMap(m) {
      var box = m.box; box.textContent = "";
      var res = P.drawMap(m, { R: R, C: C, W: W, PAD: PAD, RIGHT: RIGHT, MTOP: MTOP, MH: MH, MBOT: MBOT, GAP: GAP,
        max_blocks: D.max_blocks, mv: mv, xval: xval, mx: mx, clip: clip, streamName: streamName,
        streamColour: streamColour, id: root.id, pool: D.pools[m.k] || "p" + m.k, now: null,
        after: function (svg, h) { steps(svg, h); mapAxis(svg, h); } });
      var svg = res.svg, shown = { length: res.shown }, vis = { length: res.visible };
      hover(svg, m.blocks);
      box.appendChild(svg);
      m.note.textContent = m.blocks.length + " blocks" + (vis.length > shown.length
        ? "; " + shown.length + " of the " + vis.length + " in this range drawn (the largest first: zoom in to see the rest)"
        : "") + (m.releases.length ? "; " + m.releases.length + " releases" : "");
      wheel(svg); svg.style.cursor = "grab";
    }

    // memory that is no pool's: a bar per buffer or range, in rows
    function drawOthers() {
      var box = q("other"); box.textContent = "";
      if (!others.length) return;
      var rows = [], lastEnd = [], RH = 16;
      others.forEach(function (b) {
        var a = xval(b.i0, false), e = xval(b.i1, b.i1 !== null);
        for (var j = 0; j < lastEnd.length && lastEnd[j] > a; j++);
        lastEnd[j] = e; b.row = j;
      });
      var nrows = Math.min(lastEnd.length, 24), h = MTOP + nrows * RH + MBOT;
      var svg = el("svg", { width: W, height: h, "class": "map other-map" });
      var count = 0;
      others.forEach(function (b, j) {
        if (b.row >= nrows || xval(b.i1, b.i1 !== null) < mv.a || xval(b.i0, false) > mv.b) return;
        var xa = clip(mx(xval(b.i0, false))), xb = clip(mx(xval(b.i1, b.i1 !== null)));
        el("rect", { x: xa, y: MTOP + b.row * RH, width: Math.max(1, xb - xa), height: RH - 3, fill: C.other,
          "class": "other-block", "data-b": j }, svg);
        if (xb - xa > 60) el("text", { x: xa + 3, y: MTOP + b.row * RH + 10, fill: "#fff" }, svg).textContent = b.name + " " + b.kind;
        count++;
      });
      steps(svg, h);
      mapAxis(svg, h);
      hover(svg, others);
      var kinds = {};
      others.forEach(function (b) { kinds[b.kind] = (kinds[b.kind] || 0) + 1; });
      var h3 = document.createElement("h3");
      h3.textContent = "Not pool memory: " + Object.keys(kinds).sort().map(function (kk) { return kinds[kk] + " " + kk; }).join(", ") +
        (lastEnd.length > nrows ? " (the first " + nrows + " rows drawn)" : "");
      box.appendChild(h3); box.appendChild(svg);
      wheel(svg);
    }

    var mapBox = q("maps");
    if (!mapOrder.length) mapBox.textContent = "No pool blocks in this trace.";
    mapOrder.forEach(function (k) {
      var m = maps[k];
      var h3 = document.createElement("h3");
      h3.textContent = (D.pools[k] || "p" + k) + ": memory map";
      mapBox.appendChild(h3);
      m.box = document.createElement("div"); mapBox.appendChild(m.box);
      m.note = document.createElement("div"); m.note.className = "note"; mapBox.appendChild(m.note);
    });

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
    var poolsDiv = q("pools");
    if (!order.length) poolsDiv.textContent = "No pool counters in this trace.";
    order.forEach(function (k) {
      var p = pools[k], max = 1, peak = 0;
      p.pts.forEach(function (v) { max = Math.max(max, v[1], v[2], v[3]); peak = Math.max(peak, v[1]); });
      var h3 = document.createElement("h3");
      h3.textContent = (D.pools[k] || "p" + k) + ": reserved, used, pending (peak reserved " + bytes(peak) + ")";
      poolsDiv.appendChild(h3);
      var c = canvas(poolsDiv, H, "pool-chart");
      c.setAttribute("data-pool", D.pools[k] || "p" + k);
      charts.push({ c: c, p: p, max: max });
    });
    var lanesCanvas = canvas(q("streams"), laneIds.length * LH + 24, "lanes");
    if (root.getAttribute("data-single")) lanesCanvas.id = "lanes";

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
      for (var j = 0; j < n; j++) {
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
      (D.notes || []).forEach(function (note) {
        if (note.t < view.a || note.t > view.b) return;
        var px = Math.round(x(note.t)) + 0.5;
        g.beginPath(); g.moveTo(px, 0); g.lineTo(px, h - 16); g.stroke();
        g.fillText(note.text.split(" ")[0], px + 2, 10);
      });
      g.setLineDash([]);
      axis(g, h);
    }

    function draw() {
      var w = width();
      if (w !== W) {
        W = w;
        charts.forEach(function (ch) { ch.c.width = W; });
        lanesCanvas.width = W;
      }
      mapOrder.forEach(function (k) { drawMap(maps[k]); });
      drawOthers();
      charts.forEach(drawChart);
      drawLanes();
      q("range").textContent = view.a.toFixed(4) + " ms to " + view.b.toFixed(4) + " ms";
      q("map-range").textContent = mode === "time" ? mv.a.toFixed(4) + " ms to " + mv.b.toFixed(4) + " ms"
        : "events " + Math.round(mv.a) + " to " + Math.round(mv.b) + " of " + n;
      q("mode-time").className = "mode-time" + (mode === "time" ? " on" : "");
      q("mode-order").className = "mode-order" + (mode === "order" ? " on" : "");
    }

    // Zoom around a time by a factor; pan by a time; never past the trace.
    function zoomv(v, lo, hi, at, f) {
      var span = Math.max((v.b - v.a) * f, (hi - lo) * 1e-9);
      v.a = at - (at - v.a) * span / (v.b - v.a);
      v.b = v.a + span;
      clampv(v, lo, hi);
    }
    function clampv(v, lo, hi) {
      var span = Math.min(v.b - v.a, hi - lo);
      if (v.a < lo) v.a = lo;
      if (v.a + span > hi) v.a = hi - span;
      v.b = v.a + span;
    }
    function zoom(f) {
      zoomv(view, t0, t1, (view.a + view.b) / 2, f);
      var w = whole(); zoomv(mv, w.a, w.b, (mv.a + mv.b) / 2, f);
    }
    q("zoom-in").onclick = function () { zoom(0.5); draw(); };
    q("zoom-out").onclick = function () { zoom(2); draw(); };
    q("zoom-reset").onclick = function () { view = { a: t0, b: t1 }; mv = whole(); draw(); };
    q("mode-time").onclick = function () { mode = "time"; mv = whole(); draw(); };
    q("mode-order").onclick = function () { mode = "order"; mv = whole(); draw(); };
    var drag = null;
    function wheel(c) {
      c.addEventListener("wheel", function (ev) {
        ev.preventDefault();
        var f = ev.deltaY < 0 ? 0.8 : 1.25, w = whole(), rect = c.getBoundingClientRect(), px = ev.clientX - rect.left;
        if (c.tagName.toLowerCase() === "svg") {
          zoomv(mv, w.a, w.b, mv.a + (px - PAD) / (W - PAD - RIGHT) * (mv.b - mv.a), f);
        } else zoomv(view, t0, t1, tAt(px), f);
        draw();
      });
      c.addEventListener("mousedown", function (ev) {
        drag = { x: ev.clientX, map: c.tagName.toLowerCase() === "svg", a: view.a, b: view.b, ma: mv.a, mb: mv.b };
      });
    }
    charts.map(function (ch) { return ch.c; }).concat([lanesCanvas]).forEach(wheel);
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var f = (ev.clientX - drag.x) / (W - PAD - RIGHT);
      if (drag.map) {
        var w = whole(), dm = f * (drag.mb - drag.ma);
        mv.a = drag.ma - dm; mv.b = drag.mb - dm; clampv(mv, w.a, w.b);
      } else {
        var dt = f * (drag.b - drag.a);
        view.a = drag.a - dt; view.b = drag.b - dt; clampv(view, t0, t1);
      }
      draw();
    });
    window.addEventListener("mouseup", function () { drag = null; });
    window.addEventListener("resize", function () { if (width() !== W) draw(); });

    // A step: the charts and the map show from it to the next step.
    var noteItems = root.querySelectorAll("ol.notes li, #notes li");
    function zoomStep(j) {
      var ns = D.notes || [];
      if (!ns[j]) return;
      var a = ns[j].t, b = j + 1 < ns.length ? ns[j + 1].t : t1;
      if (b <= a) b = a + (t1 - t0) * 1e-6;
      view = { a: a, b: b }; clampv(view, t0, t1);
      var w = whole();
      if (mode === "time") mv = { a: a, b: b };
      else { mv = { a: indexAt(a), b: j + 1 < ns.length ? indexAt(ns[j + 1].t) : n }; if (mv.b <= mv.a) mv.b = mv.a + 1; }
      clampv(mv, w.a, w.b);
      Array.prototype.forEach.call(noteItems, function (li, k2) { li.className = k2 === j ? "on" : ""; });
      draw();
    }
    Array.prototype.forEach.call(noteItems, function (li, j) {
      li.addEventListener("click", function (ev) { ev.preventDefault(); zoomStep(j); });
    });

    // The events, a page at a time, with their source locations.
    var page = 0, pages = Math.max(1, Math.ceil(n / D.page_rows));
    function showPage() {
      var body = q("events");
      body.textContent = "";
      var first = page * D.page_rows, last = Math.min(n, first + D.page_rows);
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
      q("count").textContent = n > D.page_rows
        ? "events " + (first + 1) + " to " + last + " of " + n + " events (page " + (page + 1) + " of " + pages + ")"
        : n + " events";
    }
    q("prev").onclick = function () { if (page > 0) { page--; showPage(); } };
    q("next").onclick = function () { if (page < pages - 1) { page++; showPage(); } };
    q("page").onchange = function (ev) {
      var v = parseInt(ev.target.value, 10);
      if (v >= 1 && v <= pages) { page = v - 1; showPage(); }
    };

    // A link can name a range: page.html#t=10,20 shows 10 ms to 20 ms.
    function fromHash() {
      var hm = /^#t=([-\d.e]+),([-\d.e]+)$/.exec(location.hash);
      if (!hm || !(+hm[2] > +hm[1])) return false;
      view.a = +hm[1]; view.b = +hm[2]; clampv(view, t0, t1);
      var w = whole();
      mv = mode === "time" ? { a: view.a, b: view.b } : { a: indexAt(view.a), b: Math.max(indexAt(view.b), indexAt(view.a) + 1) };
      clampv(mv, w.a, w.b);
      return true;
    }
    if (root.getAttribute("data-single")) {
      fromHash();
      window.addEventListener("hashchange", function () { if (fromHash()) draw(); });
    }
    draw();
    showPage();
  }
  Array.prototype.forEach.call(document.querySelectorAll("section.trace"), init);
})();
]==]

local function legend()
  local parts = {}
  for _, k in ipairs { "reserved", "used", "pending", "kernel", "copy", "alloc", "free" } do
    parts[#parts + 1] = string.format('<span><i class="line" style="background:%s"></i>%s</span>', M.colours[k], k)
  end
  return '<div class="legend">' .. table.concat(parts) .. "</div>"
end

local function map_legend()
  local c = M.colours
  return table.concat {
    '<div class="legend map-legend">',
    ('<span><i style="background:%s"></i>live block</span>'):format(c.live),
    ('<span><i style="background:%s"></i><i style="background:%s"></i>freed, pending on its stream (colour)</span>')
      :format(M.stream_colours[1], M.stream_colours[2]),
    ('<span><i style="background:%s"></i>reserved, free</span>'):format(c.chunk),
    ('<span><i style="background:%s"></i>released to the driver</span>'):format(c.released),
    ('<span><i class="line" style="background:%s"></i>release (its cause above)</span>'):format(c.used),
    '<span>&#x2934; reuse: the new block points back to the one whose memory it took</span>',
    "</div>",
  }
end

-- The steps beside the map: each with its notices and measured lines.
local function notes_list(n, single)
  if not n then return "" end
  local items = {}
  for j, note in ipairs(n) do
    local extra = {}
    for _, s in ipairs(note.notices or {}) do extra[#extra + 1] = '<div class="notice">notice: ' .. escape(s) .. "</div>" end
    for _, s in ipairs(note.said or {}) do extra[#extra + 1] = '<div class="said">' .. escape(s) .. "</div>" end
    items[#items + 1] = ('<li><a href="#t=%s,%s">%s ms</a> %s%s</li>\n'):format(number(note.t),
      number(note.t + 1e-3), ("%.3f"):format(tonumber(note.t) or 0), escape(note.text), table.concat(extra))
  end
  -- (the one-trace page's list is id="notes", as it always was)
  return '<aside><h2>Steps <span class="note">(click one to zoom there)</span></h2>\n'
    .. (single and '<ol id="notes">\n' or '<ol class="notes">\n') .. table.concat(items) .. "</ol></aside>\n"
end

-- Rows read from the records in C at a time.
local CHUNK = 16384

-- Rows (JSON text, from C or from row(): the same bytes) with their sites
-- relative: each run of text that starts as a machine path right after a
-- quote (a JSON string's, or an escaped one inside it: only a site does;
-- labels start with their op, details with a key, addresses with 0x) up
-- to the next quote or backslash, through util.relative_path, which cuts
-- only after a "/", so the text stays JSON.
local function relative_rows(s, dir)
  return (s:gsub('(\\?")([%./~][^"\\]*)', function(q, p)
    return q .. util.relative_path(p, dir)
  end))
end

-- Writes one trace's <section>: its title, summary, verdict, steps, map,
-- charts, lanes, table and data; `single` gives its controls ids as well
-- (the one-trace page).
local function section(out, each, meta, record, key, single)
  local dir = util.script_dir(meta)
  local h = header(meta, dir)
  local v = verdict(meta, dir)
  local function cls(name) return ('class="%s"%s'):format(name, single and (' id="' .. name .. '"') or "") end
  local summary = type(meta.summary) == "string" and meta.summary ~= "" and
    ('<p class="summary">' .. escape(util.relative_paths(meta.summary, dir)) .. "</p>\n") or ""
  out(table.concat {
    ('<section class="trace" id="%s"%s>\n'):format(key, single and ' data-single="1"' or ""),
    single and '<h1 class="title" id="title">' or '<h2 class="title">', escape(h.title), single and "</h1>\n" or "</h2>\n",
    summary, v and ('<p><span class="verdict %s">%s</span></p>\n'):format(v.class, escape(v.text)) or "",
    '<div class="layout">\n<div class="main">\n',
    "<h2>Memory map</h2>\n", map_legend(), "\n",
    '<div class="controls">axis: <button ', cls("mode-time"), '>time</button><button ', cls("mode-order"),
    '>event order</button> <button ', cls("zoom-in"), '>zoom in</button><button ', cls("zoom-out"),
    '>zoom out</button><button ', cls("zoom-reset"), '>whole trace</button> <span class="note">wheel: zoom,',
    ' drag: pan; map: <span ', cls("map-range"), '></span>; charts: <span ', cls("range"), "></span></span></div>\n",
    '<div ', cls("maps"), '></div>\n<div ', cls("other"), "></div>\n",
    "<h2>Reserved, used and pending</h2>\n", legend(), "\n",
    '<div ', cls("pools"), '></div>\n<h2>Streams</h2>\n<div ', cls("streams"), "></div>\n",
    "</div>\n", notes_list(h.notes, single), "</div>\n",
    '<h2>Events <span class="note ', single and 'count" id="count' or "count", '"></span></h2>\n',
    '<div class="controls"><button ', cls("prev"), '>previous page</button><button ', cls("next"),
    '>next page</button> page <input ', cls("page"), ' size="6"></div>\n',
    '<div class="scroll">\n<table>\n<thead><tr><th>seq</th><th>t (ms)</th><th>op</th><th>src</th><th>stream</th><th>pool</th>',
    "<th>buffer</th><th>start (ms)</th><th>dur (ms)</th><th>addr</th><th>size</th><th>reserved</th>",
    "<th>used</th><th>pending</th><th>details</th></tr></thead>\n",
    '<tbody ', cls("events"), '></tbody>\n</table>\n</div>\n',
    '<script type="application/json" ', single and 'id="poolsh-data">' or 'class="poolsh-data">',
    util.json(h), "</script>\n",
    '<script type="application/json" ', single and 'id="poolsh-rows">[' or 'class="poolsh-rows">[',
  })
  local clock, slice, first = util.clock(), util.slicer(0), true
  if record then
    local busy, names = {}, type(meta.names) == "table" and meta.names or {}
    for from = 1, record.count, CHUNK do
      local s = record.html(from, from + CHUNK - 1, names, busy, record.cause)
      if s ~= "" then
        if first then first = false else out(",") end
        out(relative_rows(s, dir))
      end
    end
    each = function() end
  end
  each(function(ev)
    local t = clock(ev)
    local start, dur = slice(ev, t)
    local s = relative_rows(row(ev, t, start, dur, meta), dir)
    if first then first = false else s = "," .. s end
    out(s)
  end)
  out("]</script>\n</section>\n")
end

local function head(t)
  return table.concat {
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
    "<title>", escape(t), "</title>\n<style>", STYLE, "</style>\n</head>\n<body>\n",
  }
end

-- The page's end: the tooltip, the map's renderer (lua/poolsh/web/picture.js,
-- the one the playground and `poolsh --view` draw with) and this page's script.
local function tail()
  local js = require("poolsh.web.picture").read("picture.js")
  return '<div id="poolsh-tip"></div>\n<script>' .. js:gsub("</", "<\\/") .. SCRIPT .. "</script>\n</body>\n</html>\n"
end

--- Writes the page with out(string), the events one row at a time. From
-- poolsh's own record (export.save's record), the rows src/trace.c
-- formats as row() does, a chunk at a time. meta is poolsh.trace.meta()
-- and, for a scenario, title, summary, notes ({t, text, notices, said})
-- and verdict ({ok, step, err, skipped}); script_dir (else the script's
-- path in `arg`) is what sites are shown relative to.
function M.write(out, each, meta, record)
  meta = meta or {}
  out(head(title(meta)))
  section(out, each, meta, record, "trace", true)
  out(tail())
end

--- save_scenarios(path, runs): one page with a section per scenario and a
-- table of contents with their verdicts; runs = {{meta = meta, events =
-- events (an array or each(fn))}, ...} (`poolsh run --all --report`).
-- Written as every saved file (poolsh.export.open). Returns path.
function M.save_scenarios(path, runs)
  if type(path) ~= "string" then
    error("poolsh.export.html.save_scenarios: path must be a string, got " .. type(path), 2)
  end
  if type(runs) ~= "table" then
    error("poolsh.export.html.save_scenarios: runs must be a list of {meta = meta, events = events}, got " .. type(runs), 2)
  end
  for k, run in ipairs(runs) do
    if type(run) ~= "table" or (run.meta ~= nil and type(run.meta) ~= "table")
      or (run.events ~= nil and type(run.events) ~= "table" and type(run.events) ~= "function") then
      error(("poolsh.export.html.save_scenarios: runs[%d] must be {meta = table, events = list}"):format(k), 2)
    end
  end
  local export = require "poolsh.export"
  local f <close> = export.open(path, "poolsh.export.html.save_scenarios")
  local out = util.writer(f, path)
  out(head(#runs == 1 and title(runs[1].meta or {}) or ("poolsh: " .. #runs .. " scenarios")))
  out(("<h1>poolsh: %d scenarios</h1>\n"):format(#runs))
  local toc = { '<nav class="toc"><table>\n<thead><tr><th>scenario</th><th>verdict</th><th>summary</th></tr></thead>\n<tbody>\n' }
  for k, run in ipairs(runs) do
    local meta = run.meta or {}
    local dir = util.script_dir(meta)
    local v = verdict(meta, dir)
    toc[#toc + 1] = ('<tr><td><a href="#scenario-%d">%s</a></td><td>%s</td><td>%s</td></tr>\n'):format(k,
      escape(title(meta)), v and ('<span class="verdict %s">%s</span>'):format(v.class, escape(v.text:match("^[^:]*"))) or "",
      escape(util.relative_paths(type(meta.summary) == "string" and meta.summary or "", dir)))
  end
  toc[#toc + 1] = "</tbody></table></nav>\n"
  out(table.concat(toc))
  for k, run in ipairs(runs) do
    local events = run.events or {}
    local function each(fn)
      if type(events) == "function" then
        events(function(ev) if type(ev) == "table" then fn(ev) end end)
      else
        for _, ev in ipairs(events) do if type(ev) == "table" then fn(ev) end end
      end
    end
    section(out, each, run.meta or {}, nil, "scenario-" .. k, false)
  end
  out(tail())
  out()
  export.commit(f, "poolsh.export.html.save_scenarios")
  return path
end

--- The page.
function M.encode(events, meta)
  return require("poolsh.export").to_string("html", events, meta)
end

return M
