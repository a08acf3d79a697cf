import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/store/database';
import { metricHistory } from '../../src/main/experiments/build-history';
import { configurationKey, parseMetricSpec } from '../../src/main/store/run-history';
import { RunStore } from '../../src/main/store/run-store';
import { around, HISTORY_PROFILE, storeHistoryRun } from '../support/history-runs';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
/** Student t, 97.5 % quantile, 2 degrees of freedom. */
const T_2 = 4.302652729911275;

function openStore() {
  const db = openDatabase(path.join(tempDir(), 'runs.db'));
  return { db, runs: new RunStore(db) };
}

const OLD = { commit: 'b5000aa', backend: 'cuda' };
const NEW = { commit: 'b6100ff', backend: 'cuda' };

/** Two builds, three runs each: TPOT p50 10, 12, 14 on the old build and 15, 15, 18 on the new one. */
function twoBuilds(store: ReturnType<typeof openStore>) {
  const ids = {
    old: [10, 12, 14].map((median, day) =>
      storeHistoryRun(store, { startedAt: `2026-01-0${day + 1}T10:00:00Z`, engine: OLD, tpots: around(median) }),
    ),
    new: [15, 15, 18].map((median, day) =>
      storeHistoryRun(store, { startedAt: `2026-02-0${day + 1}T10:00:00Z`, engine: NEW, tpots: around(median) }),
    ),
  };
  return ids;
}

describe('parseMetricSpec', () => {
  it('reads metric and statistic, throughput without one', () => {
    expect(parseMetricSpec('tpot_ms:p50')).toEqual({ metric: 'tpot_ms', statistic: 'p50' });
    expect(parseMetricSpec('ttft_ms:p95')).toEqual({ metric: 'ttft_ms', statistic: 'p95' });
    expect(parseMetricSpec('output_tokens_per_s')).toEqual({ metric: 'output_tokens_per_s', statistic: null });
  });

  it('refuses anything else, naming every allowed metric and statistic', () => {
    for (const bad of ['tpot_ms', 'tpot_ms:p99', 'itl_ms:p50', 'output_tokens_per_s:p50', 'tpot_ms:p50:x', ''])
      expect(() => parseMetricSpec(bad), bad).toThrow(
        /allowed: ttft_ms:p50, ttft_ms:p95, tpot_ms:p50, tpot_ms:p95, e2e_ms:p50, e2e_ms:p95, output_tokens_per_s/,
      );
  });
});

describe('configurationKey', () => {
  const run = (profile: Record<string, unknown>, load: Record<string, unknown> = { mode: 'closed', concurrency: 1 }) => ({
    model_sha256: 'a'.repeat(64),
    workload_revision: 'rev-1',
    manifest_json: JSON.stringify({ target: { profile }, load }),
  });

  it('ignores the profile name and its key order', () => {
    const reordered = Object.fromEntries(Object.entries({ ...HISTORY_PROFILE, name: 'renamed' }).reverse());
    expect(configurationKey(run(reordered))).toBe(configurationKey(run(HISTORY_PROFILE)));
  });

  it('changes with the profile content, the load, the model file and the workload revision', () => {
    const base = configurationKey(run(HISTORY_PROFILE));
    expect(configurationKey(run({ ...HISTORY_PROFILE, contextSize: 4096 }))).not.toBe(base);
    expect(configurationKey(run(HISTORY_PROFILE, { mode: 'closed', concurrency: 4 }))).not.toBe(base);
    expect(configurationKey(run(HISTORY_PROFILE, { mode: 'open', rate: 1 }))).not.toBe(base);
    expect(configurationKey({ ...run(HISTORY_PROFILE), model_sha256: 'b'.repeat(64) })).not.toBe(base);
    expect(configurationKey({ ...run(HISTORY_PROFILE), workload_revision: 'rev-2' })).not.toBe(base);
  });
});

