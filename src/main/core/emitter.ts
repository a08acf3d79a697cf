/** A typed event source; `on` returns the function that unsubscribes. */
export class Emitter<T> {
  private readonly listeners = new Set<(value: T) => void>();

  on(listener: (value: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch {
        // One failing listener must not stop the others from hearing the event.
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
