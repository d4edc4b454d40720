// Drives the playground page (build/web/index.html) in headless Chromium
// through puppeteer-core and prints what it saw as one JSON object, for
// tests/spec/web_spec.lua to check.
// Usage: node playground.js URL SCREENSHOT.png     (NODE_PATH: puppeteer-core)
'use strict';
const puppeteer = require('puppeteer-core');

const [url, shot] = process.argv.slice(2);
const CHROMIUM = process.env.POOLSH_CHROMIUM || '/usr/bin/chromium';
const WAIT = { timeout: 60000 };

// The terminal's buffer, its lines trimmed (a line the terminal wrapped
// joined again), the empty ones left out.
function screen(page) {
  return page.evaluate(() => {
    const b = window.poolshPage.term.buffer.active, out = [];
    for (let i = 0; i < b.length; i++) {
      const line = b.getLine(i), l = line.translateToString(true);
      if (line.isWrapped && out.length) out[out.length - 1] += l;
      else if (l) out.push(l);
    }
    return out.join('\n');
  });
}

// Waits until the page is at its prompt, nothing running or queued.
async function idle(page) {
  const still = () => { const p = window.poolshPage; return p && p.ready && !p.busy && !p.pumping; };
  await page.waitForFunction(still, WAIT);
  await new Promise(r => setTimeout(r, 50));
  await page.waitForFunction(still, WAIT);
}

// Types a statement and Enter, and waits for the prompt.
async function type(page, text) {
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
  await idle(page);
}

// What the new lines of the screen say after f() ran.
async function after(page, f) {
  const before = (await screen(page)).split('\n').length;
  await f();
  return (await screen(page)).split('\n').slice(before - 1).join('\n');
}

// The memory map in the #picture pane for pool `pool`: its rectangles
// by class and fill, and those that reach its right edge (the state now).
function map(page, pool) {
  return page.evaluate(pool => {
    const pane = document.getElementById('picture');
    const svg = pane.querySelector('svg.map[data-pool="' + pool + '"]');
    const out = { pane: pane.textContent.slice(0, 300), drawn: !!svg, live: 0, pending: 0, live_now: 0,
                  pending_now: 0, arrows: 0, now: 0, fills: {}, version: window.poolshPage.picture.version };
    if (!svg) return out;
    const rects = Array.from(svg.querySelectorAll('rect.live, rect.pending'));
    const edge = +svg.getAttribute('data-now-x');   // the column of now, past the last event
    for (const r of rects) {
      const kind = r.classList.contains('live') ? 'live' : 'pending';
      out[kind]++;
      if (+r.getAttribute('x') + +r.getAttribute('width') >= edge - 0.5) out[kind + '_now']++;
      (out.fills[kind] = out.fills[kind] || []).includes(r.getAttribute('fill')) ||
        out.fills[kind].push(r.getAttribute('fill'));
    }
    out.arrows = svg.querySelectorAll('path.reuse').length;
    out.now = svg.querySelectorAll('.now').length;
    out.colours = window.poolshPage.picture.snap.colours;
    out.stream_colours = window.poolshPage.picture.snap.stream_colours;
    return out;
  }, pool);
}

// What poolsh.core.blocks(p) says in the page: "live" and "pending", one
// a block, in address order.
const BLOCKS = 'print("blocks:" .. (function() local t = {} for _, b in ipairs(poolsh.core.blocks(p)) do ' +
  't[#t + 1] = b.pending and "pending" or "live" end return table.concat(t, ",") end)())';
async function blocks(page) {
  const said = await after(page, () => type(page, BLOCKS));
  const m = said.match(/\nblocks:([a-z,]*)/);
  return m ? m[1].split(',').filter(x => x) : null;
}

// The screenshot's pixels: how many differ from the background, and how
// many are green (the live lines' "+4.00 MiB"); with box ({x, y, width,
// height}) and rgb, how many of that colour lie inside the box.
function pixels(page, png, box, rgb) {
  return page.evaluate(async (b64, box, rgb) => {
    const img = new Image();
    img.src = 'data:image/png;base64,' + b64;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width, c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    let ink = 0, green = 0, inside = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] + d[i + 1] + d[i + 2] > 60) ink++;
      if (d[i + 1] > 120 && d[i] < 100 && d[i + 2] < 160) green++;
      if (box) {
        const x = (i / 4) % c.width, y = Math.floor(i / 4 / c.width);
        if (x >= box.x && x < box.x + box.width && y >= box.y && y < box.y + box.height &&
            Math.abs(d[i] - rgb[0]) < 8 && Math.abs(d[i + 1] - rgb[1]) < 8 && Math.abs(d[i + 2] - rgb[2]) < 8) inside++;
      }
    }
    return { width: c.width, height: c.height, ink, green, inside };
  }, png.toString('base64'), box || null, rgb || null);
}

