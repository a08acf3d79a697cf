/**
 * Splits a stream of concatenated JSON documents (as a watch-mode tool prints them, pretty
 * or not) into complete documents, by tracking bracket depth outside strings. With
 * `topLevelElements`, a top-level array is not awaited whole: each element is handed over as
 * it completes, since a watch mode may keep one list open for as long as it runs.
 */
export class JsonDocumentSplitter {
  private buffer = '';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private start = -1;
  private inTopArray = false;
  private elementStart = -1;

  constructor(
    private readonly onDocument: (value: unknown) => void,
    private readonly maxBytes = 4 * 1024 * 1024,
    private readonly topLevelElements = false,
  ) {}

  write(text: string): void {
    for (const char of text) {
      if (this.start < 0) {
        if (char === '{' || char === '[') {
          this.start = 0;
          this.buffer = '';
          this.depth = 0;
          this.inTopArray = this.topLevelElements && char === '[';
          this.elementStart = -1;
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
      else if (char === '{' || char === '[') {
        this.depth += 1;
        if (this.inTopArray && this.depth === 2) this.elementStart = this.buffer.length - 1;
      } else if (char === '}' || char === ']') {
        this.depth -= 1;
        if (this.inTopArray && this.depth === 1 && this.elementStart >= 0) {
          const element = this.buffer.slice(this.elementStart);
          // The list's opening is all that needs keeping: an endless list never grows the buffer.
          this.buffer = '[';
          this.elementStart = -1;
          this.emit(element);
        } else if (this.depth === 0) {
          const document = this.buffer;
          this.start = -1;
          this.buffer = '';
          if (!this.inTopArray) this.emit(document);
        }
      }
    }
  }

  private emit(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // Not JSON after all (a warning line with brackets): skip it.
      return;
    }
    this.onDocument(value);
  }
}
