export interface Disposable {
  dispose(): void | Promise<void>;
}

/**
 * Owns things that must be released, and releases them in reverse order of acquisition,
 * so a service is torn down before the services it was built on.
 */
export class DisposableStack implements Disposable {
  private readonly items: Disposable[] = [];
  private disposed = false;

  add<T extends Disposable>(item: T): T {
    if (this.disposed) throw new Error('DisposableStack: add() after dispose()');
    this.items.push(item);
    return item;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const failures: unknown[] = [];
    for (const item of this.items.splice(0).reverse()) {
      try {
        await item.dispose();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, 'Some resources failed to dispose');
  }
}
