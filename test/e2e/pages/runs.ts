import type { Download, Locator } from 'playwright-core';
import type { AppShell } from './app';

export class RunsPage {
  constructor(private readonly app: AppShell) {}

  async open(): Promise<void> {
    await this.app.open('Runs');
  }

  get rows(): Locator {
    return this.app.page.getByTestId('runs-table').locator('tbody tr');
  }

  async select(index: number): Promise<void> {
    await this.rows.nth(index).getByRole('checkbox').check();
  }

  /** Exports one run and resolves with the names of the files it downloads. */
  async exportRun(index: number, files: number): Promise<string[]> {
    const names: string[] = [];
    const onDownload = (download: Download) => names.push(download.suggestedFilename());
    this.app.page.on('download', onDownload);
    await this.rows.nth(index).getByRole('button', { name: 'Export' }).click();
    const deadline = Date.now() + 10_000;
    while (names.length < files && Date.now() < deadline) await this.app.page.waitForTimeout(100);
    this.app.page.off('download', onDownload);
    return names;
  }

  async compareSelected(count: number): Promise<void> {
    await this.app.page.getByRole('button', { name: new RegExp(`Compare ${count} selected`) }).click();
  }
}
