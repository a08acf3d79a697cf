import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLinesCapped } from '../../src/main/core/read-lines-capped';
import { countJsonValues } from '../../src/main/store/json-value-count';
import { openDatabase } from '../../src/main/store/database';
import { MAX_REQUEST_LINE_BYTES, readRunExport } from '../../src/main/store/read-run-export';
import { RunStore } from '../../src/main/store/run-store';
import { storeSampleRun, writeRunExport } from '../support/stored-run';
import { useTempDirs } from '../support/temp';

/**
 * An import reads files someone else wrote, and `serve` reads them from the results folder the
 * UI names. A run export's requests.jsonl is read a line at a time: a line too long, or one whose
 * values would parse into many times its size, is refused before it is held whole or parsed.
 */
const tempDir = useTempDirs();
const anywhere = { checkFile: async (file: string) => path.resolve(file) };
const MiB = 1024 * 1024;

function exportedSample(): { folder: string; requestsFile: string; lines: Record<string, unknown>[] } {
  const dir = tempDir();
  const runs = new RunStore(openDatabase(path.join(dir, 'source.db')));
  const folder = writeRunExport(runs, storeSampleRun(runs), path.join(dir, 'export'));
  const requestsFile = path.join(folder, 'requests.jsonl');
  const lines = fs
    .readFileSync(requestsFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { folder, requestsFile, lines };
}

/** Appends `prefix`, then `unit` repeated to about `bytes`, then `suffix` and a newline, a MiB at a time: the test never holds the line. */
function appendLongLine(file: string, prefix: string, unit: string, bytes: number, suffix: string): void {
  const fd = fs.openSync(file, 'a');
  try {
    fs.writeSync(fd, prefix);
    const block = Buffer.from(unit.repeat(Math.floor(MiB / unit.length)));
    for (let written = 0; written < bytes; written += block.length) fs.writeSync(fd, block);
    fs.writeSync(fd, `${suffix}\n`);
  } finally {
    fs.closeSync(fd);
  }
}

/** A request line cut open at its end, with `field` (taken out of where it was) last and its list just begun. */
function openList(line: Record<string, unknown>, field: string, first = ''): string {
  const rest = Object.fromEntries(Object.entries(line).filter(([key]) => key !== field));
  return `${JSON.stringify(rest).slice(0, -1)},${JSON.stringify(field)}:[${first}`;
}

/** Runs `work` with a 50 ms timer going: the longest gap between two ticks (or the last tick and the end), and the largest RSS seen. */
async function watched(work: () => Promise<unknown>): Promise<{ outcome: unknown; longestGapMs: number; rssGrowthBytes: number }> {
  const rssBefore = process.memoryUsage().rss;
  let peakRss = rssBefore;
  let last = performance.now();
  let longestGapMs = 0;
  const tick = () => {
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  };
  const timer = setInterval(tick, 50);
  let outcome: unknown;
  try {
    outcome = await work().catch((error: unknown) => error);
  } finally {
    tick();
    clearInterval(timer);
  }
  return { outcome, longestGapMs, rssGrowthBytes: peakRss - rssBefore };
}

describe('reading a run export line by line', () => {
  it('refuses a 64 MiB request line naming the file and the line, in bounded memory, with the event loop turning', async () => {
    const { folder, requestsFile, lines } = exportedSample();
    // Read once as exported, so compiling the schema is not counted as the attack's silence.
    await readRunExport(folder, anywhere);
    // A good first line, then the attack: `{},{},…` in a field the schema leaves free-form.
    fs.writeFileSync(requestsFile, `${JSON.stringify(lines[0])}\n`);
    appendLongLine(requestsFile, '{"seq": 1, "acceptance": [', '{},', 64 * MiB, '{}]}');
    expect(fs.statSync(requestsFile).size).toBeGreaterThan(64 * MiB);

    const { outcome, longestGapMs, rssGrowthBytes } = await watched(() => readRunExport(folder, anywhere));

    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(
      new RegExp(`^${requestsFile}:2: this line of the exported requests.jsonl is longer than 8 MiB \\(${MAX_REQUEST_LINE_BYTES} bytes\\)`),
    );
    expect(rssGrowthBytes).toBeLessThan(200 * MiB);
    expect(longestGapMs).toBeLessThan(1000);
  }, 120_000);

  it('refuses a line of `{},{},…` under the byte bound before parsing it', async () => {
    const { folder, requestsFile, lines } = exportedSample();
    fs.writeFileSync(requestsFile, `${JSON.stringify(lines[0])}\n${JSON.stringify(lines[1])}\n`);
    appendLongLine(requestsFile, openList(lines[2]!, 'acceptance'), '{},', 2 * MiB, '{}]}');

    const { outcome, longestGapMs } = await watched(() => readRunExport(folder, anywhere));

    expect((outcome as Error).message).toMatch(
      new RegExp(`^${requestsFile}:3: holds more than 100,000 strings, objects and arrays, and was not parsed`),
    );
    expect(longestGapMs).toBeLessThan(1000);
  });

  it('holds the rows it keeps for the store to the import cap, however small the numbers that make them', async () => {
    const { folder, requestsFile, lines } = exportedSample();
    // 1 MiB of "0," is half a million times, 4 MiB as the stored blob: four times the text.
    fs.writeFileSync(requestsFile, `${JSON.stringify(lines[0])}\n`);
    appendLongLine(requestsFile, openList(lines[1]!, 'chunk_offsets_ms', '0'), ',0', MiB, ']}');

    const outcome = await readRunExport(folder, { ...anywhere, maxFileBytes: 3 * MiB }).catch((error: unknown) => error);

    expect((outcome as Error).message).toMatch(
      new RegExp(`^${requestsFile}:2: brings the requests read so far past the 3 MiB an import may hold before it is stored`),
    );
  });

  it('reads a long line that crosses chunk boundaries exactly, multi-byte characters included', async () => {
    const { folder, requestsFile, lines } = exportedSample();
    // 3 MiB and more of 1-, 2-, 3- and 4-byte characters, so every chunk boundary falls somewhere inside one.
    const prompt = 'aé✓𝄞'.repeat(330_000);
    fs.writeFileSync(requestsFile, lines.map((line, index) => JSON.stringify(index === 1 ? { ...line, prompt } : line)).join('\n'));

    const exported = await readRunExport(folder, anywhere);

    expect(exported.requests).toHaveLength(3);
    // Compared, not diffed: a failure would otherwise print megabytes.
    const kept = exported.requests[1]!.prompt_text as string;
    expect(kept.length).toBe(prompt.length);
    expect(kept === prompt).toBe(true);
    expect(exported.requests.map((row) => row.seq)).toEqual(lines.map((line) => line.seq));
  });
});

describe('readLinesCapped', () => {
  async function linesOf(text: string | Buffer, maxLineBytes = 16): Promise<string[]> {
    const file = path.join(tempDir(), 'lines.txt');
    fs.writeFileSync(file, text);
    const read: string[] = [];
    for await (const { number, bytes } of readLinesCapped(file, 'the test file', { maxLineBytes, maxFileBytes: 1024 }))
      read.push(`${number}:${bytes.toString('utf8')}`);
    return read;
  }

  it('gives every line with its number: empty lines too, a last line without a newline, not the piece after a final newline', async () => {
    expect(await linesOf('a\n\nb')).toEqual(['1:a', '2:', '3:b']);
    expect(await linesOf('a\nb\n')).toEqual(['1:a', '2:b']);
    expect(await linesOf('')).toEqual([]);
    expect(await linesOf('\n')).toEqual(['1:']);
  });

  it('takes a line of exactly the bound and refuses one byte more, naming the file and line', async () => {
    expect(await linesOf(`ok\n${'x'.repeat(16)}\n`)).toEqual(['1:ok', `2:${'x'.repeat(16)}`]);
    await expect(linesOf(`ok\n${'x'.repeat(17)}\nnext\n`)).rejects.toThrow(
      /lines\.txt:2: this line of the test file is longer than 0 MiB \(16 bytes\)/,
    );
    await expect(linesOf(`ok\n${'x'.repeat(17)}`)).rejects.toThrow(/lines\.txt:2: /);
  });

  it('refuses a file over its cap before reading it', async () => {
    await expect(linesOf(Buffer.alloc(1025, 0x0a))).rejects.toThrow(/the test file is 1025 bytes, over the/);
  });
});

describe('countJsonValues', () => {
  it('counts objects, arrays and strings outside strings only, and stops one past the limit', () => {
    const count = (text: string, stopAfter = 1000) => countJsonValues(Buffer.from(text), stopAfter);
    expect(count('{"a": [1, 2, {"b": "c"}], "d": 3.5}')).toBe(7);
    // Brackets and escaped quotes inside a string are text.
    expect(count('{"a": "x { [ \\" ] } \\\\", "b": null}')).toBe(4);
    expect(count('[' + '{},'.repeat(5000) + '{}]', 100)).toBe(101);
    expect(count('"unterminated {[')).toBe(1);
  });
});
