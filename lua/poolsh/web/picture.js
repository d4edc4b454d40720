/* poolsh's memory map (docs/export.md, "The HTML page"; docs/web.md): the
 * one renderer of a pool's blocks by address, drawn from event rows (the
 * rows of poolsh.core.trace_html: lua/poolsh/export/html.lua's row()).
 * The HTML export inlines this file and draws its maps with it; the
 * playground's pane and `poolsh --view` load it as a file and call
 * PoolshPicture.draw(element, snapshot) with lua/poolsh/web/picture.lua's
 * snapshot. Plain DOM and SVG, no library, no request. */
var PoolshPicture = (function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var SEQ = 0, T = 1, OP = 2, ST = 3, PO = 4, START = 5, DUR = 6, LABEL = 7, SRC = 8,
      BUF = 9, ADDR = 10, SIZE = 11, RES = 12, USED = 13, PEND = 14, DET = 15;

  function bytes(n) {
    var u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : String(n)) + " " + u[i];
  }
  // "rule=stream order kind=pool" -> {rule: "stream order", kind: "pool"}
  function parseDet(s) {
    var o = {}, re = /(?:^| )([a-z_]+)=/g, m, keys = [];
    if (!s) return o;
    while ((m = re.exec(s))) keys.push([m[1], m.index + m[0].length, m.index]);
    for (var j = 0; j < keys.length; j++) o[keys[j][0]] = s.slice(keys[j][1], j + 1 < keys.length ? keys[j + 1][2] : s.length);
    return o;
  }
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function hexnum(h) { return h ? parseInt(h, 16) : null; }

  // The memory map's model from the rows R: per pool (maps[k], in the
  // order first seen) its blocks (i0 alloc, i1 free, i2 memory free again:
  // row indices, null for not in the rows), reservations (chunks) and
  // releases; blocks of no pool in others.
  function model(R) {
    var n = R.length, i, r;
    var maps = {}, mapOrder = [], bufs = {}, others = [], ranges = {};
    function M(k) {
      var m = maps[k];
      if (!m) { m = maps[k] = { k: k, blocks: [], chunks: [], releases: [], active: {} }; mapOrder.push(k); }
      return m;
    }
    function done(b, j) { if (b.i2 === null) { b.i2 = j; if (b.i1 === null) b.i1 = j; } if (b.m) delete b.m.active[b.id]; }
    for (i = 0; i < n; i++) {
      r = R[i];
      var op = r[OP], det;
      if (op === "alloc") {
        det = parseDet(r[DET]);
        var b = { id: i, i0: i, i1: null, i2: null, buf: r[BUF], addr: hexnum(r[ADDR]), size: r[SIZE] || 0,
          st: r[ST], pst: r[ST], src: r[SRC], name: r[LABEL].replace(/^alloc /, ""), kind: det.kind || "pool",
          rule: det.rule, from: det.reused_from !== undefined ? +det.reused_from : null, before: !!det.before };
        var old = b.from !== null ? bufs[b.from] : null;
        if (r[BUF] !== null) bufs[r[BUF]] = b;
        if (r[PO] !== null && b.kind === "pool" && b.addr !== null) {
          b.m = M(String(r[PO]));
          b.m.blocks.push(b); b.m.active[b.id] = b;
          if (old) { b.old = old; done(old, i); }
        } else others.push(b);
      } else if ((op === "free" || op === "free_completed") && r[BUF] !== null && bufs[r[BUF]]) {
        var fb = bufs[r[BUF]];
        if (op === "free" && fb.i1 === null) {
          fb.i1 = i; fb.pst = r[ST];
          if (r[PEND] === 0 || !fb.m) done(fb, i);
        } else if (op === "free_completed") done(fb, i);
      } else if (op === "reserve" && r[PO] !== null) {
        // the alloc that made the pool reserve is recorded just before its reserve
        var i0 = i > 0 && R[i - 1][OP] === "alloc" && R[i - 1][PO] === r[PO] ? i - 1 : i;
        M(String(r[PO])).chunks.push({ addr: hexnum(r[ADDR]), size: r[SIZE] || 0, i0: i0, i1: null });
      } else if (op === "release" && r[PO] !== null) {
        var m = M(String(r[PO])), cause = parseDet(r[DET]).cause || "";
        m.releases.push({ i: i, size: r[SIZE] || 0, cause: cause });
        // the reservations let go: those no live or pending block holds, newest first
        var left = r[SIZE] || 0, act = Object.keys(m.active).slice(0, 20000).map(function (id) { return m.active[id]; });
        // (then those whose blocks are all freed: their frees completed by now)
        for (var pass = 0; pass < 2; pass++) {
          for (var c = m.chunks.length - 1; c >= 0 && left > 0; c--) {
            var ch = m.chunks[c];
            if (ch.i1 !== null || ch.addr === null || ch.size > left) continue;
            var inside = act.filter(function (ab) { return ab.addr < ch.addr + ch.size && ab.addr + ab.size > ch.addr; });
            if (inside.length && (pass === 0 || inside.some(function (ab) { return ab.i1 === null; }))) continue;
            inside.forEach(function (ab) { done(ab, i); });
            ch.i1 = i; ch.cause = cause; left -= ch.size;
          }
        }
      } else if ((op === "vmm_reserve" || op === "vmm_free") && r[LABEL]) {
        var rid = r[LABEL].split(" ")[1];
        if (op === "vmm_reserve") {
          ranges[rid] = { id: i, i0: i, i1: null, i2: null, size: r[SIZE] || 0, name: rid, kind: "vmm range",
            src: r[SRC], st: null };
          others.push(ranges[rid]);
        } else if (ranges[rid]) { ranges[rid].i1 = ranges[rid].i2 = i; }
      }
    }
    // address -> offset: reservations and blocks in address order, gaps squeezed
    mapOrder.forEach(function (k) {
      var m = maps[k], iv = [];
      m.chunks.forEach(function (c) { if (c.addr !== null) iv.push([c.addr, c.addr + c.size]); });
      m.blocks.forEach(function (b) { iv.push([b.addr, b.addr + Math.max(1, b.size)]); });
      iv.sort(function (a, b) { return a[0] - b[0]; });
      var segs = [], total = 0;
      iv.forEach(function (v) {
        var s = segs[segs.length - 1];
        if (s && v[0] <= s.b) { if (v[1] > s.b) s.b = v[1]; }
        else segs.push({ a: v[0], b: v[1] });
      });
      segs.forEach(function (s) { s.off = total; total += s.b - s.a; });
      m.segs = segs; m.total = Math.max(1, total);
      m.blocks.forEach(function (b, j) { b.k = j; });
    });
    return { maps: maps, order: mapOrder, others: others, bufs: bufs };
  }

  function offsetOf(m, addr) {
    var lo = 0, hi = m.segs.length - 1;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (m.segs[mid].a <= addr) lo = mid; else hi = mid - 1; }
    var s = m.segs[lo];
    return s ? [s.off + Math.max(0, addr - s.a), lo] : [0, 0];
  }

  // A block's tooltip text; g as drawMap's.
  function describe(b, g) {
    var R = g.R;
    function tOf(j) { return j === null ? null : R[j][T]; }
    var lines = [b.name + "  " + bytes(b.size) + " (" + b.kind + ")" + (b.st !== null ? " on " + g.streamName(b.st) : "")];
    lines.push((b.before ? "allocated before the events shown" : "alloc at " + R[b.i0][T].toFixed(4) + " ms (event " + R[b.i0][SEQ] + ")") +
      (b.i1 !== null ? ", freed at " + tOf(b.i1).toFixed(4) + " ms" : ", never freed in the trace") +
      (b.i2 !== null && b.i2 !== b.i1 ? ", memory free again at " + tOf(b.i2).toFixed(4) + " ms" : ""));
    if (b.i1 !== null && b.i2 !== b.i1) lines.push("pending on " + g.streamName(b.pst) + " until " + (b.i2 !== null ? "its free completed or the memory was taken" : "the end of the trace"));
    if (b.src) lines.push("site: " + b.src);
    if (b.old) lines.push("reused " + b.old.name + "'s memory by " + (b.rule || "?"));
    else if (b.kind === "pool" && !b.before) lines.push("fresh memory");
    return lines.join("\n");
  }
  // Tooltips on svg's elements that carry data-b (an index into list).
  function hover(tip, svg, list, text) {
    function show(ev, s) {
      tip.textContent = s; tip.style.display = "block";
      var x = ev.clientX + 12, y = ev.clientY + 12;
      tip.style.left = Math.min(x, window.innerWidth - tip.offsetWidth - 4) + "px";
      tip.style.top = Math.min(y, window.innerHeight - tip.offsetHeight - 4) + "px";
    }
    function on(ev) {
      var k = ev.target.getAttribute && ev.target.getAttribute("data-b");
      if (k === null || k === undefined) { tip.style.display = "none"; return; }
      show(ev, text(list[+k]));
    }
    svg.addEventListener("mousemove", on);
    svg.addEventListener("mouseover", on);
    svg.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  }

  // One pool's map m as an <svg>: g holds R, W, PAD, RIGHT, MTOP, MH,
  // MBOT, GAP, C (colours), max_blocks, mv (the range shown, {a, b}),
  // xval(j, last), mx(v), clip(px), streamName(id), streamColour(id), id
  // (the markers' prefix), pool (its name), after(svg, h) (axis, steps)
  // and now (rows from this index on are the last statement's: drawn
  // highlighted; null: none). -> {svg, shown, visible, arrows}.
  function drawMap(m, g) {
    var R = g.R, C = g.C, W = g.W, PAD = g.PAD, RIGHT = g.RIGHT, MTOP = g.MTOP, MH = g.MH, MBOT = g.MBOT,
        GAP = g.GAP, mv = g.mv, xval = g.xval, mx = g.mx, clip = g.clip, now = g.now;
    function isNow(j) { return now !== null && now !== undefined && j !== null && j >= now; }
    var h = MTOP + MH + MBOT, svg = el("svg", { width: W, height: h, "class": "map", "data-pool": g.pool });
    var defs = el("defs", {}, svg), mk = el("marker", { id: "arrow-" + g.id + "-" + m.k, viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, defs);
    el("path", { d: "M0 0L10 5L0 10z", fill: "#333" }, mk);
    var gapTotal = Math.max(0, m.segs.length - 1) * GAP, scale = (MH - gapTotal) / m.total;
    function y(addr) { var o = offsetOf(m, addr); return MTOP + o[0] * scale + o[1] * GAP; }
    function hgt(size) { return Math.max(1, size * scale); }
    function x0(j) { return clip(mx(xval(j, false))); }
    function x1(j) { return clip(mx(xval(j, j !== null))); }
    function visible(j0, j1) { return xval(j1, j1 !== null) >= mv.a && xval(j0, false) <= mv.b; }
    // the address scale, per segment: its offset at its top
    el("text", { x: 4, y: MTOP + 9 }, svg).textContent = "0 B";
    el("text", { x: 4, y: MTOP + MH }, svg).textContent = bytes(m.total);
    m.segs.forEach(function (s, j) {
      if (j === 0) return;
      var sy = MTOP + s.off * scale + j * GAP - GAP / 2;
      el("line", { x1: PAD, x2: W - RIGHT, y1: sy, y2: sy, stroke: "#bbb", "stroke-dasharray": "2 4", "class": "gap" }, svg);
    });
    m.chunks.forEach(function (c) {
      if (c.addr === null || !visible(c.i0, c.i1)) return;
      var r1 = el("rect", { x: x0(c.i0), y: y(c.addr), width: Math.max(1, x1(c.i1) - x0(c.i0)), height: hgt(c.size),
        fill: C.chunk, "class": "chunk" }, svg);
      el("title", {}, r1).textContent = "reserved " + bytes(c.size) + " (free when no block covers it)";
      if (c.i1 !== null && xval(c.i1, false) <= mv.b) {
        var rr = el("rect", { x: x0(c.i1), y: y(c.addr), width: Math.max(1, clip(mx(mv.b)) - x0(c.i1)), height: hgt(c.size),
          fill: C.released, "class": "released" }, svg);
        el("title", {}, rr).textContent = "released to the driver by " + (c.cause || "?");
      }
    });
    // blocks in the range shown, the largest size x duration first when too many
    var vis = m.blocks.filter(function (b) { return visible(b.i0, b.i2 !== null ? b.i2 : b.i1); });
    var shown = vis;
    if (vis.length > g.max_blocks) {
      shown = vis.map(function (b) {
        return [b, b.size * (Math.min(xval(b.i2 !== null ? b.i2 : b.i1, true), mv.b) - Math.max(xval(b.i0, false), mv.a))];
      }).sort(function (a, c) { return c[1] - a[1]; }).slice(0, g.max_blocks).map(function (v) { return v[0]; });
    }
    var drawn = {};
    shown.forEach(function (b) {
      drawn[b.id] = true;
      var by = y(b.addr), bh = hgt(b.size), xa = x0(b.i0), xb = x1(b.i1), hot = isNow(b.i0) || isNow(b.i1);
      el("rect", { x: xa, y: by, width: Math.max(1, xb - xa), height: bh, fill: C.live, stroke: hot ? C.now : "#fff",
        "stroke-width": hot ? 2 : bh > 3 ? 0.5 : 0, "class": hot ? "live now" : "live", "data-b": b.k }, svg);
      if (g.labels && bh >= 15 && xb - xa >= 7.5 * b.name.length + 8) {   // the live picture names its blocks
        el("text", { x: xa + 4, y: by + Math.min(bh, 30) / 2 + 5, fill: "#fff", "class": "block-name",
          "pointer-events": "none" }, svg).textContent = b.name;
      }
      if (b.i1 !== null && b.i2 !== b.i1) {   // until the free completed, or up to the alloc that took it
        var xc = b.i2 !== null && R[b.i2][OP] === "alloc" ? x0(b.i2) : x1(b.i2);
        var attrs = { x: xb, y: by, width: Math.max(1, xc - xb), height: bh, fill: g.streamColour(b.pst),
          "class": isNow(b.i1) ? "pending now" : "pending", "data-b": b.k, "data-stream": g.streamName(b.pst) };
        if (isNow(b.i1)) { attrs.stroke = C.now; attrs["stroke-width"] = 2; }
        el("rect", attrs, svg);
      }
    });
    // reuse: an arrow from the new block's start back to where the old one's memory came free
    var arrows = 0;
    shown.forEach(function (b) {
      if (!b.old || !drawn[b.old.id]) return;
      var xa = x0(b.i0), ya = y(b.addr) + hgt(b.size) / 2, o = b.old, hot = isNow(b.i0);
      var xo = x1(o.i2 !== null ? o.i2 : o.i1), yo = y(o.addr) + hgt(o.size) / 2;
      var lift = Math.min(MTOP - 4, 10 + Math.abs(xa - xo) / 4);
      el("path", { d: "M" + xa + " " + ya + "C" + xa + " " + (ya - lift) + " " + xo + " " + (yo - lift) + " " + xo + " " + yo,
        fill: "none", stroke: hot ? C.now : "#333", "stroke-width": hot ? 2.5 : 1, "marker-end": "url(#arrow-" + g.id + "-" + m.k + ")",
        "class": hot ? "reuse now" : "reuse", "data-b": b.k }, svg);
      arrows++;
    });
    var rowEnd = [0, 0];
    m.releases.forEach(function (rl) {
      var v = xval(rl.i, false);
      if (v < mv.a || v > mv.b) return;
      var px = mx(v);
      el("line", { x1: px, x2: px, y1: MTOP - 4, y2: MTOP + MH, stroke: C.used, "stroke-width": 2, "class": "release" }, svg);
      var label = (rl.cause || "?") + " released " + bytes(rl.size), lw = label.length * 6.2 + 6;
      var lx = Math.max(PAD, Math.min(px + 3, W - RIGHT - lw));
      // the first of two rows above the map where the label fits, else the upper one
      var row = lx >= rowEnd[1] ? 1 : lx >= rowEnd[0] ? 0 : (rowEnd[0] <= rowEnd[1] ? 0 : 1);
      rowEnd[row] = lx + lw;
      var tx = el("text", { x: lx, y: row === 1 ? MTOP - 6 : MTOP - 18, fill: C.used, "class": "release-label" }, svg);
      tx.textContent = label;
    });
    if (g.after) g.after(svg, h);
    svg.setAttribute("data-blocks", shown.length);
    svg.setAttribute("data-total", m.blocks.length);
    svg.setAttribute("data-arrows", arrows);
    return { svg: svg, shown: shown.length, visible: vis.length, arrows: arrows };
  }

  // ---- The live picture: a snapshot of lua/poolsh/web/picture.lua drawn
  // into element, every pool's map in event order over the rows it holds.
  function div(cls, text, parent) {
    var d = document.createElement("div");
    d.className = cls;
    if (text !== undefined) d.textContent = text;
    if (parent) parent.appendChild(d);
    return d;
  }
  // The legend: the states, a pending colour for each stream in streams
  // (ids, with streamName and streamColour), the outline of now.
  function legend(snap, parent, streams, streamName, streamColour) {
    var C = snap.colours, box = div("pp-legend", undefined, parent);
    var items = [["live", C.live, "live"]];
    (streams || []).slice(0, 8).forEach(function (id) {
      items.push(["pending", streamColour(id), "pending on " + streamName(id)]);
    });
    items.push(["chunk", C.chunk, "reserved, free"], ["released", C.released, "released"], ["now", C.now, "the last statement"]);
    items.forEach(function (v) {
        var s = document.createElement("span"), i = document.createElement("i");
        i.style.background = v[0] === "now" ? "transparent" : v[1];
        if (v[0] === "now") i.style.border = "2px solid " + v[1];
        s.appendChild(i); s.appendChild(document.createTextNode(v[2])); box.appendChild(s);
      });
    var s2 = document.createElement("span");
    s2.textContent = "\u2934 reuse";
    box.appendChild(s2);
  }

  // draw(element, snapshot): replaces element's content by the picture.
  function draw(element, snap) {
    element.textContent = "";
    element.classList.add("poolsh-picture");
    if (!snap || typeof snap !== "object") { div("pp-empty", "no picture", element); return; }
    var tip = element.querySelector(".pp-tip") || div("pp-tip", undefined, element);
    var R = snap.rows || [], n = R.length, C = snap.colours;
    var head = div("pp-head", undefined, element);
    if (snap.status) div("pp-status", snap.status, head);
    var cs = window.getComputedStyle(element), inner = element.clientWidth - (parseFloat(cs.paddingLeft) || 0) -
        (parseFloat(cs.paddingRight) || 0);
    var mdl = model(R), W = Math.max(280, Math.floor(inner) - 4);
    var streams = snap.streams || {}, pools = snap.pools_named || {};
    var laneIds = Object.keys(streams).sort(function (a, b) { return a - b; });
    function streamName(id) { return id === null || id === undefined ? "no stream" : (streams[String(id)] || "s" + id); }
    function streamColour(id) {
      var j = laneIds.indexOf(String(id));
      return snap.stream_colours[(j < 0 ? 0 : j) % snap.stream_colours.length];
    }
    if (!mdl.order.length) {
      div("pp-empty", snap.empty || "Your pools' memory map appears here: allocate a block (b = p:alloc(\"4 MiB\", s)).", element);
      return;
    }
    var pendingStreams = [];
    mdl.order.forEach(function (k) {
      mdl.maps[k].blocks.forEach(function (b) {
        if (b.i1 !== null && b.i2 !== b.i1 && pendingStreams.indexOf(String(b.pst)) < 0) pendingStreams.push(String(b.pst));
      });
    });
    if (!pendingStreams.length) pendingStreams = laneIds.slice(0, 1);
    legend(snap, element, pendingStreams.sort(function (a, b) { return a - b; }), streamName, streamColour);
    // one column past the last event: now (what is still live or pending reaches it)
    var total = n + 1, mv = { a: 0, b: total };
    var PAD = 70, RIGHT = 8, MTOP = 30, MBOT = 18, GAP = 4;
    var MH = Math.max(120, Math.min(320, Math.floor(((element.clientHeight || 600) - 90) / mdl.order.length) - MTOP - MBOT - 40));
    function xval(j, last) { return j === null ? total : j + (last ? 1 : 0); }
    function mx(v) { return PAD + (v - mv.a) / (mv.b - mv.a) * (W - PAD - RIGHT); }
    function clip(v) { return Math.max(PAD, Math.min(W - RIGHT, v)); }
    function after(svg, h) {
      svg.setAttribute("data-now-x", mx(total));
      el("line", { x1: PAD, x2: W - RIGHT, y1: h - MBOT, y2: h - MBOT, stroke: "#999" }, svg);
      var first = n ? R[0][SEQ] : 0, last = n ? R[n - 1][SEQ] : 0;
      el("text", { x: PAD, y: h - 4 }, svg).textContent = n ? "event " + first : "";
      el("text", { x: W - RIGHT, y: h - 4, "text-anchor": "end" }, svg).textContent = n ? "event " + last + " (now)" : "";
      if (snap.now !== null && snap.now !== undefined && snap.now < n) {
        var px = mx(snap.now);
        el("line", { x1: px, x2: px, y1: MTOP - 4, y2: h - MBOT, stroke: C.now, "stroke-dasharray": "4 3", "class": "now-mark" }, svg);
      }
    }
    mdl.order.forEach(function (k) {
      var m = mdl.maps[k], name = pools[k] || "p" + k, info = (snap.pools || []).filter(function (p) { return String(p.id) === k; })[0];
      var h3 = div("pp-pool", name + (info ? "  reserved " + bytes(info.reserved) + "  used " + bytes(info.used) +
        "  pending " + bytes(info.pending) : "  (gone)"), element);
      h3.setAttribute("data-pool", name);
      var g = { R: R, C: C, W: W, PAD: PAD, RIGHT: RIGHT, MTOP: MTOP, MH: MH, MBOT: MBOT, GAP: GAP, mv: mv,
        max_blocks: snap.max_blocks, xval: xval, mx: mx, clip: clip, streamName: streamName, streamColour: streamColour,
        id: "live", pool: name, after: after, now: snap.now, labels: true };
      var res = drawMap(m, g);
      hover(tip, res.svg, m.blocks, function (b) { return describe(b, g); });
      element.appendChild(res.svg);
      if (res.visible > res.shown) div("pp-note", res.shown + " of " + res.visible + " blocks drawn (the largest first)", element);
    });
    if (snap.left_out) div("pp-note", snap.left_out + " older events left out (the picture keeps the last " + n + ")", element);
  }

  // view(element, wait, url): `poolsh --view`'s page. Polls url (state.json,
  // relative to the page) every 300 ms as url?v=<last version seen>; a 204
  // means unchanged; a new version is drawn; a failed poll (poolsh gone,
  // busy, no network) is said in wait, and polling goes on.
  function view(element, wait, url) {
    var last = -1, snap = null;
    function again() { setTimeout(poll, 300); }
    function poll() {
      var x = new XMLHttpRequest();
      x.open("GET", url + "?v=" + last);
      x.timeout = 5000;
      x.onload = function () {
        if (x.status === 204) { wait.textContent = ""; return again(); }
        if (x.status !== 200) { wait.textContent = "waiting for poolsh (it answered " + x.status + ")"; return again(); }
        try { snap = JSON.parse(x.responseText); } catch (e) { wait.textContent = "waiting for poolsh (a bad answer)"; return again(); }
        wait.textContent = "";
        if (typeof snap.version === "number") last = snap.version;
        draw(element, snap);
        again();
      };
      x.onerror = x.ontimeout = function () { wait.textContent = "waiting for poolsh (no answer: is it still running?)"; again(); };
      x.send();
    }
    window.addEventListener("resize", function () { if (snap) draw(element, snap); });
    poll();
  }
  // picture.js loaded by view.html with a data-view attribute (state.json) starts the page's polling.
  if (typeof document !== "undefined" && document.currentScript && document.currentScript.getAttribute("data-view")) {
    var url = document.currentScript.getAttribute("data-view");
    var start = function () { view(document.getElementById("picture"), document.getElementById("wait"), url); };
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
  }

  return { draw: draw, view: view, model: model, drawMap: drawMap, describe: describe, hover: hover, bytes: bytes,
           parseDet: parseDet, el: el, rows: { SEQ: SEQ, T: T, OP: OP, ST: ST, PO: PO, START: START, DUR: DUR,
           LABEL: LABEL, SRC: SRC, BUF: BUF, ADDR: ADDR, SIZE: SIZE, RES: RES, USED: USED, PEND: PEND, DET: DET } };
})();
