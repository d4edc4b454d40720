// The playground page (docs/web.md): an xterm.js terminal with a small
// line editor in front of poolsh's REPL compiled to wasm (src/web.c).
// Lines go to poolsh_web_line one at a time; while one runs, the page
// keeps typed keys for later, and Ctrl-C interrupts it.
'use strict';

const PROMPT2 = '   ...> ';
const HISTORY_KEY = 'poolsh/v1/history';   // file:// pages share one storage
const HISTORY_MAX = 500;

const term = new Terminal({ convertEol: true, cursorBlink: true, scrollback: 5000,
                            fontFamily: 'monospace', fontSize: 14 });
const page = { ready: false, busy: false, pumping: false, term, module: null };
window.poolshPage = page;   // what the tests wait on and read

let line = '';              // the line being edited
let cursor = 0;             // its cursor, in characters
let prompt = 'poolsh> ';
let history = loadHistory();
let browsing = history.length;
const input = [];           // keys typed, handled in order (page.pumping)

// The history kept in this browser's storage, or none.
function loadHistory() {
  try {
    const h = JSON.parse(localStorage.getItem(HISTORY_KEY) || '[]');
    return Array.isArray(h) ? h.filter(x => typeof x === 'string') : [];
  } catch (e) {
    return [];
  }
}

function saveHistory() {
  try {
    localStorage.setItem(HISTORY_KEY, JSON.stringify(history.slice(-HISTORY_MAX)));
  } catch (e) { /* storage full or refused: the history lives for this page only */ }
}

// Rewrites the prompt and the line (over as many rows as they take), the
// cursor in its place. shown: the cursor's offset from the prompt's start
// as last drawn, so that the rewrite starts at the prompt's row.
let shown = 0;
function redraw() {
  const cols = term.cols, up = Math.floor(shown / cols);
  const end = prompt.length + line.length, at = prompt.length + cursor;
  let s = (up > 0 ? '\x1b[' + up + 'A' : '') + '\r\x1b[J' + prompt + line;
  if (at !== end) {
    const back = Math.floor((end - 1) / cols) - Math.floor(at / cols);   // the last row: no wrap yet
    if (back > 0) s += '\x1b[' + back + 'A';
    s += '\x1b[' + (at % cols + 1) + 'G';
  } else if (end % cols === 0) {
    s += '\r\n';   // a full last row: the cursor to the next one
  }
  shown = at;
  term.write(s);
}

// A new prompt on a new row: nothing of the line drawn yet.
function newPrompt() {
  shown = 0;
  redraw();
}

function setLine(text) {
  line = text;
  cursor = text.length;
  redraw();
}

// The terminal's size from its element and the font's cell.
function fit() {
  const el = document.getElementById('terminal');
  const cell = term._core && term._core._renderService && term._core._renderService.dimensions;
  const w = cell && cell.css.cell.width || 8.4, h = cell && cell.css.cell.height || 17;
  const cols = Math.max(20, Math.floor((el.clientWidth - 8) / w));   // (the live lines fold at 40 at least)
  const rows = Math.max(10, Math.floor((el.clientHeight - 8) / h));
  if (cols !== term.cols || rows !== term.rows) term.resize(cols, rows);
  if (page.module && !page.busy) page.module._poolsh_web_resize(term.cols);
}

// Runs the line typed: the statement so far, or a part of it.
async function submit() {
  const text = line;
  cursor = line.length;
  redraw();
  if ((prompt.length + line.length) % term.cols !== 0) term.write('\r\n');
  if (text.trim() && history[history.length - 1] !== text) {
    history.push(text);
    saveHistory();
  }
  browsing = history.length;
  line = '';
  cursor = 0;
  page.busy = true;
  let more = 0;
  try {
    more = await page.module.ccall('poolsh_web_line', 'number', ['string'], [text], { async: true });
  } catch (e) {
    term.write('\x1b[31mpoolsh: the page failed: ' + e + '\x1b[0m\r\n');
  }
  page.busy = false;
  prompt = more === 1 ? PROMPT2 : page.module.ccall('poolsh_web_prompt', 'string', [], []);
  fit();
  if (more !== 1) picture();
  flushOutput();
  if (!atLineStart) term.write('\r\n');   // output without a newline keeps its row
  atLineStart = true;
  newPrompt();
}

