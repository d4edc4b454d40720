// Benchmark of the playground page (docs/performance.md, "The page"), in
// one run on one machine:
//  - start-up: from navigation to the first prompt, each load a new page
//    with the browser's cache off, over python3's http.server and from
//    disk (file://);
//  - the cost of an alloc+free pair: the same Lua loop timed in the page
//    (over HTTP) and by the native poolsh on the sim, round after round,
//    each round its own statement in both, as a REPL runs them.
// Usage: NODE_PATH=build/web-src/node_modules node scripts/bench_web.js [build] [loads] [rounds]
'use strict';
const { execFileSync, spawn } = require('child_process');
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

// The native figure: the rounds as separate chunks of one poolsh -e.
function native() {
  const lua = [SETUP, 'local r = {}',
    `for i = 1, ${WARMUP + ROUNDS} do load(${JSON.stringify(ROUND)})() r[i] = bench_ns end`,
    `print(table.concat(r, " ", ${WARMUP + 1}))`].join('\n');
  const out = execFileSync(path.join(build, 'poolsh'), ['--backend=sim', '-e', lua], { encoding: 'utf8' });
  return out.trim().split(/\s+/).map(Number);
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

// The rounds in the page: each its own statement; ns a pair.
async function pairs(browser, url) {
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForFunction(() => window.poolshPage && window.poolshPage.ready, WAIT);
  await statement(page, SETUP);
  const r = [];
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    await statement(page, ROUND);
    r.push(await page.evaluate(async () => {
      const p = window.poolshPage;
      await p.module.ccall('poolsh_web_line', 'number', ['string'],
        ['require("poolsh.web.storage").set("poolsh/bench", tostring(bench_ns))'], { async: true });
      return Number(localStorage.getItem('poolsh/bench'));
    }));
  }
  const one = [];
  for (let i = 0; i < 20; i++) one.push(await statement(page, 'b = bench_p:alloc(1048576, bench_s); b:free()'));
  await page.close();
  return { ns: r.slice(WARMUP), statement_ms: one };
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
    const nat1 = native();
    const web = await pairs(browser, server.url);
    const nat2 = native();
    const nat = nat1.concat(nat2);
    const fmt = v => v.map(x => Math.round(x)).join(' ');
    console.log(`first prompt over HTTP, ms (${LOADS} loads): median ${median(http)}, max ${Math.max(...http)}  [${fmt(http)}]`);
    console.log(`first prompt from disk, ms (${LOADS} loads): median ${median(disk)}, max ${Math.max(...disk)}  [${fmt(disk)}]`);
    console.log(`alloc+free pair, ns (${ROUNDS} rounds of ${PAIRS} after ${WARMUP} dropped):`);
    console.log(`  page    min ${Math.round(min(web.ns))}  median ${Math.round(median(web.ns))}`);
    console.log(`  native  min ${Math.round(min(nat))}  median ${Math.round(median(nat))}  (before and after the page's rounds)`);
    console.log(`  ratio page/native: min ${(min(web.ns) / min(nat)).toFixed(2)}  median ${(median(web.ns) / median(nat)).toFixed(2)}`);
    console.log(`one statement 'b = p:alloc(...); b:free()' in the page, ms: median ${median(web.statement_ms).toFixed(2)}`);
  } finally {
    await browser.close();
    server.stop();
  }
})().catch(e => { console.error('bench_web: ' + e.message); process.exit(1); });
