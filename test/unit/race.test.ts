import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { raceFrame } from '../../src/main/cli/commands/race';
import { raceLanes } from '../../src/main/services/race-lanes';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { ExperimentStore } from '../../src/main/store/experiment-store';
import { BUNCHED_RATE, finishOrder, laneAt, nearestFrameClock, raceLengthMs, type Race, type RaceLane } from '../../src/shared/race';
import { BUNCHED_TPOT_FLOOR_MS } from '../../src/main/metrics/bunched-delivery';
import { raceHtml } from '../../src/shared/race-html';
import { createBareRun, requestMetrics, storedRequest } from '../support/stored-request';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** Constructed: three chunks at 20, 30 and 50 ms adding "Hel", "lo" and " world", 4 tokens, finished at 55 ms. */
const LANE: RaceLane = {
  label: 'a',
  runId: 'r',
  seq: 0,
  chunks: [
    { atMs: 20, text: 'Hel' },
    { atMs: 30, text: 'lo' },
    { atMs: 50, text: ' world' },
  ],
  ttftMs: 20,
  endMs: 55,
  outputTokens: 4,
  textless: null,
};

describe('a race of stored requests', () => {
  it('shows each lane as its chunks arrived: text, tokens shared out over chunks, decode pace, start and finish', () => {
    expect(laneAt(LANE, 10)).toEqual({ text: '', chunks: 0, tokens: 0, tokensPerS: null, bunched: false, started: false, finished: false });
    expect(laneAt(LANE, 30)).toEqual({
      text: 'Hello',
      chunks: 2,
      tokens: 3,
      tokensPerS: 200,
      bunched: false,
      started: true,
      finished: false,
    });
    // After the finish the pace stops at the finish: 3 decode steps in 35 ms.
    expect(laneAt(LANE, 1000)).toMatchObject({ text: 'Hello world', tokens: 4, finished: true });
    expect(laneAt(LANE, 1000).tokensPerS).toBeCloseTo((3 / 35) * 1000, 6);
    const slow = { ...LANE, label: 'b', endMs: 80 };
    const failed = { ...LANE, label: 'c', endMs: null };
    expect(finishOrder([slow, failed, LANE])).toEqual([2, 0, 1]);
    expect(raceLengthMs([slow, failed, LANE])).toBe(80);
  });

  it("gives no rate for a lane whose tokens arrived bunched, at the run summary's own floor, in every face", () => {
    // Constructed after a lane the Race view's test showed on a busy two-core machine: 16 tokens, the last 15 within a
    // tenth of a millisecond of the first, which the view read as 225,985 tok/s.
    const bunched: RaceLane = {
      ...LANE,
      label: 'bunched',
      chunks: Array.from({ length: 16 }, (_, index) => ({ atMs: 85 + index * 0.004, text: `t${index} ` })),
      ttftMs: 85,
      endMs: 85.066,
      outputTokens: 16,
    };
    expect(laneAt(bunched, 84)).toMatchObject({ tokens: 0, tokensPerS: null, bunched: false });
    expect(laneAt(bunched, 100)).toMatchObject({ tokens: 16, tokensPerS: null, bunched: true, finished: true });
    // The same floor as the run summary's BUNCHED TOKENS: just under 0.1 ms a token is bunched, just over it is a rate.
    const paced = (perTokenMs: number) => laneAt({ ...bunched, endMs: 85 + 15 * perTokenMs }, 1000);
    expect(paced(BUNCHED_TPOT_FLOOR_MS * 0.99)).toMatchObject({ bunched: true, tokensPerS: null });
    expect(paced(BUNCHED_TPOT_FLOOR_MS * 1.01)).toMatchObject({ bunched: false });
    expect(paced(BUNCHED_TPOT_FLOOR_MS * 1.01).tokensPerS).toBeCloseTo(1000 / (BUNCHED_TPOT_FLOOR_MS * 1.01), 6);
    const race: Race = { lanes: [LANE, bunched], note: 'n' };
    expect(raceFrame(race, 1000, 80, 6).join('\n')).toMatch(/bunched/);
    expect(raceFrame(race, 1000, 80, 6).join('\n')).not.toMatch(/\d{5,}/);
    const html = raceHtml(race, 'race');
    expect(html).toContain(JSON.stringify(BUNCHED_RATE));
  });

  it('draws the terminal frame: a column per lane of one width, its figures, the last lines of its text, ticks where it has none', () => {
    const race: Race = { lanes: [LANE, { ...LANE, label: 'private lane', textless: 'no text' }], note: 'n' };
    const lines = raceFrame(race, 30, 60, 3);
    expect(lines).toHaveLength(5);
    for (const line of lines) expect(line.split(' │ ').map((column) => column.length)).toEqual([28, 28]);
    expect(lines.map((line) => line.split(' │ ').map((column) => column.trimEnd()))).toEqual([
      ['a', 'private lane'],
      ['TTFT 20 ms · 3 tok · 200 tok/s', 'TTFT 20 ms · 3 tok · 200 tok/s'].map((text) =>
        text.length > 28 ? `${text.slice(0, 27)}…` : text,
      ),
      ['Hello', '▮▮'],
      ['', ''],
      ['', ''],
    ]);
    expect(raceFrame(race, 1000, 60, 3)[1]).toMatch(/^done · TTFT 20 ms/);
  });

  it('builds lanes from stored requests: the answer cut at each chunk, ticks where the run kept no text, and says why', async () => {
    const db = openDatabase(path.join(tempDir(), 'race.db'));
    try {
      const store = new RunStore(db);
      const stored = (seq: number, patch: Parameters<typeof storedRequest>[1] = {}) =>
        storedRequest(seq, {
          chunkOffsetsMs: [20, 30, 50],
          chunkAnswerChars: [3, 2, 6],
          outputText: 'Hello world',
          metrics: requestMetrics({ ttft_ms: 20, e2e_ms: 55, output_tokens: 4 }),
          ...patch,
        });
      const open = createBareRun(store, { modelRef: 'demo:q8_0' });
      // A warmup request and a failed one come before the first measured success.
      store.addRequests(open, [
        stored(0, { warmup: true }),
        stored(1, { errorClass: 'http_status', errorMessage: 'HTTP 500' }),
        stored(2),
        stored(3, { chunkAnswerChars: undefined }),
      ]);
      const closed = createBareRun(store, { modelRef: 'demo:f16', private: true });
      store.addRequests(closed, [stored(0)], { private: true });

      const race = raceLanes(store, [open.slice(0, 8), `${closed}:0`, `${open}:3`]);
      expect(race.lanes.map((lane) => [lane.label, lane.seq, lane.chunks.map((chunk) => chunk.text), lane.textless])).toEqual([
        [`demo:q8_0 · ${open.slice(0, 8)}:2`, 2, ['Hel', 'lo', ' world'], null],
        [`demo:f16 · ${closed.slice(0, 8)}:0`, 0, ['', '', ''], 'a private run keeps no text: token ticks only'],
        [`demo:q8_0 · ${open.slice(0, 8)}:3`, 3, ['', '', ''], 'stored before each chunk’s text was kept: token ticks only'],
      ]);
      expect(race.lanes[0]).toMatchObject({ ttftMs: 20, endMs: 55, outputTokens: 4 });
      // A run that was an experiment's window is named by its condition and window, the same request raced.
      const experiments = new ExperimentStore(db);
      const experimentId = experiments.create('quant', {});
      experiments.addRun(experimentId, closed, 'q4_k_m', 0);
      const labelled = raceLanes(store, [open, closed], (runId) => experiments.windowOfRun(runId));
      expect(labelled.lanes.map((lane) => lane.label)).toEqual([
        `demo:q8_0 · ${open.slice(0, 8)}:2`,
        `q4_k_m · window 1 · ${closed.slice(0, 8)}:0`,
      ]);

      expect(() => raceLanes(store, [open])).toThrow(/a race has 2 to 4 lanes, got 1/);
      expect(() => raceLanes(store, [open, 'nope'])).toThrow(/nope: no run nope/);
      expect(() => raceLanes(store, [open, `${open}:9`])).toThrow(/:9: run .* has no request 9/);
      expect(() => raceLanes(store, [open, 'a:b:c'])).toThrow(/"a:b:c" is not RUN or RUN:SEQ/);
      const empty = createBareRun(store);
      expect(() => raceLanes(store, [open, empty])).toThrow(/has no successful streamed request to race/);
    } finally {
      db.close();
    }
  });

  it('writes one HTML file whose embedded answers stay data, however they try to end the script, and that fetches nothing', () => {
    const hostile = '</script><script>document.title="owned"</script>\u2028<!-- <img src=x onerror=alert(1)>';
    const race: Race = {
      lanes: [
        { ...LANE, chunks: [{ atMs: 20, text: hostile }] },
        { ...LANE, label: '<b>lane</b>' },
      ],
      note: 'n',
    };
    const html = raceHtml(race, 'title </title><script>');
    const data = /<script type="application\/json" id="race-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
    // The data block ends where it should, and reads back as the race, hostile text included.
    expect(JSON.parse(data)).toEqual(race);
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).not.toContain('<script>document.title');
    expect(html).toContain('<title>title &#60;/title&#62;&#60;script&#62;</title>');
    expect(html).not.toMatch(/(src|href)=["']?https?:/);
    expect(html).toContain("default-src 'none'");
  });
});

describe('the replay clock', () => {
  it('draws each token on the frame nearest its recorded time, half a frame early or late at most (constructed frame times)', () => {
    const frames = Array.from({ length: 12 }, (_, index) => index * (1000 / 60));
    const clock = nearestFrameClock();
    const shownAt = frames.map((frame) => ({ frame, clock: clock(frame) }));
    // The frame a token at t is drawn on: the first whose clock has passed t.
    const drawn = (t: number) => shownAt.find((entry) => entry.clock >= t)!.frame;
    expect(drawn(5)).toBe(0); // 5 ms early, rather than 11.7 ms late on the next frame
    expect(drawn(10)).toBeCloseTo(1000 / 60, 6); // 6.7 ms late, rather than 10 ms early
    for (let t = 0; t <= 150; t += 0.5) expect(Math.abs(drawn(t) - t)).toBeLessThanOrEqual(1000 / 120 + 1e-9);
    // A naive clock, the frame's own time, draws up to a whole frame late: the rule above would fail it.
    expect(Math.max(...[5, 10, 16].map((t) => frames.find((frame) => frame >= t)! - t))).toBeGreaterThan(1000 / 120);
  });

  it('learns the frame interval as the frames come, a long stall counted at most 100 ms', () => {
    const clock = nearestFrameClock();
    clock(0);
    // At 30 frames a second the lead grows toward half of 33.3 ms.
    let lead = 0;
    for (let frame = 1; frame <= 30; frame++) lead = clock(frame * (1000 / 30)) - frame * (1000 / 30);
    expect(lead).toBeCloseTo(1000 / 60, 1);
    const stalled = nearestFrameClock();
    stalled(0);
    expect(stalled(5000) - 5000).toBeLessThanOrEqual(0.8 * (1000 / 120) + 0.2 * 50 + 1e-9);
  });
});
