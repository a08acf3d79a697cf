import type { Locator } from 'playwright-core';
import type { AppShell } from './app';

export class ServerPage {
  constructor(private readonly app: AppShell) {}

  async open(): Promise<void> {
    await this.app.open('Server');
    await this.app.page.getByText('Effective configuration').waitFor();
  }

  get log(): Locator {
    return this.app.page.getByLabel('server log');
  }

  async state(state: string, timeout: number): Promise<void> {
    await this.app.page.getByTestId('server-state').filter({ hasText: state }).waitFor({ timeout });
  }

  async start(): Promise<void> {
    await this.app.page.getByRole('button', { name: 'Start', exact: true }).click();
    await this.state('ready', 30_000);
  }

  async stop(): Promise<void> {
    await this.app.page.getByRole('button', { name: 'Stop', exact: true }).click();
    await this.state('stopped', 15_000);
  }

  /** Pastes a log into the explainer and waits for its facts. */
  async explain(log: string): Promise<void> {
    await this.app.page.getByLabel('log to explain').fill(log);
    await this.app.page.getByRole('button', { name: 'Explain', exact: true }).click();
    await this.facts.waitFor();
  }

  /** The profile editor's control for one field, by the label the editor shows. */
  profileField(label: string): Locator {
    const page = this.app.page;
    return page.locator('label').filter({ has: page.locator('span', { hasText: new RegExp(`^${label}$`) }) });
  }

  get startButton(): Locator {
    return this.app.page.getByRole('button', { name: 'Start', exact: true });
  }

  get facts(): Locator {
    return this.app.page.getByTestId('log-facts');
  }

  /** What the pasted text does not say, one item a fact. */
  get missing(): Locator {
    return this.app.page.getByTestId('log-missing');
  }

  get warnings(): Locator {
    return this.app.page.getByTestId('log-warnings');
  }
}
