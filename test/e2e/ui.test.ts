import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import Database from 'better-sqlite3';
import { projectRoot } from '../../src/main/core/paths';
import { ms } from '../../src/renderer/src/components/format';
import { chromiumPath } from '../../src/main/doctor';
import { startServe } from '../support/serve';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const screenshots = path.join(projectRoot(), 'test-results', 'screenshots');
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

const executable = chromiumPath();
if (!executable) console.log('[e2e] UI tests need Chromium: apt-get install -y chromium (or set INFERLAB_CHROMIUM)');

describe.runIf(executable)('the UI in Chromium against inferlab serve and the real engine', () => {
  let browser: Browser;
  let serve: Awaited<ReturnType<typeof startServe>>;
  let page: Page;
  const pageErrors: string[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-ui-'));

  beforeAll(async () => {
    fs.mkdirSync(screenshots, { recursive: true });
    serve = await startServe(['--db', path.join(dataDir, 'ui.db')]);
    browser = await chromium.launch({ executablePath: executable!, args: CHROMIUM_FLAGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));
    await page.goto(serve.url);
  });

  afterAll(async () => {
    await browser?.close();
    expect(await serve?.stop()).toBe(0);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const go = async (label: string) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: label, exact: true }).click();
  const shot = (name: string) => page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });

  it('shows the system check and runs the demo from Home to a stored result', async () => {
    await page.locator('tr[data-check="engine"][data-status="ok"]').waitFor({ timeout: 30_000 });
    await shot('home');
    await page.getByRole('button', { name: 'Run the demo' }).click();
    await page.getByTestId('run-phase').filter({ hasText: 'finished' }).waitFor({ timeout: 90_000 });
    await page.getByTestId('run-summary').waitFor();
    // What the page shows is what was stored: the TTFT row against the database's summary, and
    // the streamed sample against the stored outputs.
    const db = new Database(path.join(dataDir, 'ui.db'), { readonly: true });
    const run = db.prepare('SELECT id, summary_json FROM runs ORDER BY started_at DESC LIMIT 1').get() as {
      id: string;
      summary_json: string;
    };
    const outputs = (db.prepare('SELECT output_text FROM requests WHERE run_id = ?').all(run.id) as { output_text: string | null }[]).map(
      (row) => row.output_text ?? '',
    );
    db.close();
    const stored = JSON.parse(run.summary_json) as { metrics: { ttft_ms: { n: number; p50: number } } };
    const ttftRow = await page
      .getByTestId('run-summary')
      .locator('tr', { has: page.locator('th', { hasText: /^ttft_ms$/ }) })
      .locator('td')
      .allTextContents();
    expect(ttftRow.slice(0, 3)).toEqual([String(stored.metrics.ttft_ms.n), expect.any(String), ms(stored.metrics.ttft_ms.p50)]);
    const sample = (await page.getByTestId('sample-text').textContent()) ?? '';
    expect(sample.length).toBeGreaterThan(0);
    expect(outputs.some((output) => output.endsWith(sample) || output.includes(sample))).toBe(true);
    await shot('run-finished');
  });

  it('runs a second time from the Run view, finds both in Runs, compares them and exports one', async () => {
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.getByTestId('run-phase').filter({ hasNotText: 'finished' }).waitFor({ timeout: 10_000 });
    await page.getByTestId('run-phase').filter({ hasText: 'finished' }).waitFor({ timeout: 90_000 });
    await go('Runs');
    const rows = page.getByTestId('runs-table').locator('tbody tr');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(2);
    await rows.nth(0).getByRole('checkbox').check();
    await rows.nth(1).getByRole('checkbox').check();
    await shot('runs');
    const downloads: string[] = [];
    page.on('download', (download) => downloads.push(download.suggestedFilename()));
    await rows.nth(0).getByRole('button', { name: 'Export' }).click();
    await expect.poll(() => downloads.length, { timeout: 10_000 }).toBe(5);
    expect(downloads.some((name) => name.endsWith('requests.jsonl'))).toBe(true);
    await page.getByRole('button', { name: /Compare 2 selected/ }).click();
    await page.getByTestId('compare-table').waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('compare-table').textContent()).toMatch(/TTFT p50[\s\S]*request noise only/);
    expect(await page.getByTestId('compare-groups').textContent()).toMatch(/facts[\s\S]*chat/);
    await page.getByRole('img', { name: 'compare-throughput-latency' }).waitFor();
    const svg = page.waitForEvent('download');
    await page.getByRole('button', { name: 'compare-cdf as SVG' }).click();
    expect((await svg).suggestedFilename()).toBe('compare-cdf.svg');
    const png = page.waitForEvent('download');
    await page.getByRole('button', { name: 'compare-cdf as PNG' }).click();
    expect((await png).suggestedFilename()).toBe('compare-cdf.png');
    await shot('compare');
  });

  it('opens every other view without page errors', async () => {
    await go('Models');
    await page.locator('tr[data-valid="true"]').filter({ hasText: 'demo-q8_0.gguf' }).first().waitFor({ timeout: 20_000 });
    await shot('models');
    await go('Server');
    await page.getByText('Effective configuration').waitFor();
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByTestId('server-state').filter({ hasText: 'ready' }).waitFor({ timeout: 30_000 });
    await page.getByText('Cold start: spawn → ready').waitFor();
    await shot('server');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByTestId('server-state').filter({ hasText: 'stopped' }).waitFor({ timeout: 15_000 });
    await go('Workloads');
    await page.getByTestId('workload-valid').waitFor();
    await page.getByTestId('token-preview').filter({ hasText: 'capital-france' }).waitFor();
    await page
      .getByRole('textbox', { name: 'workload definition' })
      .fill('name: broken\ngroups:\n  - name: g\n    items:\n      - id: a\n        prompt: x\n        colour: red\n');
    await page.getByTestId('workload-problems').filter({ hasText: 'unknown field "colour"' }).waitFor();
    await shot('workloads');
    await page.keyboard.press('Alt+T');
    await go('Home');
    await shot('home-dark');
    expect(pageErrors).toEqual([]);
  });

  it('runs a quantization experiment from the Experiments view and records a decision', async () => {
    await go('Experiments');
    await page.getByRole('button', { name: 'Compare the demo quantizations' }).click();
    await page.getByTestId('experiment-result').waitFor({ timeout: 120_000 });
    expect(await page.getByTestId('experiment-result').textContent()).toMatch(/q4_k_m[\s\S]*Recommendation|Recommendation[\s\S]*q4_k_m/);
    await page.getByPlaceholder('why this one').fill('smallest file, no significant TTFT loss');
    await page.getByRole('button', { name: 'Record decision' }).click();
    await page.getByTestId('decisions-table').filter({ hasText: 'smallest file, no significant TTFT loss' }).waitFor();
    await shot('experiments');
    expect(pageErrors).toEqual([]);
  });

  it('refuses WebSocket connections from another origin', async () => {
    const printed = new URL(serve.url);
    const wsUrl = `ws://${printed.host}/rpc?token=${printed.searchParams.get('token')}`;
    const status = await new Promise<number | string>((resolve) => {
      const socket = new WebSocket(wsUrl, { headers: { origin: 'http://evil.example' } });
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('open', () => resolve('open'));
      socket.on('error', () => {});
    });
    expect(status).toBe(403);
    const own = await new Promise<string>((resolve) => {
      const socket = new WebSocket(wsUrl, { headers: { origin: printed.origin } });
      socket.on('open', () => {
        socket.close();
        resolve('open');
      });
      socket.on('unexpected-response', (_request, response) => resolve(String(response.statusCode)));
    });
    expect(own).toBe('open');
  });
});

