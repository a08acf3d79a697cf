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

  /** Exports one run; resolves with the one file offered and where the browser saved it. */
  async exportRun(index: number): Promise<{ name: string; file: string }> {
    const download = this.app.page.waitForEvent('download');
    await this.rows.nth(index).getByRole('button', { name: 'Export' }).click();
    const done: Download = await download;
    return { name: done.suggestedFilename(), file: (await done.path())! };
  }

  /** Types an exported run folder and presses Import. */
  async importFolder(folder: string): Promise<void> {
    const form = this.app.page.getByRole('form', { name: 'import a run' });
    await form.getByLabel('Exported run folder').fill(folder);
    await form.getByRole('button', { name: 'Import' }).click();
  }

  get parquetForm(): Locator {
    return this.app.page.getByRole('form', { name: 'export as parquet' });
  }

  /** Presses "Export all as Parquet", into a typed folder or (none typed) a new one under the results folder. */
  async exportParquet(folder = ''): Promise<void> {
    await this.parquetForm.getByLabel('Parquet folder').fill(folder);
    await this.parquetForm.getByRole('button', { name: 'Export all as Parquet' }).click();
  }

  get importForm(): Locator {
    return this.app.page.getByRole('form', { name: 'import a run' });
  }

  get filter(): Locator {
    return this.app.page.getByPlaceholder(/model, quantization, workload/);
  }

  get pages(): Locator {
    return this.app.page.getByTestId('runs-pages');
  }

  get detail(): Locator {
    return this.app.page.getByTestId('run-detail');
  }

  async older(): Promise<void> {
    await this.pages.getByRole('button', { name: 'Older' }).click();
  }

  async compareSelected(count: number): Promise<void> {
    await this.app.page.getByRole('button', { name: new RegExp(`Compare ${count} selected`) }).click();
  }
}
