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

  get form(): Locator {
    return this.app.page.getByRole('form', { name: 'run options' });
  }

  /** What the form's check says: "Ready to start." or the problem that blocks starting. */
  get problem(): Locator {
    return this.app.page.getByTestId('run-problem');
  }

  async fill(label: string, value: string): Promise<void> {
    await this.form.getByLabel(label, { exact: true }).fill(value);
  }

  async choose(option: string): Promise<void> {
    await this.form.getByRole('radio', { name: option }).check();
  }

  async select(label: string, option: string): Promise<void> {
    await this.form.getByLabel(label, { exact: true }).selectOption(option);
  }

  /** Starts a run with the form as it stands and waits for it to finish. */
  async startAndFinish(): Promise<void> {
    await this.problem.filter({ hasText: 'Ready to start.' }).waitFor();
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
