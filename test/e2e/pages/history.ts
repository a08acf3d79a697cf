import type { Locator } from 'playwright-core';
import type { AppShell } from './app';

export class HistoryPage {
  constructor(private readonly app: AppShell) {}

  async open(): Promise<void> {
    await this.app.open('History');
  }

  get metric(): Locator {
    return this.app.page.getByLabel('Metric');
  }

  get empty(): Locator {
    return this.app.page.getByTestId('history-empty');
  }

  get configurations(): Locator {
    return this.app.page.getByTestId('history-configuration');
  }

  /** The table rows of one configuration, a row per build. */
  builds(configuration: Locator): Locator {
    return configuration.getByTestId('history-table').locator('tbody tr');
  }

  chart(configuration: Locator): Locator {
    return configuration.getByRole('img', { name: /^history / });
  }
}
