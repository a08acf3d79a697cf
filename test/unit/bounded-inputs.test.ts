import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readFileCapped } from '../../src/main/core/read-capped';
import { parseTelemetryExport } from '../../src/main/store/parse-telemetry-export';
import { openDatabase } from '../../src/main/store/database';
import { ModelHashCache } from '../../src/main/store/model-hashes';
import { parseWorkloadText, readWorkloadFile } from '../../src/main/workload/parse-workload';
import { resolveWorkload } from '../../src/main/workload/resolve-workload';
import { estimatingTokenCounter } from '../../src/main/workload/token-counter';
import type { WorkloadDef } from '../../src/main/workload/workload-types';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

const BOMB = `name: bomb
groups:
  - name: families
    generate:
      prefix_families: { prefixes: 1000, suffixes: 1000, prefix_tokens: 1000000, suffix_tokens: 10, output_tokens: 1 }
`;

describe('bounded inputs', () => {
  it('refuses a ~200-byte generator bomb at validation, with the file, the group and the numbers', () => {
    expect(BOMB.length).toBeLessThan(220);
    let message = '';
    const started = performance.now();
    try {
      parseWorkloadText(BOMB, 'bomb.yaml');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(performance.now() - started).toBeLessThan(1000);
    expect(message).toMatch(/bomb\.yaml/);
    expect(message).toMatch(/"families"/);
    expect(message).toMatch(/1,000,000 requests.*100,000/);
    expect(message).toMatch(/1,000,010,000,000 prompt tokens.*100,000,000/);
  });

  it('refuses generators that are each under the caps but together exceed them', () => {
    const group = (name: string) =>
      `  - name: ${name}\n    generate:\n      synthetic: { count: 60000, input_tokens: 10, output_tokens: 1 }\n`;
    expect(() => parseWorkloadText(`name: two\ngroups:\n${group('a')}${group('b')}`, 'two.yaml')).toThrow(/120,000 requests.*100,000/);
  });

  it('refuses the bomb in resolveWorkload too, before generating anything', async () => {
    const def: WorkloadDef = {
      name: 'bomb',
      groups: [{ name: 'docs', generate: { long_document: { count: 10000, document_tokens: 1000000, output_tokens: 1 } } }],
    } as WorkloadDef;
    let counted = 0;
    const counter = {
      exact: false,
      count: async (text: string) => {
        counted++;
        return estimatingTokenCounter.count(text);
      },
    };
    await expect(resolveWorkload(def, 'w.yaml', counter)).rejects.toThrow(/"docs".*10,000,000,000 prompt tokens/s);
    expect(counted).toBe(0);
  });

  it('still accepts the largest ordinary generators', () => {
    expect(() =>
      parseWorkloadText(
        'name: ok\ngroups:\n  - name: s\n    generate:\n      synthetic: { count: 1000, input_tokens: 32000, output_tokens: 1 }\n',
        'ok.yaml',
      ),
    ).not.toThrow();
  });

  it('refuses an oversized ShareGPT file by its size, naming the file and the cap', async () => {
    const dir = tempDir();
    const data = path.join(dir, 'huge.json');
    fs.writeFileSync(data, '[');
    fs.truncateSync(data, 256 * 1024 * 1024 + 1);
    const file = path.join(dir, 'w.yaml');
    fs.writeFileSync(file, 'name: s\ngroups:\n  - name: g\n    generate:\n      sharegpt: { file: huge.json }\n');
    // Timed from the parsed workload: the parse itself starts a parser thread (bounded-parse.ts).
    const def = await readWorkloadFile(file);
    const started = performance.now();
    await expect(resolveWorkload(def, file, estimatingTokenCounter)).rejects.toThrow(/huge\.json.*256 MiB/);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('files that are not regular files', () => {
  it('refuses a FIFO no one writes to at once, naming it: opening it blocking would freeze the process for good', () => {
    const fifo = path.join(tempDir(), 'workload.yaml');
    execFileSync('mkfifo', [fifo]);
    // In a child with a deadline: on code that opens it blocking, the read never returns and the child is killed.
    const script = `import(${JSON.stringify(path.resolve('src/main/core/read-capped.ts'))}).then((m) => {
      m.readFileCapped(process.argv[1], 'the workload').then(() => console.log('read'), (error) => console.log(error.message));
    })`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script, fifo], { timeout: 30_000, encoding: 'utf8' });
    expect(child.signal, `the read blocked: ${child.stderr}`).toBeNull();
    expect(child.stdout.trim()).toBe(
      `${fifo}: the workload is a FIFO (named pipe), not a regular file; save its contents to a file and give that file`,
    );
  });

  it('describes a model file that is a FIFO as unreadable at once, where reading its header used to block for good', () => {
    const fifo = path.join(tempDir(), 'model.gguf');
    execFileSync('mkfifo', [fifo]);
    // In a child with a deadline, as above: a model scan or a server start reads the header of whatever the path names.
    const script = `import(${JSON.stringify(path.resolve('src/main/models/model-library.ts'))}).then((m) => {
      return m.describeModel(process.argv[1]).then((model) => console.log(model.invalidReason));
    })`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '-e', script, fifo], { timeout: 30_000, encoding: 'utf8' });
    expect(child.signal, `the header read blocked: ${child.stderr}`).toBeNull();
    expect(child.stdout.trim()).toMatch(/a FIFO \(named pipe\), not a regular file/);
  });

  it('refuses to hash a model file that is a FIFO, which would hold a thread of the I/O pool until written to', async () => {
    const dir = tempDir();
    const fifo = path.join(dir, 'model.gguf');
    execFileSync('mkfifo', [fifo]);
    const db = openDatabase(path.join(dir, 'hashes.db'));
    try {
      const hashed = new ModelHashCache(db).hash(fifo).then(
        () => 'hashed',
        (error: Error) => error.message,
      );
      const stuck = new Promise((resolve) => setTimeout(() => resolve('still reading after 5 s'), 5000).unref());
      expect(await Promise.race([hashed, stuck])).toBe(
        `${fifo}: the file to hash is a FIFO (named pipe), not a regular file; save its contents to a file and give that file`,
      );
    } finally {
      db.close();
      // Frees a reader that did block, so the worker can exit.
      try {
        fs.closeSync(fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK));
      } catch {
        // No reader: nothing blocked.
      }
    }
  });

  it('refuses a device such as /dev/zero before reading a byte', async () => {
    await expect(readFileCapped('/dev/zero', 'the evaluation text')).rejects.toThrow(
      '/dev/zero: the evaluation text is a device, not a regular file; save its contents to a file and give that file',
    );
  });
});

