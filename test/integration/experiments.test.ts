import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { inferlab } from '../support/cli';
import { machineReport } from '../support/machine';
import { useTempDirs } from '../support/temp';
import fs from 'node:fs';

const tempDir = useTempDirs();

describe('experiments with the demo models against the real server', () => {
  it('quantization: sizes order f16 > q8_0 > q4_k_m, f16 agrees with itself, KLD grows as bits shrink; the report is offline', async () => {
    const dir = tempDir();
    const report = path.join(dir, 'quant.html');
    const result = await inferlab([
      'experiment',
      'quant',
      '--model',
      'demo:f16',
      '--quants',
      'f16,q8_0,q4_k_m',
      '--workload',
      'chat-short',
      '--repeats',
      '2',
      '--requests',
      '4',
      '--db',
      path.join(dir, 'e.db'),
      '--json',
      '--report',
      report,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const experiment = JSON.parse(result.stdout);
    const [f16, q8, q4] = experiment.conditions;
    expect(experiment.conditions.map((condition: { name: string }) => condition.name)).toEqual(['f16', 'q8_0', 'q4_k_m']);
    expect(f16.file_bytes).toBeGreaterThan(q8.file_bytes);
    expect(q8.file_bytes).toBeGreaterThan(q4.file_bytes);
    // The baseline's second untimed pass, against its first: the noise floor, over every item.
    expect(f16.token_agreement).toMatchObject({ items: 8, error: null });
    expect(q4.token_agreement.items).toBe(8);
    expect(f16.kld_mean).toBeLessThan(1e-6);
    expect(q4.kld_mean).toBeGreaterThan(q8.kld_mean);
    expect(q8.run_ids).toHaveLength(2);
    expect(f16.load_ms).toBeGreaterThan(0);
    // VRAM is measured where the product sees a GPU, and null (never zero) where it sees none.
    if ((await machineReport()).gpus.length === 0) expect(f16.vram).toEqual({ baseline_mib: null, peak_mib: null, server_mib: null });
    else expect(f16.vram.peak_mib).toBeGreaterThan(0);
    // Two windows per condition are below the three a verdict needs: every latency question says so, and how to fix it.
    expect(experiment.verdicts).toHaveLength(8);
    for (const verdict of experiment.verdicts)
      expect(verdict).toMatchObject({
        verdict: 'insufficient data',
        note: expect.stringMatching(/has 2 window\(s\); a verdict needs 3 per side \(raise --repeats\)/),
      });
    // With no latency verdict, the condition that needs the least memory and passes every quality gate is
    // recommended: by the server's own VRAM where every condition has it (a GPU), else by file size.
    const serverMib = experiment.conditions.map((condition: { vram: { server_mib: number | null } }) => condition.vram.server_mib);
    if (serverMib.includes(null)) {
      expect(experiment.recommendation.choice).toBe('q4_k_m');
      expect(experiment.recommendation.reason).toMatch(/file size 29\.5 MiB vs 87\.2 MiB/);
    } else {
      // A candidate counts as smaller only when it saves at least 1 % of the baseline's VRAM.
      const smaller = experiment.conditions.filter(
        (condition: { vram: { server_mib: number } }) => condition.vram.server_mib <= 0.99 * f16.vram.server_mib,
      );
      if (smaller.length === 0) expect(experiment.recommendation.choice).toBe('f16');
      else expect(smaller.map((condition: { name: string }) => condition.name)).toContain(experiment.recommendation.choice);
    }
    const html = fs.readFileSync(report, 'utf8');
    expect(html).toMatch(/<svg/);
    expect(html).not.toMatch(/(src|href)=["']https?:/);
    const again = await inferlab([
      'report',
      experiment.experiment_id.slice(0, 8),
      '--out',
      path.join(dir, 'again.html'),
      '--db',
      path.join(dir, 'e.db'),
    ]);
    expect(again.code, again.stderr).toBe(0);
  });

  it('warm/cold: three conditions each proven request by request; cold-process measures only first requests after fresh starts', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'w.db');
    const result = await inferlab([
      'experiment',
      'warmcold',
      '--model',
      'demo:q8_0',
      '--workload',
      'prefix-share',
      '--repeats',
      '3',
      '--requests',
      '4',
      '--cold-starts',
      '3',
      '--db',
      db,
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const experiment = JSON.parse(result.stdout);
    const byName = Object.fromEntries(experiment.conditions.map((condition: { name: string }) => [condition.name, condition]));
    const cold = byName['cold-cache'];
    const warm = byName['warm-cache'];
    const fresh = byName['cold-process'];

    expect(cold.cache_evidence).toMatchObject({ expect: 'no reuse', measured: 12, confirmed: 12, contradicted: 0, unknown: 0 });
    // On a shared machine a condition may still be contaminated by competing processes, never by its cache.
    const cacheReasons = /cache was not|cached prompt tokens|fresh server answered/;
    expect(cold.contamination_reason ?? '').not.toMatch(cacheReasons);
    // Every warm request reused ≥ 95 % of its 768-token shared prefix, not just the chat template.
    expect(warm.cache_evidence).toMatchObject({ expect: 'prefix reuse', measured: 12, confirmed: 12, contradicted: 0, unknown: 0 });
    expect(warm.cache_evidence.summary).toBe('12 of 12 requests reused ≥ 95 % of their shared prefix');
    expect(warm.evidence.cached_prompt_tokens).toBeGreaterThan(12 * 700);
    expect(warm.contamination_reason ?? '').not.toMatch(cacheReasons);

    // One measured request per fresh server, the first it ever answered, with nothing cached.
    expect(fresh.run_ids).toHaveLength(3);
    expect(fresh.requests.attempted).toBe(3);
    expect(fresh.cold_starts.starts).toHaveLength(3);
    for (const start of fresh.cold_starts.starts) {
      expect(start).toMatchObject({ cached_tokens: 0, requests_before: 0 });
      expect(start.spawn_to_ready_ms).toBeGreaterThan(0);
      expect(start.ttft_ms).toBeGreaterThan(0);
    }
    expect(fresh.cold_starts.spawn_to_ready_ms.n).toBe(3);
    expect(fresh.cache_evidence).toMatchObject({ expect: 'no reuse', measured: 3, confirmed: 3, contradicted: 0 });
    expect(fresh.contamination_reason ?? '').not.toMatch(cacheReasons);
    const raw = new Database(db, { readonly: true });
    for (const runId of fresh.run_ids) {
      const rows = raw.prepare('SELECT seq, warmup, cached_tokens FROM requests WHERE run_id = ?').all(runId);
      expect(rows).toEqual([{ seq: 0, warmup: 0, cached_tokens: 0 }]);
    }
    raw.close();

    expect(warm.metrics.ttft_ms.p50).toBeLessThan(cold.metrics.ttft_ms.p50);
    expect(fresh.metrics.ttft_ms.p50).toBeGreaterThan(warm.metrics.ttft_ms.p50);
    const ttftPairs = experiment.verdicts
      .filter((row: { metric: string }) => row.metric === 'ttft_ms p50')
      .map((row: { a: string; b: string }) => `${row.a}→${row.b}`);
    expect(ttftPairs).toEqual(['cold-cache→warm-cache', 'cold-cache→cold-process']);
    expect(experiment.recommendation.reason).toMatch(/TTFT p50 against cold-cache/);
  }, 600_000);

  it('warm/cold: skipping the cache reset is caught, with the contradicting requests counted', async () => {
    const dir = tempDir();
    const skipped = await inferlab([
      'experiment',
      'warmcold',
      '--model',
      'demo:q8_0',
      '--workload',
      'prefix-share',
      '--repeats',
      '1',
      '--requests',
      '8',
      '--cold-starts',
      '1',
      '--skip-cache-reset',
      '--db',
      path.join(dir, 'w.db'),
      '--json',
    ]);
    expect(skipped.code, skipped.stderr).toBe(0);
    const experiment = JSON.parse(skipped.stdout);
    const contaminated = experiment.conditions.find((condition: { name: string }) => condition.name === 'cold-cache');
    expect(contaminated.contaminated).toBe(true);
    // prefix-share runs each family's four questions in a row: at least the last three of each family reuse the first one's prefix.
    expect(contaminated.cache_evidence.contradicted).toBeGreaterThanOrEqual(6);
    expect(contaminated.contamination_reason).toMatch(/of 8 requests reused cached prompt tokens: the cache was not cold/);
    expect(experiment.recommendation.reason).toMatch(/Not conclusive: .*cold-cache is contaminated/);
  }, 300_000);

  it('refuses bad experiment options with exit 2', async () => {
    const result = await inferlab(['experiment', 'quant', '--model', 'demo:f16', '--quants', 'f16']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--quants needs two or more types/);
    expect((await inferlab(['experiment', 'sideways', '--model', 'demo:f16'])).stderr).toMatch(/Unknown experiment "sideways"/);
  });
});

describe('server-setting sweep and decisions', () => {
  // No acceptance checks: the synthetic model's gibberish would fail them, and goodput counts only accepted requests.
  const shortWorkload = (dir: string) => {
    const file = path.join(dir, 'short.yaml');
    fs.writeFileSync(
      file,
      'name: short\ndefaults: { max_tokens: 16, temperature: 0, ignore_eos: true }\ngroups:\n  - name: g\n    items:\n      - { id: a, prompt: "Tell me a story." }\n      - { id: b, prompt: "List some colours." }\n',
    );
    return file;
  };

  it('repeats each setting in rotated windows, compares settings only within a load level, and names no winner without an SLO', async () => {
    const dir = tempDir();
    const result = await inferlab([
      'experiment',
      'sweep',
      '--model',
      'demo:q4_k_m',
      '--vary',
      'parallelSlots=1,4',
      '--load',
      'concurrency=1,4',
      '--workload',
      shortWorkload(dir),
      '--repeats',
      '3',
      '--requests',
      '8',
      '--db',
      path.join(dir, 's.db'),
      '--json',
      '--report',
      path.join(dir, 'sweep.html'),
    ]);
    expect(result.code, result.stderr).toBe(0);
    const sweep = JSON.parse(result.stdout);
    expect(sweep.conditions.map((condition: { name: string }) => condition.name)).toEqual([
      'parallelSlots=1 @ c=1',
      'parallelSlots=1 @ c=4',
      'parallelSlots=4 @ c=1',
      'parallelSlots=4 @ c=4',
    ]);
    for (const condition of sweep.conditions) {
      expect(condition.run_ids).toHaveLength(3);
      expect(condition.windows_run).toBe(3);
      expect(condition.requests.attempted).toBe(24);
      expect(condition.meets_slo).toBeNull();
    }
    expect(sweep.verdicts.length).toBeGreaterThan(0);
    for (const verdict of sweep.verdicts) {
      expect(verdict.a.split(' @ ')[1]).toBe(verdict.b.split(' @ ')[1]);
      expect(verdict.a).toMatch(/^parallelSlots=1 @/);
    }
    const pareto = sweep.conditions
      .filter((condition: { pareto: boolean }) => condition.pareto)
      .map((condition: { name: string }) => condition.name);
    expect(pareto.length).toBeGreaterThan(0);
    expect(sweep.recommendation.choice).toBeNull();
    expect(sweep.recommendation.reason).toMatch(/No SLO given, so no single winner/);
    for (const name of pareto) expect(sweep.recommendation.reason).toContain(name);
    expect(fs.readFileSync(path.join(dir, 'sweep.html'), 'utf8')).toMatch(/Pareto set/);
  }, 600_000);

  it('with an SLO picks the highest goodput among the settings meeting it, and records a decision', async () => {
    const dir = tempDir();
    const db = path.join(dir, 's.db');
    const result = await inferlab([
      'experiment',
      'sweep',
      '--model',
      'demo:q4_k_m',
      '--vary',
      'parallelSlots=1,2',
      '--load',
      'concurrency=2',
      '--workload',
      shortWorkload(dir),
      '--repeats',
      '1',
      '--requests',
      '8',
      '--slo',
      'ttft=5000',
      '--db',
      db,
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const sweep = JSON.parse(result.stdout);
    expect(
      sweep.conditions.every(
        (condition: { goodput_requests_per_s: number; meets_slo: boolean }) => condition.goodput_requests_per_s > 0 && condition.meets_slo,
      ),
    ).toBe(true);
    const best = [...sweep.conditions].sort((a, b) => b.goodput_requests_per_s - a.goodput_requests_per_s)[0];
    expect(sweep.recommendation.choice).toBe(best.name);
    expect(sweep.recommendation.excluded.map((item: { name: string }) => item.name)).toEqual(
      sweep.conditions
        .filter((condition: { name: string }) => condition.name !== best.name)
        .map((condition: { name: string }) => condition.name),
    );

    const decided = await inferlab([
      'decide',
      sweep.experiment_id,
      '--choose',
      sweep.recommendation.choice,
      '--reason',
      'best goodput under the SLO',
      '--by',
      'tester',
      '--db',
      db,
      '--json',
    ]);
    expect(decided.code, decided.stderr).toBe(0);
    const listed = JSON.parse((await inferlab(['decisions', '--db', db, '--json'])).stdout);
    expect(listed[0]).toMatchObject({
      chosen: sweep.recommendation.choice,
      reason: 'best goodput under the SLO',
      decided_by: 'tester',
      experiment_id: sweep.experiment_id,
    });
    expect(listed[0].chosen_run_ids).toHaveLength(1);
    expect((await inferlab(['decide', sweep.experiment_id, '--choose', 'nope', '--reason', 'x', '--db', db])).code).toBe(2);
  }, 300_000);
});
