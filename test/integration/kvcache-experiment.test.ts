import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExperimentResult } from '../../src/shared/contract/experiments';
import { inferlab } from '../support/cli';
import { shortDocumentsWorkload } from '../support/short-workload';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('experiment kvcache against the real server', () => {
  it('compares an f16 with a q8_0 KV cache: the memory the server allocated, agreement, KLD, acceptance per group and verdicts', async () => {
    const dir = tempDir();
    const workload = shortDocumentsWorkload(dir);
    const report = path.join(dir, 'kv.html');
    const result = await inferlab([
      'experiment',
      'kvcache',
      '--model',
      'demo:q8_0',
      '--types',
      'f16,q8_0',
      '--ctx',
      '2048',
      '--workload',
      workload,
      '--repeats',
      '2',
      '--requests',
      '2',
      '--report',
      report,
      '--db',
      path.join(dir, 'kv.db'),
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const experiment = JSON.parse(result.stdout) as ExperimentResult;
    expect(experiment.kind).toBe('kvcache');
    expect(experiment.protocol).toMatchObject({ context_size: 2048, flash_attention: expect.stringMatching(/^on for every condition/) });
    const [f16, q8] = experiment.conditions;
    expect(f16!.cache_types).toEqual({ k: 'f16', v: 'f16' });
    expect(q8!.cache_types).toEqual({ k: 'q8_0', v: 'q8_0' });
    // q8_0 stores 34 bytes per 32 values against f16's 64: the server's own KV buffer is about 0.53 of f16's.
    expect(f16!.kv_cache_mib).toBeGreaterThan(0);
    expect(q8!.kv_cache_mib! / f16!.kv_cache_mib!).toBeCloseTo(34 / 64, 1);
    expect(f16!.run_ids).toHaveLength(2);
    expect(q8!.token_agreement?.items).toBe(2);
    expect(q8!.token_agreement?.mean).not.toBeNull();
    expect(q8!.kld_error).toBeNull();
    expect(q8!.kld_mean).not.toBeNull();
    // Every answer is checked for the fact: judged per group, in both conditions.
    expect(f16!.acceptance_by_group?.needle?.judged).toBe(4);
    expect(q8!.acceptance_by_group?.needle?.judged).toBe(4);
    expect(experiment.verdicts.map((row) => row.metric)).toEqual(expect.arrayContaining(['ttft_ms p50', 'tpot_ms p50']));
    expect(experiment.verdicts.every((row) => row.a === 'f16' && row.b === 'q8_0')).toBe(true);
    expect(experiment.recommendation.objective).toBe('smallest KV cache, then TPOT p50');
    // A fourth gate, `uncontaminated`, appears only when something competed with the run, and then it says which condition.
    const gateNames = experiment.recommendation.gates?.map((gate) => gate.name) ?? [];
    expect(gateNames.slice(0, 3)).toEqual(['acceptance', 'token agreement', 'kld']);
    const contaminated = experiment.conditions.some((condition) => condition.contaminated);
    expect(gateNames.slice(3)).toEqual(contaminated ? ['uncontaminated'] : []);
    const html = fs.readFileSync(report, 'utf8');
    expect(html).toContain('<h1>KV cache types</h1>');
    expect(html).toMatch(/KV memory/);
  });
});
