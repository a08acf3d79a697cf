import fs from 'node:fs';
import path from 'node:path';
import { readPinnedSourceRecord } from '../../src/main/engines/llamacpp/engine-source';
import { MIGRATIONS } from '../../src/main/store/migrations';
import { describe, expect, it } from 'vitest';
import { progressWriter } from '../../src/main/cli/progress';
import { engineCacheDir, projectRoot } from '../../src/main/core/paths';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { machineReport } from '../support/machine';
import { inferlab } from '../support/cli';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('inferlab CLI', () => {
  it('demo --json measures a completion and stores it in the --db database', async () => {
    const db = path.join(tempDir(), 'cli.db');
    const result = await inferlab(['demo', '--quick', '--model', 'demo:q8_0', '--max-tokens', '16', '--db', db, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.output_tokens).toBe(16);
    expect(summary.ttft_ms).toBeGreaterThan(0);
    expect(summary.timings.predicted_n).toBe(16);
    const store = new RunStore(openDatabase(db));
    expect(store.getRun(summary.run_id)?.status).toBe('completed');
  });

  it('setup reuses the cached engine and demo models', async () => {
    const result = await inferlab(['setup']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/reusing cached llama.cpp|using (configured|path) llama-server/);
    expect(result.stderr).not.toMatch(/regenerating|compile/);
  });

  it.each([
    [['demo', '--quick', '--max-tokens', '0'], /--max-tokens must be a positive integer, got "0"/],
    [['demo', '--quick', '--model', '/nonexistent/x.gguf', '--db', '/dev/null/never.db'], /Model file not found: \/nonexistent\/x.gguf/],
    [['demo', '--quick', '--model', 'demo:nope'], /Unknown demo model "demo:nope"/],
    [['demo', '--bogus'], /Unknown option '--bogus'/],
    [['demo', '--quick', '--repeats', '3'], /--repeats is for the full demo \(no --quick, no --capacity\) only/],
    [['demo', '--capacity', '--model', 'demo:f16'], /--model is for demo --quick only/],
    [['demo', '--requests', '8', '--percentile', '50'], /--percentile is for demo --capacity only/],
    [['demo', '--capacity', '--percentile', '20'], /the percentile must be from 50 to 99\.9, got 20/],
    [['demo', '--capacity', '--percentile', 'p9x'], /--percentile must be a number like 90 or 99, got "p9x"/],
    [['demo', '--repeats', '0'], /--repeats must be a positive integer, got "0"/],
    [['setup', '--backend', 'tpu'], /--backend must be one of cpu, cuda, vulkan, metal, got "tpu"/],
    [['frobnicate'], /Unknown command "frobnicate"\./],
    [['rnu'], /Unknown command "rnu"; did you mean run\?\n/],
  ])('exits 2 with a message naming the problem for %j', async (args, message) => {
    const result = await inferlab(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('doctor --json reports each item with its status and fix', async () => {
    const result = await inferlab(['doctor', '--json', '--db', path.join(tempDir(), 'doctor.db')]);
    const report = JSON.parse(result.stdout);
    const ids = report.checks.map((check: { id: string }) => check.id);
    expect(ids).toEqual(expect.arrayContaining(['engine', 'demo-models', 'gpu', 'database', 'electron', 'chromium']));
    expect(report.checks.find((check: { id: string }) => check.id === 'engine').status).toBe('ok');
    expect(report.checks.find((check: { id: string }) => check.id === 'database').detail).toMatch(/quick_check: ok/);
    for (const check of report.checks) if (check.status !== 'ok') expect(check.fix).toEqual(expect.any(String));
    expect(result.code).toBe(report.checks.some((check: { status: string }) => check.status === 'missing') ? 1 : 0);
  });

  it('doctor says loudly when a machine with an NVIDIA GPU has only a CPU engine', async (context) => {
    // The constructed-output nvidia-smi stand-in plays a GPU; the case needs this machine's engine to be a CPU build.
    const { engineBackend } = await machineReport();
    if (engineBackend !== 'cpu') context.skip(`this machine's engine is a ${engineBackend} build, not the CPU build the case needs`);
    const standIn = path.join(projectRoot(), 'test', 'fixtures', 'nvidia-smi', 'bin');
    const result = await inferlab(['doctor', '--json', '--db', path.join(tempDir(), 'doctor.db')], {
      PATH: `${standIn}:${process.env.PATH}`,
    });
    const check = JSON.parse(result.stdout).checks.find((item: { id: string }) => item.id === 'gpu-engine');
    expect(check.status).toBe('warning');
    expect(check.detail).toMatch(
      /has a GPU \(NVIDIA GeForce RTX 4090\) but the engine runs on the CPU, so every measurement is a CPU measurement/,
    );
    expect(check.detail).toMatch(/libcudart\.so\.13/);
    const human = await inferlab(['doctor', '--db', path.join(tempDir(), 'doctor.db')], { PATH: `${standIn}:${process.env.PATH}` });
    expect(human.stdout + human.stderr).toMatch(/GPU engine/);
  });
});

describe('inferlab CLI conventions', () => {
  const helpCases: string[][] = [
    ['run'],
    ['runs'],
    ['export'],
    ['import'],
    ['experiment'],
    ['experiment', 'quant'],
    ['experiment', 'warmcold'],
    ['experiment', 'sweep'],
    ['server'],
    ['server', 'start'],
    ['server', 'profile'],
    ['server', 'profile', 'list'],
    ['models'],
    ['models', 'scan'],
    ['models', 'quantize'],
    ['experiments'],
    ['experiments', 'show'],
    ['report'],
    ['decide'],
    ['decisions'],
    ['serve'],
    ['doctor'],
    ['setup'],
    ['demo'],
    ['app'],
  ];

  it.each(helpCases)('%s … --help prints its usage, exits 0 and opens no database', async (...command) => {
    const db = path.join(tempDir(), 'never.db');
    for (const flag of ['--help', '-h']) {
      const result = await inferlab([...command, flag, '--db', db]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/Usage/);
      expect(result.stdout).toContain(`inferlab ${command[0]}`);
      expect(result.stderr).toBe('');
      expect(fs.existsSync(db)).toBe(false);
    }
  });

  it.each([[[]], [['help']], [['--help']], [['-h']]])('%j prints the command overview and exits 0', async (args) => {
    const result = await inferlab(args);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage: inferlab <command>/);
    // Every experiment kind, and the ways of running that are not plain flags of another line.
    for (const line of ['warmcold', 'quant', 'sweep', 'speculative', 'capacity'].map((kind) => `experiment ${kind} --model`))
      expect(result.stdout).toContain(line);
    for (const line of [
      'demo --capacity',
      'run --trace FILE.jsonl',
      'check --baseline',
      '[--interleave]',
      'history --metric',
      'import DIR',
    ])
      expect(result.stdout).toContain(line);
  });

  it("help CMD prints that command's usage", async () => {
    const result = await inferlab(['help', 'run']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Usage: inferlab run \(--workload FILE\|NAME \| --trace FILE\.jsonl/);
  });

  it.each([['--version'], ['-V']])('%s prints the app version, the engine commit and the schema version', async (flag) => {
    const { version } = JSON.parse(fs.readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string };
    const result = await inferlab([flag]);
    expect(result.code).toBe(0);
    const commit = readPinnedSourceRecord(engineCacheDir())!.commit.slice(0, 12);
    expect(result.stdout.trim().split('\n')).toEqual([
      `inferlab ${version}`,
      `llama.cpp ${commit} (node-llama-cpp@3.21.1)`,
      `database schema ${MIGRATIONS.length}`,
    ]);
  });

  it('a usage mistake names the flag and points at --help', async () => {
    const result = await inferlab(['run', '--workload', 'chat-short', '--model', 'demo:q8_0', '--concurrency', 'x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--concurrency/);
    expect(result.stderr).toMatch(/inferlab run --help/);
  });

  it('--json turns a usage error into one JSON document on stdout, exit 2', async () => {
    const result = await inferlab(['demo', '--quick', '--max-tokens', '0', '--json']);
    expect(result.code).toBe(2);
    const body = JSON.parse(result.stdout) as { error: { code: string; message: string } };
    expect(body.error.code).toEqual(expect.any(String));
    expect(body.error.message).toMatch(/--max-tokens must be a positive integer/);
    expect(result.stderr).toMatch(/--max-tokens must be a positive integer/);
  });

  it('--json turns a runtime failure into one JSON document on stdout, exit 1', async () => {
    const result = await inferlab(['runs', 'list', '--db', '/dev/null/x.db', '--json']);
    expect(result.code).toBe(1);
    const body = JSON.parse(result.stdout) as { error: { code: string; message: string } };
    expect(body.error).toEqual({ code: 'storage_failed', message: expect.stringMatching(/Cannot create the folder for the database/) });
    expect(result.stderr).toMatch(/Cannot create the folder for the database/);
  });

  it('a long command shows its progress on a piped stderr, without carriage returns', async () => {
    const model = await resolveModelRef('demo:q4_k_m');
    // A cache folder of its own: in the user's, the digest of a demo model is kept from an earlier hash, and nothing is read.
    const result = await inferlab(['models', 'scan', model, '--hash', '--db', path.join(tempDir(), 'hash.db')], {
      INFERLAB_CACHE_DIR: tempDir(),
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^hashing demo-q4_k_m\.gguf: \d+%$/m);
    expect(result.stderr).not.toContain('\r');
  });

  it('prints plain progress lines when stderr is not a terminal', () => {
    let written = '';
    let now = 0;
    const stream = { isTTY: false, write: (chunk: string) => ((written += chunk), true) };
    const progress = progressWriter(stream, { intervalMs: 5000, now: () => now });
    progress.line('window 1/3 f16');
    progress.live('1 done');
    now = 1000;
    progress.live('2 done');
    now = 6000;
    progress.live('3 done');
    progress.end();
    expect(written).toBe('window 1/3 f16\n1 done\n3 done\n');
    expect(written).not.toContain('\r');
  });

  it('rewrites one live line in place on a terminal', () => {
    let written = '';
    const stream = { isTTY: true, write: (chunk: string) => ((written += chunk), true) };
    const progress = progressWriter(stream);
    progress.live('1 done');
    progress.live('2 done');
    progress.line('server ready');
    progress.end();
    expect(written).toBe('\r1 done\x1b[K\r2 done\x1b[K\nserver ready\n');
  });
});
