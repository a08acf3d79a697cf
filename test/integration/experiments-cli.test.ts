import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/store/database';
import { ExperimentStore } from '../../src/main/store/experiment-store';
import { inferlab } from '../support/cli';
import { storeAdapterExperiment, storeQuantExperiment } from '../support/stored-quant-experiment';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('inferlab experiments', () => {
  it('lists the stored experiments newest first and shows one again by a prefix of its id; an unfinished one says why not', async () => {
    const file = path.join(tempDir(), 'experiments.db');
    const empty = await inferlab(['experiments', '--db', file]);
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toBe('No experiments stored yet: inferlab demo, or inferlab experiment KIND ...\n');

    const db = openDatabase(file);
    const quant = storeQuantExperiment(db);
    const adapter = storeAdapterExperiment(db);
    db.prepare("UPDATE experiments SET created_at = '2026-01-01T00:00:00.000Z' WHERE id = ?").run(quant);
    const unfinished = new ExperimentStore(db).create('warmcold', { kind: 'warmcold' });
    db.close();

    const listed = await inferlab(['experiments', 'list', '--db', file]);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = listed.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^experiment +started +kind +status +outcome$/);
    expect(rows.slice(1).map((row) => row.split(/ {2,}/).slice(0, 1)[0])).toEqual(
      expect.arrayContaining([quant.slice(0, 8), adapter.slice(0, 8), unfinished.slice(0, 8)]),
    );
    expect(rows.at(-1)).toMatch(
      new RegExp(`^${quant.slice(0, 8)} +2026-01-01 00:00:00 +quant +completed +fastest TPOT p50 among the conditions within every gate$`),
    );
    const json = JSON.parse((await inferlab(['experiments', '--json', '--limit', '1', '--db', file])).stdout) as { experimentId: string }[];
    expect(json).toHaveLength(1);

    const shown = await inferlab(['experiments', 'show', quant.slice(0, 8), '--db', file]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^recommendation: q4_k_m/m);
    expect(JSON.parse((await inferlab(['experiments', 'show', quant, '--json', '--db', file])).stdout)).toMatchObject({
      experiment_id: quant,
      recommendation: { choice: 'q4_k_m' },
    });

    const notFinished = await inferlab(['experiments', 'show', unfinished, '--db', file]);
    expect(notFinished.code).toBe(2);
    expect(notFinished.stderr).toMatch(/has no result to show: it did not finish/);
    const typo = await inferlab(['experiments', 'shwo', quant, '--db', file]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/Unknown experiments action "shwo"; did you mean show\?/);
  });
});
