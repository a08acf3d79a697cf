import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { demoModelsDir, projectRoot } from '../../src/main/core/paths';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { CHROMIUM_FLAGS, describeWithChromium, openPage } from '../support/chromium';
import { around, storeHistoryRun } from '../support/history-runs';
import { startServe } from '../support/serve';
import { LONG_CONTAMINATION_REASON, storeAdapterExperiment, storeQuantExperiment } from '../support/stored-quant-experiment';
import { storeSampleRun } from '../support/stored-run';
import { isolatedDataDir } from '../support/temp';
import { raceHtml } from '../../src/shared/race-html';
import { AppShell } from './pages/app';
import { ExperimentsPage } from './pages/experiments';
import { ServerPage } from './pages/server';
import { SettingsPage } from './pages/settings';
import { WorkloadsPage } from './pages/workloads';

const screenshots = path.join(projectRoot(), 'test-results', 'screenshots');

/** The smallest laptop screen a presenter is likely to have, and the usual projector. */
const SIZES = [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
] as const;

/** Taller than this, the text of a table row is a paragraph squeezed into a cell: such text belongs under the table. */
const TALLEST_ROW_PX = 80;
/** Two lines of a heading; a scrolling table's headings need only one. */
const TALLEST_HEADING_PX = 44;

/** Stored runs (two comparable), a run with telemetry and a failure, the demo's quantization result and an adapter result; no server needed. */
function seed(file: string): { runId: string; compareIds: string[]; experimentId: string; adapterExperimentId: string } {
  const db = openDatabase(file);
  try {
    const runs = new RunStore(db);
    const engine = { commit: 'b6100ff', backend: 'cpu' };
    const compareIds = [12, 15].map((median, day) =>
      storeHistoryRun({ db, runs }, { startedAt: `2026-02-0${day + 1}T10:00:00Z`, engine, tpots: around(median) }),
    );
    return {
      runId: storeSampleRun(runs),
      compareIds,
      experimentId: storeQuantExperiment(db),
      adapterExperimentId: storeAdapterExperiment(db),
    };
  } finally {
    db.close();
  }
}

/**
 * What spills out of its box, in the page: every visible element must lie within its nearest card
 * (outside cards, within `main`) unless a container inside that box scrolls (or clips) it
 * sideways, no cell of a table with a header row may hold text taller than `tallestRow`, and no heading
 * of a scrolling table text taller than `tallestHeading`. A
 * card that scrolls as a whole does not count: its headings and buttons would slide away with the table.
 */
function layoutProblems({ tallestRow, tallestHeading }: { tallestRow: number; tallestHeading: number }): string[] {
  const problems: string[] = [];
  const offenders: Element[] = [];
  const label = (element: Element) => {
    const text = (element.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return `${element.tagName.toLowerCase()}${element.className && typeof element.className === 'string' ? `.${element.className.split(' ').join('.')}` : ''} "${text}"`;
  };
  // A box that scrolls its overflow sideways, or cuts it off on purpose (a path's start behind an ellipsis).
  const holdsOverflow = (element: Element) =>
    ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(element).overflowX) && element.scrollWidth > element.clientWidth;
  const main = document.querySelector('main');
  if (!main) return ['no main element'];
  for (const element of main.querySelectorAll('*')) {
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || getComputedStyle(element).visibility === 'hidden') continue;
    const container = element.parentElement?.closest('.card') ?? main;
    if (!main.contains(container)) continue;
    const bounds = container.getBoundingClientRect();
    if (box.left >= bounds.left - 0.5 && box.right <= bounds.right + 0.5) continue;
    let scroller: Element | null = element.parentElement;
    while (scroller && scroller !== container && !holdsOverflow(scroller)) scroller = scroller.parentElement;
    if (scroller && scroller !== container) continue;
    // Report the outermost offender only: its descendants spill with it.
    if (offenders.some((offender) => offender.contains(element))) continue;
    offenders.push(element);
    problems.push(
      `${label(element)} spans x ${Math.round(box.left)}–${Math.round(box.right)} outside its ${container === main ? 'main' : 'card'} (x ${Math.round(bounds.left)}–${Math.round(bounds.right)})`,
    );
  }
  // A cell's text, not its buttons: a note squeezed into a narrow cell stacks its words; wrapped buttons stay usable.
  // Rows of record tables (with a header row) only; a table of names and values may list several lines under one name.
  const textHeight = (cell: Element) => {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    let top = Infinity;
    let bottom = -Infinity;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent?.trim() || node.parentElement?.closest('button, select, input, textarea')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const rect of range.getClientRects()) {
        top = Math.min(top, rect.top);
        bottom = Math.max(bottom, rect.bottom);
      }
    }
    return bottom > top ? bottom - top : 0;
  };
  for (const row of main.querySelectorAll('table:has(> thead) > tbody > tr')) {
    const tallest = Math.max(0, ...[...row.children].map(textHeight));
    if (tallest > tallestRow) problems.push(`${label(row)} holds text ${Math.round(tallest)} px tall`);
  }
  // A heading of a table that scrolls has room for its one line: stacked words only push the figures down.
  for (const row of main.querySelectorAll('.table-scroll table > thead > tr')) {
    const tallest = Math.max(0, ...[...row.children].map(textHeight));
    if (tallest > tallestHeading) problems.push(`heading ${label(row)} holds text ${Math.round(tallest)} px tall`);
  }
  // A hint cut off inside its field says half of what it means: every placeholder fits on one line of its input.
  const measure = document.createElement('canvas').getContext('2d')!;
  for (const input of main.querySelectorAll<HTMLInputElement>('input[placeholder]')) {
    if (!input.placeholder || input.getBoundingClientRect().width === 0) continue;
    const style = getComputedStyle(input);
    measure.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const needed = measure.measureText(input.placeholder).width;
    if (needed > room + 0.5)
      problems.push(
        `the placeholder "${input.placeholder}" of ${label(input.closest('label') ?? input)} needs ${Math.round(needed)} px of ${Math.round(room)}`,
      );
  }
  return problems;
}

