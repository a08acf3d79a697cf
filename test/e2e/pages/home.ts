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

  /** Runs engine setup for a backend from the Home view and waits for it to end. */
  async setUp(backend: string): Promise<string> {
    const card = this.app.page.getByTestId('setup');
    await card.getByLabel('setup backend').selectOption(backend);
    await card.getByRole('button', { name: 'Set up' }).click();
    const progress = this.app.page.getByTestId('setup-progress');
    await progress.filter({ hasText: /Ready\.|failed|Cancelled/ }).waitFor({ timeout: 120_000 });
    return (await progress.textContent()) ?? '';
  }

  /** The banner that says runs measure the CPU on a GPU machine, once the system check has answered. */
  async cpuEngineOnGpuBanner(): Promise<string> {
    await this.engineReady();
    return (await this.app.page.getByTestId('cpu-engine-on-gpu').textContent({ timeout: 10_000 })) ?? '';
  }

  async runDemo(): Promise<void> {
    await this.app.page.getByRole('button', { name: 'Run the demo' }).click();
  }
}
