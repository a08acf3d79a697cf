import { describe, expect, it } from 'vitest';
import { formatTable } from '../../src/main/cli/format';
import { progressWriter } from '../../src/main/cli/progress';
import { escapeTerminalOutput, terminalText } from '../../src/main/cli/terminal-text';

// A stored name as a crafted import could carry it: set the window title, erase the line above, the one-character
// ESC [ of C1 with "clear the screen", DEL, and a right-to-left override that would show "tsaf" as "fast".
const HOSTILE = 'demo\x1b]0;pwned\x07\x1b[1A\x1b[2K\u009b2J\x7f\u202etsaf';
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** A stand-in for a terminal: what was written to it, in one string. */
function terminal() {
  const stream = { isTTY: true, written: '', write: (chunk: string) => ((stream.written += chunk), true) };
  return stream;
}

describe('text the CLI prints', () => {
  it('shows every control character as an escape, keeps line feeds and tabs, and in a table cell shows those too', () => {
    expect(terminalText(HOSTILE)).toBe('demo\\u001b]0;pwned\\u0007\\u001b[1A\\u001b[2K\\u009b2J\\u007f\\u202etsaf');
    expect(terminalText('a\tb\nc\rd')).toBe('a\tb\nc\\u000dd');
    expect(terminalText('a\tb\nc', { oneLine: true })).toBe('a\\u0009b\\u000ac');
    expect(terminalText('Ünïcødé 模型 — fine')).toBe('Ünïcødé 模型 — fine');
  });

  it('leaves a JSON document the same document: a JSON string reads the escapes back as the characters', () => {
    const document = JSON.stringify({ model: HOSTILE, note: 'x\u0085y' });
    expect(JSON.parse(terminalText(document))).toEqual({ model: HOSTILE, note: 'x\u0085y' });
  });

  it('puts a hostile name in one table cell, its columns still aligned', () => {
    const table = formatTable([
      ['model', 'verdict'],
      [`${HOSTILE}\nB is faster`, 'slower'],
    ]);
    expect(table).not.toMatch(CONTROL);
    const [header, row] = table.split('\n');
    expect(table.split('\n')).toHaveLength(2);
    expect(row!.indexOf('slower')).toBe(header!.indexOf('verdict'));
  });

  it('escapes whatever is written to an escaped stream, once however often installed, and lets the progress line write its own codes', () => {
    const stream = terminal();
    escapeTerminalOutput(stream as unknown as NodeJS.WriteStream);
    escapeTerminalOutput(stream as unknown as NodeJS.WriteStream);
    stream.write(`model ${HOSTILE}\n`);
    expect(stream.written).toBe(`model ${terminalText(HOSTILE)}\n`);
    stream.written = '';
    const progress = progressWriter(stream);
    progress.live(`1 done, ${HOSTILE}`);
    progress.line('server ready');
    progress.end();
    expect(stream.written).toBe(`\r1 done, ${terminalText(HOSTILE)}\x1b[K\nserver ready\n`);
  });
});
