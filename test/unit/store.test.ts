import { spawnSync } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase, schemaVersion } from '../../src/main/store/database';
import { MIGRATIONS } from '../../src/main/store/migrations';
import { RunStore } from '../../src/main/store/run-store';
import { toMeasuredRequest, type StoredRequest } from '../../src/main/store/run-rows';
import { ExperimentStore } from '../../src/main/store/experiment-store';
import type { ExperimentResult } from '../../src/shared/contract/experiments';
import { ServerSessionStore } from '../../src/main/store/server-sessions';
import { sweepOrphanedServers } from '../../src/main/server/orphan-sweep';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { effectiveConfig } from '../support/effective-config';
import { createBareRun, requestMetrics, storedRequest } from '../support/stored-request';
import { useTempDirs } from '../support/temp';
import { sharedProtocolFields } from '../support/experiment-result';

const tempDir = useTempDirs();

const request = (seq: number): StoredRequest =>
  storedRequest(seq, {
    t0Ms: seq * 10,
    metrics: requestMetrics({
      ttft_ms: 5,
      e2e_ms: 9,
      tpot_ms: 1,
      itl_ms: [1, 2],
      output_tokens: 3,
      client_overhead_ms: 0.5,
      decode_tokens_per_s: 100,
    }),
    promptTokens: 4,
    usage: { prompt_tokens: 4, completion_tokens: 3, cached_tokens: 0 },
    finishReason: 'length',
    timings: { prompt_n: 4, prompt_ms: 2, predicted_n: 3, predicted_ms: 6, cache_n: 0, draft_n: null, draft_n_accepted: null },
    chunkOffsetsMs: [5, 6.5, 8.25],
    promptText: 'p',
    outputText: 'o',
  });

describe('database', () => {
  it('creates the schema in WAL mode with foreign keys, and reopens without re-migrating', () => {
    const file = path.join(tempDir(), 'nested', 'runs.db');
    const db = openDatabase(file);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(schemaVersion(db)).toBe(MIGRATIONS.at(-1)!.version);
    db.close();
    const again = openDatabase(file);
    expect((again.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get() as { n: number }).n).toBe(MIGRATIONS.length);
    again.close();
  });

  it('refuses a database from a newer version instead of touching it', () => {
    const file = path.join(tempDir(), 'future.db');
    openDatabase(file).close();
    const raw = new Database(file);
    raw.prepare("INSERT INTO schema_migrations VALUES (999, 'future', 'now')").run();
    raw.close();
    expect(() => openDatabase(file)).toThrow(/schema version 999, newer than this Infer Lab understands/);
  });

  it("renames the stored experiments of the kind once called 'spec', in their row, protocol and result", () => {
    const file = path.join(tempDir(), 'before-rename.db');
    openDatabase(file).close();
    // The database as the version before the rename left it, with one such experiment, one still running and one of another kind.
    const raw = new Database(file);
    raw.prepare('DELETE FROM schema_migrations WHERE version >= 11').run();
    // Without the columns that later versions add, which those versions add again.
    for (const column of ['ttfc_ms', 'tool_call_ms', 'tool_calls_json', 'chunk_answer_chars'])
      raw.exec(`ALTER TABLE requests DROP COLUMN ${column}`);
    const insert = raw.prepare(
      "INSERT INTO experiments (id, kind, status, created_at, protocol_json, result_json) VALUES (?, ?, ?, 'now', ?, ?)",
    );
    insert.run(
      'done',
      'spec',
      'completed',
      JSON.stringify({ kind: 'spec', draft_max: [4] }),
      JSON.stringify({ kind: 'spec', conditions: [] }),
    );
    insert.run('running', 'spec', 'running', JSON.stringify({ kind: 'spec' }), null);
    insert.run('other', 'quant', 'completed', JSON.stringify({ kind: 'quant' }), JSON.stringify({ kind: 'quant' }));
    raw.close();

    const db = openDatabase(file);
    const rows = db.prepare('SELECT id, kind, protocol_json, result_json FROM experiments ORDER BY id').all() as Record<
      string,
      string | null
    >[];
    expect(
      rows.map((row) => [row.id, row.kind, JSON.parse(row.protocol_json!).kind, row.result_json && JSON.parse(row.result_json).kind]),
    ).toEqual([
      ['done', 'speculative', 'speculative', 'speculative'],
      ['other', 'quant', 'quant', 'quant'],
      ['running', 'speculative', 'speculative', null],
    ]);
    expect(JSON.parse(rows[0]!.protocol_json!).draft_max).toEqual([4]);
    db.close();
  });

  it('names the path when the database cannot be opened', () => {
    const dir = tempDir();
    expect(() => openDatabase(dir)).toThrow(new RegExp(`Cannot open the database ${dir}`));
  });
});

