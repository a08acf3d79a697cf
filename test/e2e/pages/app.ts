import path from 'node:path';
import type { Page } from 'playwright-core';

export type ViewLabel = 'Home' | 'Models' | 'Server' | 'Workloads' | 'Run' | 'Runs' | 'Compare' | 'Experiments' | 'Settings' | 'History';

/** The app shell: navigation, theme and screenshots. Every page object starts here. */
export class AppShell {
  constructor(
    readonly page: Page,
    private readonly screenshotDir: string,
  ) {}

  async open(view: ViewLabel): Promise<void> {
    await this.page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: view, exact: true }).click();
  }

  /** Loads the app afresh at a route (`#/runs/ID`), as a bookmark or a pasted link would. */
  async visit(hash: string): Promise<void> {
    await this.page.goto(`${new URL(this.page.url()).origin}/${hash}`);
    await this.page.reload();
  }

  /** The route the address bar shows. */
  async hash(): Promise<string> {
    return this.page.evaluate(() => decodeURIComponent(window.location.hash));
  }

  async toggleTheme(): Promise<void> {
    await this.page.keyboard.press('Alt+KeyT');
  }

  async screenshot(name: string): Promise<void> {
    await this.page.screenshot({ path: path.join(this.screenshotDir, `${name}.png`), fullPage: true });
  }
}
