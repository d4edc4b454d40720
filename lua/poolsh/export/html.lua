--- One self-contained HTML page (no network: inline CSS, JS and SVG) that
-- shows a trace: per pool, reserved, used and pending over time; a lane per
-- stream with kernels, copies, allocs and frees; and a table of the events
-- with their source locations. The data travels as JSON in a <script>.
local util = require "poolsh.export.util"

local M = {}

--- The colours the page draws with (the spec looks for them on screen).
M.colours = {
  reserved = "#1f77b4", used = "#d62728", pending = "#ff7f0e",
  kernel = "#2ca02c", copy = "#9467bd", alloc = "#17becf", free = "#8c564b",
}

--- The table shows at most this many events (the charts show all).
M.max_rows = 10000

-- An event with scalar fields only, its address in hex.
local function plain(ev, t)
  local out = {}
  for k, v in pairs(ev) do
    local ty = type(v)
    if type(k) == "string" and (ty == "string" or ty == "number" or ty == "boolean") then
      out[k] = v
    end
  end
  out.t = t
  if math.type(ev.addr) then out.addr = util.hex(ev.addr) end
  out.op = tostring(ev.op)
  out.label = util.label(ev)
  return out
end

--- The data the page's script reads.
function M.data(events, meta)
  meta = meta or {}
  local ts = util.times(events)
  local evs = util.array()
  local starts = util.starts(events, ts, 0)
  for i, ev in ipairs(events) do
    evs[i] = plain(ev, ts[i])
    evs[i].start = starts[i]
  end
  local pools, order = {}, util.array()
  util.each_counter(events, function(_, pool, st, i)
    local name = util.pool_name(meta, pool)
    if not pools[name] then
      pools[name] = util.array()
      order[#order + 1] = name
    end
    local s = pools[name]
    s[#s + 1] = util.array { ts[i], st.reserved, st.used, st.pending }
  end)
  local streams = {}
  for id in pairs(meta.streams or {}) do streams[tostring(id)] = util.stream_name(meta, id) end
  for _, ev in ipairs(events) do
    if math.type(ev.stream) then streams[tostring(ev.stream)] = util.stream_name(meta, ev.stream) end
  end
  local dev = meta.device or {}
  return {
    title = string.format("poolsh trace (%s%s)", tostring(meta.backend or "?"),
      dev.name and (", " .. tostring(dev.name)) or ""),
    events = evs, pools = pools, pool_order = order, streams = streams,
    colours = M.colours, max_rows = M.max_rows,
  }
end

local STYLE = [[
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }
h1 { font-size: 18px; margin: 0 0 8px; }
h2 { font-size: 14px; margin: 14px 0 4px; }
.legend span { margin-right: 14px; }
.legend i { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin-right: 4px; }
svg { display: block; background: #fafafa; border: 1px solid #ddd; }
svg text { font: 11px sans-serif; fill: #555; }
table { border-collapse: collapse; margin-top: 6px; }
th, td { border-bottom: 1px solid #eee; padding: 2px 8px; text-align: left; white-space: nowrap; }
th { background: #f0f0f0; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #777; }
]]

-- Draws everything from the embedded data; plain DOM and SVG, no library.
local SCRIPT = [==[
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("poolsh-data").textContent);
  var C = D.colours, NS = "http://www.w3.org/2000/svg";
  var W = 1100, PAD = 70;
  document.getElementById("title").textContent = D.title;

  function el(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function bytes(n) {
    var u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + " " + u[i];
  }

  var ev = D.events, t0 = 0, t1 = 1;
  if (ev.length) {
    t0 = ev[0].t; t1 = ev[0].t;
    ev.forEach(function (e) {
      t0 = Math.min(t0, e.t);
      t1 = Math.max(t1, (e.start !== undefined ? e.start : e.t) + (typeof e.dur === "number" ? e.dur : 0));
    });
    if (t1 <= t0) t1 = t0 + 1;
  }
  function x(t) { return PAD + (t - t0) / (t1 - t0) * (W - PAD - 10); }

  function axis(svg, h) {
    el("line", { x1: PAD, y1: h - 18, x2: W - 10, y2: h - 18, stroke: "#999" }, svg);
    for (var i = 0; i <= 4; i++) {
      var t = t0 + (t1 - t0) * i / 4;
      el("text", { x: x(t), y: h - 4, "text-anchor": i === 0 ? "start" : i === 4 ? "end" : "middle" }, svg).textContent = t.toFixed(3) + " ms";
    }
  }

  // One chart per pool: step lines for reserved, used and pending.
  var charts = document.getElementById("pools");
  if (!D.pool_order.length) charts.textContent = "No pool counters in this trace.";
  D.pool_order.forEach(function (name) {
    var rows = D.pools[name], H = 170, top = 10, bottom = H - 24, max = 1;
    rows.forEach(function (r) { max = Math.max(max, r[1], r[2], r[3]); });
    function y(v) { return bottom - v / max * (bottom - top); }
    var h2 = document.createElement("h2");
    h2.textContent = name + " (peak reserved " + bytes(Math.max.apply(null, rows.map(function (r) { return r[1]; }))) + ")";
    charts.appendChild(h2);
    var svg = el("svg", { width: W, height: H, "class": "pool-chart", "data-pool": name }, charts);
    el("text", { x: 4, y: top + 8 }, svg).textContent = bytes(max);
    el("text", { x: 4, y: bottom }, svg).textContent = "0";
    [["reserved", 1], ["used", 2], ["pending", 3]].forEach(function (f) {
      var pts = [], prev = 0;
      rows.forEach(function (r) {
        pts.push(x(r[0]) + "," + y(prev)); pts.push(x(r[0]) + "," + y(r[f[1]])); prev = r[f[1]];
      });
      pts.push(x(t1) + "," + y(prev));
      el("polyline", { points: pts.join(" "), fill: "none", stroke: C[f[0]], "stroke-width": 3,
        "shape-rendering": "crispEdges", "class": "series-" + f[0] }, svg);
    });
    axis(svg, H);
  });

  // One lane per stream: kernels and copies as bars, allocs and frees as ticks.
  var ids = Object.keys(D.streams).sort(function (a, b) { return a - b; });
  var LH = 28, lanes = el("svg", { width: W, height: ids.length * LH + 24, id: "lanes" });
  document.getElementById("streams").appendChild(lanes);
  ids.forEach(function (id, i) {
    var y0 = i * LH + 4;
    el("text", { x: 4, y: y0 + 16 }, lanes).textContent = D.streams[id];
    el("line", { x1: PAD, y1: y0 + LH - 2, x2: W - 10, y2: y0 + LH - 2, stroke: "#e5e5e5" }, lanes);
    ev.forEach(function (e) {
      if (String(e.stream) !== id) return;
      var kind = { fill: "kernel", touch: "kernel", verify: "kernel", spin: "kernel", copy: "copy",
        alloc: "alloc", free: "free", free_completed: "free" }[e.op];
      if (!kind) return;
      var r;
      if (kind === "kernel" || kind === "copy") {
        var s = e.start, w = Math.max(3, x(s + (typeof e.dur === "number" ? e.dur : 0)) - x(s));
        r = el("rect", { x: x(s), y: y0 + 3, width: w, height: LH - 10, fill: C[kind],
          "shape-rendering": "crispEdges" }, lanes);
      } else {
        r = el("rect", { x: x(e.t) - 1, y: y0 + (kind === "alloc" ? 1 : 11), width: 3, height: 10,
          fill: C[kind], "shape-rendering": "crispEdges" }, lanes);
      }
      el("title", {}, r).textContent = e.label + (e.src ? " @ " + e.src : "");
    });
  });
  axis(lanes, ids.length * LH + 24);

  // The events, with their source locations.
  var body = document.getElementById("events");
  var n = Math.min(ev.length, D.max_rows);
  for (var i = 0; i < n; i++) {
    var e = ev[i], tr = document.createElement("tr");
    tr.className = "ev";
    var details = [];
    ["rule", "kind", "reused_from", "cause", "event", "dst", "src_buffer", "dur", "name", "value"]
      .forEach(function (k) { if (e[k] !== undefined) details.push(k + "=" + e[k]); });
    [e.seq, e.t.toFixed(4), e.op, e.src, e.stream, e.pool, e.buffer !== undefined ? "b" + e.buffer : "",
     e.addr, e.size !== undefined ? bytes(e.size) : "",
     e.reserved !== undefined ? bytes(e.reserved) : "", e.used !== undefined ? bytes(e.used) : "",
     e.pending !== undefined ? bytes(e.pending) : "", details.join(" ")]
      .forEach(function (v, j) {
        var td = document.createElement("td");
        td.textContent = v === undefined || v === null ? "" : String(v);
        if (j === 0 || j === 1 || (j >= 8 && j <= 11)) td.className = "num";
        tr.appendChild(td);
      });
    body.appendChild(tr);
  }
  document.getElementById("count").textContent = ev.length > n
    ? "showing the first " + n + " of " + ev.length + " events"
    : ev.length + " events";
})();
]==]

local function legend()
  local parts = {}
  for _, k in ipairs { "reserved", "used", "pending", "kernel", "copy", "alloc", "free" } do
    parts[#parts + 1] = string.format('<span><i style="background:%s"></i>%s</span>', M.colours[k], k)
  end
  return '<div class="legend">' .. table.concat(parts) .. "</div>"
end

--- The page.
function M.encode(events, meta)
  return table.concat {
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
    "<title>poolsh trace</title>\n<style>", STYLE, "</style>\n</head>\n<body>\n",
    '<h1 id="title">poolsh trace</h1>\n', legend(), "\n",
    '<div id="pools"></div>\n<h2>Streams</h2>\n<div id="streams"></div>\n',
    '<h2>Events <span class="note" id="count"></span></h2>\n',
    "<table>\n<thead><tr><th>seq</th><th>t (ms)</th><th>op</th><th>src</th><th>stream</th><th>pool</th>",
    "<th>buffer</th><th>addr</th><th>size</th><th>reserved</th><th>used</th><th>pending</th>",
    "<th>details</th></tr></thead>\n",
    '<tbody id="events"></tbody>\n</table>\n',
    '<script type="application/json" id="poolsh-data">', util.json(M.data(events, meta)), "</script>\n",
    "<script>", SCRIPT, "</script>\n</body>\n</html>\n",
  }
end

return M