describe('run store', () => {
  it('stores a run with its requests and chunk times, and finishes it', () => {
    const store = new RunStore(openDatabase(path.join(tempDir(), 'runs.db')));
    const id = createBareRun(store);
    expect(store.getRun(id)?.status).toBe('running');
    store.addRequests(id, [request(0), request(1)]);
    store.finishRun(id, 'completed', null, { ok: true });
    const run = store.getRun(id)!;
    expect(run.status).toBe('completed');
    expect(JSON.parse(run.summary_json!)).toEqual({ ok: true });
    expect(store.countRequests(id)).toBe(2);
    expect(store.chunkOffsets(id, 1)).toEqual([5, 6.5, 8.25]);
  });

  it('reads requests back for the summary as plain values: chunk times decoded, flags as booleans', () => {
    const store = new RunStore(openDatabase(path.join(tempDir(), 'measured.db')));
    const id = createBareRun(store);
    store.addRequests(id, [
      { ...request(0), warmup: true },
      { ...request(1), chunkOffsetsMs: [] },
    ]);
    const [warm, measured] = store.measuredRequests(id);
    expect(warm).toMatchObject({
      warmup: true,
      t0_ms: 0,
      ttft_ms: 5,
      output_tokens: 3,
      prompt_tokens: 4,
      cached_tokens: 0,
      error_class: null,
    });
    expect(Array.from(warm!.chunk_offsets_ms!)).toEqual([5, 6.5, 8.25]);
    expect(measured).toMatchObject({ warmup: false, t0_ms: 10, accepted: null });
    expect(measured!.chunk_offsets_ms?.length ?? 0).toBe(0);
  });

  it('reads the same measured requests from its own columns as from the whole stored rows, draft counts and odd timings included', () => {
    const db = openDatabase(path.join(tempDir(), 'measured-columns.db'));
    const store = new RunStore(db);
    const id = createBareRun(store);
    store.addRequests(id, [
      { ...request(0), warmup: true },
      { ...request(1), timings: { ...request(1).timings!, draft_n: 12, draft_n_accepted: 9 }, accepted: true, group: 'long' },
      { ...request(2), timings: null, accepted: false, chunkOffsetsMs: [] },
      { ...request(3), errorClass: 'http_error', metrics: { ...request(3).metrics, ttft_ms: null, tpot_ms: null, e2e_ms: null } },
      request(4),
      request(5),
    ]);
    // Timings as an older or imported run may hold them: not JSON, not an object, a count that is not a number.
    const setTimings = db.prepare('UPDATE requests SET timings_json = ? WHERE run_id = ? AND seq = ?');
    setTimings.run('{"draft_n": 3', id, 4);
    setTimings.run('[1, 2]', id, 5);
    setTimings.run('{"draft_n": "7", "draft_n_accepted": 2.5}', id, 0);

    const fromWholeRows = store.requestsForSummary(id).map(toMeasuredRequest);
    const fromColumns = store.measuredRequests(id);
    expect(fromColumns).toEqual(fromWholeRows);
    expect(fromColumns.map((row) => [row.draft_tokens, row.draft_accepted_tokens])).toEqual([
      [null, 2.5],
      [12, 9],
      [null, null],
      [null, null],
      [null, null],
      [null, null],
    ]);
  });

  it('lists runs newest first with their request counts and summary figures, limited in SQL', () => {
    const store = new RunStore(openDatabase(path.join(tempDir(), 'list.db')));
    const first = createBareRun(store, { modelRef: 'demo:q8_0' });
    store.addRequests(first, [request(0), request(1), request(2)]);
    store.finishRun(first, 'completed', null, { metrics: { ttft_ms: { p50: 12.5 } }, throughput: { output_tokens_per_s: 40 } });
    const second = createBareRun(store);
    const heads = store.listRunHeads(10);
    expect(heads.map((head) => head.id)).toEqual([second, first]);
    expect(heads[1]).toMatchObject({
      request_count: 3,
      ttft_p50: 12.5,
      output_tokens_per_s: 40,
      model_ref: 'demo:q8_0',
      status: 'completed',
    });
    expect(heads[0]).toMatchObject({ request_count: 0, ttft_p50: null, status: 'running' });
    expect(store.listRunHeads(1).map((head) => head.id)).toEqual([second]);
    expect(store.listRunHeads(5, first).map((head) => head.id)).toEqual([first]);
  });

  it('pages through runs with a total, and finds them by every word of a search, wildcards taken literally', () => {
    const store = new RunStore(openDatabase(path.join(tempDir(), 'pages.db')));
    const ids = Array.from({ length: 7 }, (_, index) =>
      createBareRun(store, { modelRef: index % 2 === 0 ? `/models/llama-${index}.gguf` : `/models/qwen_${index}.gguf` }),
    );
    const newestFirst = [...ids].reverse();
    expect(store.listRunHeads(3, null, { offset: 0 }).map((head) => head.id)).toEqual(newestFirst.slice(0, 3));
    expect(store.listRunHeads(3, null, { offset: 3 }).map((head) => head.id)).toEqual(newestFirst.slice(3, 6));
    expect(store.listRunHeads(3, null, { offset: 6 }).map((head) => head.id)).toEqual(newestFirst.slice(6));
    expect(store.countRuns()).toBe(7);
    expect(store.countRuns(['QWEN'])).toBe(3);
    expect(store.countRuns(['qwen', 'running'])).toBe(3);
    expect(store.countRuns(['qwen', 'completed'])).toBe(0);
    expect(store.listRunHeads(10, null, { terms: ['llama-4'] }).map((head) => head.id)).toEqual([ids[4]]);
    // "_" and "%" are letters here, not LIKE's wildcards.
    expect(store.countRuns(['qwen_'])).toBe(3);
    expect(store.countRuns(['llama_'])).toBe(0);
    expect(store.countRuns(['%'])).toBe(0);
  });

  it('writes a batch atomically: a bad row rolls back the whole batch', () => {
    const store = new RunStore(openDatabase(path.join(tempDir(), 'runs.db')));
    const id = createBareRun(store);
    expect(() => store.addRequests(id, [request(0), request(0)])).toThrow(/UNIQUE/);
    expect(store.countRequests(id)).toBe(0);
  });

  it('marks runs whose writer died as interrupted and leaves live writers alone', () => {
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    const store = new RunStore(db);
    const mine = createBareRun(store);
    const orphan = createBareRun(store);
    store.addRequests(orphan, [request(0)]);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    db.prepare('UPDATE runs SET owner_pid = ?, owner_start_ticks = NULL WHERE id = ?').run(dead, orphan);
    expect(store.markAbandonedRunsInterrupted()).toBe(1);
    expect(store.getRun(orphan)?.status).toBe('interrupted');
    expect(store.getRun(orphan)?.status_reason).toMatch(new RegExp(`pid ${dead}`));
    expect(store.countRequests(orphan)).toBe(1);
    expect(store.getRun(mine)?.status).toBe('running');
  });
});

