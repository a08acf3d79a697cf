import type { Locator } from 'playwright-core';
import type { AppShell } from './app';

export class ModelsPage {
  constructor(private readonly app: AppShell) {}

  async open(): Promise<void> {
    await this.app.open('Models');
  }

  row(file: string): Locator {
    return this.app.page.locator('tr[data-valid="true"]').filter({ hasText: file }).first();
  }

  /** Waits for a valid model row whose file name contains `file`. */
  async validModel(file: string): Promise<void> {
    await this.row(file).waitFor({ timeout: 20_000 });
  }

  /** One of a model's actions: Serve, Run, Quantize to …, Compare quantizations. */
  async action(file: string, action: string | RegExp): Promise<void> {
    await this.row(file).getByRole('button', { name: action }).click();
  }

  get quantType(): Locator {
    return this.app.page.getByLabel('quantization type');
  }

  /** Plans a hub repository or a folder from the "Get models" panel and waits for its table. */
  async plan(source: string, contextPerSlot: number): Promise<Locator> {
    const form = this.app.page.getByRole('form', { name: 'plan models' });
    await form.getByLabel('Repository or folder').fill(source);
    await form.getByLabel('Context per slot').fill(String(contextPerSlot));
    await form.getByRole('button', { name: 'Plan' }).click();
    const table = this.app.page.getByRole('table', { name: 'model plan' });
    await table.waitFor({ timeout: 30_000 });
    return table;
  }

  /** Searches the hub by name from "Get models" and plans the match named `source` (its table comes back). */
  async searchAndPlan(words: string, source: string): Promise<Locator> {
    const form = this.app.page.getByRole('form', { name: 'search the hub' });
    await form.getByLabel('Find by name').fill(words);
    await form.getByRole('button', { name: 'Search' }).click();
    await this.app.page.getByRole('list', { name: 'hub models' }).getByRole('button', { name: source, exact: true }).click();
    const table = this.app.page.getByRole('table', { name: 'model plan' });
    await table.waitFor({ timeout: 30_000 });
    return table;
  }

  /** Ticks the quantizations in the plan table and starts their pull. */
  async pull(labels: string[]): Promise<void> {
    for (const label of labels) await this.app.page.getByRole('checkbox', { name: `pull ${label}`, exact: true }).check();
    await this.app.page.getByRole('button', { name: new RegExp(`^Pull ${labels.length} \\(`) }).click();
  }

  /** The pull's card: its progress line, Cancel, the pulled files and "Compare these". */
  get pullCard(): Locator {
    return this.app.page.getByLabel('pull', { exact: true });
  }
}