describe('metricHistory', () => {
  it('groups runs by build in order of first run, with hand-computed means, 95 % t intervals and the change', () => {
    const store = openStore();
    const ids = twoBuilds(store);
    const history = metricHistory(store, { metric: 'tpot_ms', statistic: 'p50' });
    expect(history).toMatchObject({ metric: 'tpot_ms', statistic: 'p50', unit: 'ms', higherIsBetter: false });
    expect(history.configurations).toHaveLength(1);
    const [old, fresh] = history.configurations[0]!.builds;
    expect(old!.label).toBe('b5000aa · cuda');
    expect(old!.runs.map((run) => [run.runId, run.value, run.requests])).toEqual([
      [ids.old[0], 10, 3],
      [ids.old[1], 12, 3],
      [ids.old[2], 14, 3],
    ]);
    // Old: mean 12, sd 2, half width t(2) · 2 / √3.
    expect(old!.mean).toBeCloseTo(12, 10);
    const oldHalf = (T_2 * 2) / Math.sqrt(3);
    expect(old!.interval![0]).toBeCloseTo(12 - oldHalf, 6);
    expect(old!.interval![1]).toBeCloseTo(12 + oldHalf, 6);
    expect(old!.changePercent).toBeNull();
    // New: mean 16, sd √3, half width t(2) · √3 / √3 = t(2).
    expect(fresh!.label).toBe('b6100ff · cuda');
    expect(fresh!.runs.map((run) => run.runId)).toEqual(ids.new);
    expect(fresh!.mean).toBeCloseTo(16, 10);
    expect(fresh!.interval![0]).toBeCloseTo(16 - T_2, 6);
    expect(fresh!.interval![1]).toBeCloseTo(16 + T_2, 6);
    expect(fresh!.changePercent).toBeCloseTo((100 * 4) / 12, 10);
    expect(history.notes).toEqual([]);
  });

  it('keeps mixed configurations apart, the largest first, and says so', () => {
    const store = openStore();
    twoBuilds(store);
    const busy = storeHistoryRun(store, {
      startedAt: '2026-03-01T00:00:00Z',
      engine: NEW,
      tpots: around(40),
      load: { mode: 'closed', concurrency: 4 },
    });
    const otherModel = storeHistoryRun(store, {
      startedAt: '2026-03-02T00:00:00Z',
      engine: NEW,
      tpots: around(5),
      modelSha256: 'b'.repeat(64),
    });
    // Same configuration: a renamed profile with its keys in another order.
    const renamed = storeHistoryRun(store, {
      startedAt: '2026-03-03T00:00:00Z',
      engine: NEW,
      tpots: around(18),
      profile: Object.fromEntries(Object.entries({ ...HISTORY_PROFILE, name: 'mine' }).reverse()),
    });
    const history = metricHistory(store, { metric: 'tpot_ms', statistic: 'p50' });
    expect(history.configurations.map((configuration) => configuration.builds.flatMap((build) => build.runs).length)).toEqual([7, 1, 1]);
    expect(history.configurations[0]!.builds[1]!.runs.at(-1)!.runId).toBe(renamed);
    expect(history.configurations[0]!.builds[1]!.mean).toBeCloseTo((15 + 15 + 18 + 18) / 4, 10);
    const alone = history.configurations.slice(1).map((configuration) => configuration.builds[0]!.runs[0]!.runId);
    expect(alone.sort()).toEqual([busy, otherModel].sort());
    expect(history.configurations.find((configuration) => configuration.load === 'closed, concurrency 4')).toBeDefined();
    expect(history.notes.join(' ')).toMatch(/3 configurations.*never averaged together/);

    const picked = metricHistory(store, { metric: 'tpot_ms', statistic: 'p50', key: history.configurations[1]!.key });
    expect(picked.configurations.map((configuration) => configuration.key)).toEqual([history.configurations[1]!.key]);
    const byModel = metricHistory(store, { metric: 'tpot_ms', statistic: 'p50', model: 'b'.repeat(64) });
    expect(byModel.configurations.map((configuration) => configuration.builds[0]!.runs[0]!.runId)).toEqual([otherModel]);
  });

  it('gives p95 null with the reason for a run with fewer than 20 requests, and the value from 20', () => {
    const store = openStore();
    const few = storeHistoryRun(store, { startedAt: '2026-01-01T00:00:00Z', engine: OLD, tpots: [1, 2, 3, 4, 5] });
    const enough = storeHistoryRun(store, {
      startedAt: '2026-01-02T00:00:00Z',
      engine: OLD,
      tpots: Array.from({ length: 20 }, (_, i) => i + 1),
    });
    const history = metricHistory(store, { metric: 'tpot_ms', statistic: 'p95' });
    const runs = history.configurations[0]!.builds[0]!.runs;
    expect(runs[0]).toMatchObject({ runId: few, value: null, requests: 5, note: '5 successful measured requests; p95 needs at least 20' });
    // Linear interpolation: rank 0.95 · 19 = 18.05 between 19 and 20.
    expect(runs[1]!.runId).toBe(enough);
    expect(runs[1]!.value).toBeCloseTo(19.05, 10);
    expect(history.configurations[0]!.builds[0]).toMatchObject({ interval: null, intervalNote: 'one run: an interval needs two or more' });
    expect(history.configurations[0]!.builds[0]!.mean).toBeCloseTo(19.05, 10);
  });

  it('counts only completed runs, groups runs without engine facts as an unknown build, and reads throughput from the summary', () => {
    const store = openStore();
    storeHistoryRun(store, { startedAt: '2026-01-01T00:00:00Z', engine: OLD, tpots: around(10), outputTokensPerS: 50 });
    storeHistoryRun(store, { startedAt: '2026-01-02T00:00:00Z', engine: OLD, tpots: around(10), status: 'aborted' });
    const unknown = storeHistoryRun(store, { startedAt: '2026-01-03T00:00:00Z', engine: null, tpots: around(10), outputTokensPerS: 40 });
    const history = metricHistory(store, { metric: 'output_tokens_per_s', statistic: null });
    expect(history).toMatchObject({ unit: 'tok/s', higherIsBetter: true, statistic: null });
    const builds = history.configurations[0]!.builds;
    expect(builds.map((build) => [build.label, build.mean])).toEqual([
      ['b5000aa · cuda', 50],
      ['unknown build', 40],
    ]);
    expect(builds[1]!.runs[0]!.runId).toBe(unknown);
    expect(builds[1]!.changePercent).toBeCloseTo(-20, 10);
    expect(history.notes).toContain('1 matching run(s) that did not complete are left out.');
    const other = metricHistory(store, { metric: 'output_tokens_per_s', statistic: null, key: '0123456789abcdef' });
    expect(other.notes).toEqual([expect.stringMatching(/^No completed run has the configuration 0123456789abcdef\./)]);
  });

  it('says what to do when nothing matches', () => {
    const history = metricHistory(openStore(), { metric: 'ttft_ms', statistic: 'p50', workload: 'nothing' });
    expect(history.configurations).toEqual([]);
    expect(history.notes[0]).toMatch(/No completed run matches.*inferlab check --baseline RUN --engine PATH/);
  });
});
