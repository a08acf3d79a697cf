/**
 * What the CLI prints comes partly from stored data that someone else chose: an imported run's model
 * and workload names, a model file's metadata, an endpoint's error text, a pasted log. A terminal
 * obeys control characters in it: `ESC ] 0; … BEL` sets the window title and `ESC [1A ESC [2K`
 * erases the line above, so a crafted import could rewrite a verdict on screen. Every string the CLI
 * writes therefore shows its control characters as escapes instead; only the CLI's own terminal codes
 * (the progress line's carriage return and erase) are written as they are, through `writeControl`.
 */

// C0 controls but the line feed and the tab, DEL, the C1 controls (U+0080-U+009F: some terminals obey
// U+009B as ESC [), and the bidirectional overrides and isolates, which reorder what is shown after them.
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// In a table cell, which is one line, the line feed and the tab too.
const CELL_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const escapeOf = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * Text as the terminal should show it: each control character as a `\u001b`-style escape, visible on
 * screen and read back as the same character inside a JSON string (what `--json` prints stays the same
 * document). With `oneLine`, line feeds and tabs are shown so too.
 */
export function terminalText(text: string, { oneLine = false } = {}): string {
  return text.replace(oneLine ? CELL_CONTROLS : CONTROLS, escapeOf);
}

const RAW_WRITE = Symbol('write without escaping');

interface EscapedStream {
  write: NodeJS.WriteStream['write'];
  [RAW_WRITE]?: NodeJS.WriteStream['write'];
}

/**
 * Makes every string written to `stream` pass through terminalText, whichever command or library
 * writes it (`console.log` included). Installed once by the CLI's entry for stdout and stderr.
 */
export function escapeTerminalOutput(stream: NodeJS.WriteStream): void {
  const escaped = stream as EscapedStream;
  if (escaped[RAW_WRITE]) return;
  const raw = stream.write.bind(stream) as NodeJS.WriteStream['write'];
  escaped[RAW_WRITE] = raw;
  escaped.write = ((chunk: unknown, ...rest: unknown[]) =>
    (raw as (...args: unknown[]) => boolean)(
      typeof chunk === 'string' ? terminalText(chunk) : chunk,
      ...rest,
    )) as NodeJS.WriteStream['write'];
}

/** Writes the CLI's own terminal codes as they are, and `text` escaped. */
export function writeControl(stream: { write(chunk: string): boolean }, before: string, text: string, after = ''): boolean {
  const write = (stream as Partial<EscapedStream>)[RAW_WRITE] ?? stream.write.bind(stream);
  return (write as (chunk: string) => boolean)(`${before}${terminalText(text)}${after}`);
}
