import type { Locator } from 'playwright-core';
import type { AppShell } from './app';

export class SettingsPage {
  constructor(private readonly app: AppShell) {}

  async open(): Promise<void> {
    await this.app.open('Settings');
    await this.form.waitFor();
  }

  get form(): Locator {
    return this.app.page.getByRole('form', { name: 'settings' });
  }

  get status(): Locator {
    return this.app.page.getByTestId('settings-status');
  }

  get paths(): Locator {
    return this.app.page.getByTestId('settings-paths');
  }

  async fill(label: string, value: string): Promise<void> {
    await this.form.getByLabel(label, { exact: true }).fill(value);
  }

  async save(): Promise<void> {
    await this.form.getByRole('button', { name: 'Save settings' }).click();
    await this.status.filter({ hasText: 'Saved to' }).waitFor();
  }
}
