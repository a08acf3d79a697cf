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

  async compareDemoQuantizations(): Promise<void> {
    await this.app.page.getByRole('button', { name: 'Compare the demo quantizations' }).click();
    await this.result.waitFor({ timeout: 120_000 });
  }

  async decide(reason: string): Promise<void> {
    await this.app.page.getByPlaceholder('why this one').fill(reason);
    await this.app.page.getByRole('button', { name: 'Record decision' }).click();
  }
}
