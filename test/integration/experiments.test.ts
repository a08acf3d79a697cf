import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferlab } from '../support/cli';
import { useTempDirs } from '../support/temp';
import fs from 'node:fs';

const tempDir = useTempDirs();

describe('experiments with the demo models against the real server', () => {
  it('quantization: sizes order f16 > q8_0 > q4_k_m, f16 agrees with itself, KLD grows as bits shrink; the report is offline', async () => {
    const dir = tempDir();
    const report = path.join(dir, 'quant.html');
    const result = await inferlab(['experiment', 'quant', '--model', 'demo:f16', '--quants', 'f16,q8_0,q4_k_m', '--workload', 'chat-short', '--repeats', '2', '--requests', '4', '--db', path.join(dir, 'e.db'), '--json', '--report', report]);
    expect(result.code, result.stderr).toBe(0);
    const experiment = JSON.parse(result.stdout);
    const [f16, q8, q4] = experiment.conditions;
    expect(experiment.conditions.map((condition: { name: string }) => condition.name)).toEqual(['f16', 'q8_0', 'q4_k_m']);
    expect(f16.file_bytes).toBeGreaterThan(q8.file_bytes);
    expect(q8.file_bytes).toBeGreaterThan(q4.file_bytes);
    expect(f16.agreement_with_baseline).toBe(1);
    expect(f16.kld_mean).toBeLessThan(1e-6);
    expect(q4.kld_mean).toBeGreaterThan(q8.kld_mean);
    expect(q8.run_ids).toHaveLength(2);
    expect(f16.load_ms).toBeGreaterThan(0);
    expect(f16.vram).toEqual({ baseline_mib: null, peak_mib: null, server_mib: null });
    expect(experiment.verdicts.length).toBe(12);
    for (const verdict of experiment.verdicts) expect(['faster', 'slower', 'no significant difference', 'insufficient data']).toContain(verdict.verdict);
    expect(experiment.recommendation.reason).toEqual(expect.any(String));
    const html = fs.readFileSync(report, 'utf8');
    expect(html).toMatch(/<svg/);
    expect(html).not.toMatch(/(src|href)=["']https?:/);
    const again = await inferlab(['report', experiment.experiment_id.slice(0, 8), '--out', path.join(dir, 'again.html'), '--db', path.join(dir, 'e.db')]);
    expect(again.code, again.stderr).toBe(0);
  });

  it('warm/cold: cold-cache reuses nothing, warm-cache reuses prefixes with a lower TTFT; skipping the reset is caught', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'w.db');
    const result = await inferlab(['experiment', 'warmcold', '--model', 'demo:q8_0', '--workload', 'prefix-share', '--repeats', '1', '--requests', '8', '--db', db, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const experiment = JSON.parse(result.stdout);
    const byName = Object.fromEntries(experiment.conditions.map((condition: { name: string }) => [condition.name, condition]));
    expect(byName['cold-cache'].evidence.cached_prompt_tokens).toBe(0);
    expect(byName['cold-cache'].contaminated).toBe(false);
    expect(byName['warm-cache'].evidence.cached_prompt_tokens).toBeGreaterThan(0);
    expect(byName['warm-cache'].metrics.ttft_ms.p50).toBeLessThan(byName['cold-cache'].metrics.ttft_ms.p50);
    expect(byName['cold-process'].cold_start_ms).toHaveLength(1);

    const skipped = await inferlab(['experiment', 'warmcold', '--model', 'demo:q8_0', '--workload', 'prefix-share', '--repeats', '1', '--requests', '8', '--skip-cache-reset', '--db', db, '--json']);
    const contaminated = JSON.parse(skipped.stdout).conditions.find((condition: { name: string }) => condition.name === 'cold-cache');
    expect(contaminated.contaminated).toBe(true);
    expect(contaminated.contamination_reason).toMatch(/the cache was not cold/);
    expect(JSON.parse(skipped.stdout).recommendation.reason).toMatch(/Not conclusive: cold-cache is contaminated/);
  });

  it('refuses bad experiment options with exit 2', async () => {
    const result = await inferlab(['experiment', 'quant', '--model', 'demo:f16', '--quants', 'f16']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--quants needs two or more types/);
    expect((await inferlab(['experiment', 'sideways', '--model', 'demo:f16'])).stderr).toMatch(/Unknown experiment "sideways"/);
  });
});

describe('server-setting sweep and decisions', () => {
  it('varies parallel slots across load levels, marks the Pareto set, and records a decision', async () => {
    const dir = tempDir();
    const db = path.join(dir, 's.db');
    // No acceptance checks: the synthetic model's gibberish would fail them, and goodput counts only accepted requests.
    const workload = path.join(dir, 'short.yaml');
    fs.writeFileSync(workload, 'name: short\ndefaults: { max_tokens: 16, temperature: 0, ignore_eos: true }\ngroups:\n  - name: g\n    items:\n      - { id: a, prompt: "Tell me a story." }\n      - { id: b, prompt: "List some colours." }\n');
    const result = await inferlab(['experiment', 'sweep', '--model', 'demo:q4_k_m', '--vary', 'parallelSlots=1,4', '--load', 'concurrency=1,4', '--workload', workload, '--requests', '8', '--slo', 'ttft=5000', '--db', db, '--json', '--report', path.join(dir, 'sweep.html')]);
    expect(result.code, result.stderr).toBe(0);
    const sweep = JSON.parse(result.stdout);
    expect(sweep.conditions.map((condition: { name: string }) => condition.name)).toEqual(['parallelSlots=1 @ c=1', 'parallelSlots=1 @ c=4', 'parallelSlots=4 @ c=1', 'parallelSlots=4 @ c=4']);
    expect(sweep.conditions.some((condition: { pareto: boolean }) => condition.pareto)).toBe(true);
    expect(sweep.conditions.every((condition: { goodput_requests_per_s: number }) => condition.goodput_requests_per_s > 0)).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'sweep.html'), 'utf8')).toMatch(/Pareto set/);

    const decided = await inferlab(['decide', sweep.experiment_id, '--choose', sweep.recommendation.choice, '--reason', 'best goodput on the front', '--by', 'tester', '--db', db, '--json']);
    expect(decided.code, decided.stderr).toBe(0);
    const listed = JSON.parse((await inferlab(['decisions', '--db', db, '--json'])).stdout);
    expect(listed[0]).toMatchObject({ chosen: sweep.recommendation.choice, reason: 'best goodput on the front', decided_by: 'tester', experiment_id: sweep.experiment_id });
    expect(listed[0].chosen_run_ids).toHaveLength(1);
    expect((await inferlab(['decide', sweep.experiment_id, '--choose', 'nope', '--reason', 'x', '--db', db])).code).toBe(2);
  });
});
