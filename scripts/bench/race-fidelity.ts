/**
 * How faithfully the exported race replays recorded times: four lanes of 512 tokens each
 * (constructed offsets, seeded), played by the HTML player in a real Chromium; each token's
 * appearance is timed where the page changes its lane's text, against its recorded offset, early
 * or late alike. The player draws once a frame, each token on the frame nearest its time: the
 * floor is half the frame interval.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { seededRandom } from '../../src/main/core/random';
import { chromiumPath } from '../../src/main/doctor';
import type { Race, RaceLane } from '../../src/shared/race';
import { raceHtml } from '../../src/shared/race-html';
import type { BenchRow } from './bench-row';
import { launchBenchBrowser } from './bench-processes';

const LANES = 4;
const TOKENS = 512;

/** A lane whose tokens come every 6–14 ms after a first token at 80 ms + 40 ms per lane: "t0 ", "t1 ", … */
function lane(index: number, random: () => number): RaceLane {
  let at = 80 + index * 40;
  const chunks = Array.from({ length: TOKENS }, (_, token) => {
    if (token > 0) at += 6 + random() * 8;
    return { atMs: at, text: `t${token} ` };
  });
  return {
    label: `lane ${index + 1}`,
    runId: `r${index}`,
    seq: 0,
    chunks,
    ttftMs: chunks[0]!.atMs,
    endMs: at + 1,
    outputTokens: TOKENS,
    textless: null,
  };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

export async function raceFidelity(): Promise<BenchRow[]> {
  const executable = chromiumPath();
  const figure = `race replay drift (${LANES} lanes × ${TOKENS} tokens, Chromium)`;
  if (!executable) return [{ figure, value: 'skipped: no Chromium (apt-get install -y chromium)', target: '≤ 20 ms' }];
  const random = seededRandom(63);
  const race: Race = { lanes: Array.from({ length: LANES }, (_, index) => lane(index, random)), note: 'constructed offsets' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-bench-'));
  const file = path.join(dir, 'race.html');
  fs.writeFileSync(file, raceHtml(race));
  const browser = await launchBenchBrowser(executable);
  try {
    const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
    await page.goto(`file://${file}`);
    // Each lane's text length when it changes, and every frame's time, on the page's own clock.
    // A string, not a function: the bench runs through tsx, whose helpers a function body would carry into the page.
    const seen = (await page.evaluate(`(async () => {
      const lengths = [];
      document.querySelectorAll('section pre').forEach((pre, index) => {
        lengths.push([]);
        new MutationObserver(() => lengths[index].push({ at: performance.now(), length: pre.textContent.length })).observe(pre, {
          childList: true, characterData: true, subtree: true,
        });
      });
      const frames = [];
      const order = document.getElementById('order');
      requestAnimationFrame(function count(now) {
        frames.push(now);
        if (!order.textContent) requestAnimationFrame(count);
      });
      // The player starts its clock in the key handler, synchronously: this is its start.
      const start = performance.now();
      document.dispatchEvent(new KeyboardEvent('keydown', { key: ' ' }));
      while (!order.textContent) await new Promise((resolve) => setTimeout(resolve, 50));
      return { start, lengths, frames };
    })()`)) as { start: number; lengths: { at: number; length: number }[][]; frames: number[] };
    const drifts: number[] = [];
    race.lanes.forEach((entry, index) => {
      let shown = 0;
      let cumulative = 0;
      const ends = entry.chunks.map((chunk) => (cumulative += chunk.text.length));
      for (const change of seen.lengths[index]!) {
        while (shown < ends.length && ends[shown]! <= change.length) {
          // Early counts as much as late: the audience sees a token off its recorded time either way.
          drifts.push(Math.abs(change.at - seen.start - entry.chunks[shown]!.atMs));
          shown += 1;
        }
      }
    });
    const intervals = seen.frames.slice(1).map((time, index) => time - seen.frames[index]!);
    return [
      { figure: `${figure}, p50`, value: `${percentile(drifts, 50).toFixed(1)} ms`, target: '≤ 20 ms' },
      { figure: `${figure}, p99`, value: `${percentile(drifts, 99).toFixed(1)} ms`, target: '≤ 20 ms' },
      { figure: `${figure}, tokens timed`, value: `${drifts.length} of ${LANES * TOKENS}`, target: 'all' },
      {
        figure: 'race replay frame interval (half of it is the floor), p50',
        value: `${percentile(intervals, 50).toFixed(1)} ms`,
        target: 'one display frame',
      },
    ];
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