describeWithChromium('every view fits its cards at a presenter’s screen sizes', (executable) => {
  let browser: Browser;
  let serve: Awaited<ReturnType<typeof startServe>>;
  let page: Page;
  const pageErrors: string[] = [];
  // Its own data folder with the demo models, so the Models view lists files as a user's would.
  const dataDir = isolatedDataDir(demoModelsDir());
  const database = path.join(dataDir, 'layout.db');
  const stored = seed(database);

  beforeAll(async () => {
    fs.mkdirSync(screenshots, { recursive: true });
    serve = await startServe(['--db', database], { INFERLAB_DATA_DIR: dataDir });
    browser = await chromium.launch({ executablePath: executable, args: CHROMIUM_FLAGS });
    page = await openPage(browser, serve.url, pageErrors);
  });

  afterAll(async () => {
    await browser?.close();
    expect(await serve?.stop()).toBe(0);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Each view as a presenter opens it, ready to be looked at: with its data, no placeholder left. */
  const views = (shell: AppShell): { name: string; open: () => Promise<void> }[] => {
    const goTo = async (hash: string, ready: string) => {
      await page.evaluate((target) => (window.location.hash = target), hash);
      await page.getByTestId(ready).first().waitFor();
    };
    return [
      { name: 'home', open: () => shell.open('Home').then(() => page.locator('tr[data-check]').first().waitFor()) },
      { name: 'run', open: () => shell.open('Run').then(() => page.getByTestId('run-problem').waitFor()) },
      { name: 'runs', open: () => goTo(`#/runs/${stored.runId}`, 'run-detail') },
      { name: 'compare', open: () => goTo(`#/compare?ids=${stored.compareIds.join(',')}`, 'compare-table') },
      {
        name: 'experiments',
        open: async () => {
          const experiments = new ExperimentsPage(shell);
          await goTo('#/experiments', 'experiments-table');
          await experiments.openStored('quant', 'completed');
          await experiments.result.locator('canvas').waitFor();
        },
      },
      { name: 'experiment-adapter', open: () => goTo(`#/experiments/${stored.adapterExperimentId}`, 'adapter-table') },
      { name: 'models', open: () => shell.open('Models').then(() => page.locator('tr[data-valid]').first().waitFor()) },
      { name: 'workloads', open: () => new WorkloadsPage(shell).open() },
      { name: 'server', open: () => new ServerPage(shell).open() },
      { name: 'settings', open: () => new SettingsPage(shell).open() },
      { name: 'history', open: () => goTo('#/history', 'history-table') },
      { name: 'race', open: () => goTo(`#/race?lanes=${stored.runId},${stored.runId}`, 'race-lanes') },
      {
        name: 'race-new',
        open: async () => {
          await page.evaluate(() => (window.location.hash = '#/race'));
          await page.getByRole('form', { name: 'race models now' }).waitFor();
        },
      },
    ];
  };

  it('scrolls the quantization conditions inside the card with the condition names kept, and lists the contamination under the table', async () => {
    const shell = new AppShell(page, screenshots);
    await page.setViewportSize(SIZES[0]);
    await page.evaluate((hash) => (window.location.hash = hash), `#/experiments/${stored.experimentId}`);
    const table = page.getByTestId('conditions-table');
    await table.waitFor();
    const box = table.locator('xpath=..');
    const firstCell = () => table.locator('tbody tr').first().locator('th');
    const widths = await box.evaluate((element) => ({ scroll: element.scrollWidth, client: element.clientWidth }));
    expect(widths.scroll).toBeGreaterThan(widths.client);
    const before = await firstCell().boundingBox();
    await box.evaluate((element) => (element.scrollLeft = element.scrollWidth));
    const after = await firstCell().boundingBox();
    // The condition's name stays where it was; the columns after it moved under it.
    expect(after!.x).toBeCloseTo(before!.x, 0);
    const contaminated = table.getByTestId('condition-contaminated').first();
    expect(await contaminated.innerText()).toBe('yes — note 1');
    const visible = await box.boundingBox();
    const cell = await contaminated.boundingBox();
    expect(cell!.x + cell!.width).toBeLessThanOrEqual(visible!.x + visible!.width + 1);
    await shell.screenshot(`layout-experiments-scrolled-${SIZES[0].width}x${SIZES[0].height}`);

    // The link leads to the note under the table without changing the address (the route).
    await contaminated.getByRole('link', { name: 'note 1' }).click();
    const note = page.getByRole('list', { name: 'why conditions are contaminated' }).getByRole('listitem');
    await expect.poll(() => note.evaluate((element) => element === document.activeElement)).toBe(true);
    expect(await note.textContent()).toBe(`f16: ${LONG_CONTAMINATION_REASON}`);
    expect(await shell.hash()).toBe(`#/experiments/${stored.experimentId}`);
    // Eight verdicts withheld for the same reason point to one note, numbered after the conditions' own.
    const withheld = page.getByTestId('verdicts-table').getByRole('link', { name: 'note 2' });
    expect(await withheld.count()).toBe(8);
    expect(await page.getByRole('list', { name: 'why verdicts are withheld' }).innerText()).toBe(
      'no verdict: f16 is contaminated (see its condition row)',
    );
    expect(pageErrors).toEqual([]);
  });

  it("opens each experiment's decision at its own recommendation: a choice and reason begun on another do not carry over", async () => {
    await page.evaluate((hash) => (window.location.hash = hash), `#/experiments/${stored.experimentId}`);
    const decide = page.getByLabel('condition decided');
    await expect.poll(() => decide.inputValue()).toBe('q4_k_m');
    await decide.selectOption('q8_0');
    await page.getByPlaceholder('why this one').fill('smaller, and fast enough');
    await page.evaluate((hash) => (window.location.hash = hash), `#/experiments/${stored.adapterExperimentId}`);
    await page.getByTestId('adapter-table').waitFor();
    expect(await decide.inputValue()).toBe('demo-lora@0.5 swapped');
    expect(await page.getByPlaceholder('why this one').inputValue()).toBe('');
    expect(pageErrors).toEqual([]);
  });

  it('plays an exported race file offline at both sizes: lanes fill in at their pace, the order shows, nothing is fetched', async () => {
    const lane = (label: string, pace: number) => ({
      label,
      runId: label,
      seq: 0,
      chunks: Array.from({ length: 12 }, (_, index) => ({ atMs: 40 + index * pace, text: `word${index} ` })),
      ttftMs: 40,
      endMs: 40 + 11 * pace + 5,
      outputTokens: 12,
      textless: null,
    });
    const file = path.join(dataDir, 'race.html');
    fs.writeFileSync(
      file,
      raceHtml({
        lanes: [lane('fast', 10), lane('slow', 40), { ...lane('private', 25), textless: 'a private run keeps no text: token ticks only' }],
        note: 'constructed lanes',
      }),
    );
    const racePage = await browser.newPage();
    const fetched: string[] = [];
    const errors: string[] = [];
    racePage.on('request', (request) => void (request.url().startsWith('file:') || fetched.push(request.url())));
    racePage.on('pageerror', (error) => errors.push(error.message));
    try {
      for (const size of SIZES) {
        await racePage.setViewportSize(size);
        await racePage.goto(`file://${file}`);
        await racePage.keyboard.press('Space');
        await expect
          .poll(() => racePage.locator('#order').innerText())
          .toMatch(/^Finished: 1\. fast \d+ ms; 2\. private \d+ ms; 3\. slow \d+ ms$/);
        expect(await racePage.locator('section pre').allInnerTexts()).toEqual([
          Array.from({ length: 12 }, (_, index) => `word${index} `).join(''),
          Array.from({ length: 12 }, (_, index) => `word${index} `).join(''),
          '▮'.repeat(12),
        ]);
        await racePage.screenshot({ path: path.join(screenshots, `race-html-${size.width}x${size.height}.png`) });
      }
      // R plays it again from the start: the lanes empty, then fill in to the same text, once.
      await racePage.keyboard.press('r');
      await expect.poll(() => racePage.locator('#order').innerText()).toBe('');
      await expect.poll(() => racePage.locator('#order').innerText()).toMatch(/^Finished: 1\. fast/);
      expect(await racePage.locator('section pre').first().innerText()).toBe(
        Array.from({ length: 12 }, (_, index) => `word${index} `).join(''),
      );
    } finally {
      await racePage.close();
    }
    expect(fetched).toEqual([]);
    expect(errors).toEqual([]);
  });

  for (const size of SIZES) {
    it(`lays out every view at ${size.width} × ${size.height} without spilling out of a card`, async () => {
      const shell = new AppShell(page, screenshots);
      await page.setViewportSize(size);
      const found: Record<string, string[]> = {};
      for (const view of views(shell)) {
        await view.open();
        await expect.poll(() => page.locator('[aria-busy="true"]').count()).toBe(0);
        await shell.screenshot(`layout-${view.name}-${size.width}x${size.height}`);
        const problems = await page.evaluate(layoutProblems, { tallestRow: TALLEST_ROW_PX, tallestHeading: TALLEST_HEADING_PX });
        if (problems.length > 0) found[view.name] = problems;
      }
      expect(found, JSON.stringify(found, null, 1)).toEqual({});
      expect(pageErrors).toEqual([]);
    });
  }
});
