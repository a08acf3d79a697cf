import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runRegressionCheck } from '../../src/main/experiments/regression-check';
import type { CheckSideName } from '../../src/shared/contract/check';
import { parseCheckMetrics } from '../../src/main/cli/check-flags';
import { openDatabase } from '../../src/main/store/database';
import { ExperimentStore } from '../../src/main/store/experiment-store';
import { RunStore } from '../../src/main/store/run-store';
import type { RunSummary } from '../../src/shared/contract/runs';
import { storeHistoryRun } from '../support/history-runs';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const ENGINE = { commit: 'b5000aa', backend: 'cpu', serverPath: process.execPath };

/**
 * A stored baseline at TPOT 10 ms, then a machine that drifted 30 % slower since: every window
 * measured now (either side) is around `now[side]`, with a little spread between windows.
 */
async function check(options: {
  interleave: boolean;
  now: Record<CheckSideName, number>;
  serverPath?: string;
  /** Calls (1-based) whose run other processes competed with: a tenfold TPOT, flagged by the contention sampler. */
  contaminatedCalls?: number[];
  /** The baseline came in through `inferlab import`, its engine path an executable here. */
  importedBaseline?: { from: string };
  /** Every model path the check hashes, i.e. opens. */
  hashed?: string[];
}) {
  const db = openDatabase(path.join(tempDir(), 'gate.db'));
  const store = { db, runs: new RunStore(db) };
  const engine = { ...ENGINE, serverPath: options.serverPath ?? ENGINE.serverPath };
  const spread = [-0.2, 0.1, 0, 0.2, -0.1, 0.1];
  const baseline = storeHistoryRun(store, {
    startedAt: '2026-11-01T10:00:00Z',
    engine,
    tpots: [9.9, 10, 10.1],
    workloadSource: 'builtin:chat-short',
  });
  if (options.importedBaseline)
    db.prepare(`UPDATE runs SET manifest_json = json_set(manifest_json, '$.imported', json(?)) WHERE id = ?`).run(
      JSON.stringify(options.importedBaseline),
      baseline,
    );
  const calls: { side: CheckSideName; server: string | null; settings: string[] }[] = [];
  const result = await runRegressionCheck({
    store: store.runs,
    experiments: new ExperimentStore(db),
    query: {
      baseline,
      metrics: parseCheckMetrics('tpot_ms:p50'),
      margin: 0.05,
      repeats: 3,
      settings: ['threads=1'],
      interleave: options.interleave,
    },
    run: async (spec, side, server) => {
      calls.push({ side, server, settings: spec.settings ?? [] });
      const contaminated = options.contaminatedCalls?.includes(calls.length) ?? false;
      const median = (options.now[side] + (spread[calls.length - 1] ?? 0)) * (contaminated ? 10 : 1);
      const id = storeHistoryRun(store, {
        startedAt: `2026-12-01T10:0${calls.length}:00Z`,
        engine,
        tpots: [median - 0.1, median, median + 0.1],
        workloadSource: 'builtin:chat-short',
      });
      return {
        run_id: id,
        telemetry: { contention: { contaminated, reason: contaminated ? 'a compile used 1.2 cores' : null } },
      } as RunSummary;
    },
    modelSha256: async (file) => {
      options.hashed?.push(file);
      return 'a'.repeat(64);
    },
  });
  db.close();
  return { result, calls, baseline };
}

describe('inferlab check, interleaved with the baseline measured again', () => {
  it('without interleaving, drift since the stored baseline is judged a regression of an unchanged candidate', async () => {
    const { result, calls } = await check({ interleave: false, now: { baseline: 13, candidate: 13 } });
    expect(calls.map((call) => call.side)).toEqual(['candidate', 'candidate', 'candidate']);
    expect(result.interleaved).toBe(false);
    expect(result.stored_baseline).toBeNull();
    expect(result.result).toBe('regression');
  });

  it('interleaved, the same drift weighs on both sides and the unchanged candidate passes', async () => {
    const { result, calls, baseline } = await check({ interleave: true, now: { baseline: 13, candidate: 13 } });
    // ABBA: a trend during the check falls on both sides alike.
    expect(calls.map((call) => call.side)).toEqual(['baseline', 'candidate', 'candidate', 'baseline', 'baseline', 'candidate']);
    // The baseline side runs on the baseline's own build and without the candidate's settings.
    for (const call of calls.filter((entry) => entry.side === 'baseline')) {
      expect(call.server).toBe(process.execPath);
      expect(call.settings).not.toContain('threads=1');
    }
    for (const call of calls.filter((entry) => entry.side === 'candidate')) {
      expect(call.server).toBeNull();
      expect(call.settings).toContain('threads=1');
    }
    expect(result.interleaved).toBe(true);
    expect(result.stored_baseline?.run_ids).toEqual([baseline]);
    expect(result.baseline.run_ids).toHaveLength(3);
    expect(result.baseline.run_ids).not.toContain(baseline);
    expect(result.result).toBe('pass');
    expect(result.metrics[0]!.ratio).toBeCloseTo(1, 1);
  });

  it('interleaved, a candidate slower than the fresh baseline is still caught', async () => {
    const { result } = await check({ interleave: true, now: { baseline: 13, candidate: 16 } });
    expect(result.result).toBe('regression');
    expect(result.metrics[0]!.worse_by_at_least).toBeGreaterThan(0.05);
  });

  it('measures a window other processes competed with again, so a compile beside the check cannot fail the build', async () => {
    const { result, calls } = await check({ interleave: true, now: { baseline: 13, candidate: 13 }, contaminatedCalls: [2, 3] });
    // Call 2 (candidate window 1) and its retry (call 3) were contaminated; call 4 is that window's clean measurement.
    expect(calls.map((call) => call.side)).toEqual([
      'baseline',
      'candidate',
      'candidate',
      'candidate',
      'candidate',
      'baseline',
      'baseline',
      'candidate',
    ]);
    expect(result.candidate.run_ids).toHaveLength(3);
    expect(result.candidate.contaminated).toEqual([]);
    expect(result.result).toBe('pass');
  });

  it('never runs the llama-server an imported baseline names (attack: an export that points at a program of its choosing)', async () => {
    await expect(
      check({ interleave: true, now: { baseline: 13, candidate: 13 }, importedBaseline: { from: '/downloads/shared-run' } }),
    ).rejects.toThrow(/was imported from \/downloads\/shared-run: its llama-server path belongs to the machine it was measured on/);
  });

  it('never opens the model or workload an imported baseline names (attack: an export that points at files of its choosing)', async () => {
    const hashed: string[] = [];
    await expect(
      check({ interleave: false, now: { baseline: 13, candidate: 13 }, importedBaseline: { from: '/downloads/shared-run' }, hashed }),
    ).rejects.toThrow(
      /cannot be measured again: it was imported from \/downloads\/shared-run, and the model, workload and draft paths it records belong to the machine it was measured on.*pass --run ID/,
    );
    expect(hashed).toEqual([]);
  });

  it('refuses to interleave when the baseline build is gone, naming it', async () => {
    const gone = path.join(tempDir(), 'removed-build', 'llama-server');
    await expect(check({ interleave: true, now: { baseline: 13, candidate: 13 }, serverPath: gone })).rejects.toThrow(
      new RegExp(`${gone.replace(/[/.]/g, '\\$&')} is gone.*drop --interleave`),
    );
  });
});
