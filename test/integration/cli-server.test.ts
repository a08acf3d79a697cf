import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoModelsDir } from '../../src/main/core/paths';
import { identify, isAlive } from '../../src/main/core/process-identity';
import { inferlab, killWithWatchdog, startInferlab, waitForJsonLine } from '../support/cli';
import { writeHostileFiles } from '../support/hostile-gguf';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** `inferlab server start` on the small demo model with a small context and one thread, reporting as JSON lines. */
function startSmallServer(db: string) {
  return startInferlab(['server', 'start', '--model', 'demo:q4_k_m', '--set', 'c=1024', '--set', 't=1', '--force', '--db', db, '--json']);
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('inferlab server and models commands', () => {
  it('server start --json prints one line per state change and Ctrl-C leaves no process behind', async () => {
    const db = path.join(tempDir(), 'cli.db');
    const child = startInferlab(['server', 'start', '--model', 'demo:q8_0', '--set', 'c=1024', '--db', db, '--json']);
    const lines: Record<string, unknown>[] = [];
    child.stdout.on('data', (chunk: Buffer) =>
      lines.push(
        ...chunk
          .toString()
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      ),
    );
    const ready = await waitForJsonLine(child, (line) => line.state === 'ready');
    expect(ready).toMatchObject({ state: 'ready', model: 'demo:q8_0', port: expect.any(Number), pid: expect.any(Number) });
    expect((ready.cold_start as { spawnToReadyMs: number }).spawnToReadyMs).toBeGreaterThan(0);
    const serverPid = ready.pid as number;
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(lines.map((line) => line.state)).toEqual(['starting', 'ready', 'stopping', 'stopped']);
    expect(isAlive(identify(serverPid))).toBe(false);
  });

  it('the next command kills the server of a CLI that was SIGKILLed with its watchdog, and only that one', async () => {
    const db = path.join(tempDir(), 'orphans.db');
    const child = startSmallServer(db);
    const ready = await waitForJsonLine(child, (line) => line.state === 'ready');
    const server = identify(ready.pid as number);
    // A second server in the same database whose CLI is alive: it must survive the sweep.
    const living = startSmallServer(db);
    const livingReady = await waitForJsonLine(living, (line) => line.state === 'ready');
    const livingServer = identify(livingReady.pid as number);
    try {
      await killWithWatchdog(child);
      expect(isAlive(server)).toBe(true);
      const next = await inferlab(['server', 'profile', 'list', '--db', db]);
      expect(next.code).toBe(0);
      expect(next.stderr).toMatch(new RegExp(`stopped an orphaned llama-server \\(pid ${server.pid}, port ${ready.port}\\)`));
      expect(next.stderr).not.toMatch(new RegExp(`pid ${livingServer.pid}`));
      await waitUntil(() => !isAlive(server), 5000);
      expect(isAlive(livingServer)).toBe(true);
      const again = await inferlab(['server', 'profile', 'list', '--db', db]);
      expect(again.stderr).not.toMatch(/orphaned/);
    } finally {
      const closed = new Promise((resolve) => living.on('close', resolve));
      living.kill('SIGINT');
      await closed;
    }
    expect(isAlive(livingServer)).toBe(false);
  });

  it('doctor sweeps an orphaned server and says which', async () => {
    const db = path.join(tempDir(), 'doctor-orphans.db');
    const child = startSmallServer(db);
    const ready = await waitForJsonLine(child, (line) => line.state === 'ready');
    const server = identify(ready.pid as number);
    await killWithWatchdog(child);
    expect(isAlive(server)).toBe(true);
    const doctor = await inferlab(['doctor', '--db', db, '--json']);
    const check = (JSON.parse(doctor.stdout) as { checks: { id: string; status: string; detail: string }[] }).checks.find(
      (item) => item.id === 'orphans',
    );
    expect(check).toMatchObject({ status: 'warning' });
    expect(check!.detail).toMatch(new RegExp(`stopped 1 orphaned server: pid ${server.pid} on port ${ready.port}`));
    await waitUntil(() => !isAlive(server), 5000);
    const again = JSON.parse((await inferlab(['doctor', '--db', db, '--json'])).stdout) as {
      checks: { id: string; status: string; detail: string }[];
    };
    expect(again.checks.find((item) => item.id === 'orphans')).toMatchObject({ status: 'ok', detail: 'no orphaned servers' });
  });

  type Ending = (child: ReturnType<typeof startInferlab>) => Promise<void>;
  it.each<[string, Ending, { code: number | null; signal: NodeJS.Signals | null }]>([
    ['SIGKILL', async (child) => void child.kill('SIGKILL'), { code: null, signal: 'SIGKILL' }],
    ['SIGHUP', async (child) => void child.kill('SIGHUP'), { code: 0, signal: null }],
    // Ctrl-C twice, the second during the graceful stop of the first. Two SIGINTs sent together can merge
    // into one before the CLI runs, and one sent later can miss a quick stop; SIGINT and SIGTERM (the same
    // stop signals to the CLI) are both delivered, in that order, before the stop can finish.
    [
      'a second stop signal (SIGINT, then SIGTERM at once)',
      async (child) => {
        child.kill('SIGINT');
        child.kill('SIGTERM');
      },
      { code: 130, signal: null },
    ],
  ])('a CLI ended by %s leaves no llama-server behind', async (_name, end, expected) => {
    const db = path.join(tempDir(), 'ended.db');
    const child = startSmallServer(db);
    const ready = await waitForJsonLine(child, (line) => line.state === 'ready');
    const server = identify(ready.pid as number);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal })),
    );
    try {
      await end(child);
      expect(await exited).toEqual(expected);
      await waitUntil(() => !isAlive(server), 6000);
    } finally {
      if (isAlive(server)) process.kill(server.pid, 'SIGKILL');
    }
  });

  it.each([
    [
      'missing file',
      (files: Record<string, string>) => path.join(path.dirname(files.tiny!), 'absent.gguf'),
      /Model file not found: .*absent.gguf/,
    ],
    ['directory', (files: Record<string, string>) => path.dirname(files.tiny!), /Model path is not a file/],
    ['non-GGUF file', (files: Record<string, string>) => files.notGguf!, /readme.gguf: bad magic/],
    ['truncated GGUF', (files: Record<string, string>) => files.truncated!, /truncated.gguf: truncated: tensor w/],
    ['absurd header counts', (files: Record<string, string>) => files.absurdCounts!, /absurd-counts.gguf: tensor count is 1099511627776/],
    [
      '2^62-byte string',
      (files: Record<string, string>) => files.hugeString!,
      /huge-string.gguf: value of general.name claims 4611686018427387904 bytes/,
    ],
  ])('server start refuses a %s with exit 2 and starts nothing', async (_name, pick, message) => {
    const dir = tempDir();
    const files = writeHostileFiles(dir);
    const result = await inferlab(['server', 'start', '--model', pick(files), '--db', path.join(dir, 'x.db'), '--json']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    // With --json the failure is one JSON document on stdout, and nothing else is printed there.
    expect(JSON.parse(result.stdout).error.message).toMatch(message);
  });

  it('models scan lists demo models and invalid files with the reason', async () => {
    const dir = tempDir();
    const files = writeHostileFiles(dir);
    const result = await inferlab(['models', 'scan', dir, '--json']);
    expect(result.code).toBe(0);
    const scan = JSON.parse(result.stdout) as { models: { path: string; valid: boolean; invalidReason: string | null }[] };
    const byName = Object.fromEntries(scan.models.map((model) => [path.basename(model.path), model]));
    expect(byName['tiny.gguf']?.valid).toBe(true);
    expect(byName['readme.gguf']?.invalidReason).toMatch(/bad magic/);
    expect(byName['truncated.gguf']?.invalidReason).toMatch(/truncated/);
    expect(Object.keys(byName)).toHaveLength(Object.keys(files).length);

    const defaults = await inferlab(['models', 'scan', '--json']);
    const demo = (
      JSON.parse(defaults.stdout) as { models: { path: string; quantization: string; synthetic: boolean; source: string }[] }
    ).models.filter((model) => model.source === 'demo');
    expect(demo.map((model) => model.quantization).sort()).toEqual(['F16', 'Q4_K_M', 'Q8_0']);
    expect(demo.every((model) => model.synthetic)).toBe(true);

    expect((await inferlab(['models', 'scan', files.notGguf!])).code).toBe(2);
    expect((await inferlab(['models', 'scan', path.join(dir, 'nowhere')])).stderr).toMatch(/nowhere: no such file or folder/);
  });

  it('models quantize makes new files that join the library and refuses to overwrite', async () => {
    const dir = tempDir();
    const source = path.join(dir, 'demo-f16.gguf');
    fs.copyFileSync(path.join(demoModelsDir(), 'demo-f16.gguf'), source);
    const made = await inferlab(['models', 'quantize', source, '--to', 'Q4_0', '--json']);
    expect(made.code).toBe(0);
    const [entry] = JSON.parse(made.stdout) as { path: string; quantization: string; valid: boolean }[];
    expect(entry).toMatchObject({ path: path.join(dir, 'demo-q4_0.gguf'), quantization: 'Q4_0', valid: true });
    const again = await inferlab(['models', 'quantize', source, '--to', 'Q4_0']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/refusing to overwrite .*demo-q4_0.gguf/);
    expect((await inferlab(['models', 'quantize', source, '--to', 'Q4_0;rm'])).code).toBe(2);
    expect(fs.readdirSync(dir).sort()).toEqual(['demo-f16.gguf', 'demo-q4_0.gguf']);
  });
});
