import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import type { MetricHistory } from '../../src/shared/contract/history';
import { inferlab } from '../support/cli';
import { around, storeHistoryRun } from '../support/history-runs';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** A database with three runs on an old build and three on a new one, plus one run at another load. */
function seededDatabase(): { file: string; busy: string } {
  const file = path.join(tempDir(), 'runs.db');
  const db = openDatabase(file);
  const store = { db, runs: new RunStore(db) };
  const old = { commit: 'b5000aa', backend: 'cuda' };
  const fresh = { commit: 'b6100ff', backend: 'cuda' };
  [10, 12, 14].forEach((median, day) =>
    storeHistoryRun(store, { startedAt: `2026-01-0${day + 1}T00:00:00Z`, engine: old, tpots: around(median) }),
  );
  [15, 15, 18].forEach((median, day) =>
    storeHistoryRun(store, { startedAt: `2026-02-0${day + 1}T00:00:00Z`, engine: fresh, tpots: around(median) }),
  );
  const busy = storeHistoryRun(store, {
    startedAt: '2026-03-01T00:00:00Z',
    engine: fresh,
    tpots: around(40),
    load: { mode: 'closed', concurrency: 4 },
  });
  db.close();
  return { file, busy };
}

describe('inferlab history', () => {
  it('prints a table per configuration: builds, runs, mean, interval and the change against the first build', async () => {
    const { file } = seededDatabase();
    const result = await inferlab(['history', '--metric', 'tpot_ms:p50', '--db', file]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('tpot_ms p50 (ms; lower is better) across engine builds');
    expect(result.stdout).toMatch(
      /configuration [0-9a-f]{16}: demo:q8_0 \(sha256 aaaaaaaaaaaa\), chat-short @ rev-1, closed, concurrency 1/,
    );
    expect(lines.find((line) => line.startsWith('b5000aa · cuda'))).toMatch(
      /3 \(10\.00, 12\.00, 14\.00\)\s+12\.0 ms\s+\[7\.03, 16\.97\]\s+first build/,
    );
    expect(lines.find((line) => line.startsWith('b6100ff · cuda'))).toMatch(
      /3 \(15\.00, 15\.00, 18\.00\)\s+16\.0 ms\s+\[11\.70, 20\.30\]\s+\+33\.3 %/,
    );
    expect(result.stdout).toMatch(/closed, concurrency 4/);
    expect(result.stdout).toMatch(/one run: an interval needs two or more/);
    expect(result.stdout).toMatch(/note: 2 configurations .* never averaged together/);
  });

  it('--json gives the history document; --key keeps one configuration', async () => {
    const { file, busy } = seededDatabase();
    const all = await inferlab([
      'history',
      '--metric',
      'tpot_ms:p50',
      '--model',
      'demo:q8_0',
      '--workload',
      'chat-short',
      '--db',
      file,
      '--json',
    ]);
    expect(all.code, all.stderr).toBe(0);
    const history = JSON.parse(all.stdout) as MetricHistory;
    expect(history.configurations).toHaveLength(2);
    const lone = history.configurations.find((configuration) => configuration.builds[0]!.runs[0]!.runId === busy)!;
    const picked = await inferlab(['history', '--metric', 'tpot_ms:p50', '--key', lone.key, '--db', file, '--json']);
    expect((JSON.parse(picked.stdout) as MetricHistory).configurations.map((configuration) => configuration.key)).toEqual([lone.key]);
  });

  it('refuses a bad --metric with exit 2 and the allowed list, and a missing one with the usage', async () => {
    const { file } = seededDatabase();
    const bad = await inferlab(['history', '--metric', 'tpot_ms:p99', '--db', file]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/allowed: ttft_ms:p50, ttft_ms:p95, tpot_ms:p50, tpot_ms:p95, e2e_ms:p50, e2e_ms:p95, output_tokens_per_s/);
    const missing = await inferlab(['history', '--db', file]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/history needs --metric/);
    const json = await inferlab(['history', '--metric', 'nope', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error.message).toMatch(/allowed: /);
  });
});
