import type { Locator } from 'playwright-core';
import type { AppShell } from './app';

export class ComparePage {
  constructor(private readonly app: AppShell) {}

  get table(): Locator {
    return this.app.page.getByTestId('compare-table');
  }

  get groups(): Locator {
    return this.app.page.getByTestId('compare-groups');
  }

  chart(name: string): Locator {
    return this.app.page.getByRole('img', { name });
  }

  /** Opens the race of the compared runs: each run's first measured request, side by side. */
  async race(): Promise<void> {
    await this.app.page.getByRole('button', { name: 'Race these runs' }).click();
    await this.app.page.getByTestId('race-lanes').waitFor();
  }

  /** Exports a chart and resolves with the file name offered. */
  async exportChart(name: string, format: 'SVG' | 'PNG'): Promise<string> {
    const download = this.app.page.waitForEvent('download');
    await this.app.page.getByRole('button', { name: `${name} as ${format}` }).click();
    return (await download).suggestedFilename();
  }
}
