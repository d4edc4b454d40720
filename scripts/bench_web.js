// Benchmark of the playground page (docs/performance.md, "The page"), in
// one run on one machine:
//  - start-up: from navigation to the first prompt, each load a new page
//    with the browser's cache off, over python3's http.server and from
//    disk (file://);
//  - the cost of an alloc+free pair: the same Lua loop timed in the page
//    (over HTTP) and by the native poolsh on the sim, round after round,
//    each round its own statement in both, as a REPL runs them, a page
//    round and native rounds in turn; the page records for its picture,
//    so native runs without and with that recording.
// Usage: NODE_PATH=build/web-src/node_modules node scripts/bench_web.js [build] [loads] [rounds]
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

const build = path.resolve(process.argv[2] || 'build');
const LOADS = Number(process.argv[3] || 7);
const ROUNDS = Number(process.argv[4] || 41);
const PAIRS = 20000;      // pairs a round
const WARMUP = 10;        // rounds run and dropped first (V8 tiers up wasm
                          // per call: a statement's code is fast from the next)
const CHROMIUM = process.env.POOLSH_CHROMIUM || '/usr/bin/chromium';
const WAIT = { timeout: 60000 };

// One round: PAIRS alloc+free pairs of 1 MiB on a pool that keeps its
// memory, in ns a pair. The same text runs in the page and natively.
const SETUP = 'bench_s = poolsh.stream(); bench_p = poolsh.pool{release_threshold = "max"}';
const ROUND = 'local p, s, t0 = bench_p, bench_s, poolsh.wallclock() ' +
  `for _ = 1, ${PAIRS} do local b = p:alloc(1048576, s); b:free() end ` +
  `bench_ns = (poolsh.wallclock() - t0) / ${PAIRS} * 1e9`;

function median(v) { const s = [...v].sort((a, b) => a - b); return s[(s.length - 1) >> 1]; }
function min(v) { return Math.min(...v); }

// A native poolsh on the sim that runs a round for each line it reads
// and answers ns a pair; picture: with the recording the picture draws
// from on (the page's pane, poolsh --view), as in the page. -> round(),
// a promise of the next round's figure, and stop().
function native(picture) {
  const lua = [picture ? 'require("poolsh.web.picture").version()' : '', SETUP,
    `local round = load(${JSON.stringify(ROUND)})`,
    'for _ in io.lines() do round() print(bench_ns) io.stdout:flush() end'].join('\n');
  const child = spawn(path.join(build, 'poolsh'), ['--backend=sim', '-e', lua], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = [];
  let buf = '';
  child.stdout.on('data', d => {
    buf += d;
    for (let n; (n = buf.indexOf('\n')) >= 0; buf = buf.slice(n + 1)) waiting.shift()(Number(buf.slice(0, n)));
  });
  return {
    round: () => new Promise(resolve => { waiting.push(resolve); child.stdin.write('\n'); }),
    stop: () => child.stdin.end(),
  };
}

// Serves dir with python3's http.server on a free loopback port.
function serve(dir) {
  return new Promise((resolve, reject) => {
    const p = spawn('python3', ['-u', '-m', 'http.server', '--bind', '127.0.0.1', '-d', dir, '0'],
                    { stdio: ['ignore', 'pipe', 'ignore'] });
    p.stdout.on('data', d => {
      const m = /port (\d+)/.exec(String(d));
      if (m) resolve({ url: `http://127.0.0.1:${m[1]}/`, stop: () => p.kill() });
    });
    p.on('exit', () => reject(new Error('http.server exited')));
  });
}

// Navigation to first prompt, ms, for `loads` fresh pages without cache.
async function startup(browser, url, loads) {
  const times = [];
  for (let i = 0; i < loads; i++) {
    const page = await browser.newPage();
    await page.setCacheEnabled(false);
    const t0 = Date.now();
    await page.goto(url);
    await page.waitForFunction(() => window.poolshPage && window.poolshPage.ready, WAIT);
    times.push(Date.now() - t0);
    await page.close();
  }
  return times;
}

// Runs one statement in the page as the REPL does; its wall time in ms.
function statement(page, text) {
  return page.evaluate(async t => {
    const p = window.poolshPage, t0 = performance.now();
    await p.module.ccall('poolsh_web_line', 'number', ['string'], [t], { async: true });
    return performance.now() - t0;
  }, text);
}

// The page's rounds, each its own statement, each followed by a round of
// a native poolsh without and one of a native poolsh with the picture's
// recording, so that a machine that speeds up or slows down affects all
// three alike: ns a pair, per round.
async function pairs(browser, url) {
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForFunction(() => window.poolshPage && window.poolshPage.ready, WAIT);
  await statement(page, SETUP);
  const r = { web: [], nat: [], pic: [], statement_ms: [] };
  const nat = native(false), pic = native(true);
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    await statement(page, ROUND);
    const ns = await page.evaluate(async () => {
      const p = window.poolshPage;
      await p.module.ccall('poolsh_web_line', 'number', ['string'],
        ['require("poolsh.web.storage").set("poolsh/bench", tostring(bench_ns))'], { async: true });
      return Number(localStorage.getItem('poolsh/bench'));
    });
    const n = await nat.round(), p = await pic.round();
    if (i < WARMUP) continue;
    r.web.push(ns);
    r.nat.push(n);
    r.pic.push(p);
  }
  nat.stop();
  pic.stop();
  for (let i = 0; i < 20; i++) r.statement_ms.push(await statement(page, 'b = bench_p:alloc(1048576, bench_s); b:free()'));
  await page.close();
  return r;
}

