import type { Locator } from 'playwright-core';
import type { AppShell } from './app';

export class RunPage {
  constructor(private readonly app: AppShell) {}

  async open(): Promise<void> {
    await this.app.open('Run');
  }

  get summary(): Locator {
    return this.app.page.getByTestId('run-summary');
  }

  /** Starts a run with the form as it stands and waits for it to finish. */
  async startAndFinish(): Promise<void> {
    await this.app.page.getByRole('button', { name: 'Start run' }).click();
    await this.app.page.getByTestId('run-phase').filter({ hasNotText: 'finished' }).waitFor({ timeout: 10_000 });
    await this.finished();
  }

  async finished(): Promise<void> {
    await this.app.page.getByTestId('run-phase').filter({ hasText: 'finished' }).waitFor({ timeout: 90_000 });
    await this.summary.waitFor();
  }

  /** The cells of one metric's row in the summary table. */
  async metricRow(metric: string): Promise<string[]> {
    return this.summary
      .locator('tr', { has: this.app.page.locator('th', { hasText: new RegExp(`^${metric}$`) }) })
      .locator('td')
      .allTextContents();
  }

  async sampleText(): Promise<string> {
    return (await this.app.page.getByTestId('sample-text').textContent()) ?? '';
  }
}
