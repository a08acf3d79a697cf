import type { Locator } from 'playwright-core';
import type { AppShell } from './app';

export class WorkloadsPage {
  constructor(private readonly app: AppShell) {}

  async open(): Promise<void> {
    await this.app.open('Workloads');
    await this.app.page.getByTestId('workload-valid').waitFor();
  }

  get tokenPreview(): Locator {
    return this.app.page.getByTestId('token-preview');
  }

  get problems(): Locator {
    return this.app.page.getByTestId('workload-problems');
  }

  async edit(text: string): Promise<void> {
    await this.app.page.getByRole('textbox', { name: 'workload definition' }).fill(text);
  }
}
