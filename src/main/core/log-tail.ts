/** Keeps the last `capacity` lines of a stream; older lines fall off. */
export class LogTail {
  private readonly lines: string[] = [];

  constructor(private readonly capacity = 500) {}

  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
  }

  last(count = this.capacity): string[] {
    return this.lines.slice(-count);
  }

  text(count = 40): string {
    return this.last(count).join('\n');
  }
}

/** Splits a byte stream into lines, holding a partial trailing line until it completes. */
export class LineSplitter {
  private pending = '';

  constructor(private readonly onLine: (line: string) => void) {}

  write(chunk: string): void {
    const parts = (this.pending + chunk).split(/\r?\n/);
    this.pending = parts.pop() ?? '';
    for (const line of parts) this.onLine(line);
  }

  flush(): void {
    if (this.pending) this.onLine(this.pending);
    this.pending = '';
  }
}
