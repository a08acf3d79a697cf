import type { AppShell } from './app';

export class HomePage {
  constructor(private readonly app: AppShell) {}

  async open(): Promise<void> {
    await this.app.open('Home');
  }

  /** Waits until the system check says the engine works. */
  async engineReady(): Promise<void> {
    await this.app.page.locator('tr[data-check="engine"][data-status="ok"]').waitFor({ timeout: 30_000 });
  }

  async runDemo(): Promise<void> {
    await this.app.page.getByRole('button', { name: 'Run the demo' }).click();
  }
}