describe('experiment store', () => {
  it('keeps experiments with their windows, finds one by unique prefix, and records decisions', () => {
    const db = openDatabase(path.join(tempDir(), 'experiments.db'));
    const runs = new RunStore(db);
    const store = new ExperimentStore(db);
    const id = store.create('quant', { repeats: 2 });
    const run = createBareRun(runs);
    store.addRun(id, run, 'q8_0', 0);
    expect(store.get(id)).toMatchObject({ id, kind: 'quant', status: 'running', result: null });
    const result: ExperimentResult = {
      experiment_id: id,
      kind: 'quant',
      status: 'completed',
      protocol: sharedProtocolFields('quant'),
      conditions: [],
      verdicts: [],
      recommendation: { choice: null, reason: 'r', excluded: [] },
    };
    store.finish(id, 'completed', result);
    // An interruption keeps the result already stored.
    store.finish(id, 'interrupted', null);
    expect(store.get(id.slice(0, 8))).toMatchObject({ status: 'interrupted', result: { recommendation: { reason: 'r' } } });
    expect(store.list().map((row) => row.id)).toEqual([id]);
    // A prefix two experiments share names neither.
    let other = store.create('quant', {});
    while (other[0] !== id[0]) other = store.create('quant', {});
    expect(store.get(id[0]!)).toBeUndefined();
    const decision = store.recordDecision(id, 'ana', { experiment_id: id, chosen: 'q8_0', reason: 'smaller', decided_by: 'ana' });
    expect(store.decisions()).toEqual([expect.objectContaining({ decision_id: decision, chosen: 'q8_0', reason: 'smaller' })]);
  });
});

