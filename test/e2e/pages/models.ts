import type { AppShell } from './app';

export class ModelsPage {
  constructor(private readonly app: AppShell) {}

  async open(): Promise<void> {
    await this.app.open('Models');
  }

  /** Waits for a valid model row whose file name contains `file`. */
  async validModel(file: string): Promise<void> {
    await this.app.page.locator('tr[data-valid="true"]').filter({ hasText: file }).first().waitFor({ timeout: 20_000 });
  }
}