describe.runIf(executable)('inferlab serve beyond loopback', () => {
  it('requires the access token printed in its URL', async () => {
    const serve = await startServe(['--host', '0.0.0.0', '--db', path.join(tempDir(), 'token.db')]);
    try {
      const printed = new URL(serve.url);
      const token = printed.searchParams.get('token');
      expect(token).toMatch(/^[\w-]{32}$/);
      // Connect over loopback while presenting the host the server was started for.
      const local = `http://127.0.0.1:${printed.port}/`;
      const headers = { host: `0.0.0.0:${printed.port}` };
      const get = async (url: string) => {
        const { default: http } = await import('node:http');
        return new Promise<number>((resolve) =>
          http.get(url, { headers }, (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          }),
        );
      };
      expect(await get(local)).toBe(401);
      expect(await get(`${local}?token=wrong${token!.slice(5)}`)).toBe(401);
      // The token is swapped for a cookie on a redirect to the clean URL.
      expect(await get(`${local}?token=${token}`)).toBe(303);
      const wsStatus = await new Promise<number | string>((resolve) => {
        const socket = new WebSocket(`ws://127.0.0.1:${printed.port}/rpc`, {
          headers: { ...headers, origin: `http://0.0.0.0:${printed.port}` },
        });
        socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.on('open', () => resolve('open'));
        socket.on('error', () => {});
      });
      expect(wsStatus).toBe(401);
    } finally {
      await serve.stop();
    }
  });
});