describe('server session store', () => {
  it('records a session from start to end, with its cold start, and closes sessions whose process is gone', async () => {
    const db = openDatabase(path.join(tempDir(), 'sessions.db'));
    const sessions = new ServerSessionStore(db);
    const profile = defaultProfile();
    const start = {
      engine: 'llama.cpp',
      binary: '/bin/true',
      argv: ['llama-server'],
      modelRef: 'demo:q8_0',
      modelPath: '/m.gguf',
      profile,
      port: 1,
    };
    sessions.recordStart({ ...start, id: 'ended', pid: process.pid });
    const cold = { spawnToListeningMs: 10, spawnToReadyMs: 20, readyToFirstTokenMs: null, spawnToFirstTokenMs: null };
    sessions.recordReady('ended', cold, effectiveConfig());
    expect(sessions.coldStart('ended')).toEqual(cold);
    sessions.recordEnd('ended', 'stopped', null);
    // A session whose owning process ended is closed by the sweep (its server is gone too, so nothing
    // is killed); one whose owner lives (this process) is left alone.
    const gone = spawnSync('true').pid!;
    sessions.recordStart({ ...start, id: 'orphaned', pid: gone });
    db.prepare('UPDATE server_sessions SET owner_pid = ?, owner_start_ticks = NULL WHERE id = ?').run(gone, 'orphaned');
    sessions.recordStart({ ...start, id: 'mine', pid: null });
    const sweep = await sweepOrphanedServers(sessions, 100);
    expect(sweep.killed).toEqual([]);
    expect(sweep.closed).toBe(1);
    expect((await sweepOrphanedServers(sessions, 100)).closed).toBe(0);
  });
});

describe('model hash cache', () => {
  it('hashes once per path, size and mtime, and again when the file changes', async () => {
    const { ModelHashCache } = await import('../../src/main/store/model-hashes');
    const fs = await import('node:fs');
    const dir = tempDir();
    const file = path.join(dir, 'm.gguf');
    fs.writeFileSync(file, 'first');
    const cache = new ModelHashCache(openDatabase(path.join(dir, 'h.db')));
    expect(await cache.cached(file)).toBeNull();
    const first = await cache.hash(file);
    expect(first).toBe('a7937b64b8caa58f03721bb6bacf5c78cb235febe0e70b1b84cd99541461a08e');
    expect(await cache.cached(file)).toBe(first);
    fs.writeFileSync(file, 'second!');
    expect(await cache.cached(file)).toBeNull();
    expect(await cache.hash(file)).not.toBe(first);
  });
});
