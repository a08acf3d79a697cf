import type { Browser, Page } from 'playwright-core';
import { describe, it } from 'vitest';
import { chromiumPath } from '../../src/main/doctor';

/** Set to 1 to run `npm test` without the UI tests on a machine that cannot have Chromium. */
export const SKIP_UI_VARIABLE = 'INFERLAB_SKIP_UI_TESTS';

const INSTALL = 'apt-get install -y chromium (or point INFERLAB_CHROMIUM at a Chromium binary)';

/** Chromium's path for the UI tests, or null where it is missing. */
export const chromiumExecutable = chromiumPath();

/**
 * A suite of UI tests. Without Chromium it fails with the install command, since a green run
 * that never opened the UI proves nothing; the person may opt out with SKIP_UI_VARIABLE, and
 * then the suite is reported as skipped with that reason.
 */
export function describeWithChromium(name: string, body: (executable: string) => void): void {
  if (chromiumExecutable) {
    describe(name, () => body(chromiumExecutable!));
    return;
  }
  describe(name, () => {
    if (process.env[SKIP_UI_VARIABLE] === '1')
      it('needs Chromium', (context) => context.skip(`Chromium is not installed and ${SKIP_UI_VARIABLE}=1 opts out of the UI tests`));
    else
      it('needs Chromium', () => {
        throw new Error(`The UI tests need Chromium: ${INSTALL}. To run the other tests without them, set ${SKIP_UI_VARIABLE}=1.`);
      });
  });
}

/** Headless Chromium on a machine with no network but loopback: no background fetches, no GPU process. */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/**
 * A new 1400 × 1000 page of `browser` on `url`, with every script error and console error the
 * page reports collected in `errors` (which a test expects empty), console ones too unless told not to.
 */
export async function openPage(browser: Browser, url: string, errors: string[], options: { consoleErrors?: boolean } = {}): Promise<Page> {
  // Downloads are accepted, as Playwright's default: the export tests read them.
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('pageerror', (error) => errors.push(error.message));
  if (options.consoleErrors !== false) page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
  await page.goto(url);
  return page;
}
