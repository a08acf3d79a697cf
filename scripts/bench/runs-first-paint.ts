/**
 * Issue goal "a UI that opens at once": `inferlab serve` on a database of 1,000 stored runs, the
 * Runs view opened by its address in Chromium, timed from navigation to the table's rows drawn.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromiumPath } from '../../src/main/doctor';
import { SAVED_PROFILE_RULES } from '../../src/main/engines/llamacpp/profile-rules';
import { summarizeRun } from '../../src/main/metrics/run-summary';
import { openAppStore } from '../../src/main/store/app-store';
import { startServe } from '../../test/support/serve';
import type { BenchRow } from './bench-row';
import { launchBenchBrowser } from './bench-processes';

const RUNS = 1000;

function storeRuns(db: string): void {
  const store = openAppStore(db, SAVED_PROFILE_RULES);
  try {
    for (let run = 0; run < RUNS; run += 1) {
      const runId = store.runs.createRun({
        kind: 'workload',
        modelRef: `demo:q${run % 3 === 0 ? '4_k_m' : '8_0'}`,
        modelPath: null,
        modelSizeBytes: null,
        modelSha256: null,
        engine: null,
        server: null,
        manifest: { load: { mode: 'closed', concurrency: 1 } },
      });
      store.runs.finishRun(
        runId,
        'completed',
        null,
        summarizeRun({
          runId,
          status: 'completed',
          statusReason: null,
          workload: { name: 'chat-short', revision: 'x' },
          rows: [],
          load: { mode: 'closed', concurrency: 1 },
          slo: null,
        }),
      );
    }
  } finally {
    store.close();
  }
}

export async function runsFirstPaint(): Promise<BenchRow[]> {
  const executable = chromiumPath();
  if (!executable)
    return [{ figure: 'Runs view first paint', value: 'skipped: no Chromium (apt-get install -y chromium)', target: '≤ 1 s' }];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-bench-'));
  const db = path.join(dir, 'runs.db');
  storeRuns(db);
  const serve = await startServe(['--db', db]);
  const browser = await launchBenchBrowser(executable);
  // One browser profile, as a person's: the first round has nothing cached, the later ones the built
  // assets in its HTTP cache (`serve` lets a browser keep them) and nothing in memory (a fresh page).
  const profile = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  // The page marks the frame its first row is drawn in: Playwright's waitFor polls at growing intervals
  // (up to 500 ms apart), which would be timed instead of the page.
  await profile.addInitScript(() => {
    const observer = new MutationObserver(() => {
      if (!document.querySelector('[data-testid="runs-table"] tbody tr')) return;
      observer.disconnect();
      requestAnimationFrame(() => Object.assign(window, { rowsDrawnAt: performance.now() }));
    });
    observer.observe(document, { childList: true, subtree: true });
  });
  const times: number[] = [];
  try {
    for (let round = 0; round < 3; round += 1) {
      const page = await profile.newPage();
      const url = new URL(serve.url);
      url.hash = '#/runs';
      await page.goto(url.toString());
      // The page's clock starts at navigation.
      const drawnAt = await page.waitForFunction(() => (window as { rowsDrawnAt?: number }).rowsDrawnAt, undefined, {
        polling: 'raf',
        timeout: 60_000,
      });
      times.push((await drawnAt.jsonValue())!);
      if (process.env.BENCH_DETAIL)
        process.stderr.write(
          `${JSON.stringify(await page.evaluate(() => ({ nav: performance.getEntriesByType('navigation').map((e) => (e as PerformanceNavigationTiming).toJSON()), res: performance.getEntriesByType('resource').map((e) => [e.name.slice(-40), Math.round(e.startTime), Math.round(e.duration)]), now: performance.now() })))}\n`,
        );
      await page.close();
    }
  } finally {
    await browser.close();
    await serve.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return [
    {
      figure: `Runs view first paint, ${RUNS} stored runs (address → rows drawn, Chromium; empty cache / then)`,
      value: `${(times[0]! / 1000).toFixed(2)} s / ${times
        .slice(1)
        .map((time) => (time / 1000).toFixed(2))
        .join(', ')} s`,
      target: '≤ 1 s',
    },
  ];
}
