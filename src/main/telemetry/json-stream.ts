/**
 * Splits a stream of concatenated JSON documents (as a watch-mode tool prints them, pretty
 * or not) into complete documents, by tracking bracket depth outside strings.
 */
export class JsonDocumentSplitter {
  private buffer = '';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private start = -1;

  constructor(
    private readonly onDocument: (value: unknown) => void,
    private readonly maxBytes = 4 * 1024 * 1024,
  ) {}

  write(text: string): void {
    for (const char of text) {
      if (this.start < 0) {
        if (char === '{' || char === '[') {
          this.start = 0;
          this.buffer = '';
          this.depth = 0;
        } else {
          continue;
        }
      }
      this.buffer += char;
      if (this.buffer.length > this.maxBytes) {
        // A document this large is not telemetry: drop it and resynchronise on the next one.
        this.start = -1;
        this.buffer = '';
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (char === '\\') this.escaped = true;
        else if (char === '"') this.inString = false;
        continue;
      }
      if (char === '"') this.inString = true;
      else if (char === '{' || char === '[') this.depth += 1;
      else if (char === '}' || char === ']') {
        this.depth -= 1;
        if (this.depth === 0) {
          const document = this.buffer;
          this.start = -1;
          this.buffer = '';
          try {
            this.onDocument(JSON.parse(document));
          } catch {
            // Not JSON after all (a warning line with brackets): skip it.
          }
        }
      }
    }
  }
}
