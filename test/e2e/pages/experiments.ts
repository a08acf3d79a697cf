import type { Locator } from 'playwright-core';
import type { AppShell } from './app';

export class ExperimentsPage {
  constructor(private readonly app: AppShell) {}

  async open(): Promise<void> {
    await this.app.open('Experiments');
  }

  get result(): Locator {
    return this.app.page.getByTestId('experiment-result');
  }

  get decisions(): Locator {
    return this.app.page.getByTestId('decisions-table');
  }

  /** Downloads the shown experiment's HTML report and resolves with the file name offered. */
  async downloadReport(): Promise<string> {
    const download = this.app.page.waitForEvent('download');
    await this.app.page.getByRole('button', { name: 'Download report' }).click();
    return (await download).suggestedFilename();
  }

  async compareDemoQuantizations(): Promise<void> {
    await this.app.page.getByRole('button', { name: 'Compare the demo quantizations' }).click();
    await this.result.waitFor({ timeout: 120_000 });
  }

  async decide(reason: string, by: string): Promise<void> {
    await this.app.page.getByPlaceholder('why this one').fill(reason);
    await this.app.page.getByLabel('decided by').fill(by);
    await this.app.page.getByRole('button', { name: 'Record decision' }).click();
  }
}
