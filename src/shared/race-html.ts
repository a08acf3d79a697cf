import { BUNCHED_RATE, finishOrder, laneAt, nearestFrameClock, type Race } from './race';

/** JSON that stays data inside a script element: no `</script>`, no line separators JavaScript reads as line ends. */
function inertJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

// The player: the lanes' chunks appended as the clock passes them, text set as text (never markup).
// laneAt, finishOrder and nearestFrameClock are race.ts's own, their compiled source placed in the page (each uses only
// its arguments and built-ins), so the file plays exactly as the CLI and the app do.
const PLAYER = `
const laneAt = (${laneAt.toString()});
const finishOrder = (${finishOrder.toString()});
const nearestFrameClock = (${nearestFrameClock.toString()});
const BUNCHED_RATE = ${JSON.stringify(BUNCHED_RATE)};
const race = JSON.parse(document.getElementById('race-data').textContent);
const grid = document.getElementById('lanes');
const clock = document.getElementById('clock');
const order = document.getElementById('order');
const views = race.lanes.map((lane) => {
  const box = document.createElement('section');
  const title = document.createElement('h2');
  title.textContent = lane.label;
  const stats = document.createElement('p');
  stats.className = 'stats';
  const text = document.createElement('pre');
  // One text node the arriving chunks are appended to: a frame lays out what arrived, not the whole answer again.
  const shownText = document.createTextNode('');
  text.append(shownText);
  box.append(title, stats, text);
  if (lane.textless) {
    const why = document.createElement('p');
    why.className = 'why';
    why.textContent = lane.textless;
    box.append(why);
  }
  grid.append(box);
  return { lane, box, stats, shownText, shown: 0, statsText: '' };
});
const end = Math.max(0, ...race.lanes.map((lane) => lane.endMs ?? (lane.chunks.length ? lane.chunks[lane.chunks.length - 1].atMs : 0)));
let started = null;
let frame = null;
let frameClock = nearestFrameClock();
function show(at) {
  clock.textContent = (at / 1000).toFixed(2) + ' s';
  for (const view of views) {
    const { lane } = view;
    const state = laneAt(lane, at);
    const ttft = state.started ? 'TTFT ' + lane.ttftMs.toFixed(0) + ' ms' : 'waiting for the first token';
    const stats = ttft + ' · ' + state.tokens + ' tokens' + (state.tokensPerS === null ? (state.bunched ? ' · ' + BUNCHED_RATE : '') : ' · ' + state.tokensPerS.toFixed(1) + ' tok/s') + (state.finished ? ' · finished at ' + lane.endMs.toFixed(0) + ' ms' : '');
    if (stats !== view.statsText) view.stats.textContent = view.statsText = stats;
    if (state.chunks < view.shown) {
      view.shownText.data = '';
      view.shown = 0;
    }
    if (state.chunks > view.shown) {
      const arrived = lane.chunks.slice(view.shown, state.chunks);
      view.shownText.appendData(lane.textless ? '▮'.repeat(arrived.length) : arrived.map((chunk) => chunk.text).join(''));
      view.shown = state.chunks;
    }
    view.box.classList.toggle('done', state.finished);
  }
}
function tick(now) {
  const at = frameClock(now) - started;
  show(Math.min(at, end));
  if (at < end) frame = requestAnimationFrame(tick);
  else {
    const finished = finishOrder(race.lanes).map((index) => race.lanes[index]);
    order.textContent = 'Finished: ' + finished.map((lane, place) => (place + 1) + '. ' + lane.label + (lane.endMs === null ? ' (did not finish)' : ' ' + lane.endMs.toFixed(0) + ' ms')).join('; ');
  }
}
function start() {
  if (frame !== null) cancelAnimationFrame(frame);
  order.textContent = '';
  frameClock = nearestFrameClock();
  started = performance.now();
  frame = requestAnimationFrame(tick);
}
document.getElementById('start').addEventListener('click', start);
document.addEventListener('keydown', (event) => {
  if (event.key === ' ' || event.key === 'r' || event.key === 'R') { event.preventDefault(); start(); }
});
show(0);
`;

/**
 * The race as one self-contained HTML file: the lanes' recorded times and text inside it, the
 * player inline, nothing fetched. Space or R (or the button) plays it from the start.
 */
export function raceHtml(race: Race, title = 'Infer Lab race'): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>${escapeHtml(title)}</title>
<style>
body { font: 16px/1.4 system-ui, sans-serif; margin: 24px; background: #111; color: #eee; }
header { display: flex; gap: 24px; align-items: baseline; }
#clock { font: 600 28px ui-monospace, monospace; }
#lanes { display: grid; grid-template-columns: repeat(${race.lanes.length}, minmax(0, 1fr)); gap: 16px; margin-top: 16px; }
section { border: 2px solid #444; border-radius: 8px; padding: 12px; min-height: 240px; }
section.done { border-color: #4caf50; }
h2 { font-size: 18px; margin: 0 0 4px; }
.stats { font: 14px ui-monospace, monospace; color: #bbb; margin: 0 0 8px; }
pre { white-space: pre-wrap; word-break: break-word; font: 18px/1.5 system-ui, sans-serif; margin: 0; }
.why, .note { color: #999; font-size: 13px; }
#order { font-weight: 600; margin-top: 16px; }
</style>
</head>
<body>
<header><span id="clock">0.00 s</span><button id="start" type="button">Start (space, R)</button></header>
<p class="note">${escapeHtml(race.note)}</p>
<div id="lanes"></div>
<p id="order"></p>
<script type="application/json" id="race-data">${inertJson(race)}</script>
<script>${PLAYER}</script>
</body>
</html>
`;
}
