import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferlab, inferlabJson } from '../support/cli';
import { useTempDirs } from '../support/temp';
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { DuckDBInstance } from '@duckdb/node-api';

const tempDir = useTempDirs();

describe('experiments with the demo models against the real server', () => {
  // One quantization and one warm/cold experiment run end to end in the UI test, which runs the
  // demo (test/e2e/ui.test.ts, with test/support/experiment-proofs.ts): proven there, not twice.
  it('warm/cold: skipping the cache reset is caught, with the contradicting requests counted; the withheld verdicts settle the halfway look', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'w.db');
    const experiment = await inferlabJson(
      [
        'experiment',
        'warmcold',
        '--model',
        'demo:q8_0',
        '--workload',
        'prefix-share',
        '--repeats',
        '4',
        '--requests',
        '8',
        '--cold-starts',
        '4',
        '--skip-cache-reset',
        '--max-answer-tokens',
        '4',
      ],
      db,
    );
    const contaminated = experiment.conditions.find((condition: { name: string }) => condition.name === 'cold-cache');
    expect(contaminated.contaminated).toBe(true);
    // prefix-share runs each family's four questions in a row: at least the last three of each family reuse the first one's prefix.
    expect(contaminated.cache_evidence.contradicted).toBeGreaterThanOrEqual(6);
    expect(contaminated.contamination_reason).toMatch(/of \d+ requests reused cached prompt tokens: the cache was not cold/);
    expect(experiment.recommendation.reason).toMatch(/Not conclusive: .*cold-cache is contaminated/);
    // Sequential: looked at after 3 of 4 windows. Every TTFT verdict is against cold-cache, withheld for its
    // contamination, which more windows cannot mend: the look settles them and the fourth window never runs.
    expect(experiment.stopping).toMatchObject({ design: 'sequential', looks: [3, 4], windows_run: 3, windows_max: 4, open: [] });
    expect(experiment.stopping.reason).toBe('every verdict the answer needs was decided after 3 of 4 windows');
    // The first look's windows hold the fresh starts (4, spread over 3); the fourth would add its share.
    expect(experiment.protocol.cold_starts_per_window).toEqual([2, 1, 1, 1]);
    const store = new Database(db, { readonly: true });
    const windows = store
      .prepare('SELECT COUNT(DISTINCT window) AS n FROM experiment_runs WHERE experiment_id = ?')
      .get(experiment.experiment_id) as { n: number };
    store.close();
    expect(windows.n).toBe(3);
  }, 300_000);

  it('refuses bad experiment options with exit 2', async () => {
    const result = await inferlab(['experiment', 'quant', '--model', 'demo:f16', '--quants', 'f16']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--quants needs two or more types/);
    expect((await inferlab(['experiment', 'sideways', '--model', 'demo:f16'])).stderr).toMatch(/Unknown experiment "sideways"/);
    // Every kind but the sweep judges generated answers: an embeddings workload is measured by a run, or swept.
    const embeddings = await inferlab(['experiment', 'warmcold', '--model', 'demo:q4_k_m', '--workload', 'embeddings']);
    expect(embeddings.code).toBe(2);
    expect(embeddings.stderr).toMatch(
      /embeddings\.yaml is an embeddings workload: this experiment compares generated answers; measure it with a run .*, or sweep its batch/,
    );
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
    // Three windows are too few to look halfway: the sweep runs them all, and says so.
    expect(sweep.stopping).toMatchObject({ design: 'fixed', windows_run: 3, windows_max: 3 });
    expect(sweep.stopping.reason).toMatch(/too few to look halfway/);
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
    const sweep = await inferlabJson(
      [
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
      ],
      db,
    );
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

    // The experiment as Parquet tables, read back with DuckDB against what SQLite holds.
    const out = path.join(dir, 'parquet');
    const exported = await inferlab([
      'export',
      '--experiment',
      sweep.experiment_id,
      '--format',
      'parquet',
      '--out',
      out,
      '--db',
      db,
      '--json',
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    const sqlite = new Database(db, { readonly: true });
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    try {
      const rows = async (sql: string) => (await duck.runAndReadAll(sql)).getRowObjectsJson();
      const runIds = (
        sqlite.prepare('SELECT run_id FROM experiment_runs WHERE experiment_id = ?').all(sweep.experiment_id) as { run_id: string }[]
      )
        .map((row) => row.run_id)
        .sort();
      expect((await rows(`SELECT run_id FROM '${out}/runs.parquet' ORDER BY run_id`)).map((row) => row.run_id)).toEqual(runIds);
      const stored = sqlite
        .prepare(
          `SELECT run_id, seq, ttft_ms, tpot_ms, output_tokens FROM requests WHERE run_id IN (${runIds.map(() => '?').join(',')}) ORDER BY run_id, seq`,
        )
        .all(...runIds);
      const read = await rows(
        `SELECT run_id, seq::INTEGER AS seq, ttft_ms, tpot_ms, output_tokens::INTEGER AS output_tokens FROM '${out}/requests.parquet' ORDER BY run_id, seq`,
      );
      expect(read).toEqual(stored);
      expect(await rows(`SELECT chosen, decided_by FROM '${out}/decisions.parquet'`)).toEqual([
        { chosen: sweep.recommendation.choice, decided_by: 'tester' },
      ]);
      expect(await rows(`SELECT recommendation FROM '${out}/experiments.parquet'`)).toEqual([
        { recommendation: sweep.recommendation.choice },
      ]);
    } finally {
      duck.closeSync();
      sqlite.close();
    }
  }, 300_000);
});
