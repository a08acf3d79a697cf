import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferlab } from '../support/cli';
import { requireEngine } from '../support/engine';
import { useTempDirs } from '../support/temp';
import { chatShortWithAnswersOf } from '../support/short-workload';

const tempDir = useTempDirs();

describe('inferlab check, the regression gate, against the real server', () => {
  it('passes a fresh rerun of the same configuration, catches a slower server setting (exit 1), refuses another model or workload (exit 2)', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'gate.db');
    // chat-short with answers cut to 12 tokens: every window the gate measures stays short, even with the slow draft model.
    const workload = chatShortWithAnswersOf(dir, 12);
    const run = async (args: string[]) => {
      const result = await inferlab([
        'run',
        '--workload',
        workload,
        '--requests',
        '6',
        '--concurrency',
        '1',
        '--db',
        db,
        '--json',
        ...args,
      ]);
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout).run_id as string;
    };
    // One decode thread leaves the second core to the server's HTTP thread and this client. With
    // both cores decoding, some answers reach the client in one read (BUNCHED TOKENS in the summary):
    // a one-run baseline with its TPOT p50 halved by them once read a same-build rerun as a regression.
    const baseline = await run(['--model', 'demo:f16', '--set', 'threads=1']);

    // --engine: another llama-server binary (here a copy of this build's folder, as a person's own build would be).
    const engineCopy = path.join(dir, 'engine-copy');
    fs.cpSync((await requireEngine()).toolsDir, engineCopy, { recursive: true, verbatimSymlinks: true });
    const copiedServer = path.join(engineCopy, 'llama-server');
    // Not interleaved, so every difference between server starts counts: on this shared 2-core VM
    // one-thread TPOT p50 ranged 2.02–2.68 ms over six identical runs, hence a margin above that spread.
    const same = await inferlab(['check', '--baseline', baseline, '--engine', copiedServer, '--margin', '35%', '--db', db, '--json']);
    expect(same.code, same.stdout + same.stderr).toBe(0);
    const passed = JSON.parse(same.stdout);
    expect(passed.result).toBe('pass');
    expect(passed.candidate.run_ids).toHaveLength(3);
    expect(passed.metrics.map((metric: { metric: string }) => metric.metric)).toEqual([
      'tpot_ms p50',
      'ttft_ms p50',
      'output_tokens_per_s',
    ]);
    expect(passed.candidate.engine.commit).toBe(passed.baseline.engine.commit);
    expect(passed.candidate.engine.server_path).toBe(copiedServer);
    expect(passed.baseline.engine.server_path).not.toBe(copiedServer);
    expect(passed.interleaved).toBe(false);

    // Interleaved: the baseline configuration measured again on its own build, ABBA with the candidate.
    const interleaved = await inferlab([
      'check',
      '--baseline',
      baseline,
      '--interleave',
      '--repeats',
      '2',
      '--margin',
      '10%',
      '--db',
      db,
      '--json',
    ]);
    expect(interleaved.code, interleaved.stdout + interleaved.stderr).toBe(0);
    const fresh = JSON.parse(interleaved.stdout);
    expect(fresh).toMatchObject({ result: 'pass', interleaved: true, stored_baseline: { run_ids: [baseline] } });
    expect(fresh.baseline.run_ids).toHaveLength(2);
    expect(fresh.baseline.run_ids).not.toContain(baseline);
    expect(fresh.baseline.engine).toEqual(passed.baseline.engine);

    // A draft model that decodes slowly, hence the longer limit.
    // With two decode threads a draft model slows this CPU's decoding many times over (1.5 → 39 ms
    // per token measured); with one it barely does, as the draft (the same model quantized) is always
    // accepted. Half the threads is no robust slowdown either: on two cores the client shares them.
    // Bunched tokens in this baseline could only lower its TPOT, which makes the regression plainer.
    const twoThreads = await run(['--model', 'demo:f16', '--set', 'threads=2']);
    const slower = await inferlab([
      'check',
      '--baseline',
      twoThreads,
      '--set',
      'draftModel=demo:q4_k_m',
      '--set',
      'draftMax=4',
      // Three windows: against a one-run baseline, two windows leave one degree of freedom (t = 6.3), and
      // drafted windows on this shared VM differed twofold (TPOT p50 20 and 41 ms) — a 25-fold slowdown
      // that two windows could not call beyond doubt. Three give t = 2.9.
      '--repeats',
      '3',
      '--metrics',
      'tpot_ms:p50',
      '--margin',
      '10%',
      '--db',
      db,
      '--json',
    ]);
    const caught = JSON.parse(slower.stdout);
    expect(slower.code, JSON.stringify(caught.metrics)).toBe(1);
    expect(caught.result).toBe('regression');
    expect(caught.metrics[0]).toMatchObject({ metric: 'tpot_ms p50', verdict: 'regression' });
    expect(caught.metrics[0].worse_by_at_least).toBeGreaterThan(0.1);

    // Figures of another model file, or of another workload, are not comparable: refused before any verdict.
    const otherModel = await run(['--model', 'demo:q8_0']);
    const refusedModel = await inferlab(['check', '--baseline', baseline, '--run', otherModel, '--db', db]);
    const storedInterleaved = await inferlab(['check', '--baseline', baseline, '--run', otherModel, '--interleave', '--db', db]);
    expect(storedInterleaved.code).toBe(2);
    expect(storedInterleaved.stderr).toMatch(/--interleave are for measuring the candidate again/);
    expect(refusedModel.code).toBe(2);
    expect(refusedModel.stderr).toMatch(/served another model file/);
    // The built-in chat-short: the baseline's prompts, but answers of another length.
    const otherWorkload = await inferlab([
      'run',
      '--workload',
      'chat-short',
      '--model',
      'demo:f16',
      '--requests',
      '2',
      '--db',
      db,
      '--json',
    ]);
    const refusedWorkload = await inferlab(['check', '--baseline', baseline, '--run', JSON.parse(otherWorkload.stdout).run_id, '--db', db]);
    expect(refusedWorkload.code).toBe(2);
    expect(refusedWorkload.stderr).toMatch(/the workload changed/);
  }, 300_000);
});