function rgb(hex) { return [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16)); }

async function main() {
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--allow-file-access-from-files'] });
  const out = {};
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1000, height: 700 });
    const errors = [];
    page.on('pageerror', e => errors.push(String(e)));
    const t0 = Date.now();
    await page.goto(url);
    await idle(page);
    out.first_prompt_ms = Date.now() - t0;
    out.banner = await screen(page);
    await type(page, 's = poolsh.stream()');
    await type(page, 'p = poolsh.pool{}');
    out.alloc = await after(page, () => type(page, 'a = p:alloc("4 MiB", s)'));
    out.expression = await after(page, () => type(page, '=a.size'));
    out.multiline = await after(page, async () => {
      await type(page, 'for i = 1, 2 do');
      await type(page, 'print("line", i) end');
    });
    out.completion = await after(page, async () => {
      await page.keyboard.type('poolsh.str');
      await page.keyboard.press('Tab');
      await page.waitForFunction(() => true);
      await page.keyboard.type('():sync()');
      await page.keyboard.press('Enter');
      await idle(page);
    });
    out.candidates = await after(page, async () => {
      await page.keyboard.type('poolsh.de');
      await page.keyboard.press('Tab');
      await new Promise(r => setTimeout(r, 200));
      await page.keyboard.down('Control');
      await page.keyboard.press('KeyC');
      await page.keyboard.up('Control');
      await idle(page);
    });
    out.interrupt = await after(page, async () => {
      await page.keyboard.type('n = 0 while true do n = n + 1 end');
      await page.keyboard.press('Enter');
      await new Promise(r => setTimeout(r, 1500));
      out.busy_in_loop = await page.evaluate(() => window.poolshPage.busy);
      const t = Date.now();
      await page.keyboard.down('Control');
      await page.keyboard.press('KeyC');
      await page.keyboard.up('Control');
      await idle(page);
      out.interrupt_ms = Date.now() - t;
    });
    out.after_interrupt = await after(page, () => type(page, 'print("n counted", n > 0)'));
    out.spawn = await after(page, () => type(page, 'poolsh.spawn()'));
    out.saved = await after(page, () => type(page,
      'f = poolsh.core.open_atomic("/tmp/saved.txt") f:write("kept") f:commit() ' +
      'print("read back:", io.open("/tmp/saved.txt"):read("a"))'));
    out.help = await after(page, () => type(page, 'help()'));
    out.refusals = await after(page, async () => {
      for (const line of ['poolsh.pool{ipc = true}', 'p:export()', 'poolsh.import_pool("x")',
                          'poolsh.configure{backend = "cuda"}', 'os.execute("ls")',
                          'io.popen("ls")', 'os.exit()', 'poolsh.connect("x")'])
        await type(page, line);
    });
    out.history = await after(page, async () => {
      for (let i = 0; i < 12; i++) await page.keyboard.press('ArrowUp');
      await page.keyboard.press('Home');
      await page.keyboard.type('print(');
      await page.keyboard.press('End');
      await page.keyboard.type(')');
      await page.keyboard.press('Enter');
      await idle(page);
    });
    out.no_newline = await after(page, () => type(page, 'do io.write("no newline yet") end'));
    await page.keyboard.down('Control');
    await page.keyboard.press('KeyL');
    await page.keyboard.up('Control');
    await type(page, 'b = p:alloc("1 MiB", s)');
    out.cleared = await screen(page);
    out.page_errors = errors;
    const link = await browser.newPage();
    await link.goto(url + (url.includes('?') ? '&' : '?') + 'e=' +
                    encodeURIComponent('s = poolsh.stream()\nq = poolsh.pool{} x = q:alloc("2 MiB", s)'));
    await idle(link);
    await link.waitForFunction(() => window.poolshPage.term.buffer.active.length > 0, WAIT);
    out.link = await screen(link);
    await link.close();
    const lesson = await browser.newPage();
    await lesson.goto(url);
    await idle(lesson);
    out.lessons = await after(lesson, () => type(lesson, 'learn()'));
    out.lesson_start = await after(lesson, () => type(lesson, 'learn("same_stream")'));
    out.lesson_step = await after(lesson, () => type(lesson, 'a = p:alloc("4 MiB", s)'));
    await lesson.reload();
    await idle(lesson);
    out.lessons_kept = await after(lesson, () => type(lesson, 'learn()'));
    await lesson.close();
    // run() and scenarios(): poolsh run and poolsh scenarios in the page
    const sc = await browser.newPage();
    await sc.goto(url);
    await idle(sc);
    await type(sc, 'keep = poolsh.pool{}');
    out.scenarios = await after(sc, () => type(sc, 'scenarios()'));
    out.run_one = await after(sc, () => type(sc, 'run "same_stream"'));
    out.run_ipc = await after(sc, () => type(sc, 'run "ipc_share"'));
    out.run_refused = await after(sc, () => type(sc, 'run("trim", "--step")'));
    out.run_all = await after(sc, () => type(sc, 'run("--all", "--quiet")'));
    await sc.close();
    // The map beside the terminal: its rectangles against poolsh.core.blocks.
    const mp = await browser.newPage();
    await mp.setViewport({ width: 1280, height: 800 });
    mp.on('pageerror', e => errors.push(String(e)));
    await mp.goto(url);
    await idle(mp);
    out.map_empty = await map(mp, 'p');
    out.build = await mp.evaluate(() => window.poolshPage.build);
    out.startup_ms = await mp.evaluate(() => window.poolshPage.startup_ms);
    await type(mp, 's = poolsh.stream()');
    await type(mp, 'p = poolsh.pool{}');
    await type(mp, 'a = p:alloc("4 MiB", s)');
    out.map_alloc = await map(mp, 'p');
    out.blocks_alloc = await blocks(mp);
    await type(mp, 'a:free()');
    out.map_free = await map(mp, 'p');
    out.blocks_free = await blocks(mp);
    await type(mp, 'c = p:alloc("4 MiB", s)');
    out.map_reuse = await map(mp, 'p');
    out.blocks_reuse = await blocks(mp);
    await type(mp, 'c:free() s:sync()');
    out.map_sync = await map(mp, 'p');
    out.blocks_sync = await blocks(mp);
    await type(mp, 'd = p:alloc("8 MiB", s)');
    const paneBox = await mp.evaluate(() => {
      const r = document.getElementById('picture').getBoundingClientRect();
      return { x: Math.ceil(r.x), y: Math.ceil(r.y), width: Math.floor(r.width), height: Math.floor(r.height) };
    });
    out.map_shot = await pixels(mp, await mp.screenshot({ path: shot.replace(/\.png$/, '-map.png') }), paneBox,
                                rgb(out.map_alloc.colours ? out.map_alloc.colours.live : '#4e79a7'));
    // the map moves while a long loop runs (the count hook hands it over)
    out.map_loop = await mp.evaluate(() => window.poolshPage.picture.draws);
    await mp.keyboard.type('t0 = os.clock() while os.clock() - t0 < 1.5 do e = p:alloc("1 MiB", s) e:free() end');
    await mp.keyboard.press('Enter');
    await new Promise(r => setTimeout(r, 1000));
    out.map_loop_busy = await mp.evaluate(() => [window.poolshPage.busy, window.poolshPage.picture.draws]);
    await idle(mp);
    await type(mp, 'd:free() s:sync()');
    await mp.close();

    // ?lesson=NAME: the lesson at load; a wrong answer, then a right one
    const fresh = await browser.createBrowserContext();   // its own storage: no progress yet
    const ls = await fresh.newPage();
    await ls.goto(url + (url.includes('?') ? '&' : '?') + 'lesson=same_stream');
    await idle(ls);
    out.lesson_link = await screen(ls);
    out.lesson_wrong = await after(ls, () => type(ls, 'a = p:alloc("2 MiB", s)'));
    out.lesson_right = await after(ls, async () => {
      await type(ls, 'restart()');
      await type(ls, 'a = p:alloc("4 MiB", s)');
    });
    await ls.close();
    // hostile links: C1 controls in ?lesson=, a ?e= longer than a link may run
    for (const [key, query] of [['link_controls', 'lesson=%C2%9B2J%C2%9B31mYOU%20ARE%20HACKED'],
                                ['link_long', 'e=' + encodeURIComponent('x = 1 '.repeat(1000))],
                                ['link_c1', 'e=%C2%9B2J%C2%9B31mx%20%3D%201']]) {
      const bad = await fresh.newPage();
      await bad.goto(url + (url.includes('?') ? '&' : '?') + query);
      await idle(bad);
      out[key] = await screen(bad);
      await bad.close();
    }
    for (const name of ['nosuch', 'same_stram']) {
      const bad = await fresh.newPage();
      await bad.goto(url + (url.includes('?') ? '&' : '?') + 'lesson=' + name);
      await idle(bad);
      out['lesson_' + name] = await screen(bad);
      await bad.close();
    }
    out.page_errors = errors;

    const png = await page.screenshot({ path: shot });
    out.screenshot = await pixels(page, png);
    out.long_line = await after(page, async () => {
      await page.keyboard.type('#"' + 'x'.repeat(150) + '"');
      await page.keyboard.press('Home');
      await page.keyboard.type('=');
      await page.keyboard.press('End');
      await page.keyboard.press('Enter');
      await idle(page);
    });
    await type(page, 'a:free(s) b:free(s) s:sync()');
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch(e => { process.stderr.write('playground.js: ' + (e && e.stack || e) + '\n'); process.exit(1); });
