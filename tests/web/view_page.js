// Drives `poolsh --view`'s page (lua/poolsh/web/view.html) in headless
// Chromium against tests/web/view_server.py and prints what it saw as one
// JSON object, for tests/spec/picture_spec.lua: the picture drawn from
// state.json, a new version redrawn, "waiting for poolsh" while the server
// fails or is gone, and every request the page made.
// Usage: node view_page.js URL DIR NEXT.json SERVER_PID   (NODE_PATH: puppeteer-core)
'use strict';
const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

const [url, dir, next, pid] = process.argv.slice(2);
const CHROMIUM = process.env.POOLSH_CHROMIUM || '/usr/bin/chromium';
const WAIT = { timeout: 30000 };

function seen(page) {
  return page.evaluate(() => {
    const svg = document.querySelector('#picture svg.map');
    return { wait: document.getElementById('wait').textContent,
             pools: Array.from(document.querySelectorAll('#picture svg.map')).map(s => s.getAttribute('data-pool')),
             live: svg ? svg.querySelectorAll('rect.live').length : 0,
             pending: svg ? svg.querySelectorAll('rect.pending').length : 0,
             text: document.getElementById('picture').textContent.slice(0, 400) };
  });
}

async function main() {
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu'] });
  const out = { requests: [], errors: [] };
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    page.on('request', r => out.requests.push(r.url()));
    page.on('pageerror', e => out.errors.push(String(e)));
    await page.goto(url);
    await page.waitForFunction(() => document.querySelector('#picture svg.map'), WAIT);
    out.first = await seen(page);
    await new Promise(r => setTimeout(r, 1000));          // unchanged: 204s, nothing redrawn
    fs.writeFileSync(path.join(dir, 'state.json'), fs.readFileSync(next));
    await page.waitForFunction(() => document.querySelectorAll('#picture svg.map rect.pending').length > 0, WAIT);
    out.next = await seen(page);
    fs.writeFileSync(path.join(dir, 'down'), '');
    await page.waitForFunction(() => /waiting for poolsh/.test(document.getElementById('wait').textContent), WAIT);
    out.down = await seen(page);
    fs.unlinkSync(path.join(dir, 'down'));
    await page.waitForFunction(() => document.getElementById('wait').textContent === '', WAIT);
    out.back = await seen(page);
    process.kill(+pid);                                   // poolsh gone
    await page.waitForFunction(() => /no answer/.test(document.getElementById('wait').textContent), WAIT);
    out.gone = await seen(page);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch(e => { process.stderr.write('view_page.js: ' + (e && e.stack || e) + '\n'); process.exit(1); });
