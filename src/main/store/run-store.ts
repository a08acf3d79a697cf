import crypto from 'node:crypto';
import type { RequestMetrics, ServerTimings, Usage } from '../../shared/contract/measurement';
import { identify, isAlive } from '../core/process-identity';
import type { Db } from './database';

const thisProcess = identify(process.pid);

export type RunStatus = 'running' | 'completed' | 'aborted' | 'interrupted' | 'failed';

export interface NewRun {
  kind: string;
  modelRef: string | null;
  modelPath: string | null;
  modelSizeBytes: number | null;
  modelSha256: string | null;
  engine: unknown;
  server: unknown;
  manifest: unknown;
}

export interface StoredRequest {
  seq: number;
  warmup: boolean;
  t0Ms: number;
  headersMs: number | null;
  metrics: RequestMetrics;
  promptTokens: number | null;
  usage: Usage | null;
  finishReason: string | null;
  httpStatus: number | null;
  errorClass: string | null;
  errorMessage: string | null;
  timings: ServerTimings | null;
  chunkOffsetsMs: readonly number[];
  promptText: string | null;
  outputText: string | null;
}

export interface RunRow {
  id: string;
  kind: string;
  status: RunStatus;
  status_reason: string | null;
  started_at: string;
  ended_at: string | null;
  model_ref: string | null;
  summary_json: string | null;
}

/** Runs and their requests. Requests are written in batches, each batch one transaction. */
export class RunStore {
  private readonly insertRun;
  private readonly insertRequest;
  private readonly updateStatus;

  constructor(private readonly db: Db) {
    this.insertRun = db.prepare(`
      INSERT INTO runs (id, kind, status, started_at, model_ref, model_path, model_size_bytes, model_sha256, engine_json, server_json, manifest_json, owner_pid, owner_start_ticks)
      VALUES (@id, @kind, 'running', @startedAt, @modelRef, @modelPath, @modelSizeBytes, @modelSha256, @engine, @server, @manifest, @ownerPid, @ownerStartTicks)`);
    this.insertRequest = db.prepare(`
      INSERT INTO requests (run_id, seq, warmup, t0_ms, headers_ms, ttft_ms, e2e_ms, tpot_ms, queue_ms, client_overhead_ms,
        output_tokens, output_tokens_source, prompt_tokens, cached_tokens, finish_reason, http_status, error_class, error_message,
        timings_json, chunk_offsets, prompt_text, output_text)
      VALUES (@runId, @seq, @warmup, @t0Ms, @headersMs, @ttft, @e2e, @tpot, @queue, @overhead,
        @outputTokens, @outputSource, @promptTokens, @cachedTokens, @finishReason, @httpStatus, @errorClass, @errorMessage,
        @timings, @chunkOffsets, @promptText, @outputText)`);
    this.updateStatus = db.prepare(`UPDATE runs SET status = @status, status_reason = @reason, ended_at = @endedAt, summary_json = COALESCE(@summary, summary_json) WHERE id = @id`);
  }

  createRun(run: NewRun): string {
    const id = crypto.randomUUID();
    this.insertRun.run({
      id,
      kind: run.kind,
      startedAt: new Date().toISOString(),
      modelRef: run.modelRef,
      modelPath: run.modelPath,
      modelSizeBytes: run.modelSizeBytes,
      modelSha256: run.modelSha256,
      engine: JSON.stringify(run.engine ?? null),
      server: JSON.stringify(run.server ?? null),
      manifest: JSON.stringify(run.manifest ?? {}),
      ownerPid: thisProcess.pid,
      ownerStartTicks: thisProcess.startTicks,
    });
    return id;
  }

  addRequests(runId: string, requests: readonly StoredRequest[]): void {
    this.db.transaction(() => {
      for (const request of requests) {
        this.insertRequest.run({
          runId,
          seq: request.seq,
          warmup: request.warmup ? 1 : 0,
          t0Ms: request.t0Ms,
          headersMs: request.headersMs,
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
          errorMessage: request.errorMessage,
          timings: request.timings ? JSON.stringify(request.timings) : null,
          chunkOffsets: Buffer.from(Float64Array.from(request.chunkOffsetsMs).buffer),
          promptText: request.promptText,
          outputText: request.outputText,
        });
      }
    })();
  }

  finishRun(id: string, status: Exclude<RunStatus, 'running'>, reason: string | null, summary: unknown): void {
    this.updateStatus.run({ id, status, reason, endedAt: new Date().toISOString(), summary: summary === undefined ? null : JSON.stringify(summary) });
  }

  /**
   * Runs left `running` by a process that is gone become `interrupted`, every stored
   * request kept. Runs whose writer is still alive (another CLI, the app) are left alone.
   */
  markAbandonedRunsInterrupted(): number {
    const running = this.db.prepare(`SELECT id, owner_pid, owner_start_ticks FROM runs WHERE status = 'running'`).all() as { id: string; owner_pid: number | null; owner_start_ticks: number | null }[];
    const mark = this.db.prepare(`UPDATE runs SET status = 'interrupted', status_reason = ?, ended_at = ? WHERE id = ? AND status = 'running'`);
    let marked = 0;
    for (const run of running) {
      if (run.owner_pid !== null && isAlive({ pid: run.owner_pid, startTicks: run.owner_start_ticks })) continue;
      marked += mark.run(`the process writing this run (pid ${run.owner_pid ?? 'unknown'}) ended before the run finished`, new Date().toISOString(), run.id).changes;
    }
    return marked;
  }

  getRun(id: string): RunRow | undefined {
    return this.db.prepare('SELECT id, kind, status, status_reason, started_at, ended_at, model_ref, summary_json FROM runs WHERE id = ?').get(id) as RunRow | undefined;
  }

  countRequests(runId: string): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM requests WHERE run_id = ?').get(runId) as { n: number }).n;
  }

  chunkOffsets(runId: string, seq: number): number[] {
    const row = this.db.prepare('SELECT chunk_offsets FROM requests WHERE run_id = ? AND seq = ?').get(runId, seq) as { chunk_offsets: Buffer | null } | undefined;
    if (!row?.chunk_offsets) return [];
    const copy = new Uint8Array(row.chunk_offsets);
    return Array.from(new Float64Array(copy.buffer, copy.byteOffset, copy.byteLength / 8));
  }
}
