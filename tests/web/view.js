// Drives `poolsh --view`'s page in headless Chromium (puppeteer-core)
// while it types into the poolsh REPL that serves it (a tmux pane), and
// prints what it saw as one JSON object for tests/spec/view_spec.lua.
// Usage: node view.js URL TMUX_SOCKET PANE     (NODE_PATH: puppeteer-core)
'use strict';
const puppeteer = require('puppeteer-core');
const { execFileSync } = require('child_process');

const [url, sock, pane] = process.argv.slice(2);
const CHROMIUM = process.env.POOLSH_CHROMIUM || '/usr/bin/chromium';
const sleep = ms => new Promise(r => setTimeout(r, ms));

// Types text literally into the REPL, then Enter (or sends one key).
function type(text) {
  execFileSync('tmux', ['-L', sock, 'send-keys', '-t', pane, '-l', text]);
  execFileSync('tmux', ['-L', sock, 'send-keys', '-t', pane, 'Enter']);
}
function key(k) { execFileSync('tmux', ['-L', sock, 'send-keys', '-t', pane, k]); }

// What the page shows now: the pools' lines, the map's rectangles, the
// waiting line.
function seen(page) {
  return page.evaluate(() => ({
    pools: Array.from(document.querySelectorAll('.pp-pool')).map(e => e.textContent),
    rects: document.querySelectorAll('#picture svg rect').length,
    wait: (document.getElementById('wait') || {}).textContent || '',
  }));
}

// Polls the page until pred(seen) holds (timeout ms): what it saw last.
async function until(page, pred, timeout) {
  const end = Date.now() + (timeout || 15000);
  let s = await seen(page);
  while (!pred(s) && Date.now() < end) {
    await sleep(100);
    s = await seen(page);
  }
  s.ok = pred(s);
  return s;
}

(async () => {
  const out = { console: [] };
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage();
    page.on('console', m => out.console.push(m.text()));
    page.on('pageerror', e => out.console.push('pageerror: ' + e.message));
    const requests = [];
    page.on('request', r => requests.push(r.url()));
    await page.goto(url, { waitUntil: 'load' });
    const usedOf = s => (s.pools.find(t => t.startsWith('p ')) || '').replace(/.*used (\S+ \S+).*/, '$1');
    await sleep(1000);
    out.start = await seen(page);
    type('a = p:alloc("4 MiB", s)');
    out.alloc = await until(page, s => usedOf(s).startsWith('4'));
    type('a:free(); s:sync()');
    out.free = await until(page, s => usedOf(s) !== usedOf(out.alloc) && s.rects !== 0);
    out.free.ok = out.free.ok && usedOf(out.free).startsWith('0');
    // A busy REPL: the page is still answered, keeps its picture, says
    // nothing is wrong.
    type('while true do end');
    await sleep(1500);
    out.busy = await seen(page);
    out.busy.poll = await page.evaluate(async () => {
      const t0 = performance.now();
      const r = await fetch('state.json', { cache: 'no-store' });
      const body = await r.json();
      return { status: r.status, ms: performance.now() - t0, version: body.version };
    });
    await sleep(1000);
    out.busy_later = await seen(page);
    key('C-c');
    await sleep(300);
    type('b = p:alloc("8 MiB", s)');
    out.after = await until(page, s => usedOf(s).startsWith('8'));
    out.requests = requests.map(u => u.replace(url, '<page>/'));
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out) + '\n');
})().catch(e => { console.error('view.js:', e && e.stack || e); process.exit(1); });
