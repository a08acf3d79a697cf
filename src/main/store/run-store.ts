import crypto from 'node:crypto';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { identify, isAlive } from '../core/process-identity';
import { redactSecrets, redactUrls } from '../core/redact';
import type { ResolvedWorkload } from '../workload/workload-types';
import { ModelHashCache } from './model-hashes';
import { float64View } from './float64-blob';
import { LatencyColumnStore, type LatencyRow, type SortedLatencyColumns } from './latency-columns';
import type { Db } from './database';
import { isRunId } from './run-id';
import type { MeasuredRequest } from '../../shared/contract/measurement';
import {
  decodeChunkOffsets,
  draftCounts,
  type NewRun,
  type RequestRow,
  type RunHead,
  type RunHeads,
  type RunRow,
  type RunStatus,
  type StoredRequest,
  type UnreadableRun,
} from './run-rows';

const thisProcess = identify(process.pid);

const SUMMARY_COLUMNS = [
  'seq',
  'warmup',
  'group_name',
  'item_id',
  'scheduled_ms',
  't0_ms',
  'headers_ms',
  'end_ms',
  'ttft_ms',
  'e2e_ms',
  'tpot_ms',
  'queue_ms',
  'client_overhead_ms',
  'output_tokens',
  'output_tokens_source',
  'prompt_tokens',
  'cached_tokens',
  'finish_reason',
  'http_status',
  'error_class',
  'error_message',
  'timings_json',
  'chunk_offsets',
  'accepted',
  'acceptance_json',
  'NULL AS prompt_text',
  'NULL AS output_text',
  'prompt_sha256',
  'output_sha256',
  'prompt_chars',
  'output_chars',
  'ttfr_ms',
  'ttfa_ms',
  'ttft_from_schedule_ms',
  'e2e_from_schedule_ms',
  'decode_tokens_per_s',
  'NULL AS reasoning_text',
  'reasoning_chars',
  'reasoning_tokens',
  'reasoning_tokens_note',
  'conversation',
  'turn',
  'block_hashes',
  'ttfc_ms',
  'tool_call_ms',
  'tool_calls_json',
  'chunk_answer_chars',
].join(', ');

/**
 * A field of a stored JSON column as SQLite reads it, or null where the text does not parse
 * there: one record written by hand or by an older version (malformed, or nested deeper than
 * SQLite's 1000 levels) must not fail the query for every other run.
 */
const jsonField = (column: string, path: string) => `CASE WHEN json_valid(${column}) THEN json_extract(${column}, '${path}') END`;

/** The JSON columns a run list reads, each by the name its export gives it. */
const LISTED_JSON_COLUMNS = [
  ['summary_json', 'summary'],
  ['server_json', 'server'],
  ['engine_json', 'engine'],
  ['manifest_json', 'configuration'],
] as const;

/** The first listed column of a run that SQLite cannot read, or null (a NULL column is readable). */
const UNREADABLE_FIELD = `CASE ${LISTED_JSON_COLUMNS.map(([column, name]) => `WHEN NOT json_valid(${column}) THEN '${name}'`).join(' ')} END`;

/** How many runs an ambiguous id's error names. */
const AMBIGUOUS_SHOWN = 5;

function ambiguousRunId(text: string, matches: readonly RunRow[]): AppError {
  const named = matches.slice(0, AMBIGUOUS_SHOWN).map((run) => `${run.id} (${run.started_at}${run.model_ref ? `, ${run.model_ref}` : ''})`);
  const more = matches.length > AMBIGUOUS_SHOWN ? ' and more' : '';
  return new AppError(
    ErrorCode.InvalidInput,
    `"${text}" could be any of these runs: ${named.join('; ')}${more}. Give the full id of the one you mean.`,
    { runIds: matches.slice(0, AMBIGUOUS_SHOWN).map((run) => run.id) },
  );
}

/**
 * The WHERE clause of a run search: every word must appear (case-insensitively) in one of the
 * fields a list shows: model, quantization, engine, workload, status, kind or start time.
 */
