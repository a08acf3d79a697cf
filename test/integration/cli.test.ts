import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
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
    [['setup', '--backend', 'tpu'], /--backend must be one of cpu, cuda, vulkan, metal, got "tpu"/],
    [['frobnicate'], /Unknown command "frobnicate"/],
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
});
