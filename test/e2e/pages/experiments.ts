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

  /** Starts the demo's quantization step from the toolbar and waits until the view shows it running. */
  async startDemoQuantizations(): Promise<void> {
    await this.app.page.getByRole('button', { name: 'Compare the demo quantizations' }).click();
    await this.phase.filter({ hasText: 'running' }).waitFor();
  }

  async cancel(): Promise<void> {
    await this.app.page.getByRole('button', { name: 'Cancel' }).click();
  }

  /** The running or last job's phase badge and message. */
  get phase(): Locator {
    return this.app.page.getByTestId('experiment-phase');
  }

  /** Opens the newest stored experiment of `kind` with `status` from the Experiments table and waits for its result. */
  async openStored(kind: string, status: string): Promise<void> {
    const row = this.app.page
      .getByTestId('experiments-table')
      .getByRole('row')
      .filter({ has: this.app.page.getByRole('cell', { name: kind, exact: true }) })
      .filter({ has: this.app.page.getByRole('cell', { name: status, exact: true }) })
      .first();
    await row.getByRole('button').click();
    await this.result.waitFor();
  }

  get form(): Locator {
    return this.app.page.getByRole('form', { name: 'experiment options' });
  }

  /** What the form's check says: "Ready to start." or the problem that blocks starting. */
  get problem(): Locator {
    return this.app.page.getByTestId('experiment-problem');
  }

  async openForm(): Promise<void> {
    if (!(await this.form.isVisible())) await this.app.page.getByText('New experiment: any model').click();
    await this.form.waitFor();
  }

  async fill(label: string, value: string): Promise<void> {
    await this.form.getByLabel(label, { exact: true }).fill(value);
  }

  async choose(option: string | RegExp): Promise<void> {
    await this.form.getByRole('radio', { name: option }).check();
  }

  async select(label: string, option: string): Promise<void> {
    await this.form.getByLabel(label, { exact: true }).selectOption(option);
  }

  /** Starts the experiment the form describes and waits for its result. */
  async startAndFinish(): Promise<void> {
    await this.problem.filter({ hasText: 'Ready to start.' }).waitFor();
    // The view moves to the result of the experiment it finished: an earlier experiment's "finished" and result,
    // still on the page while this one starts, must not count.
    const before = await this.app.page.evaluate(() => window.location.hash);
    await this.form.getByRole('button', { name: 'Start experiment' }).click();
    await this.app.page.waitForFunction(
      (previous) => /^#\/experiments\/[0-9a-f-]{36}$/.test(window.location.hash) && window.location.hash !== previous,
      before,
      { timeout: 240_000 },
    );
    await this.app.page.getByTestId('experiment-phase').filter({ hasText: 'finished' }).waitFor();
    await this.result.waitFor();
  }

  async decide(reason: string, by: string): Promise<void> {
    await this.app.page.getByPlaceholder('why this one').fill(reason);
    await this.app.page.getByLabel('decided by').fill(by);
    await this.app.page.getByRole('button', { name: 'Record decision' }).click();
  }
}