/** How many turns the event loop takes while `work` runs: none when the work holds the loop from start to end. */
async function loopTurnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  const result = await work();
  done = true;
  return { result, turns };
}

describe('reading never holds the event loop', () => {
  it('reads a file on the I/O pool, chunk by chunk: the loop turns while 24 MiB are read, and every byte arrives', async () => {
    const file = path.join(tempDir(), 'large.yaml');
    const content = Buffer.alloc(24 * 1024 * 1024, 'a');
    fs.writeFileSync(file, content);
    const { result, turns } = await loopTurnsDuring(() => readFileCapped(file, 'the workload'));
    expect(result.equals(content)).toBe(true);
    // A synchronous read of the same file lets the loop turn zero times before it ends.
    expect(turns).toBeGreaterThanOrEqual(10);
  });

  it('parses telemetry.json on a worker: the loop turns during the parse, and points come back as the store keeps them', async () => {
    const points = Array.from({ length: 400_000 }, (_, index) => [index * 250, index % 7 === 0 ? null : index / 8]);
    const text = JSON.stringify({ schema_version: 1, clock: 'ms', series: [{ series: 'gpu.util', unit: '%', points }] });
    const { result, turns } = await loopTurnsDuring(() => parseTelemetryExport(Buffer.from(text)));
    expect(turns).toBeGreaterThanOrEqual(10);
    if (!result.ok) throw new Error(result.invalidJson);
    expect(result.pointProblem).toBeNull();
    expect(result.document).toEqual({ schema_version: 1, clock: 'ms', series: [{ series: 'gpu.util', unit: '%', points: [] }] });
    const flat = result.points[0]!;
    expect(flat.length).toBe(800_000);
    expect([flat[0], flat[1], flat[2], flat[3]]).toEqual([0, Number.NaN, 250, 1 / 8]);
  });

  it.each([
    ['a point that is not a list', [[0, 1], 5], 'series[0].points[1]', 'must be array'],
    ['a point of three items', [[0, 1, 2]], 'series[0].points[0]', 'must be [time, value]: it has 3 items'],
    ['a time that is not a number', [['0', 1]], 'series[0].points[0][0]', 'must be number'],
    ['a value that is text', [[0, 'high']], 'series[0].points[0][1]', 'must be number or null'],
  ])('names %s as the schema check would', async (_name, points, field, message) => {
    const text = JSON.stringify({ schema_version: 1, clock: 'ms', series: [{ series: 's', unit: '', points }] });
    const result = await parseTelemetryExport(Buffer.from(text));
    expect(result.ok && result.pointProblem).toEqual({ field, message });
  });

  it('says why text that is not JSON is not, and hands over a slice of a larger buffer without touching the rest', async () => {
    const pool = Buffer.from('xx{"series": [}yy');
    const result = await parseTelemetryExport(pool.subarray(2, 15));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.invalidJson).toMatch(/JSON/);
    expect(pool.toString()).toBe('xx{"series": [}yy');
  });
});
