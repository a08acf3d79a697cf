import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import { CHROMIUM_FLAGS, describeWithChromium, openPage } from '../support/chromium';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { around, storeHistoryRun } from '../support/history-runs';
import { startServe } from '../support/serve';
import { useTempDirs } from '../support/temp';
import { AppShell } from './pages/app';
import { HistoryPage } from './pages/history';
import { RunsPage } from './pages/runs';
import { DuckDBInstance } from '@duckdb/node-api';

const tempDir = useTempDirs();
const results = path.join(projectRoot(), 'test-results');

/** Three runs on an old build and three on a new one, and one run at another load: two configurations. */
function seedRuns(file: string): void {
  const db = openDatabase(file);
  const store = { db, runs: new RunStore(db) };
  const old = { commit: 'b5000aa', backend: 'cuda' };
  const fresh = { commit: 'b6100ff', backend: 'cuda' };
  try {
    [10, 12, 14].forEach((median, day) =>
      storeHistoryRun(store, { startedAt: `2026-01-0${day + 1}T10:00:00Z`, engine: old, tpots: around(median) }),
    );
    [15, 15, 18].forEach((median, day) =>
      storeHistoryRun(store, { startedAt: `2026-02-0${day + 1}T10:00:00Z`, engine: fresh, tpots: around(median) }),
    );
    storeHistoryRun(store, {
      startedAt: '2026-03-01T10:00:00Z',
      engine: fresh,
      tpots: around(40),
      load: { mode: 'closed', concurrency: 4 },
    });
  } finally {
    db.close();
  }
}

describeWithChromium('the History view in Chromium against inferlab serve', (executable) => {
  let browser: Browser;
  let serve: Awaited<ReturnType<typeof startServe>>;
  let page: Page;
  const pageErrors: string[] = [];
  const dataDir = tempDir();
  const database = path.join(dataDir, 'history.db');

  beforeAll(async () => {
    fs.mkdirSync(results, { recursive: true });
    serve = await startServe(['--db', database], { INFERLAB_DATA_DIR: dataDir });
    browser = await chromium.launch({ executablePath: executable, args: CHROMIUM_FLAGS });
    page = await openPage(browser, serve.url, pageErrors);
  });

  afterAll(async () => {
    await browser?.close();
    expect(await serve?.stop()).toBe(0);
  });

  it('says what to do with no runs, then draws a chart and a table per configuration', async () => {
    const shell = new AppShell(page, results);
    const history = new HistoryPage(shell);
    // Alt+0, by key position, opens the tenth view.
    await page.evaluate(() => window.dispatchEvent(new KeyboardEvent('keydown', { key: '0', code: 'Digit0', altKey: true })));
    await expect.poll(() => shell.hash()).toBe('#/history');
    await shell.open('Runs');
    await history.open();
    await history.empty.waitFor();
    expect(await history.empty.textContent()).toMatch(/inferlab check --baseline RUN --engine PATH/);

    // Written straight into the database the server has open (a real SQLite file), as runs from other processes are.
    seedRuns(database);
    await shell.visit('#/history?metric=tpot_ms:p50');
    await expect.poll(() => history.configurations.count()).toBe(2);
    const main = history.configurations.first();
    expect(await main.textContent()).toMatch(/closed, concurrency 1/);
    const rows = history.builds(main);
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).innerText()).toMatch(
      /b5000aa · cuda[\s\S]*10\.00 12\.00 14\.00[\s\S]*12\.00 ms[\s\S]*\[7\.03, 16\.97\][\s\S]*first build/,
    );
    expect(await rows.nth(1).innerText()).toMatch(/b6100ff · cuda[\s\S]*16\.00 ms[\s\S]*\[11\.70, 20\.30\][\s\S]*\+33\.3 %/);
    expect(await history.builds(history.configurations.nth(1)).first().innerText()).toMatch(/one run: an interval needs two or more/);
    await expect.poll(() => page.getByText(/2 configurations .* never averaged together/).count()).toBe(1);

    // The chart drew on its canvas: some pixels are not background.
    const chart = history.chart(main);
    await chart.locator('canvas').waitFor();
    const painted = await chart.locator('canvas').evaluate((canvas: HTMLCanvasElement) => {
      const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let count = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) count++;
      return count;
    });
    expect(painted).toBeGreaterThan(1000);
    await page.screenshot({ path: path.join(results, 'history.png'), fullPage: true });

    // A p95 from three requests per run is withheld, with the reason.
    await history.metric.selectOption('tpot_ms:p95');
    await expect.poll(async () => shell.hash()).toBe('#/history?metric=tpot_ms:p95');
    await expect.poll(() => main.getByText('3 successful measured requests; p95 needs at least 20').count()).toBeGreaterThan(0);
    expect(await history.builds(main).nth(0).innerText()).toMatch(/no run has a value/);
    expect(pageErrors).toEqual([]);
  });

  it('exports every run as Parquet tables into the results folder, and refuses a folder outside it', async () => {
    const shell = new AppShell(page, results);
    const runs = new RunsPage(shell);
    await runs.open();
    await runs.exportParquet('/etc/inferlab-parquet');
    await expect.poll(() => runs.parquetForm.getByRole('alert').textContent()).toMatch(/outside the folders this interface may use/);
    expect(fs.existsSync('/etc/inferlab-parquet')).toBe(false);
    await runs.exportParquet();

    const status = runs.parquetForm.getByRole('status');
    await status.waitFor();
    expect(await status.textContent()).toMatch(/^Wrote runs 7, requests \d+, chunks \d+, telemetry \d+, .* to .*results\/parquet-/);
    const folder = (await status.textContent())!.replace(/^.* to /, '');
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    try {
      const read = await duck.runAndReadAll(`SELECT COUNT(*)::INTEGER AS n FROM '${folder}/runs.parquet'`);
      expect(read.getRowObjectsJson()).toEqual([{ n: 7 }]);
    } finally {
      duck.closeSync();
    }
    await page.screenshot({ path: path.join(results, 'runs-parquet.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