function runSearch(terms: string[], runId: string | null): { where: string; values: Record<string, string> } {
  const clauses: string[] = [];
  const values: Record<string, string> = {};
  if (runId !== null) {
    clauses.push('id = @runId');
    values.runId = runId;
  }
  terms.slice(0, 16).forEach((term, index) => {
    const key = `term${index}`;
    // LIKE's own wildcards in a word are matched literally.
    values[key] = `%${term.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
    clauses.push(
      `(${[
        'id',
        'model_ref',
        'workload_name',
        'status',
        'kind',
        'started_at',
        jsonField('server_json', '$.effectiveConfig.modelFileType'),
        jsonField('engine_json', '$.origin'),
        jsonField('engine_json', '$.backend'),
      ]
        .map((field) => `lower(coalesce(${field}, '')) LIKE @${key} ESCAPE '\\'`)
        .join(' OR ')})`,
    );
  });
  return { where: clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '', values };
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/**
 * The key for private runs' text hashes: random, made once per database and kept in it.
 * Unkeyed, the hash of a short answer ("yes", a number) is found by hashing guesses.
 */
function privateHashKey(db: Db): Buffer {
  db.prepare("INSERT INTO database_secrets (name, value) VALUES ('hash_key', ?) ON CONFLICT (name) DO NOTHING").run(crypto.randomBytes(32));
  return (db.prepare("SELECT value FROM database_secrets WHERE name = 'hash_key'").get() as { value: Buffer }).value;
}

/** The columns of a measured request, in the order `measuredRequestOf` reads them. */
const MEASURED_REQUEST_SELECT = `
  SELECT warmup, group_name, scheduled_ms, t0_ms, end_ms, ttft_ms, tpot_ms, e2e_ms, queue_ms, client_overhead_ms,
    output_tokens, prompt_tokens, cached_tokens, error_class, accepted, chunk_offsets, ttfr_ms, ttfa_ms,
    ttft_from_schedule_ms, e2e_from_schedule_ms, reasoning_chars, reasoning_tokens, reasoning_tokens_note, turn,
    decode_tokens_per_s,
    CASE WHEN json_valid(timings_json) THEN json_extract(timings_json, '$.draft_n') END,
    CASE WHEN json_valid(timings_json) THEN json_extract(timings_json, '$.draft_n_accepted') END,
    ttfc_ms, tool_call_ms,
    CASE WHEN json_valid(tool_calls_json) THEN json_extract(tool_calls_json, '$.calls') END,
    CASE WHEN json_valid(tool_calls_json) THEN json_extract(tool_calls_json, '$.valid') END,
    CASE WHEN json_valid(tool_calls_json) THEN json_extract(tool_calls_json, '$.argument_tokens') END,
    conversation
  FROM requests WHERE run_id = ? ORDER BY seq`;

type Nullable<T> = T | null;
type MeasuredRequestColumns = [
  warmup: number,
  group_name: Nullable<string>,
  scheduled_ms: Nullable<number>,
  t0_ms: number,
  end_ms: Nullable<number>,
  ttft_ms: Nullable<number>,
  tpot_ms: Nullable<number>,
  e2e_ms: Nullable<number>,
  queue_ms: Nullable<number>,
  client_overhead_ms: Nullable<number>,
  output_tokens: Nullable<number>,
  prompt_tokens: Nullable<number>,
  cached_tokens: Nullable<number>,
  error_class: Nullable<string>,
  accepted: Nullable<number>,
  chunk_offsets: Nullable<Buffer>,
  ttfr_ms: Nullable<number>,
  ttfa_ms: Nullable<number>,
  ttft_from_schedule_ms: Nullable<number>,
  e2e_from_schedule_ms: Nullable<number>,
  reasoning_chars: Nullable<number>,
  reasoning_tokens: Nullable<number>,
  reasoning_tokens_note: Nullable<string>,
  turn: Nullable<number>,
  decode_tokens_per_s: Nullable<number>,
  draft_n: unknown,
  draft_n_accepted: unknown,
  ttfc_ms: Nullable<number>,
  tool_call_ms: Nullable<number>,
  tool_calls: unknown,
  tool_calls_valid: unknown,
  tool_argument_tokens: unknown,
  conversation: Nullable<number>,
];

/**
 * Named out field by field, each from its place in the SELECT (the tuple's labels say which): an
 * object literal gets one fixed shape, and on 10,000 rows this read in 130–140 ms where filling
 * the fields by name in a loop took 195–205 ms.
 */
function measuredRequestOf(column: MeasuredRequestColumns): MeasuredRequest {
  return {
    warmup: column[0] !== 0,
    group_name: column[1],
    scheduled_ms: column[2],
    t0_ms: column[3],
    end_ms: column[4],
    ttft_ms: column[5],
    tpot_ms: column[6],
    e2e_ms: column[7],
    queue_ms: column[8],
    client_overhead_ms: column[9],
    output_tokens: column[10],
    prompt_tokens: column[11],
    cached_tokens: column[12],
    error_class: column[13],
    accepted: column[14] === null ? null : column[14] !== 0,
    chunk_offsets_ms: column[15] ? float64View(column[15]) : null,
    ttfr_ms: column[16],
    ttfa_ms: column[17],
    ttft_from_schedule_ms: column[18],
    e2e_from_schedule_ms: column[19],
    reasoning_chars: column[20],
    reasoning_tokens: column[21],
    reasoning_tokens_note: column[22],
    turn: column[23],
    decode_tokens_per_s: column[24],
    ...draftCounts({ draft_n: column[25], draft_n_accepted: column[26] }),
    ttfc_ms: column[27],
    tool_call_ms: column[28],
    tool_calls: typeof column[29] === 'number' ? column[29] : null,
    tool_calls_valid: typeof column[30] === 'number' ? column[30] : null,
    tool_argument_tokens: typeof column[31] === 'number' ? column[31] : null,
    conversation: column[32],
  };
}

/** Runs and their requests. Requests are written in batches, each batch one transaction. */
export class RunStore {
  private readonly insertRun;
  private readonly insertRequest;
  private readonly updateStatus;
  private readonly updateReasoningTokens;
  private readonly updateToolArgumentTokens;
  /** Model file hashes, cached by path, size and mtime. */
  readonly hashes: ModelHashCache;
  private readonly latencyColumns: LatencyColumnStore;

  constructor(private readonly db: Db) {
    this.hashes = new ModelHashCache(db);
    this.latencyColumns = new LatencyColumnStore(db);
    this.insertRun = db.prepare(`
      INSERT INTO runs (id, kind, status, started_at, model_ref, model_path, model_size_bytes, model_sha256, engine_json, server_json, manifest_json,
        owner_pid, owner_start_ticks, workload_name, workload_revision, environment_json, private)
      VALUES (@id, @kind, 'running', @startedAt, @modelRef, @modelPath, @modelSizeBytes, @modelSha256, @engine, @server, @manifest,
        @ownerPid, @ownerStartTicks, @workloadName, @workloadRevision, @environment, @private)`);
    this.insertRequest = db.prepare(`
      INSERT INTO requests (run_id, seq, warmup, group_name, item_id, scheduled_ms, t0_ms, headers_ms, end_ms, ttft_ms, e2e_ms, tpot_ms, queue_ms,
        client_overhead_ms, output_tokens, output_tokens_source, prompt_tokens, cached_tokens, finish_reason, http_status, error_class, error_message,
        timings_json, chunk_offsets, accepted, acceptance_json, prompt_text, output_text, prompt_sha256, output_sha256, prompt_chars, output_chars,
        ttfr_ms, ttfa_ms, ttft_from_schedule_ms, e2e_from_schedule_ms, decode_tokens_per_s, reasoning_chunk_offsets, reasoning_text, reasoning_sha256, reasoning_chars,
        conversation, turn, ttfc_ms, tool_call_ms, tool_calls_json, chunk_answer_chars)
      VALUES (@runId, @seq, @warmup, @group, @itemId, @scheduledMs, @t0Ms, @headersMs, @endMs, @ttft, @e2e, @tpot, @queue,
        @overhead, @outputTokens, @outputSource, @promptTokens, @cachedTokens, @finishReason, @httpStatus, @errorClass, @errorMessage,
        @timings, @chunkOffsets, @accepted, @acceptance, @promptText, @outputText, @promptSha, @outputSha, @promptChars, @outputChars,
        @ttfr, @ttfa, @ttftFromSchedule, @e2eFromSchedule, @decodeRate, @reasoningOffsets, @reasoningText, @reasoningSha, @reasoningChars,
        @conversation, @turn, @ttfc, @toolCallMs, @toolCalls, @chunkAnswerChars)`);
    this.updateToolArgumentTokens = db.prepare(
      `UPDATE requests SET tool_calls_json = json_set(tool_calls_json, '$.argument_tokens', @tokens, '$.argument_tokens_note', @note)
       WHERE run_id = @runId AND seq = @seq AND json_valid(tool_calls_json)`,
    );
    this.updateReasoningTokens = db.prepare(
      'UPDATE requests SET reasoning_tokens = @tokens, reasoning_tokens_note = @note WHERE run_id = @runId AND seq = @seq',
    );
    this.updateStatus = db.prepare(
      `UPDATE runs SET status = @status, status_reason = @reason, ended_at = @endedAt, summary_json = COALESCE(@summary, summary_json) WHERE id = @id`,
    );
  }

  /**
   * Keeps a workload's resolved content by revision. A private run stores only its identity:
   * the prompts are the private text.
   */
  saveWorkload(workload: ResolvedWorkload, options: { private?: boolean } = {}): void {
    const content = options.private
      ? JSON.stringify({ private: true, name: workload.name, revision: workload.revision })
      : JSON.stringify(workload);
    this.db
      .prepare(
        `INSERT INTO workloads (revision, name, source, content_json, created_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (revision) DO UPDATE SET content_json = excluded.content_json WHERE json_extract(workloads.content_json, '$.private') = 1 AND json_extract(excluded.content_json, '$.private') IS NULL`,
      )
      .run(workload.revision, workload.name, workload.source, content, new Date().toISOString());
  }

  createRun(run: NewRun): string {
    const id = crypto.randomUUID();
    this.db.transaction(() => {
      if (run.workload) this.saveWorkload(run.workload, { private: run.private });
      this.insertRun.run({
        id,
        kind: run.kind,
        startedAt: new Date().toISOString(),
        modelRef: run.modelRef,
        modelPath: run.modelPath,
        modelSizeBytes: run.modelSizeBytes,
        modelSha256: run.modelSha256,
        // Endpoint URLs and server argv can carry credentials; the record keeps their names only.
        engine: JSON.stringify(redactSecrets(run.engine ?? null)),
        server: JSON.stringify(redactSecrets(run.server ?? null)),
        manifest: JSON.stringify(redactSecrets(run.manifest ?? {})),
        ownerPid: thisProcess.pid,
        ownerStartTicks: thisProcess.startTicks,
        workloadName: run.workload?.name ?? null,
        workloadRevision: run.workload?.revision ?? null,
        environment: run.environment === undefined ? null : JSON.stringify(run.environment),
        private: run.private ? 1 : 0,
      });
    })();
    return id;
  }

  /** Writes a batch in one transaction. In a private run only hashes and lengths of text are kept. */
  addRequests(runId: string, requests: readonly StoredRequest[], options: { private?: boolean } = {}): void {
    this.db.transaction(() => {
      const key = options.private ? privateHashKey(this.db) : null;
      const hash = key ? (text: string) => crypto.createHmac('sha256', key).update(text).digest('hex') : sha256;
      for (const request of requests) {
        const keepText = !options.private;
        const reasoning = request.reasoningText ?? null;
        this.insertRequest.run({
          runId,
          seq: request.seq,
          warmup: request.warmup ? 1 : 0,
          group: request.group ?? null,
          itemId: request.itemId ?? null,
          scheduledMs: request.scheduledMs ?? null,
          t0Ms: request.t0Ms,
          headersMs: request.headersMs,
          endMs: request.endMs ?? null,
          ttft: request.metrics.ttft_ms,
          e2e: request.metrics.e2e_ms,
          tpot: request.metrics.tpot_ms,
          queue: request.metrics.queue_ms,
          overhead: request.metrics.client_overhead_ms,
          outputTokens: request.metrics.output_tokens,
          outputSource: request.metrics.output_tokens_source,
          promptTokens: request.usage?.prompt_tokens ?? request.promptTokens,
          cachedTokens: request.usage?.cached_tokens ?? null,
          finishReason: request.finishReason,
          httpStatus: request.httpStatus,
          errorClass: request.errorClass,
          // Server error bodies can echo the prompt back.
          errorMessage: keepText
            ? request.errorMessage
            : request.errorMessage === null
              ? null
              : `[private] ${request.errorClass ?? 'error'}`,
          timings: request.timings ? JSON.stringify(request.timings) : null,
          chunkOffsets: Buffer.from(Float64Array.from(request.chunkOffsetsMs).buffer),
          accepted: request.accepted === undefined || request.accepted === null ? null : request.accepted ? 1 : 0,
          acceptance: request.acceptance === undefined ? null : JSON.stringify(request.acceptance),
          promptText: keepText ? request.promptText : null,
          outputText: keepText ? request.outputText : null,
          promptSha: request.promptText === null ? null : hash(request.promptText),
          outputSha: request.outputText === null ? null : hash(request.outputText),
          promptChars: request.promptText?.length ?? null,
          outputChars: request.outputText?.length ?? null,
          ttfr: request.metrics.ttfr_ms,
          ttfa: request.metrics.ttfa_ms,
          ttftFromSchedule: request.metrics.ttft_from_schedule_ms,
          e2eFromSchedule: request.metrics.e2e_from_schedule_ms,
          decodeRate: request.metrics.decode_tokens_per_s,
          reasoningOffsets: request.reasoningChunkOffsetsMs?.length
            ? Buffer.from(Float64Array.from(request.reasoningChunkOffsetsMs).buffer)
            : null,
          reasoningText: keepText && reasoning ? reasoning : null,
          reasoningSha: reasoning ? hash(reasoning) : null,
          reasoningChars: reasoning ? reasoning.length : null,
          conversation: request.session ?? null,
          turn: request.turn ?? null,
          ttfc: request.metrics.ttfc_ms ?? null,
          toolCallMs: request.metrics.tool_call_ms ?? null,
          toolCalls: request.toolCalls ? JSON.stringify(keepText ? request.toolCalls : { ...request.toolCalls, text: undefined }) : null,
          chunkAnswerChars: request.chunkAnswerChars?.length ? Buffer.from(Uint32Array.from(request.chunkAnswerChars).buffer) : null,
        });
      }
    })();
  }

  /**
   * Prompt block hashes, set after the run. A private run's are keyed with the database's hash
   * key, as its prompt hashes are, so a short prompt cannot be found by hashing guesses.
   */
  setBlockHashes(runId: string, rows: readonly { seq: number; hashes: readonly string[] | null }[]): void {
    const run = this.db.prepare('SELECT private FROM runs WHERE id = ?').get(runId) as { private: number } | undefined;
    const key = run?.private === 1 ? privateHashKey(this.db) : null;
    const seal = (hash: string) => (key ? crypto.createHmac('sha256', key).update(hash).digest('hex').slice(0, 16) : hash);
    const update = this.db.prepare('UPDATE requests SET block_hashes = @hashes WHERE run_id = @runId AND seq = @seq');
    this.db.transaction(() => {
      for (const row of rows) if (row.hashes !== null) update.run({ runId, seq: row.seq, hashes: JSON.stringify(row.hashes.map(seal)) });
    })();
  }

  /** Reasoning lengths counted after the run (tokenizing during it would load the server being measured). */
  setReasoningTokens(runId: string, counts: readonly { seq: number; tokens: number | null; note: string | null }[]): void {
    this.db.transaction(() => {
      for (const count of counts) this.updateReasoningTokens.run({ runId, seq: count.seq, tokens: count.tokens, note: count.note });
    })();
  }

  /** Function-call argument lengths in the server's tokens, counted after the run as reasoning is. */
  setToolArgumentTokens(runId: string, counts: readonly { seq: number; tokens: number | null; note: string | null }[]): void {
    this.db.transaction(() => {
      for (const count of counts) this.updateToolArgumentTokens.run({ runId, seq: count.seq, tokens: count.tokens, note: count.note });
    })();
  }

  /** `requests`: every request of the run, just read (for its summary), so its latency columns are not read again. */
  finishRun(
    id: string,
    status: Exclude<RunStatus, 'running'>,
    reason: string | null,
    summary: unknown,
    requests?: readonly LatencyRow[],
  ): void {
    const updated = this.updateStatus.run({
      id,
      status,
      reason: reason === null ? null : redactUrls(reason),
      endedAt: new Date().toISOString(),
      summary: summary === undefined ? null : JSON.stringify(summary),
    });
    if (updated.changes > 0) this.latencyColumns.keepFinished(id, requests);
  }

  /**
   * Runs left `running` by a process that is gone become `interrupted`, every stored
   * request kept. Runs whose writer is still alive (another CLI, the app) are left alone.
   */
  markAbandonedRunsInterrupted(): number {
    const running = this.db.prepare(`SELECT id, owner_pid, owner_start_ticks FROM runs WHERE status = 'running'`).all() as {
      id: string;
      owner_pid: number | null;
      owner_start_ticks: number | null;
    }[];
    const mark = this.db.prepare(
      `UPDATE runs SET status = 'interrupted', status_reason = ?, ended_at = ? WHERE id = ? AND status = 'running'`,
    );
    let marked = 0;
    for (const run of running) {
      if (run.owner_pid !== null && isAlive({ pid: run.owner_pid, startTicks: run.owner_start_ticks })) continue;
      marked += mark.run(
        `the process writing this run (pid ${run.owner_pid ?? 'unknown'}) ended before the run finished`,
        new Date().toISOString(),
        run.id,
      ).changes;
    }
    return marked;
  }

  getRun(id: string): RunRow | undefined {
    return this.db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
  }

  /**
   * A run by full id or by a prefix only it has, as users type them (lists show 8 characters).
   * A full id of Infer Lab's own form is taken as it is; any other text is a prefix, and one
   * that several runs start with is refused naming them, so that no run (one imported under
   * another run's short id by an older version, say) can stand in for the one meant.
   */
  findRun(idOrPrefix: string): RunRow | undefined {
    if (isRunId(idOrPrefix)) {
      const exact = this.getRun(idOrPrefix);
      if (exact) return exact;
    }
    if (idOrPrefix === '') return undefined;
    // Compared as text, not with LIKE, whose "_" and "%" would match any character.
    const matches = this.db
      .prepare(
        `SELECT * FROM runs WHERE id >= @prefix AND substr(id, 1, length(@prefix)) = @prefix ORDER BY id LIMIT ${AMBIGUOUS_SHOWN + 1}`,
      )
      .all({ prefix: idOrPrefix }) as RunRow[];
    if (matches.length > 1) throw ambiguousRunId(idOrPrefix, matches);
    return matches[0];
  }

  /**
   * What a run list shows, newest first, in one query: the request count and the few summary
   * fields are read by SQLite, so no summary is parsed here, and only for the runs kept by the
   * limit (the inner query), not for every run before sorting. A run whose record SQLite
   * cannot read is left out; `readRunHeads` names it.
   */
  listRunHeads(limit: number, runId: string | null = null, page: { offset?: number; terms?: string[] } = {}): RunHead[] {
    return this.readRunHeads(limit, runId, page).heads;
  }

  /** As `listRunHeads`, with the runs it left out, each named with the field that does not read. */
  readRunHeads(limit: number, runId: string | null = null, page: { offset?: number; terms?: string[] } = {}): RunHeads {
    const { where, values } = runSearch(page.terms ?? [], runId);
    const rows = this.db
      .prepare(
        `SELECT id, started_at, status, status_reason, model_ref, workload_name, kind,
                (SELECT COUNT(*) FROM requests WHERE requests.run_id = runs.id) AS request_count,
                ${jsonField('summary_json', '$.metrics.ttft_ms.p50')} AS ttft_p50,
                ${jsonField('summary_json', '$.throughput.output_tokens_per_s')} AS output_tokens_per_s,
                ${jsonField('server_json', '$.effectiveConfig.modelFileType')} AS model_file_type,
                ${jsonField('engine_json', '$.origin')} AS engine_origin,
                ${jsonField('engine_json', '$.backend')} AS engine_backend,
                engine_json IS NOT NULL AND engine_json != 'null' AS has_engine,
                ${jsonField('manifest_json', '$.imported.from')} AS imported_from,
                ${UNREADABLE_FIELD} AS unreadable_field
         FROM (SELECT *, rowid AS inserted FROM runs ${where} ORDER BY started_at DESC, rowid DESC LIMIT @limit OFFSET @offset) AS runs
         ORDER BY started_at DESC, inserted DESC`,
      )
      .all({ limit, offset: page.offset ?? 0, ...values }) as (RunHead & { unreadable_field: string | null })[];
    const heads: RunHead[] = [];
    const unreadable: UnreadableRun[] = [];
    for (const { unreadable_field: field, ...head } of rows) {
      if (field === null) heads.push(head);
      else
        unreadable.push({
          id: head.id,
          field,
          reason: `its stored ${field} is not JSON that SQLite can read (malformed, or nested too deep)`,
        });
    }
    return { heads, unreadable };
  }

  /** How many runs match the search words (all runs without any). */
  countRuns(terms: string[] = []): number {
    const { where, values } = runSearch(terms, null);
    return (this.db.prepare(`SELECT COUNT(*) AS count FROM runs ${where}`).get(values) as { count: number }).count;
  }

  /** The newest completed run of a model file with a decode time: what a plan compares its ceiling with. */
  latestDecodeOf(modelPath: string): { id: string; started_at: string; tpot_ms_mean: number; decode_sequences: number | null } | undefined {
    return this.db
      .prepare(
        `SELECT id, started_at,
                ${jsonField('summary_json', '$.metrics.tpot_ms.mean')} AS tpot_ms_mean,
                ${jsonField('summary_json', '$.decode_bandwidth.decode_sequences')} AS decode_sequences
         FROM runs
         WHERE model_path = ? AND status = 'completed' AND ${jsonField('summary_json', '$.metrics.tpot_ms.mean')} > 0
         ORDER BY started_at DESC, rowid DESC LIMIT 1`,
      )
      .get(modelPath) as { id: string; started_at: string; tpot_ms_mean: number; decode_sequences: number | null } | undefined;
  }

  listRuns(limit = 50): RunRow[] {
    return this.db.prepare('SELECT * FROM runs ORDER BY started_at DESC LIMIT ?').all(limit) as RunRow[];
  }

  deleteRun(id: string): boolean {
    return this.db.prepare('DELETE FROM runs WHERE id = ?').run(id).changes > 0;
  }

  requests(runId: string): RequestRow[] {
    return this.db.prepare('SELECT * FROM requests WHERE run_id = ? ORDER BY seq').all(runId) as RequestRow[];
  }

  /** One request whole: by its seq, or (null) the run's first measured success that streamed anything. */
  request(runId: string, seq: number | null): RequestRow | undefined {
    if (seq !== null)
      return this.db.prepare('SELECT * FROM requests WHERE run_id = ? AND seq = ?').get(runId, seq) as RequestRow | undefined;
    return this.db
      .prepare(
        'SELECT * FROM requests WHERE run_id = ? AND warmup = 0 AND error_class IS NULL AND length(chunk_offsets) > 0 ORDER BY seq LIMIT 1',
      )
      .get(runId) as RequestRow | undefined;
  }

  /** The latencies of the successful measured requests as columns, each sorted with its nulls left out (store/latency-columns.ts). */
  sortedLatencyColumns(runId: string): SortedLatencyColumns {
    return this.latencyColumns.read(runId);
  }

  /** Requests without their text: what summaries need, read in a fraction of the time. */
  requestsForSummary(runId: string): RequestRow[] {
    return this.db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM requests WHERE run_id = ? ORDER BY seq`).all(runId) as RequestRow[];
  }

  /**
   * A run's requests as the summary takes them: plain values, blobs decoded, flags as booleans.
   * Read as raw rows of only the columns a summary uses, the draft counts taken out of the
   * timings by SQLite: the same values as `toMeasuredRequest` of each row, in a third of the time.
   */
  measuredRequests(runId: string): MeasuredRequest[] {
    return (this.db.prepare(MEASURED_REQUEST_SELECT).raw(true).all(runId) as MeasuredRequestColumns[]).map(measuredRequestOf);
  }

  /** item id → how many of a run's measured requests of that item succeeded. */
  measuredSuccessesByItem(runId: string): Map<string, number> {
    const rows = this.db
      .prepare('SELECT item_id, COUNT(*) AS n FROM requests WHERE run_id = ? AND warmup = 0 AND error_class IS NULL GROUP BY item_id')
      .all(runId) as { item_id: string; n: number }[];
    return new Map(rows.map((row) => [row.item_id, row.n]));
  }

  /** item id → output text of a run's measured requests (the first of each item), for equals-reference checks. */
  referenceOutputs(runId: string): Map<string, string> {
    const rows = this.db
      .prepare(
        'SELECT item_id, output_text FROM requests WHERE run_id = ? AND warmup = 0 AND error_class IS NULL AND output_text IS NOT NULL ORDER BY seq',
      )
      .all(runId) as { item_id: string; output_text: string }[];
    const outputs = new Map<string, string>();
    for (const row of rows) if (!outputs.has(row.item_id)) outputs.set(row.item_id, row.output_text);
    return outputs;
  }

  saveTelemetry(runId: string, series: readonly { series: string; unit: string; points: Float64Array }[]): void {
    const insert = this.db.prepare('INSERT OR REPLACE INTO telemetry_series (run_id, series, unit, points) VALUES (?, ?, ?, ?)');
    this.db.transaction(() => {
      for (const entry of series)
        insert.run(runId, entry.series, entry.unit, Buffer.from(entry.points.buffer, entry.points.byteOffset, entry.points.byteLength));
    })();
  }

  telemetry(runId: string): { series: string; unit: string; points: [number, number][] }[] {
    const rows = this.db.prepare('SELECT series, unit, points FROM telemetry_series WHERE run_id = ? ORDER BY series').all(runId) as {
      series: string;
      unit: string;
      points: Buffer;
    }[];
    return rows.map((row) => {
      const values = float64View(row.points);
      const points: [number, number][] = [];
      for (let i = 0; i + 1 < values.length; i += 2) points.push([values[i]!, values[i + 1]!]);
      return { series: row.series, unit: row.unit, points };
    });
  }

  countRequests(runId: string): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM requests WHERE run_id = ?').get(runId) as { n: number }).n;
  }

  chunkOffsets(runId: string, seq: number): number[] {
    const row = this.db.prepare('SELECT chunk_offsets FROM requests WHERE run_id = ? AND seq = ?').get(runId, seq) as
      { chunk_offsets: Buffer | null } | undefined;
    return decodeChunkOffsets(row?.chunk_offsets ?? null);
  }
}