// The memory-map pane (#picture): poolsh.web.picture's snapshot, drawn by
// picture.js (PoolshPicture.draw) after every statement when it changed.
// Asked only at the prompt; during a long statement the hook hands it
// over (Module.onPicture).
const pane = document.getElementById('picture');
page.picture = { version: -1, snap: null, draws: 0 };
function drawPicture(json) {
  try {
    const snap = JSON.parse(json);
    page.picture.snap = snap;
    page.picture.version = snap.version;
    PoolshPicture.draw(pane, snap);
    page.picture.draws++;
  } catch (e) {
    pane.textContent = 'the picture failed: ' + e;
  }
}
function picture() {
  if (!page.module || page.busy) return;
  const json = page.module.ccall('poolsh_web_picture', 'string', ['number'], [page.picture.version]);
  if (json) drawPicture(json);
}

// Tab: the REPL's own completion of the word before the cursor; one
// candidate (or a longer common prefix) is inserted, several are listed.
function complete() {
  const word = line.slice(0, cursor).match(/[\w.:]*$/)[0];
  const all = page.module.ccall('poolsh_web_complete', 'string', ['string'], [word])
    .split('\n').filter(x => x);
  if (all.length === 0) return;
  let common = all[0];
  for (const c of all) while (!c.startsWith(common)) common = common.slice(0, -1);
  if (common.length > word.length) {
    line = line.slice(0, cursor) + common.slice(word.length) + line.slice(cursor);
    cursor += common.length - word.length;
    redraw();
  } else if (all.length > 1) {
    cursor = line.length;
    redraw();
    term.write('\r\n' + all.join('  ') + '\r\n');
    newPrompt();
  }
}

// Up and Down: the history, the line being typed kept at its end.
function browse(step) {
  const to = Math.max(0, Math.min(history.length, browsing + step));
  if (to === browsing) return;
  browsing = to;
  setLine(to < history.length ? history[to] : '');
}

// Ctrl-C at the prompt drops the statement typed so far.
function dropLine() {
  term.write('^C\r\n');
  page.module._poolsh_web_drop();
  line = '';
  cursor = 0;
  prompt = page.module.ccall('poolsh_web_prompt', 'string', [], []);
  browsing = history.length;
  newPrompt();
}

const KEYS = {
  '\r': submit,
  '\t': complete,
  '\x03': dropLine,
  '\x0c': () => { term.clear(); redraw(); },
  '\x1b[A': () => browse(-1),
  '\x1b[B': () => browse(1),
  '\x1b[D': () => { if (cursor > 0) { cursor--; redraw(); } },
  '\x1b[C': () => { if (cursor < line.length) { cursor++; redraw(); } },
  '\x1b[H': () => { cursor = 0; redraw(); },
  '\x1bOH': () => { cursor = 0; redraw(); },
  '\x01': () => { cursor = 0; redraw(); },
  '\x1b[F': () => { cursor = line.length; redraw(); },
  '\x1bOF': () => { cursor = line.length; redraw(); },
  '\x05': () => { cursor = line.length; redraw(); },
  '\x7f': () => {
    if (cursor === 0) return;
    line = line.slice(0, cursor - 1) + line.slice(cursor);
    cursor--;
    redraw();
  },
  '\x1b[3~': () => {
    if (cursor === line.length) return;
    line = line.slice(0, cursor) + line.slice(cursor + 1);
    redraw();
  },
};
KEYS['\b'] = KEYS['\x7f'];

// One key, or one printable character.
async function handle(key) {
  const f = KEYS[key];
  if (f) return f();
  if (/^[\x00-\x1f\x7f-\x9f]/.test(key)) return;     // other controls (C0, ESC, DEL, C1): nothing
  line = line.slice(0, cursor) + key + line.slice(cursor);
  cursor += key.length;
  if (cursor === line.length && (prompt.length + cursor) % term.cols !== 0) {
    term.write(key);   // typed at the end: no rewrite
    shown += key.length;
  } else {
    redraw();
  }
}

// Handles the keys typed, in order, one statement at a time.
async function pump() {
  if (page.pumping) return;
  page.pumping = true;
  while (input.length && !page.busy) await handle(input.shift());
  page.pumping = false;
}

// xterm's data: a key, an escape sequence or pasted text (split into
// characters, so pasted lines run one by one).
term.onData(data => {
  if (!page.ready) return;
  if (data === '\x03' && page.busy) {
    input.length = 0;
    page.module._poolsh_web_interrupt();
    return;
  }
  if (data.startsWith('\x1b')) input.push(data);
  else for (const ch of data) input.push(ch === '\n' ? '\r' : ch);
  pump();
});