// The median of v, with its quartiles.
function quartiles(v) {
  const s = [...v].sort((a, b) => a - b), q = f => s[Math.round(f * (s.length - 1))];
  return `${q(0.5).toFixed(2)} (quartiles ${q(0.25).toFixed(2)}-${q(0.75).toFixed(2)})`;
}

(async () => {
  const dir = path.join(build, 'web');
  if (!fs.existsSync(path.join(dir, 'index.html'))) throw new Error(`no web build in ${dir}`);
  const server = await serve(dir);
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
                                           args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const http = await startup(browser, server.url, LOADS);
    const disk = await startup(browser, 'file://' + path.join(dir, 'index.html'), LOADS);
    const r = await pairs(browser, server.url);
    const fmt = v => v.map(x => Math.round(x)).join(' ');
    const ratio = other => quartiles(r.web.map((w, i) => w / other[i]));
    console.log(`first prompt over HTTP, ms (${LOADS} loads): median ${median(http)}, max ${Math.max(...http)}  [${fmt(http)}]`);
    console.log(`first prompt from disk, ms (${LOADS} loads): median ${median(disk)}, max ${Math.max(...disk)}  [${fmt(disk)}]`);
    console.log(`alloc+free pair, ns (${ROUNDS} rounds of ${PAIRS}, the page's after ${WARMUP} dropped):`);
    console.log(`  page                                min ${Math.round(min(r.web))}  median ${Math.round(median(r.web))}`);
    console.log(`  native                              min ${Math.round(min(r.nat))}  median ${Math.round(median(r.nat))}`);
    console.log(`  native, recording as the page does  min ${Math.round(min(r.pic))}  median ${Math.round(median(r.pic))}`);
    console.log(`  page/native, per round: ${ratio(r.nat)}`);
    console.log(`  page/native recording as the page does, per round: ${ratio(r.pic)}`);
    console.log(`one statement 'b = p:alloc(...); b:free()' in the page, ms: median ${median(r.statement_ms).toFixed(2)}`);
  } finally {
    await browser.close();
    server.stop();
  }
})().catch(e => { console.error('bench_web: ' + e.message); process.exit(1); });