// poolsh's stdout and stderr, a byte at a time (no line buffering: what
// is written without a newline shows too), handed to the terminal in
// order once the running code gives the browser its turn; stderr in red.
const outq = [];
let atLineStart = true;     // the last byte written ended a line
function output(err, byte) {
  if (byte === null || byte === undefined) return;
  atLineStart = byte === 10;
  const last = outq[outq.length - 1];
  if (last && last.err === err) last.bytes.push(byte);
  else outq.push({ err, bytes: [byte] });
  if (outq.length === 1 && outq[0].bytes.length === 1) queueMicrotask(flushOutput);
}
function flushOutput() {
  for (const c of outq.splice(0)) {
    if (c.err) term.write('\x1b[31m');
    term.write(new Uint8Array(c.bytes));
    if (c.err) term.write('\x1b[0m');
  }
}

// A link's text as the terminal may show it: at most 64 characters, the
// control characters (C0, DEL, C1: the terminal would obey them) as '?'.
function linkText(text) {
  return text.slice(0, 64).replace(/[\x00-\x1f\x7f-\x9f]/g, '?') + (text.length > 64 ? '...' : '');
}

// ?lesson=NAME (a link's) opens that lesson, as learn("NAME") typed at
// the first prompt does; an unknown name is said by learn itself.
function lessonFromLink() {
  const name = new URLSearchParams(location.search).get('lesson');
  if (name === null) return;
  if (!/^[\w.-]{1,64}$/.test(name)) {
    term.write('\x1b[31m?lesson=' + linkText(name) +
               ': not a lesson\'s name (learn() lists them)\x1b[0m\r\n');
    newPrompt();
    return;
  }
  for (const ch of 'learn("' + name + '")') input.push(ch);
  input.push('\r');
  pump();
}

// The most a ?e= link may carry: statements for a slide, not a program.
const LINK_MAX = 4096;

// ?e=STATEMENT (a link's) is typed at the first prompt and run; its
// lines run one by one.
function runFromLink() {
  const e = new URLSearchParams(location.search).get('e');
  if (!e) return;
  if (e.length > LINK_MAX) {
    term.write('\x1b[31m?e=' + linkText(e) + ': ' + e.length + ' characters, more than a link may run (' +
               LINK_MAX + '): not run\x1b[0m\r\n');
    newPrompt();
    return;
  }
  for (const ch of e.replace(/\n+$/, '')) input.push(ch === '\n' ? '\r' : ch);
  input.push('\r');
  pump();
}

// poolsh's module script: the single file from disk (a file:// page can
// fetch nothing), the split build over HTTP (streaming compile).
function loadPoolsh() {
  page.build = location.protocol === 'file:' ? 'poolsh-file.js' : 'poolsh.js';
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = page.build;
    s.onload = resolve;
    s.onerror = () => reject(new Error('cannot load ' + page.build));
    document.body.appendChild(s);
  });
}

async function start() {
  page.t0 = performance.now();
  const loading = loadPoolsh();
  term.open(document.getElementById('terminal'));
  fit();
  window.addEventListener('resize', fit);
  term.write('loading poolsh...');
  pane.hidden = false;
  fit();
  await loading;
  const module = await createPoolsh({
    onPicture: drawPicture,
    stdout: byte => output(false, byte),
    stderr: byte => output(true, byte),
  });
  term.write('\r\x1b[K');
  page.module = module;
  const failed = await module.ccall('poolsh_web_init', 'number', ['number'], [term.cols], { async: true });
  if (failed) {
    term.write('\x1b[31mpoolsh could not start in this page (the lines above say why)\x1b[0m\r\n');
    return;
  }
  prompt = module.ccall('poolsh_web_prompt', 'string', [], []);
  picture();
  window.addEventListener('resize', () => { if (page.picture.snap) PoolshPicture.draw(pane, page.picture.snap); });
  newPrompt();
  page.ready = true;
  page.startup_ms = performance.now() - page.t0;
  term.focus();
  lessonFromLink();
  runFromLink();
}

start().catch(e => term.write('\r\n\x1b[31mpoolsh could not start in this page: ' + e + '\x1b[0m\r\n'));
